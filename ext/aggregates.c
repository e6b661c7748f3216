/*
** aggregates.c: the aggregate functions of Flink's DataSet API, as SQL
** aggregates, and their registration (ds_key_stats() is key_stats.c's).
**
**   ds_first(value, n)     JSON array of the group's first n values, in
**                          the order SQLite hands the rows over
**   ds_min_by(value, by)   value of the row with the smallest by
**   ds_max_by(value, by)   value of the row with the largest by
**
** ds_first keeps the values, packed in the row format (dsValuePut), each
** after a byte that says whether it is JSON text (subtype 'J', as
** json_object() returns): that goes into the array as JSON, as
** json_group_array() does, so ds_first(json_object(...), n) gives the
** first n records, as Flink's first(n) does.
**
** ds_min_by and ds_max_by keep the row with the best by and its value,
** packed in the row format, so the value keeps its own type.  by is
** compared with dsValueCompare(), SQLite's order of values (numbers
** before text before blobs, text by memcmp as BINARY does, 1 and 1.0
** equal); a later row beats a kept one only when strictly better, so the
** first row wins a tie.  Rows whose by is NULL are skipped.
**
** Window functions.  The three are window functions over every frame,
** also frames that drop rows (ROWS BETWEEN 2 PRECEDING AND CURRENT ROW,
** RANGE and GROUPS frames, frames that start FOLLOWING): SQLite calls
** xInverse for the oldest row of the frame, rows leave in the order they
** came, so the rows are kept in a FIFO (DsFifo).  ds_first keeps every
** row of the frame and returns the first n; ds_min_by keeps the rows that
** may still become the best once older ones leave (a monotonic queue:
** amortized O(1) per row, and in a plain aggregate usually a few rows).
** SQLite does not say whether an aggregate runs as a window that will
** drop rows, so before the first xInverse what only such a frame needs is
** kept up to a cap (dsWindowCap); past it the functions keep what a
** plain aggregate needs, and a later xInverse fails with a message.
** Buffers are charged to the connection's memory budget.  Frames with
** EXCLUDE are computed by SQLite afresh for each row, without xInverse.
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

/*************************************************************************
** The rows a window frame may still need (DsFifo)
**
** Records of any length in one buffer, in the order they came, each with
** its length before and after it, so that both ends can be read and
** removed: ds_first removes the oldest (the frame drops rows in the order
** they entered it), ds_min_by also the newest.  The space before the
** first record is given back by moving the records down once it is more
** than half of the buffer, so a sliding frame reuses one buffer.
*/
typedef struct DsFifo DsFifo;
struct DsFifo {
  u8 *a;                  /* the buffer */
  i64 nAlloc;             /* its size */
  i64 iHead;              /* offset of the first record */
  i64 iEnd;               /* offset just past the last record */
  i64 nRec;               /* records held */
};

#define DS_FIFO_OVERHEAD 8    /* a record's two lengths, 4 bytes each */

static u32 dsFifoLen(const u8 *p){
  u32 n;
  memcpy(&n, p, 4);
  return n;
}

/* Room for a record of nPay bytes at the end; a pointer to its payload,
** or NULL when memory ran out. */
static u8 *dsFifoPush(DsFifo *p, DsMem *pMem, i64 nPay){
  i64 nNeed = nPay + DS_FIFO_OVERHEAD;
  u32 n32 = (u32)nPay;
  u8 *z;
  if( nPay > 0x7fffffff ) return 0;
  if( p->iHead > 0 && p->iHead >= p->iEnd - p->iHead ){
    memmove(p->a, p->a + p->iHead, (size_t)(p->iEnd - p->iHead));
    p->iEnd -= p->iHead;
    p->iHead = 0;
  }
  if( p->iEnd + nNeed > p->nAlloc ){
    i64 nNew = p->nAlloc ? p->nAlloc*2 : 128;
    u8 *aNew;
    while( nNew < p->iEnd + nNeed ) nNew *= 2;
    aNew = dsRealloc(pMem, p->a, nNew);
    if( aNew==0 ) return 0;
    p->a = aNew;
    p->nAlloc = nNew;
  }
  z = p->a + p->iEnd;
  memcpy(z, &n32, 4);
  memcpy(z + 4 + nPay, &n32, 4);
  p->iEnd += nNeed;
  p->nRec++;
  return z + 4;
}

