/*
** aggregates.c: the aggregate functions of Flink's DataSet API, as SQL
** aggregates, and the registration of all of them (ds_key_stats() lives
** in key_stats.c).
**
**   ds_first(value, n)     JSON array of the group's first n values, in
**                          the order SQLite hands the rows over
**   ds_min_by(value, by)   value of the row with the smallest by
**   ds_max_by(value, by)   value of the row with the largest by
**
** ds_first keeps the values it will return, packed in the row format
** (dsValuePut) one after the other, each after a byte that says whether
** it is JSON text (subtype 'J', as json_object() returns): that goes into
** the array as JSON, as json_group_array() does, so ds_first(json_object(
** ...), n) gives the first n records, as Flink's first(n) does.  The
** buffer is charged to the connection's memory budget; it holds at most
** n values, and the result is one value of about that size, so there is
** nothing to spill.
**
** ds_min_by and ds_max_by keep one row: its by and its value, packed in
** the row format in a buffer that is reused, so the value keeps its own
** type.  by is compared with dsValueCompare(), SQLite's order of values
** (numbers before text before blobs, text by memcmp as BINARY does, 1 and
** 1.0 equal); a row replaces the kept one only when strictly better, so
** the first row wins a tie.  Rows whose by is NULL are skipped.
**
** Window functions.  The three are window functions over frames that
** never drop a row: the default frame, PARTITION BY alone, running frames
** (ORDER BY ...) and any frame that starts at UNBOUNDED PRECEDING; xValue
** reads the state without changing it.  A frame that drops rows (ROWS
** BETWEEN 2 PRECEDING AND CURRENT ROW, ... CURRENT ROW AND UNBOUNDED
** FOLLOWING) makes SQLite call xInverse, which fails with an error that
** says so.  Supporting those exactly would need every row of the frame
** (min_by needs the frame's candidates for the next minimum, first(n) the
** values after the first n), and SQLite does not tell an aggregate
** whether it runs as a window: a plain GROUP BY would have to keep whole
** groups for a window it never has.  Frames with EXCLUDE are computed by
** SQLite afresh for each row, without xInverse, and work.
*/
#include "dataset_int.h"

/*************************************************************************
** Messages
*/

/* An argument as a message shows it: 'text' quoted, NULL, 2.5, x'0A',
** infinity. */
static char *dsShowArg(sqlite3_value *pVal){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
      return sqlite3_mprintf("%lld", sqlite3_value_int64(pVal));
    case SQLITE_FLOAT: {
      /* A finite real with the digits that read back (2.5000000000000004,
      ** not 2.5), as the JSON writer has them. */
      double r = sqlite3_value_double(pVal);
      if( r - r==0.0 ){
        DsText txt;
        DsValue v;
        dsTextInit(&txt);
        v.eType = DS_REAL;
        v.r = r;
        dsJsonValue(&txt, &v);
        return dsTextFinish(&txt);
      }
      /* Infinity in words: SQLite's "Inf" reads like text, and its
      ** 9.0e+999 like a number that someone wrote. */
      return sqlite3_mprintf("%s", r > 0 ? "infinity" : "-infinity");
    }
    case SQLITE_TEXT:
      return sqlite3_mprintf("%Q", (const char *)sqlite3_value_text(pVal));
    case SQLITE_BLOB: {
      const u8 *z = sqlite3_value_blob(pVal);
      int n = sqlite3_value_bytes(pVal);
      sqlite3_str *pStr = sqlite3_str_new(0);
      int i;
      sqlite3_str_append(pStr, "x'", 2);
      for(i=0; i<n; i++) sqlite3_str_appendf(pStr, "%02X", z[i]);
      sqlite3_str_appendchar(pStr, 1, '\'');
      return sqlite3_str_finish(pStr);
    }
    default:
      return sqlite3_mprintf("NULL");
  }
}

/* Fail with the message zFormat, whose one %s is the argument shown
** (function zFunc). */
static void dsArgError(sqlite3_context *ctx, const char *zFunc,
                       const char *zFormat, sqlite3_value *pVal){
  char *zVal = dsShowArg(pVal);
  char *zMsg = zVal ? sqlite3_mprintf(zFormat, zVal) : 0;
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
  }else{
    dsResultNoMem(ctx, zFunc);
  }
  sqlite3_free(zVal);
  sqlite3_free(zMsg);
}

/* xInverse of the functions that are window functions on growing frames. */
static void dsNoInverse(sqlite3_context *ctx, const char *zFunc){
  char *zMsg = sqlite3_mprintf(
      "%s: window frames that drop rows are not supported; use a frame "
      "that starts at UNBOUNDED PRECEDING (the default frame, PARTITION BY "
      "alone, or ORDER BY for a running result)", zFunc);
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
  }else{
    sqlite3_result_error_nomem(ctx);
  }
  sqlite3_free(zMsg);
}

