/*
** dynamic.c: a program that loads the `dataset` extension at run time.
**
**     build/dynamic_client EXTENSION < SCRIPT
**
** EXTENSION is the shared library's path, with or without its .so suffix
** (build/dataset); sqlite3_load_extension() finds the entry point,
** sqlite3_dataset_init, from the file name.  SCRIPT then runs on a
** :memory: database (see script.h for its form and output).  If the
** library cannot be loaded, the program prints SQLite's message on stderr
** and exits with status 2.
**
** The Makefile links this same file with two libraries: Debian's SQLite
** (build/dynamic_client), and SQLCipher 3.4, which is SQLite 3.15
** (build/sqlcipher_client), where the extension must refuse to load.  It
** calls nothing that SQLite 3.15 lacks.
*/
#include "script.h"

int main(int argc, char **argv){
  sqlite3 *db = 0;
  char *zErr = 0;
  int rc;
  if( argc!=2 ){
    fprintf(stderr, "usage: %s EXTENSION < SCRIPT\n", argv[0]);
    return 1;
  }
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ){
    fprintf(stderr, "cannot open a database: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
  }
  /* Loading is off by default.  This turns on the C API only, not SQL's
  ** load_extension() function, which stays off. */
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int *)0);
  rc = sqlite3_load_extension(db, argv[1], 0, &zErr);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "cannot load %s: %s\n", argv[1],
            zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    sqlite3_close(db);
    return 2;
  }
  rc = dsRunScript(db, stdin);
  sqlite3_close(db);
  return rc;
}
