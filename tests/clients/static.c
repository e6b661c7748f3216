/*
** static.c: a program with the `dataset` extension linked in.
**
**     build/static_client < SCRIPT
**
** Built from build/libsqlite3_dataset.a, the extension's sources compiled
** with -DSQLITE_CORE (so they call libsqlite3 directly, with no
** sqlite3_api table in between).  sqlite3_auto_extension() registers the
** extension on every connection opened afterwards: here one :memory:
** database, on which SCRIPT runs (see script.h for its form and output).
*/
#include "dataset.h"
#include "script.h"

int main(void){
  sqlite3 *db = 0;
  int rc;
  rc = sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "sqlite3_auto_extension: %s\n", sqlite3_errstr(rc));
    return 1;
  }
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ){
    fprintf(stderr, "cannot open a database: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
  }
  rc = dsRunScript(db, stdin);
  sqlite3_close(db);
  return rc;
}
