/*
** text.c: the text buffer DsText, and text results within SQLite's limit.
**
** JSON (json.c), statistics (stats.c), settings (config.c) and messages
** are made in a DsText: appends are a bounds check and a memcpy, and
** dsTextReset() keeps the memory, so a cursor making the JSON of millions
** of rows allocates once.  An allocation failure is recorded in the
** buffer and makes later appends do nothing; a text longer than SQLite
** may return fails with a message saying so (dsTextResult), never cut.
*/
#include "dataset_int.h"

#include <stdarg.h>

/*
** Make room for nMore more bytes; non-zero (and p->rc set) on failure:
** SQLITE_TOOBIG past DS_TEXT_MAX, longer than any string SQLite can
** return (so not "out of memory" when memory is plenty), else
** SQLITE_NOMEM.
*/
int dsTextGrow(DsText *p, i64 nMore){
  i64 nNew = p->nAlloc ? p->nAlloc*2 : 256;
  char *zNew;
  if( p->rc ) return p->rc;
  if( p->n + nMore > DS_TEXT_MAX ){
    p->rc = SQLITE_TOOBIG;
    return p->rc;
  }
  while( nNew < p->n + nMore ) nNew *= 2;
  if( nNew > DS_TEXT_MAX ) nNew = DS_TEXT_MAX;
  zNew = sqlite3_realloc64(p->z, (sqlite3_uint64)nNew);
  if( zNew==0 ){
    p->rc = SQLITE_NOMEM;
    return p->rc;
  }
  p->z = zNew;
  p->nAlloc = nNew;
  return SQLITE_OK;
}

void dsTextAppendf(DsText *p, const char *zFormat, ...){
  va_list ap;
  char *z;
  va_start(ap, zFormat);
  z = sqlite3_vmprintf(zFormat, ap);
  va_end(ap);
  if( z==0 ){
    p->rc = SQLITE_NOMEM;
    return;
  }
  dsTextAppendAll(p, z);
  sqlite3_free(z);
}

/* The text as a NUL-terminated sqlite3_malloc'd string (NULL after a
** failure); the buffer is left empty. */
char *dsTextFinish(DsText *p){
  char *z = 0;
  dsTextChar(p, 0);
  if( p->rc==SQLITE_OK ){
    z = p->z;
    p->z = 0;
  }
  dsTextFree(p);
  return z;
}

void dsTextFree(DsText *p){
  sqlite3_free(p->z);
  dsTextInit(p);
}

/* The longest text a function can return: SQLite's length limit, and no
** more than a DsText holds. */
i64 dsLengthLimit(sqlite3 *db){
  i64 n = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  return n < DS_TEXT_MAX ? n : DS_TEXT_MAX;
}

/* "zWhat would be longer than SQLite's length limit (nMax bytes)": how
** every operator and function says that a value it makes is too long. */
char *dsTooLongText(const char *zWhat, i64 nMax){
  return sqlite3_mprintf("%s would be longer than SQLite's length limit "
                         "(%lld bytes)", zWhat, nMax);
}

/* Fail with SQLITE_TOOBIG, naming the function and what it was making
** (SQLite's own "string or blob too big" names neither). */
static void dsResultTooLong(sqlite3_context *ctx, const char *zFunc,
                            const char *zWhat){
  i64 nMax = dsLengthLimit(sqlite3_context_db_handle(ctx));
  char *zWhy = dsTooLongText(zWhat, nMax);
  char *zMsg = zWhy ? sqlite3_mprintf("%s: %s", zFunc, zWhy) : 0;
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
    sqlite3_result_error_code(ctx, SQLITE_TOOBIG);
  }else{
    sqlite3_result_error_nomem(ctx);
  }
  sqlite3_free(zWhy);
  sqlite3_free(zMsg);
}

/*
** z, of n bytes, as the result of function zFunc (copied), with the JSON
** subtype when bJson; zWhat names it in the message if it is too long.
*/
void dsResultText(sqlite3_context *ctx, const char *zFunc,
                  const char *zWhat, const char *z, i64 n, int bJson){
  if( n > dsLengthLimit(sqlite3_context_db_handle(ctx)) ){
    dsResultTooLong(ctx, zFunc, zWhat);
    return;
  }
  sqlite3_result_text64(ctx, n ? z : "", (sqlite3_uint64)n,
                        SQLITE_TRANSIENT, SQLITE_UTF8);
  if( bJson ) sqlite3_result_subtype(ctx, DS_JSON_SUBTYPE);
}

/* The text as the result of function zFunc (copied, so the buffer can be
** reused), as dsResultText() returns it. */
void dsTextResult(sqlite3_context *ctx, DsText *p, int bJson,
                  const char *zFunc, const char *zWhat){
  if( p->rc==SQLITE_TOOBIG ){
    dsResultTooLong(ctx, zFunc, zWhat);
  }else if( p->rc ){
    dsResultNoMem(ctx, zFunc);
  }else{
    dsResultText(ctx, zFunc, zWhat, p->z, p->n, bJson);
  }
}