/* The payload of the oldest record, of the newest, of the one after z. */
static u8 *dsFifoFirst(const DsFifo *p){
  return p->nRec ? p->a + p->iHead + 4 : 0;
}
static u8 *dsFifoLast(const DsFifo *p){
  return p->nRec ? p->a + p->iEnd - 4 - dsFifoLen(p->a + p->iEnd - 4) : 0;
}
static u8 *dsFifoNext(const DsFifo *p, u8 *z){
  z += dsFifoLen(z - 4) + DS_FIFO_OVERHEAD;
  return z < p->a + p->iEnd ? z : 0;
}

static void dsFifoPopFirst(DsFifo *p){
  p->iHead += dsFifoLen(p->a + p->iHead) + DS_FIFO_OVERHEAD;
  if( --p->nRec==0 ) p->iHead = p->iEnd = 0;
}
static void dsFifoPopLast(DsFifo *p){
  p->iEnd -= dsFifoLen(p->a + p->iEnd - 4) + DS_FIFO_OVERHEAD;
  if( --p->nRec==0 ) p->iHead = p->iEnd = 0;
}

static void dsFifoFree(DsFifo *p, DsMem *pMem){
  dsFree(pMem, p->a);
  memset(p, 0, sizeof(*p));
}

/*
** SQLite does not tell an aggregate whether it runs as a window, nor
** whether the frame will drop rows: until it first calls xInverse, a
** plain aggregate, a running window and a frame that drops rows look the
** same.  Until then the functions keep what a frame would need, but at
** most this many bytes (1/16 of memory_limit); past it they keep what a
** plain aggregate needs and note that they did (bLossy), and an xInverse
** after that fails with dsLossyInverse()'s message.  Once xInverse has
** been called the frame is known to drop rows and all it needs is kept.
*/
static i64 dsWindowCap(DsConn *pConn){
  i64 n = pConn ? pConn->nMemLimit / 16 : 16*1024*1024;
  return n < 1024 ? 1024 : n;
}

static void dsLossyInverse(sqlite3_context *ctx, const char *zFunc,
                           DsConn *pConn){
  char *zMsg = sqlite3_mprintf(
      "%s: this window frame drops rows, and it held more than %lld bytes "
      "of rows (1/16 of memory_limit) before it dropped the first; so "
      "many are not kept before a frame is known to drop rows: use a "
      "smaller frame, or a larger memory_limit", zFunc, dsWindowCap(pConn));
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
  }else{
    sqlite3_result_error_nomem(ctx);
  }
  sqlite3_free(zMsg);
}

/*************************************************************************
** ds_first(value, n)
**
** Each row is a record of the FIFO: a byte that is 1 if the value is
** JSON text, then the value.  The first n records are the result.
*/
typedef struct DsFirst DsFirst;
struct DsFirst {
  DsMem mem;              /* charges the FIFO to the connection */
  i64 n;                  /* n, from the first row; 0 before any row */
  DsFifo fifo;            /* the frame's rows (see dsWindowCap) */
  int bInverse;           /* xInverse has been called: a frame drops rows */
  int bLossy;             /* rows after the first n were not kept */
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

static void dsFirstStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  DsFirst *p;
  DsValue v;
  i64 n;
  u8 *z;
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
  if( p->bLossy && p->fifo.nRec >= p->n ) return;
  if( dsValueFromSql(argv[0], &v)!=SQLITE_OK ){
    /* SQLite's own conversion ran out of memory. */
    sqlite3_result_error_nomem(ctx);
    return;
  }
  z = dsFifoPush(&p->fifo, &p->mem, 1 + dsValueSize(&v));
  if( z==0 ){
    dsResultNoMem(ctx, "ds_first");
    return;
  }
  z[0] = v.eType==DS_TEXT
      && sqlite3_value_subtype(argv[0])==DS_JSON_SUBTYPE;
  dsValuePut(z + 1, &v);
  if( !p->bInverse && p->fifo.nRec > p->n
   && p->fifo.iEnd - p->fifo.iHead > dsWindowCap(p->mem.pConn) ){
    /* Keep the first n, as a plain aggregate needs (see dsWindowCap). */
    while( p->fifo.nRec > p->n ) dsFifoPopLast(&p->fifo);
    p->bLossy = 1;
  }
}