/*************************************************************************
** ds_first(value, n)
*/
typedef struct DsFirst DsFirst;
struct DsFirst {
  DsMem mem;              /* charges aBuf to the connection */
  i64 n;                  /* n, from the first row; 0 before any row */
  i64 nVal;               /* values held */
  u8 *aBuf;               /* each: 1 if JSON text else 0, then the value */
  i64 nBuf;               /* bytes used */
  i64 nAlloc;             /* bytes allocated */
};

/*
** n as ds_first takes it, an INTEGER or an integral REAL (as LIMIT and
** nth_value() take them), into *pn.  0 if it is anything else or not
** positive.
*/
static int dsFirstCount(sqlite3_value *pVal, i64 *pn){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
      *pn = sqlite3_value_int64(pVal);
      return *pn > 0;
    case SQLITE_FLOAT: {
      double r = sqlite3_value_double(pVal);
      if( r >= 1.0 && r < 9223372036854775808.0 && (double)(i64)r==r ){
        *pn = (i64)r;
        return 1;
      }
      return 0;
    }
    default:
      return 0;
  }
}

static int dsFirstReserve(DsFirst *p, i64 nMore){
  i64 nNew;
  u8 *aNew;
  if( p->nBuf + nMore <= p->nAlloc ) return SQLITE_OK;
  nNew = p->nAlloc ? p->nAlloc*2 : 256;
  while( nNew < p->nBuf + nMore ) nNew *= 2;
  aNew = dsRealloc(&p->mem, p->aBuf, nNew);
  if( aNew==0 ) return SQLITE_NOMEM;
  p->aBuf = aNew;
  p->nAlloc = nNew;
  return SQLITE_OK;
}

