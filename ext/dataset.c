/*
** dataset.c: the entry point of the `dataset` extension.
**
** sqlite3_dataset_init() checks the SQLite it runs in, makes the
** connection's state (DsConn: settings, memory in use, last statistics),
** and registers every function and module with that state as user data.
** The state is freed when the connection closes, through the destructor
** of the ds_join_hint module.
**
** Nothing is global: each connection has its own DsConn, so connections
** in different threads use the extension at once without locks.
**
** None of the functions or modules is SQLITE_INNOCUOUS: they read whole
** tables named by their arguments, so with trusted_schema=OFF they cannot
** be used from triggers or views of an untrusted schema.
*/
#include "dataset_int.h"
SQLITE_EXTENSION_INIT1

#include "dataset.h"

#ifndef DS_VERSION
# define DS_VERSION "unknown"
#endif

/* The oldest SQLite the extension works with, as sqlite3_libversion_number()
** gives it: X*1000000 + Y*1000 + Z for X.Y.Z.  Overridable for the test
** that builds a variant needing a SQLite that does not exist yet. */
#ifndef DS_MIN_SQLITE
# define DS_MIN_SQLITE 3038000
#endif

static void dsVersionFunc(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv){
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, DS_VERSION, -1, SQLITE_STATIC);
}

void dsConnFree(void *p){
  DsConn *pConn = (DsConn *)p;
  if( pConn ){
    sqlite3_free(pConn->zTempDir);
    sqlite3_free(pConn->zLastStats);
    sqlite3_free(pConn);
  }
}

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_dataset_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi){
  DsConn *pConn;
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  if( sqlite3_libversion_number() < DS_MIN_SQLITE ){
    if( pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf(
          "dataset: needs SQLite %d.%d.%d or newer; this is SQLite %s",
          DS_MIN_SQLITE/1000000, DS_MIN_SQLITE/1000%1000, DS_MIN_SQLITE%1000,
          sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  pConn = sqlite3_malloc64(sizeof(DsConn));
  if( pConn==0 ) return SQLITE_NOMEM;
  memset(pConn, 0, sizeof(*pConn));
  pConn->db = db;
  pConn->xIsInterrupted = dsFindIsInterrupted();
  /* The module owns pConn from here on: it is freed with the connection,
  ** or at once if registration fails. */
  rc = dsRegisterJoinVtab(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterCoGroupVtab(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterCrossVtab(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterConfig(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterStats(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterPlan(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterAggregates(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterReader(db);
#ifdef DS_TEST_HOOKS
  if( rc==SQLITE_OK ) rc = dsRegisterTestHooks(db, pConn);
#endif
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "ds_version", 0,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0,
                                 dsVersionFunc, 0, 0);
  }
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("dataset: cannot register: %s",
                                sqlite3_errstr(rc));
  }
  return rc;
}
