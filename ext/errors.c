/*
** errors.c: failures of the extension's own resources, reported so that
** they never cost the caller's transaction.
**
** A statement that ends with SQLITE_NOMEM, SQLITE_IOERR or SQLITE_FULL
** makes SQLite roll back the whole transaction (sqlite3VdbeHalt(): it
** must assume that its own pager is in doubt), even for a read-only
** SELECT.  When the extension's own allocation fails, or its spill files
** meet a full disk, an I/O error, a short read or a temp_dir that cannot
** be used, nothing of the database is in doubt: the caller's uncommitted
** work must not go with that one statement.  So every error a statement
** of the extension ends with passes dsStatementError() (vtab xFilter,
** xNext, xColumn, xCreate; function results take dsResultNoMem()): one
** of those codes that the extension raised itself becomes SQLITE_ERROR,
** with a message naming the function and the cause.
**
** An error SQLite itself raised while the extension stepped an input (its
** own out-of-memory, an I/O error on the database file) is SQLite's to
** judge and keeps its code.  Who raised a code is known where it is
** raised, and the connection remembers it until the statement reports
** it: the extension's I/O codes come from one place, its spill files
** (dsSpillFailed() in spill.c), and any other I/O code is SQLite's; an
** out-of-memory is the extension's unless SQLite's step of an input
** returned it (dsSqliteError(), from dsStepInput() in input.c), the one
** place where SQLite's own allocations fail under the extension.
*/
#include "dataset_int.h"

/* rc is SQLite's own error from stepping an input: remember that, until
** the statement reports it.  Returns rc. */
int dsSqliteError(DsConn *pConn, int rc){
  pConn->rcSqlite = rc;
  return rc;
}

/* Is rc a code of the extension's own resources going wrong? */
static int dsIsResourceCode(int rc){
  switch( rc & 0xff ){
    case SQLITE_NOMEM:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
      return 1;
    default:
      return 0;
  }
}

/*
** The code a statement of function zFunc fails with for the error rc,
** and *pzErr (a message that starts with zFunc, or NULL for SQLite's text
** of the code) to go with it: rc itself, unless rc says that one of the
** extension's own resources failed (see above): then SQLITE_ERROR, with
** "zFunc: out of memory" when *pzErr had no message.  SQLITE_NOMEM if
** even that message cannot be had.
*/
int dsStatementError(DsConn *pConn, const char *zFunc, int rc,
                     char **pzErr){
  int rcSqlite = pConn->rcSqlite;
  int rcSpill = pConn->rcSpill;
  i64 nByte = pConn->nNoMemBytes;
  pConn->rcSqlite = 0;
  pConn->rcSpill = 0;
  pConn->nNoMemBytes = 0;
  if( !dsIsResourceCode(rc) ) return rc;
  if( (rc & 0xff)==SQLITE_NOMEM ){
    if( rc==rcSqlite ) return rc;
  }else if( rc!=rcSpill ){
    return rc;
  }
  if( *pzErr==0 ){
    if( (rc & 0xff)!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errstr(rc));
    }else if( nByte>0 ){
      *pzErr = sqlite3_mprintf("%s: out of memory (allocating %lld bytes)",
                               zFunc, nByte);
    }else{
      *pzErr = sqlite3_mprintf("%s: out of memory", zFunc);
    }
    if( *pzErr==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_ERROR;
}

/* A function (zFunc) fails for want of memory of its own: SQLITE_ERROR,
** as dsStatementError() has it. */
void dsResultNoMem(sqlite3_context *ctx, const char *zFunc){
  char *zMsg = sqlite3_mprintf("%s: out of memory", zFunc);
  if( zMsg==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error(ctx, zMsg, -1);
    sqlite3_free(zMsg);
  }
}
