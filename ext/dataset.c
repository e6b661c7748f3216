/*
** dataset.c: the entry point of the `dataset` extension.
**
** sqlite3_dataset_init() checks the SQLite it runs in, makes the
** connection's state (DsConn: settings, memory in use, last statistics),
** and registers every function and module with that state as user data.
** The state is freed when the connection closes by dsConnFree(), which
** this file hands as the destructor to the first registration (the
** ds_join_hint module): SQLite calls it once, after the last statement
** using the state is finalized, or at once if that registration fails.
** (ds_version() cannot own it: it is registered last, so that its
** presence means a complete load, and a load failing before it would
** leak the state.)  Loading the extension again into a
** connection that has it does nothing (dsAlreadyLoaded): the first load's
** state goes on serving everything.
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

/*
** Is the extension loaded in db already?  SQLITE_OK with *pbLoaded set,
** or an error (with *pzErrMsg) when another version's ds_version() is
** there.  A second load must not register anything again: replacing the
** module frees the first load's DsConn while its functions still point
** at it, and replacing a function fails with SQLITE_BUSY while a
** statement runs, such as the SELECT load_extension() doing the load.
** Tables made before would also keep the first state while ds_config()
** showed a second one.
*/
static int dsAlreadyLoaded(sqlite3 *db, char **pzErrMsg, int *pbLoaded){
  sqlite3_stmt *pStmt = 0;
  int rc;
  *pbLoaded = 0;
  rc = sqlite3_prepare_v2(db, "SELECT ds_version()", -1, &pStmt, 0);
  if( rc==SQLITE_NOMEM ) return rc;
  if( rc!=SQLITE_OK ){
    /* No such function: a first load.  The failed prepare left "no such
    ** function" as the connection's error, which a caller of
    ** sqlite3_load_extension() would then read after its success; a
    ** prepare that succeeds clears it. */
    if( sqlite3_prepare_v2(db, "SELECT 1", -1, &pStmt, 0)==SQLITE_NOMEM ){
      return SQLITE_NOMEM;
    }
    sqlite3_finalize(pStmt);
    return SQLITE_OK;
  }
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    /* ds_version() is never NULL: a NULL here is a failed conversion. */
    const char *zHave = (const char *)sqlite3_column_text(pStmt, 0);
    if( zHave==0 ){
      rc = SQLITE_NOMEM;
    }else if( strcmp(zHave, DS_VERSION)==0 ){
      *pbLoaded = 1;
      rc = SQLITE_OK;
    }else{
      if( pzErrMsg ){
        *pzErrMsg = sqlite3_mprintf("dataset: version %s of the extension "
            "is loaded in this connection already, and this is version %s: "
            "load it into a new connection", zHave, DS_VERSION);
      }
      rc = SQLITE_ERROR;
    }
  }else if( rc==SQLITE_DONE ){
    rc = SQLITE_ERROR;
  }
  sqlite3_finalize(pStmt);
  return rc;
}

static void dsConnFree(void *p){
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
  int bLoaded;
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
  rc = dsAlreadyLoaded(db, pzErrMsg, &bLoaded);
  if( rc!=SQLITE_OK || bLoaded ) return rc;
  pConn = sqlite3_malloc64(sizeof(DsConn));
  if( pConn==0 ) return SQLITE_NOMEM;
  memset(pConn, 0, sizeof(*pConn));
  pConn->db = db;
  pConn->xIsInterrupted = dsFindIsInterrupted();
  /* The module owns pConn from here on: it is freed with the connection,
  ** or at once if registration fails. */
  rc = dsRegisterJoinVtab(db, pConn, dsConnFree);
  if( rc==SQLITE_OK ) rc = dsRegisterCoGroupVtab(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterCrossVtab(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterConfig(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterStats(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterPlan(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterAggregates(db, pConn);
  if( rc==SQLITE_OK ) rc = dsRegisterKeyStats(db, pConn);
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