static void dsFirstStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  DsFirst *p;
  DsValue v;
  i64 n;
  int bJson;
  (void)argc;
  if( !dsFirstCount(argv[1], &n) ){
    dsArgError(ctx, "ds_first", "ds_first: n must be a positive integer, at most "
               "9223372036854775807, not %s", argv[1]);
    return;
  }
  p = sqlite3_aggregate_context(ctx, (int)sizeof(*p));
  if( p==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( p->n==0 ){
    dsMemInit(&p->mem, (DsConn *)sqlite3_user_data(ctx));
    p->n = n;
  }else if( n!=p->n ){
    char *zMsg = sqlite3_mprintf("ds_first: n must be the same on every row "
        "of a group, not %lld after %lld", n, p->n);
    if( zMsg ){
      sqlite3_result_error(ctx, zMsg, -1);
    }else{
      dsResultNoMem(ctx, "ds_first");
    }
    sqlite3_free(zMsg);
    return;
  }
  if( p->nVal >= p->n ) return;
  if( dsValueFromSql(argv[0], &v)!=SQLITE_OK ){
    /* SQLite's own conversion ran out of memory. */
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( dsFirstReserve(p, 1 + dsValueSize(&v))!=SQLITE_OK ){
    dsResultNoMem(ctx, "ds_first");
    return;
  }
  bJson = v.eType==DS_TEXT && sqlite3_value_subtype(argv[0])==DS_JSON_SUBTYPE;
  p->aBuf[p->nBuf] = (u8)bJson;
  p->nBuf = dsValuePut(p->aBuf + p->nBuf + 1, &v) - p->aBuf;
  p->nVal++;
}

/* The JSON array of the values held; p may be NULL (no rows). */
static void dsFirstResult(sqlite3_context *ctx, const DsFirst *p){
  DsText out;
  const u8 *a = p ? p->aBuf : 0;
  const u8 *aEnd = p ? p->aBuf + p->nBuf : 0;
  dsTextInit(&out);
  dsTextChar(&out, '[');
  while( a < aEnd ){
    int bJson = *a++;
    DsValue v;
    a = dsValueDecode(a, &v);
    if( bJson ){
      dsTextAppend(&out, (const char *)v.z, v.n);
    }else{
      dsJsonValue(&out, &v);
    }
    if( a < aEnd ) dsTextChar(&out, ',');
  }
  dsTextChar(&out, ']');
  dsTextResult(ctx, &out, 1, "ds_first",
               "the JSON array of the first n values");
  dsTextFree(&out);
}

static void dsFirstValue(sqlite3_context *ctx){
  dsFirstResult(ctx, sqlite3_aggregate_context(ctx, 0));
}

static void dsFirstFinal(sqlite3_context *ctx){
  DsFirst *p = sqlite3_aggregate_context(ctx, 0);
  dsFirstResult(ctx, p);
  if( p ){
    dsFree(&p->mem, p->aBuf);
    p->aBuf = 0;
    p->nBuf = p->nAlloc = 0;
  }
}

static void dsFirstInverse(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  (void)argc;
  (void)argv;
  dsNoInverse(ctx, "ds_first");
}

/*************************************************************************
** ds_min_by(value, by), ds_max_by(value, by)
*/
typedef struct DsMinMaxBy DsMinMaxBy;
struct DsMinMaxBy {
  u8 *aBuf;               /* the kept row: by, then value, packed */
  i64 nAlloc;             /* bytes allocated; 0 before any row is kept */
  int bKept;              /* a row is kept */
  unsigned int eSubtype;  /* the kept value's subtype ('J' for JSON) */
};

/* The user data of ds_max_by (any non-NULL pointer, never written
** through: const, so that the extension holds no writable static data);
** ds_min_by has NULL. */
static const int dsMaxFlag = 1;

static void dsMinMaxByStep(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  int bMax = sqlite3_user_data(ctx)!=0;
  DsMinMaxBy *p;
  DsValue by, val;
  i64 nNeed;
  (void)argc;
  if( sqlite3_value_type(argv[1])==SQLITE_NULL ) return;
  p = sqlite3_aggregate_context(ctx, (int)sizeof(*p));
  if( p==0 || dsValueFromSql(argv[1], &by)!=SQLITE_OK ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( p->bKept ){
    DsValue old;
    int c;
    dsValueDecode(p->aBuf, &old);
    c = dsValueCompare(&by, &old);
    if( bMax ? c<=0 : c>=0 ) return;
  }
  if( dsValueFromSql(argv[0], &val)!=SQLITE_OK ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  nNeed = dsValueSize(&by) + dsValueSize(&val);
  if( nNeed > p->nAlloc ){
    i64 nNew = nNeed < 64 ? 64 : nNeed;
    u8 *aNew = sqlite3_realloc64(p->aBuf, (sqlite3_uint64)nNew);
    if( aNew==0 ){
      dsResultNoMem(ctx, bMax ? "ds_max_by" : "ds_min_by");
      return;
    }
    p->aBuf = aNew;
    p->nAlloc = nNew;
  }
  dsValuePut(dsValuePut(p->aBuf, &by), &val);
  /* As SQLite's max() does, the value keeps its subtype: the record of
  ** json_object(...) stays JSON when nested in json_array(). */
  p->eSubtype = sqlite3_value_subtype(argv[0]);
  p->bKept = 1;
}

static void dsMinMaxByValue(sqlite3_context *ctx){
  DsMinMaxBy *p = sqlite3_aggregate_context(ctx, 0);
  if( p && p->bKept ){
    DsValue v;
    dsValueDecode(dsValueSkip(p->aBuf), &v);
    dsValueResult(ctx, &v);
    if( p->eSubtype ) sqlite3_result_subtype(ctx, p->eSubtype);
  }
}

static void dsMinMaxByFinal(sqlite3_context *ctx){
  DsMinMaxBy *p = sqlite3_aggregate_context(ctx, 0);
  dsMinMaxByValue(ctx);
  if( p ){
    sqlite3_free(p->aBuf);
    p->aBuf = 0;
    p->nAlloc = 0;
    p->bKept = 0;
  }
}

static void dsMinMaxByInverse(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv){
  (void)argc;
  (void)argv;
  dsNoInverse(ctx, sqlite3_user_data(ctx) ? "ds_max_by" : "ds_min_by");
}

/*************************************************************************
** Registration
**
** None is SQLITE_INNOCUOUS (see dataset.c).  ds_key_stats is not
** SQLITE_DETERMINISTIC: whether its result is exact depends on
** memory_limit and on the memory other operators hold.  It is no window
** function: its approximate mode cannot forget a row, and its result
** costs a pass over every distinct key, too much to pay once per row.
*/
int dsRegisterAggregates(sqlite3 *db, DsConn *pConn){
  const int eWin = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  int rc;
  rc = sqlite3_create_window_function(db, "ds_first", 2,
      eWin | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE, pConn,
      dsFirstStep, dsFirstFinal, dsFirstValue, dsFirstInverse, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_window_function(db, "ds_min_by", 2,
        eWin | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE, 0,
        dsMinMaxByStep, dsMinMaxByFinal, dsMinMaxByValue, dsMinMaxByInverse,
        0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_window_function(db, "ds_max_by", 2,
        eWin | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE, (void *)&dsMaxFlag,
        dsMinMaxByStep, dsMinMaxByFinal, dsMinMaxByValue, dsMinMaxByInverse,
        0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "ds_key_stats", 1,
        SQLITE_UTF8 | SQLITE_RESULT_SUBTYPE, pConn,
        0, dsKeyStatsStep, dsKeyStatsFinal);
  }
  return rc;
}