/* The JSON array of the first n values held; p may be NULL (no rows). */
static void dsFirstResult(sqlite3_context *ctx, const DsFirst *p){
  DsText out;
  u8 *z = p ? dsFifoFirst(&p->fifo) : 0;
  i64 i;
  dsTextInit(&out);
  dsTextChar(&out, '[');
  for(i=0; z && i<p->n; i++, z=dsFifoNext(&p->fifo, z)){
    DsValue v;
    dsValueDecode(z + 1, &v);
    if( i ) dsTextChar(&out, ',');
    if( z[0] ){
      dsTextAppend(&out, (const char *)v.z, v.n);
    }else{
      dsJsonValue(&out, &v);
    }
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
  if( p ) dsFifoFree(&p->fifo, &p->mem);
}

/* The oldest row leaves the frame. */
static void dsFirstInverse(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  DsFirst *p = sqlite3_aggregate_context(ctx, 0);
  (void)argc;
  (void)argv;
  if( p==0 || p->fifo.nRec==0 ) return;
  if( p->bLossy ){
    dsLossyInverse(ctx, "ds_first", p->mem.pConn);
    return;
  }
  p->bInverse = 1;
  dsFifoPopFirst(&p->fifo);
}

/*************************************************************************
** ds_min_by(value, by), ds_max_by(value, by)
**
** The FIFO holds the candidates: rows of the frame that no later row
** beats, so their by values rise from the first to the last (fall, for
** max), and the first is the result.  A new row first removes the
** candidates it beats strictly from the end (an equal by stays: the
** earlier row wins a tie), then joins at the end.  When a row leaves the
** frame it is the first candidate or none.  Each record: the row's
** number among all rows of the frame's run (NULL by counted too, as
** xInverse is called for those as well), the value's subtype, by, value.
*/
typedef struct DsMinMaxBy DsMinMaxBy;
struct DsMinMaxBy {
  DsMem mem;              /* charges the FIFO to the connection */
  DsFifo fifo;            /* the candidates */
  i64 nIn;                /* rows stepped */
  i64 nOut;               /* rows removed by xInverse */
  int bInit;              /* mem is set up */
  int bInverse;           /* xInverse has been called: a frame drops rows */
  int bLossy;             /* only the best row was kept (see dsWindowCap) */
};

#define DS_MINMAX_HDR 12      /* row number (8 bytes), subtype (4) */

static i64 dsMinMaxRowNum(const u8 *z){
  i64 i;
  memcpy(&i, z, 8);
  return i;
}

static void dsMinMaxByStep(sqlite3_context *ctx, sqlite3_value **argv,
                           int bMax){
  DsMinMaxBy *p = sqlite3_aggregate_context(ctx, (int)sizeof(*p));
  DsValue by, val;
  i64 iRow;
  u32 eSubtype;
  u8 *z;
  if( p==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( !p->bInit ){
    dsMemInit(&p->mem, (DsConn *)sqlite3_user_data(ctx));
    p->bInit = 1;
  }
  iRow = p->nIn++;
  if( sqlite3_value_type(argv[1])==SQLITE_NULL ) return;
  if( dsValueFromSql(argv[1], &by)!=SQLITE_OK ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  while( p->fifo.nRec ){
    DsValue old;
    int c;
    dsValueDecode(dsFifoLast(&p->fifo) + DS_MINMAX_HDR, &old);
    c = dsValueCompare(&by, &old);
    if( bMax ? c<=0 : c>=0 ) break;
    dsFifoPopLast(&p->fifo);
  }
  /* Past the cap only the best row is kept, as a plain aggregate needs. */
  if( p->bLossy && p->fifo.nRec ) return;
  if( dsValueFromSql(argv[0], &val)!=SQLITE_OK ){
    /* SQLite's own conversion ran out of memory. */
    sqlite3_result_error_nomem(ctx);
    return;
  }
  z = dsFifoPush(&p->fifo, &p->mem, DS_MINMAX_HDR + dsValueSize(&by)
                 + dsValueSize(&val));
  if( z==0 ){
    dsResultNoMem(ctx, bMax ? "ds_max_by" : "ds_min_by");
    return;
  }
  /* As SQLite's max() does, the value keeps its subtype: the record of
  ** json_object(...) stays JSON when nested in json_array(). */
  eSubtype = sqlite3_value_subtype(argv[0]);
  memcpy(z, &iRow, 8);
  memcpy(z + 8, &eSubtype, 4);
  dsValuePut(dsValuePut(z + DS_MINMAX_HDR, &by), &val);
  if( !p->bInverse && p->fifo.nRec > 1
   && p->fifo.iEnd - p->fifo.iHead > dsWindowCap(p->mem.pConn) ){
    while( p->fifo.nRec > 1 ) dsFifoPopLast(&p->fifo);
    p->bLossy = 1;
  }
}

static void dsMinByStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  dsMinMaxByStep(ctx, argv, 0);
}

static void dsMaxByStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc;
  dsMinMaxByStep(ctx, argv, 1);
}

static void dsMinMaxByValue(sqlite3_context *ctx){
  DsMinMaxBy *p = sqlite3_aggregate_context(ctx, 0);
  u8 *z = p ? dsFifoFirst(&p->fifo) : 0;
  if( z ){
    DsValue v;
    u32 eSubtype;
    memcpy(&eSubtype, z + 8, 4);
    dsValueDecode(dsValueSkip(z + DS_MINMAX_HDR), &v);
    dsValueResult(ctx, &v);
    if( eSubtype ) sqlite3_result_subtype(ctx, eSubtype);
  }
}

static void dsMinMaxByFinal(sqlite3_context *ctx){
  DsMinMaxBy *p = sqlite3_aggregate_context(ctx, 0);
  dsMinMaxByValue(ctx);
  if( p ) dsFifoFree(&p->fifo, &p->mem);
}

/* The oldest row leaves the frame: the first candidate, if it is that
** row. */
static void dsMinMaxByInverse(sqlite3_context *ctx, const char *zFunc){
  DsMinMaxBy *p = sqlite3_aggregate_context(ctx, 0);
  i64 iRow;
  u8 *z;
  if( p==0 ) return;
  if( p->bLossy ){
    dsLossyInverse(ctx, zFunc, p->mem.pConn);
    return;
  }
  p->bInverse = 1;
  iRow = p->nOut++;
  z = dsFifoFirst(&p->fifo);
  if( z && dsMinMaxRowNum(z)==iRow ) dsFifoPopFirst(&p->fifo);
}

static void dsMinByInverse(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  (void)argc;
  (void)argv;
  dsMinMaxByInverse(ctx, "ds_min_by");
}

static void dsMaxByInverse(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  (void)argc;
  (void)argv;
  dsMinMaxByInverse(ctx, "ds_max_by");
}

/*************************************************************************
** Registration
**
** None is SQLITE_INNOCUOUS (see dataset.c).
*/
int dsRegisterAggregates(sqlite3 *db, DsConn *pConn){
  const int eWin = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  int rc;
  rc = sqlite3_create_window_function(db, "ds_first", 2,
      eWin | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE, pConn,
      dsFirstStep, dsFirstFinal, dsFirstValue, dsFirstInverse, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_window_function(db, "ds_min_by", 2,
        eWin | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE, pConn,
        dsMinByStep, dsMinMaxByFinal, dsMinMaxByValue, dsMinByInverse, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_window_function(db, "ds_max_by", 2,
        eWin | SQLITE_SUBTYPE | SQLITE_RESULT_SUBTYPE, pConn,
        dsMaxByStep, dsMinMaxByFinal, dsMinMaxByValue, dsMaxByInverse, 0);
  }
  return rc;
}
