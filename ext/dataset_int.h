/*
** dataset_int.h: declarations shared by the sources of the `dataset`
** extension.  Nothing here is exported from the shared library except
** sqlite3_dataset_init(), declared in dataset.h.
**
** The pieces, one file each:
**
**   dataset.c     entry point, per-connection state, ds_version()
**   errors.c      failures of the extension's own resources: the code and
**                 message a statement ends with (dsStatementError)
**   config.c      ds_config(): memory_limit, temp_dir, threads, strict_hints
**   memory.c      the per-connection memory budget and the row arena
**   row.c         the one row format, key hashing, key equality and order
**   text.c        the text buffer DsText; text results within limits
**   json.c        JSON text of values, keys and rows
**   sqltext.c     SQL text helpers (lexing) and checks of text arguments
**   input.c       dataset arguments (tables, views, queries), keys
**   reader.c      reading an input's rows (DsReader, ds_input_row, the
**                 wide path, keys first); the size of an input
**   operator.c    the operator layer: DsOp, errors, the interrupt and
**                 budget checks of operators, side names, hints and join
**                 types, the choice of the side to build on
**   spill.c       spill files: rows written once, read back in order
**   rowbuf.c      row buffers (memory, then a spill file); block nested loop
**   hashtable.c   the hash table (directory over slot-sorted rows) and the
**                 Bloom filter used by every hash strategy
**   hashjoin.c    BROADCAST_HASH_x and REPARTITION_HASH_x
**   sort.c        sorting rows on their keys
**   mergejoin.c   REPARTITION_SORT_MERGE
**   join.c        the join driver: strict hints, readers, the strategy run
**   plan.c        OPTIMIZER_CHOOSES's choice of strategy; ds_join_plan()
**   stats.c       ds_last_stats() and the statistics of a run
**   vtab_args.c   what the CREATE VIRTUAL TABLE forms share: name=value
**                 arguments, typed two-input columns, placeholders
**   vtab.c        the one virtual-table skeleton serving every module
**   join_vtab.c   the ds_join_hint module's descriptor and callbacks
**   plan_vtab.c   the ds_join_plan module's
**   aggregates.c  ds_first(), ds_min_by(), ds_max_by(); registers them all
**   key_stats.c   ds_key_stats(): exact key counts, then sketches
**   cogroup.c     coGroup: both sides sorted, merged into groups
**   cogroup_vtab.c the ds_cogroup module's descriptor and callbacks
**   cross.c       cross product: a buffered side, a streamed side
**   cross_vtab.c  the ds_cross module's descriptor and callbacks
**   interrupt.c   interrupt checks of CPU-only loops, operator steps
**   progress.c    the progress line of a long operator on standard error
*/
#ifndef DATASET_INT_H
#define DATASET_INT_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include <assert.h>
#include <stddef.h>
#include <string.h>

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

/*
** The function of a per-row loop, with every call inside it inlined where
** the compiler can (GCC, Clang), as link-time optimization does anyway
** for a function called from one place only: the row maker, called by
** two readers, would otherwise stay a call on the path of every row.
*/
#if defined(__GNUC__)
# define DS_FLATTEN __attribute__((flatten))
#else
# define DS_FLATTEN
#endif

/* Rows are read from inputs and handed on in batches of this many. */
#define DS_BATCH 1024

/*************************************************************************
** Per-connection state (dataset.c, config.c)
*/
typedef struct DsConn DsConn;
typedef struct DsProgress DsProgress;
struct DsConn {
  sqlite3 *db;
  i64 nMemLimit;          /* memory_limit: bytes all operators may hold */
  char *zTempDir;         /* temp_dir as set, or NULL for the default */
  int nThread;            /* threads */
  int bStrictHints;       /* strict_hints */
  int bProgress;          /* progress */
  int msProgressDelay;    /* draw the line after this long (progress.c) */
  DsProgress *pProgress;  /* the line of the operator running, or NULL */
  i64 nMemUsed;           /* bytes held now by operators of this connection */
  char *zLastStats;       /* JSON for ds_last_stats(), or NULL */
  int (*xIsInterrupted)(sqlite3 *);  /* sqlite3_is_interrupted, or NULL */
  int nNesting;           /* inputs being stepped one inside another */
  int bNestingHit;        /* their bound was reached (input.c) */
  void (*xTestStep)(void *, const char *);  /* test builds: ds_test_hook() */
  void *pTestArg;
  int rcSqlite;           /* SQLite's own error from an input step, until
                          ** reported (dsStatementError) */
  int rcSpill;            /* the failure of a spill file, until reported */
  i64 nNoMemBytes;        /* size of the last allocation of an operator's
                          ** memory (DsMem) that failed, until reported */
};

/* Failures of the extension's own resources (errors.c) */
int dsSqliteError(DsConn *pConn, int rc);
int dsStatementError(DsConn *pConn, const char *zFunc, int rc,
                     char **pzErr);
void dsResultNoMem(sqlite3_context *ctx, const char *zFunc);

int dsRegisterConfig(sqlite3 *db, DsConn *pConn);
const char *dsTempDir(DsConn *pConn);

/*************************************************************************
** Interrupt checks (interrupt.c)
**
** CPU-only loops call dsTickerTick() with the weight of the work just
** done, in units of about two nanoseconds; every DS_TICK_CHECK units the
** ticker checks for sqlite3_interrupt() and lets the progress handler run.
*/
#define DS_TICK_CHECK 65536     /* units of work between two checks */
#define DS_TICK_ROW   64        /* a row handled: hashed, copied, compared */

typedef struct DsTicker DsTicker;
struct DsTicker {
  DsConn *pConn;
  sqlite3_stmt *pPing;    /* stepping it notices an interrupt */
  u32 nTick;              /* units of work since the last check */
  const char *zStep;      /* what the operator is doing, or NULL */
  DsProgress *pProg;      /* the progress line its operator owns, or NULL */
};

int (*dsFindIsInterrupted(void))(sqlite3 *);
void dsTickerInit(DsTicker *p, DsConn *pConn);
int dsTickerCheck(DsTicker *p);
void dsTickerStep(DsTicker *p, const char *zStep);
void dsTickerFinish(DsTicker *p);

static inline int dsTickerTick(DsTicker *p, u32 n){
  p->nTick += n;
  if( p->nTick < DS_TICK_CHECK ) return SQLITE_OK;
  return dsTickerCheck(p);
}

/*
** The progress line (progress.c).  The periodic points that look at it
** (the ticker's check, a reader's batch) test DsConn.pProgress first:
** with progress off that is all they cost.
*/
typedef struct DsOp DsOp;
int dsProgressDelayMs(void);
void dsProgressStart(DsOp *pOp);
void dsProgressStep(DsProgress *p, const char *zStep);
void dsProgressAdvance(DsProgress *p);
void dsProgressCheck(DsProgress *p);
void dsProgressKnowRows(DsConn *pConn, int iSide, i64 nRow);
void dsProgressEnd(DsProgress *p);
int dsProgressWantsRows(const DsProgress *p, int iSide);
void dsProgressSetRows(DsProgress *p, int iSide, i64 nRow);
void dsProgressFinish(DsOp *pOp);

#ifdef DS_TEST_HOOKS
/* What a test binds to ds_test_hook(?) with sqlite3_bind_pointer(). */
typedef struct DsTestHook DsTestHook;
struct DsTestHook {
  void (*xStep)(void *pArg, const char *zStep);
  void *pArg;
};
int dsRegisterTestHooks(sqlite3 *db, DsConn *pConn);
#endif

/*************************************************************************
** Memory (memory.c)
**
** Every buffer an operator holds is charged to a DsMem, which charges the
** connection.  The arena hands out row storage in chunks that grow
** geometrically, so a small input costs little and a large one few calls.
*/
typedef struct DsMem DsMem;
struct DsMem {
  DsConn *pConn;
  i64 nUsed;              /* bytes this operator holds */
  i64 nPeak;              /* most it ever held */
};

void dsMemInit(DsMem *pMem, DsConn *pConn);
void *dsMalloc(DsMem *pMem, i64 n);
void *dsRealloc(DsMem *pMem, void *p, i64 n);
void dsFree(DsMem *pMem, void *p);
int dsMemOverBudget(const DsMem *pMem);

typedef struct DsChunk DsChunk;
typedef struct DsArena DsArena;
struct DsArena {
  DsMem *pMem;
  DsChunk *pChunk;        /* newest chunk, linked to the older ones */
  u8 *pFree;              /* next free byte of pChunk */
  u8 *pEnd;               /* end of pChunk */
  i64 nNext;              /* size of the next chunk to allocate */
  i64 nByte;              /* bytes held by all chunks */
};

void dsArenaInit(DsArena *p, DsMem *pMem);
void *dsArenaGrow(DsArena *p, i64 n);
i64 dsArenaWouldAlloc(const DsArena *p, i64 n);
int dsArenaWouldExceed(const DsArena *p, i64 n, i64 nReserve);
void dsArenaUndo(DsArena *p, void *pLast);

/* n bytes aligned to 8, valid until the arena is reset or cleared; NULL
** on OOM.  Inline: every row read is allocated here. */
static inline void *dsArenaAlloc(DsArena *p, i64 n){
  u8 *pRet;
  assert( n>=0 );
  n = (n + 7) & ~(i64)7;
  if( p->pEnd - p->pFree < n ) return dsArenaGrow(p, n);
  pRet = p->pFree;
  p->pFree += n;
  return pRet;
}
/*
** For a caller that knows only an upper bound of what it will allocate
** until it has written it: dsArenaPeek() returns the free space of the
** current chunk if n bytes fit there (else NULL, and the caller takes
** another path), and dsArenaCommit() then takes the m <= n bytes written,
** as dsArenaAlloc(p, m) would have.
*/
static inline void *dsArenaPeek(DsArena *p, i64 n){
  n = (n + 7) & ~(i64)7;
  return p->pEnd - p->pFree >= n ? p->pFree : 0;
}
static inline void dsArenaCommit(DsArena *p, i64 m){
  assert( m>=0 && p->pEnd - p->pFree >= ((m + 7) & ~(i64)7) );
  p->pFree += (m + 7) & ~(i64)7;
}
void dsArenaReset(DsArena *p);
void dsArenaClear(DsArena *p);

/*************************************************************************
** The row format (row.c)
**
** One row of one input, holding only the columns an operator needs: the
** key columns first, in key order, then the other needed columns.  The
** values are packed back to back in aData, each as a type byte followed
** by its payload (8 bytes for INTEGER and REAL; a 4-byte length and the
** bytes for TEXT and BLOB; nothing for NULL).  Values are kept exactly as
** the input gave them; only hashing and comparison treat 1 and 1.0 alike.
**
** Everything from `hash` to the end of aData is position independent: that
** image is what spill files hold, so a row is written and read back with
** one copy.
*/
#define DS_NULL 0
#define DS_INT  1
#define DS_REAL 2
#define DS_TEXT 3
#define DS_BLOB 4

#define DS_ROW_MATCHED 0x01   /* found a partner (outer joins) */
#define DS_ROW_NULLKEY 0x02   /* some key column is NULL: matches nothing */
#define DS_ROW_NUMBERS 0x04   /* every value INTEGER or REAL: value i is the
                              ** 9 bytes at aData + 9*i (DS_NUMBER_SIZE) */
#define DS_NUMBER_SIZE 9

typedef struct DsRow DsRow;
struct DsRow {
  DsRow *pNext;           /* link in a list or hash chain */
  u64 hash;               /* hash of the key; 0 for a NULL key */
  u32 nData;              /* bytes in aData */
  u32 nKey;               /* bytes of aData holding the key columns */
  u8 flags;               /* DS_ROW_* */
  u8 aData[];
};

#define DS_ROW_HDR   (offsetof(DsRow, aData) - offsetof(DsRow, hash))
#define DS_ROW_IMAGE(p) ((u8 *)&(p)->hash)
#define DS_ROW_SIZE(nData) (offsetof(DsRow, aData) + (size_t)(nData))

i64 dsRowRoom(const DsMem *pMem, u32 nData);

typedef struct DsValue DsValue;
struct DsValue {
  int eType;              /* DS_NULL .. DS_BLOB */
  int n;                  /* bytes of TEXT or BLOB */
  i64 i;                  /* DS_INT */
  double r;               /* DS_REAL */
  const u8 *z;            /* DS_TEXT, DS_BLOB */
};

/*
** A test a row's key hash must pass to be worth making into a row: a
** Bloom filter over the build side's keys, say.  xMayMatch returns 0 only
** when no row with that key hash can find a partner.
*/
typedef struct DsRowFilter DsRowFilter;
struct DsRowFilter {
  int (*xMayMatch)(DsRowFilter *, u64 hash);
};

int dsRowFromValues(DsArena *pArena, sqlite3_value **apIn, int nCol,
                    int nKeyCol, DsValue *aVal, DsRowFilter *pFilter,
                    DsRow **ppRow);
int dsKeyValuesFilteredOut(DsRowFilter *pFilter, sqlite3_value **apIn,
                           int nKeyCol, int *pbOut);
const u8 *dsValueSkip(const u8 *p);
void dsRowValues(const DsRow *pRow, int nCol, DsValue *aVal);
void dsValueResult(sqlite3_context *ctx, const DsValue *pVal);
int dsValueCompare(const DsValue *a, const DsValue *b);
int dsTextOrderIsBinary(sqlite3 *db);

/*
** The value of an SQL value, without a copy: TEXT and BLOB point into pIn
** and stay valid while it does.  SQLITE_NOMEM if the text could not be
** had as UTF-8.  (SQLite never hands over a NaN: it stores NaN as NULL.)
** Inline, with the two below: reading an input runs them for every value.
*/
static inline int dsValueFromSql(sqlite3_value *pIn, DsValue *pVal){
  pVal->n = 0;
  pVal->z = 0;
  pVal->i = 0;
  pVal->r = 0.0;
  switch( sqlite3_value_type(pIn) ){
    case SQLITE_INTEGER:
      pVal->eType = DS_INT;
      pVal->i = sqlite3_value_int64(pIn);
      break;
    case SQLITE_FLOAT:
      pVal->eType = DS_REAL;
      pVal->r = sqlite3_value_double(pIn);
      break;
    case SQLITE_TEXT:
      pVal->eType = DS_TEXT;
      pVal->z = sqlite3_value_text(pIn);
      if( pVal->z==0 ) return SQLITE_NOMEM;
      pVal->n = sqlite3_value_bytes(pIn);
      break;
    case SQLITE_BLOB:
      pVal->eType = DS_BLOB;
      pVal->z = sqlite3_value_blob(pIn);
      pVal->n = sqlite3_value_bytes(pIn);
      break;
    default:
      pVal->eType = DS_NULL;
      break;
  }
  return SQLITE_OK;
}

/* Unpack the value at p into *pVal (TEXT and BLOB point into the row);
** returns the byte after it. */
static inline const u8 *dsValueDecode(const u8 *p, DsValue *pVal){
  u32 n32;
  pVal->eType = *p++;
  switch( pVal->eType ){
    case DS_INT:
      memcpy(&pVal->i, p, 8);
      return p + 8;
    case DS_REAL:
      memcpy(&pVal->r, p, 8);
      return p + 8;
    case DS_TEXT:
    case DS_BLOB:
      memcpy(&n32, p, 4);
      pVal->n = (int)n32;
      pVal->z = p + 4;
      return p + 4 + n32;
    default:
      return p;
  }
}

/*
** The values of a row, decoded as they are asked for: a virtual table's
** xColumn often wants one or two values of a wide row, and decodes only
** up to the last of them.  aVal has room for every value of the row.
*/
typedef struct DsRowDecoder DsRowDecoder;
struct DsRowDecoder {
  const u8 *pNext;        /* the row's next undecoded value */
  int nDone;              /* values decoded into aVal[] */
  DsValue *aVal;
  const DsRow *pRow;      /* the row */
};

static inline void dsDecoderStart(DsRowDecoder *p, const DsRow *pRow){
  p->pNext = pRow ? pRow->aData : 0;
  p->nDone = 0;
  p->pRow = pRow;
}

/* Value i of the row (which has more than i values). */
static inline const DsValue *dsDecoderValue(DsRowDecoder *p, int i){
  assert( i>=0 && p->pRow!=0 );
  if( p->nDone<=i ){
    const u8 *z = p->pNext;
    int n = p->nDone;
    do{
      z = dsValueDecode(z, &p->aVal[n]);
    }while( ++n<=i );
    p->pNext = z;
    p->nDone = n;
  }
  return &p->aVal[i];
}

/*
** Value i of the row alone, for an xColumn that wants one value: a row of
** numbers only (DS_ROW_NUMBERS) has it at a known place, without decoding
** the values before it.  Unlike dsDecoderValue(), the values before i are
** not left decoded in aVal[].
*/
static inline const DsValue *dsDecoderOne(DsRowDecoder *p, int i){
  assert( i>=0 && p->pRow!=0 );
  if( p->nDone<=i && (p->pRow->flags & DS_ROW_NUMBERS) ){
    dsValueDecode(p->pRow->aData + DS_NUMBER_SIZE*(size_t)i, &p->aVal[i]);
    return &p->aVal[i];
  }
  return dsDecoderValue(p, i);
}

/* Bytes that pVal takes packed (dsValuePut). */
static inline i64 dsValueSize(const DsValue *pVal){
  switch( pVal->eType ){
    case DS_INT:
    case DS_REAL:
      return DS_NUMBER_SIZE;
    case DS_TEXT:
    case DS_BLOB:
      return 5 + (i64)pVal->n;
    default:
      return 1;
  }
}

/* Pack pVal at p, as a row holds it; returns the byte after it. */
static inline u8 *dsValuePut(u8 *p, const DsValue *pVal){
  u32 n32;
  switch( pVal->eType ){
    case DS_INT:
      *p++ = DS_INT;
      memcpy(p, &pVal->i, 8);
      return p + 8;
    case DS_REAL:
      *p++ = DS_REAL;
      memcpy(p, &pVal->r, 8);
      return p + 8;
    case DS_TEXT:
    case DS_BLOB:
      *p++ = (u8)pVal->eType;
      n32 = (u32)pVal->n;
      memcpy(p, &n32, 4);
      if( pVal->n>0 ) memcpy(p + 4, pVal->z, (size_t)pVal->n);
      return p + 4 + pVal->n;
    default:
      *p++ = DS_NULL;
      return p;
  }
}
u64 dsValueHash(const DsValue *pVal, u64 seed);

u64 dsKeyHash(const u8 *aKey, int nKeyCol);
int dsRowKeyEqual(const DsRow *a, const DsRow *b);

/*
** Is the key of pRow one INTEGER, the commonest key?  Then *pI gets it.
** The inline fast paths of key equality and order, and the sorter's test
** of exact prefixes, start here.
*/
static inline int dsRowKeyInt(const DsRow *pRow, i64 *pI){
  if( pRow->nKey!=DS_NUMBER_SIZE || pRow->aData[0]!=DS_INT ) return 0;
  memcpy(pI, &pRow->aData[1], 8);
  return 1;
}

/*
** dsRowKeyEqual(), with the commonest case inline: two keys of one
** INTEGER each, equal exactly when their bytes are.
*/
static inline int dsRowKeyEqualFast(const DsRow *a, const DsRow *b){
  i64 x, y;
  if( dsRowKeyInt(a, &x) && dsRowKeyInt(b, &y) ) return x==y;
  return dsRowKeyEqual(a, b);
}
int dsRowKeyCompareAll(const DsRow *a, const DsRow *b);

/*
** SQLite's order of the keys of two rows (dsRowKeyCompareAll()), with the
** commonest case inline: keys of one INTEGER each.  Sorting and merging
** compare rows whose prefixes tie, and with ten rows to a key most of the
** sorter's comparisons are of such keys.
*/
static inline int dsRowKeyCompare(const DsRow *a, const DsRow *b){
  i64 x, y;
  if( dsRowKeyInt(a, &x) && dsRowKeyInt(b, &y) ) return (x > y) - (x < y);
  return dsRowKeyCompareAll(a, b);
}
int dsRowGroupCompare(const DsRow *a, const DsRow *b);

/*************************************************************************
** Text (text.c) and JSON text (json.c)
*/
#define DS_JSON_SUBTYPE 74    /* 'J': what SQLite's JSON functions return */

/* The most bytes SQLite's allocator hands out at once (it refuses
** 0x7fffff00 and more), so the longest text a DsText can hold. */
#define DS_TEXT_MAX ((i64)0x7ffffeff)

/*
** A text buffer for JSON (and the like): appends are a bounds check and a
** memcpy, and dsTextReset() keeps the memory, so a cursor making the JSON
** of millions of rows allocates once.  An allocation failure is recorded
** in rc and makes later appends do nothing.
*/
typedef struct DsText DsText;
struct DsText {
  char *z;                /* the text (not terminated) */
  i64 n;                  /* bytes used */
  i64 nAlloc;             /* bytes allocated */
  int rc;                 /* SQLITE_OK, SQLITE_NOMEM, or SQLITE_TOOBIG */
};
int dsTextGrow(DsText *p, i64 nMore);
void dsTextAppendf(DsText *p, const char *zFormat, ...);
char *dsTextFinish(DsText *p);
void dsTextFree(DsText *p);
i64 dsLengthLimit(sqlite3 *db);
char *dsTooLongText(const char *zWhat, i64 nMax);
void dsResultText(sqlite3_context *ctx, const char *zFunc,
                  const char *zWhat, const char *z, i64 n, int bJson);
void dsTextResult(sqlite3_context *ctx, DsText *p, int bJson,
                  const char *zFunc, const char *zWhat);

static inline void dsTextInit(DsText *p){ memset(p, 0, sizeof(*p)); }
static inline void dsTextReset(DsText *p){ p->n = 0; p->rc = SQLITE_OK; }
static inline void dsTextAppend(DsText *p, const char *z, i64 n){
  if( p->n + n > p->nAlloc && dsTextGrow(p, n) ) return;
  memcpy(p->z + p->n, z, (size_t)n);
  p->n += n;
}
static inline void dsTextAppendAll(DsText *p, const char *z){
  dsTextAppend(p, z, (i64)strlen(z));
}
static inline void dsTextChar(DsText *p, char c){
  if( p->n + 1 > p->nAlloc && dsTextGrow(p, 1) ) return;
  p->z[p->n++] = c;
}

void dsJsonValue(DsText *pOut, const DsValue *pVal);
void dsJsonString(DsText *pOut, const char *z, int n);

/*************************************************************************
** SQL text helpers (sqltext.c), used by input.c and vtab_args.c
*/
const char *dsSkipSpace(const char *z);
int dsTailIsEmpty(const char *z);
int dsKeyword(const char *z, const char *zKw);
int dsQuotedLength(const char *z);
int dsParseIdent(const char *z, char **pzOut);
int dsParseName(const char *z, char **pzSchema, char **pzName);
int dsLooksLikeStatement(const char *z);
int dsIsQuery(const char *z);
int dsIsBareQueryKeyword(const char *z);
char *dsTrimEnd(const char *z, int n);
char *dsUnwrapQuery(const char *zText);
const char *dsTypeNoun(sqlite3_value *pVal);
int dsArgRefuseNul(const char *zFunc, const char *zArg, sqlite3_value *pVal,
                   char **pzErr);
int dsOptionalTextArg(const char *zFunc, const char *zArg,
                      sqlite3_value *pVal, const char **pz, char **pzErr);

/*************************************************************************
** Dataset inputs and keys (input.c)
*/
typedef struct DsInput DsInput;
struct DsInput {
  char *zText;            /* the argument as given, for messages */
  char *zBody;            /* one SELECT that yields the whole input */
  char *zSchema;          /* schema of a named table or view, or NULL */
  char *zName;            /* name of a table or view, NULL for a query */
  int bPlainScan;         /* zBody scans one table plainly: see input.c */
  int nCol;               /* columns of the input */
  char **azCol;           /* their names, made unique (id, id_2, ...) */
  char **azDecl;          /* their declared types; entries may be NULL */
  char **azColl;          /* their collations other than BINARY, where
                          ** known (see dsColumnCollation); or NULL */
};

int dsInputOpen(sqlite3 *db, const char *zFunc, const char *zSide,
                const char *zText, DsInput **ppIn, char **pzErr);
void dsInputFree(DsInput *pIn);
int dsInputKeys(const char *zFunc, const char *zArg, const DsInput *pIn,
                const char *zSide, const char *zKeys, int *pnKey,
                int **paiKey, char **pzErr);
char *dsInputColumnList(const DsInput *pIn);
int dsInputFromValue(sqlite3 *db, const char *zFunc, const char *zSide,
                     sqlite3_value *pVal, DsInput **ppIn, char **pzErr);
int dsKeysFromValue(const char *zFunc, const char *zArg, const DsInput *pIn,
                    const char *zSide, sqlite3_value *pVal, int *pnKey,
                    int **paiKey, char **pzErr);
int dsInputOpenPair(sqlite3 *db, const char *zFunc, sqlite3_value **apArg,
                    DsInput **apIn, int **aaiKey, int *pnKey, char **pzErr);
int dsCheckKeyCounts(const char *zFunc, const int *anKey, char **pzErr);
int dsIsNoMem(int rc);
char *dsPrepareError(sqlite3 *db, const char *zFunc, const char *zSide,
                     const char *zText, const char *zSql);


/*
** A source of rows: an input being read, a spill file, a row buffer.
** xNext hands out one row; xBatch, where a source has it, up to nMax at
** once (see dsSourceBatch), which for an input is far cheaper.
** xKeysFirst, where a source has it, is told before the first row is read
** that its rows will be read through a filter (dsSourceKeysFirst).
*/
typedef struct DsSource DsSource;
struct DsSource {
  int (*xNext)(DsSource *, DsArena *, DsRow **);   /* SQLITE_ROW/DONE/err */
  int (*xBatch)(DsSource *, DsArena *, DsRow **, int, i64, DsRowFilter *,
                int *);                             /* or NULL */
  int (*xKeysFirst)(DsSource *, DsRowFilter *, int *);  /* or NULL */
  void (*xClose)(DsSource *);
  i64 nRow;               /* rows read so far (a filter's rejects too) */
  char *zErr;             /* message of the last error, or NULL */
};

int dsSourceBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow, int nMax,
                  i64 nMaxByte, DsRowFilter *pFilter, int *pnRow);
int dsSourceKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                      int *pbKeysFirst);
int dsRegisterReader(sqlite3 *db);

int dsReaderOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                 int nKey, const int *aiKey, int nPay, const int *aiPay,
                 DsSource **ppSrc, char **pzErr);
int dsInputEstimateRows(DsConn *pConn, const DsInput *pIn, i64 nCap,
                        i64 *pnRow, int *pbAtLeast);
int dsInputQuickRows(DsConn *pConn, const DsInput *pIn, i64 *pnRow);
int dsInputSampleRowBytes(DsConn *pConn, const DsInput *pIn, int nKey,
                          const int *aiKey, int nPay, const int *aiPay,
                          i64 *pnBytes);
i64 dsInputStat1Count(sqlite3 *db, const DsInput *pIn);
int dsInputPlanColumns(const DsInput *pIn, int nKey, const int *aiKey,
                       int bAll, const u8 *aWant, int **paiSlot,
                       int **paiPay, int *pnPay);

/* JSON of keys and rows (json.c) */
void dsJsonArray(DsText *pOut, const DsValue *aVal, int n);
void dsJsonKey(DsText *pOut, const DsValue *aVal, int nKey);
void dsKeyResult(sqlite3_context *ctx, const DsValue *aVal, int nKey,
                 DsText *pText, const char *zFunc);
void dsJsonObject(DsText *pOut, const DsInput *pIn, const int *aiSlot,
                  const DsValue *aVal);



/*************************************************************************
** The statistics of a run (stats.c)
*/
/* Timing phases reported in ds_last_stats().ms */
#define DS_PHASE_PLAN   0
#define DS_PHASE_BUILD  1
#define DS_PHASE_PROBE  2
#define DS_PHASE_SORT   3
#define DS_PHASE_MERGE  4
#define DS_N_PHASE      5

typedef struct DsStats DsStats;
struct DsStats {
  const char *zOperator;  /* "join", "cogroup", "cross" */
  const char *zHint;      /* the hint as given (canonical name) */
  const char *zJoinType;  /* INNER, LEFT_OUTER, ... or NULL */
  const char *zStrategy;  /* the strategy really used */
  int iBuild;             /* 0 left, 1 right, -1 none */
  i64 anRow[2];           /* rows read from left and right */
  i64 nOut;               /* rows produced */
  i64 nPartition;
  i64 nSpilled;           /* bytes written to spill files */
  i64 nPeakMem;
  char *zReason;          /* why this strategy (sqlite3_malloc'd) */
  int bLost;              /* memory ran out while writing them */
  double aMs[DS_N_PHASE];
  int bComplete;          /* the run reached its end (its last row) */
  int rcStop;             /* the error the operator failed with, or 0 */
  const char *zStoppedIn; /* the step it was in then */
  char *zMessage;         /* the statement's message then (sqlite3_malloc'd) */
};

void dsStatsInit(DsStats *p, const char *zOperator);
void dsStatsPhase(DsStats *p, int ePhase, double *ptPrev);
double dsNowMs(void);
void dsStatsPublish(DsConn *pConn, DsStats *p);
void dsStatsClear(DsStats *p);
int dsRegisterStats(sqlite3 *db, DsConn *pConn);

/*************************************************************************
** The operator layer (operator.c): the context every operator runs in,
** the names of the sides, hints and join types, and the choice of the
** side to build on.  Every operator and every lower layer (sort.c,
** spill.c, rowbuf.c, hashtable.c) uses it; it calls none of them.
*/
/* The name of side i (0 or 1) in messages and statistics.  Inline: every
** layer names sides, the lowest too. */
static inline const char *dsSideName(int i){
  assert( i==0 || i==1 );
  return i ? "right" : "left";
}

#define DS_HINT_OPTIMIZER         0
#define DS_HINT_BROADCAST_FIRST   1
#define DS_HINT_BROADCAST_SECOND  2
#define DS_HINT_REPARTITION_FIRST 3
#define DS_HINT_REPARTITION_SECOND 4
#define DS_HINT_SORT_MERGE        5
#define DS_N_HINT                 6

/* A join type is which sides keep their unmatched rows. */
#define DS_KEEP_LEFT   0x01
#define DS_KEEP_RIGHT  0x02
#define DS_JOIN_INNER  0
#define DS_JOIN_LEFT   DS_KEEP_LEFT
#define DS_JOIN_RIGHT  DS_KEEP_RIGHT
#define DS_JOIN_FULL   (DS_KEEP_LEFT | DS_KEEP_RIGHT)

extern const char *const dsHintName[DS_N_HINT];
extern const char *const dsJoinTypeName[4];

int dsParseHint(const char *zFunc, sqlite3_value *pVal, int *peHint,
                char **pzErr);
int dsParseJoinType(const char *zFunc, sqlite3_value *pVal, int *peType,
                    char **pzErr);
int dsParseHintText(const char *zFunc, const char *z, int *peHint,
                    char **pzErr);
int dsParseJoinTypeText(const char *zFunc, const char *z, int *peType,
                        char **pzErr);
int dsCheckStrictHint(DsConn *pConn, const char *zFunc, int eHint,
                      int eType, char **pzErr);

/* The shape of a join hint's strategy (dsHintShape[eHint]): the side its
** hash table is built on, -1 for none, and whether it partitions both
** sides.  dsHashHint() is the hint of a hash strategy of that shape. */
typedef struct DsHintShape DsHintShape;
struct DsHintShape {
  signed char iBuild;     /* 0 left, 1 right, -1 none */
  signed char bRepartition;
};
extern const DsHintShape dsHintShape[DS_N_HINT];
static inline int dsHashHint(int iBuild, int bRepartition){
  assert( (iBuild==0 || iBuild==1) && (bRepartition==0 || bRepartition==1) );
  return DS_HINT_BROADCAST_FIRST + iBuild + 2*bRepartition;
}

/*
** A running operator: its connection, its share of the memory budget,
** its statistics, its two inputs.  Strategies, sorts and spills take it.
*/
typedef struct DsOp DsOp;
struct DsOp {
  DsConn *pConn;
  const char *zFunc;      /* for messages */
  DsMem mem;
  DsStats stats;
  DsSource *apSrc[2];     /* left and right rows */
  int eType;              /* DS_JOIN_* */
  DsTicker tick;          /* interrupt checks; the step it is in */
  char *zErr;             /* message of the operator's own last error */
  int nSpillBuf;          /* I/O buffer per spill file; 0: the default */
  int nFreeFd;            /* spill files kept for reuse; -1: keep none */
  int nFreeFdAlloc;       /* room in aFreeFd */
  int *aFreeFd;           /* their descriptors, emptied (spill.c) */
  int bDone;              /* the operator has handed out its last row */
};

int dsOpInit(DsOp *pOp, DsConn *pConn, const char *zFunc,
             const char *zOperator);
void dsOpFinish(DsOp *pOp);
int dsOpCheckInterrupt(DsOp *pOp);
int dsOpError(DsOp *pOp, int rc, const char *zFormat, ...);
char *dsOpErrMsg(DsOp *pOp, int rc);
void dsOpEnded(DsOp *pOp);
void dsOpProgressInputs(DsOp *pOp, DsInput *const apIn[2]);

/* Call in CPU-only loops, once per row handled (dsOpTick) or with the
** weight of the work done (dsOpTickN; see interrupt.c). */
static inline int dsOpTick(DsOp *pOp){
  return dsTickerTick(&pOp->tick, DS_TICK_ROW);
}
static inline int dsOpTickN(DsOp *pOp, u32 n){
  return dsTickerTick(&pOp->tick, n);
}
/* The operator starts a step of its work (a static string). */
static inline void dsOpStep(DsOp *pOp, const char *zStep){
  dsTickerStep(&pOp->tick, zStep);
}

/*
** The tails of an operator's open and next: the message of a failed
** open (unless a reader already gave one); a row produced counted, or the
** operator ended with SQLITE_DONE (complete, its progress line erased)
** or an error, its message in *pzErr.
*/
static inline int dsOpOpenFailed(DsOp *pOp, int rc, char **pzErr){
  if( *pzErr==0 ) *pzErr = dsOpErrMsg(pOp, rc);
  return rc;
}
static inline int dsOpNextTail(DsOp *pOp, int rc, char **pzErr){
  assert( rc!=SQLITE_OK && !pOp->bDone );
  if( rc==SQLITE_ROW ){
    pOp->stats.nOut++;
    return rc;
  }
  pOp->bDone = 1;
  /* One call on either path (dsOpErrMsg erases the progress line too):
  ** the per-row path of the caller saves no more registers for it. */
  if( rc!=SQLITE_DONE ){
    *pzErr = dsOpErrMsg(pOp, rc);
  }else{
    pOp->stats.bComplete = 1;
    dsOpEnded(pOp);
  }
  return rc;
}

/* A hash table larger than this is taken not to stay in a CPU's cache:
** its probes miss, where the table of one of 32 partitions does not.
** On uni 1M x 1M (tables of about 60 MB) repartitioning was 1.25 times
** faster than broadcasting, with no spill (docs/strategies.md). */
#define DS_CACHE_BYTES ((i64)16 << 20)

i64 dsRowCostEstimate(int nKey, int nPay, i64 nKeyBytes);
/*
** What the choice of the side to build on (a join's hash table, a cross
** product's buffer) knows of the two inputs.  The caller fills pOp,
** apIn[], anRowHint[], nKey, anPay[] and anCap[]; dsCountSides() finds
** anRow[] and abAtLeast[], counting only what the choice needs: a view or
** query by reading it ahead through pOp->apSrc[] (operator.c), which then
** hands the rows read to the operator, so that it runs once.
*/
typedef struct DsSides DsSides;
struct DsSides {
  DsOp *pOp;              /* the operator, its readers open; or NULL */
  DsInput *apIn[2];       /* left and right inputs */
  i64 anRowHint[2];       /* rows of each if known beforehand, else -1 */
  int nKey;               /* key columns carried per row (0: none) */
  int anPay[2];           /* other columns carried per row, per side */
  const int *aaiKey[2];   /* the key columns of each input */
  const int *aaiPay[2];   /* the other columns carried, of each input */
  i64 anCap[2];           /* count a view or query up to this many rows */
  i64 anRow[2];           /* rows found, -1 when unknown */
  int abAtLeast[2];       /* anRow[s] is only as far as the count went */
  i64 anRowBytes[2];      /* bytes a row costs, as measured; 0: unknown */
};
int dsCountSides(DsConn *pConn, DsSides *p);
int dsSmallBesideQuery(DsConn *pConn, const DsSides *p, i64 *pnBytes);
char *dsSmallBesideQueryText(DsConn *pConn, const DsSides *p, int s,
                             i64 nBytes, const char *zWhat);
int dsSmallerSide(const i64 *anRow, const int *abAtLeast);
char *dsSmallerSideText(const i64 *anRow, const int *abAtLeast, int iSmall);

/*************************************************************************
** Equi-joins (join.c, hashtable.c, hashjoin.c, sort.c, mergejoin.c)
*/
typedef struct DsJoinSpec DsJoinSpec;
struct DsJoinSpec {
  const char *zFunc;      /* the SQL function or module, for messages */
  DsInput *apIn[2];       /* left and right inputs */
  int nKey;               /* key columns per side */
  int *aaiKey[2];         /* their column numbers in each input */
  int anPay[2];           /* other columns to carry, per side */
  int *aaiPay[2];         /* their column numbers in each input */
  int eHint;              /* DS_HINT_* */
  int eType;              /* DS_JOIN_* */
  int bWantOrder;         /* the query wants rows in key order */
  int bLimit;             /* the query stops early (a LIMIT): stream */
  i64 anRowHint[2];       /* rows of each input if known, else -1 */
};

/*
** A running join hands out pairs: ap[0] is the left row, ap[1] the right
** row; either is NULL for the missing side of an outer-join row.  The
** rows stay valid until the next call.
**
** A strategy may make more than one pair per call of xNext: it returns
** the first in ap[] and queues the others in apQueue, two row pointers
** per pair, which dsJoinNext() hands out before calling xNext again; the
** queued rows must stay valid until then.  A strategy that makes one
** pair per call leaves nQueue 0.  An error ends the join, and pairs still
** queued then are dropped with the statement.
*/
typedef struct DsPairIter DsPairIter;
struct DsPairIter {
  int (*xNext)(DsPairIter *, DsRow **ap);     /* SQLITE_ROW/DONE/err */
  void (*xClose)(DsPairIter *);
  DsRow **apQueue;        /* pairs made ahead */
  int nQueue;             /* pairs in apQueue */
  int iQueue;             /* pairs of them handed out */
};

typedef struct DsJoin DsJoin;
int dsJoinOpen(DsConn *pConn, const DsJoinSpec *pSpec, DsJoin **ppJoin,
               char **pzErr);
int dsJoinNext(DsJoin *p, DsRow **ap, char **pzErr);
void dsJoinClose(DsJoin *p);

/* OPTIMIZER_CHOOSES (plan.c) */
int dsChooseStrategy(DsOp *pOp, const DsJoinSpec *pSpec,
                     int *peStrategy, char **pzReason);

/* The plan of a join, as ds_join_plan() shows it (plan.c). */
typedef struct DsJoinPlan DsJoinPlan;
struct DsJoinPlan {
  int eStrategy;          /* DS_HINT_*, never OPTIMIZER_CHOOSES */
  int iBuild;             /* the side built on; -1 for sort-merge */
  i64 anRow[2];           /* rows of each input */
  i64 nOutput;            /* rows the join would produce */
  char *zTopKeys;         /* JSON: the keys producing the most rows */
  i64 nMemory;            /* bytes the strategy would want */
  char *zReason;          /* why, in words */
};
int dsJoinPlanCompute(DsConn *pConn, const DsJoinSpec *pSpec, DsJoinPlan *p,
                      char **pzErr);
void dsJoinPlanClear(DsJoinPlan *p);


/*
** A hash table of build rows (hashtable.c): one sub-table per list of
** rows it was made from, each a directory of slots (low bits of the hash)
** over an array of the rows sorted by slot.  The caller says which
** sub-table a hash belongs to (its partition).
*/
typedef struct DsHashPart DsHashPart;
struct DsHashPart {
  u8 *aRow;               /* the rows, slot after slot */
  const i64 *aOff;        /* mask+2 offsets: slot s is aOff[s]..aOff[s+1] */
  u64 mask;               /* slots - 1 */
  i64 nByte;              /* bytes of aRow */
};

typedef struct DsHashTable DsHashTable;
struct DsHashTable {
  DsMem *pMem;
  DsHashPart *aPart;      /* NULL: no table */
  int nPart;
  i64 nRow;
};

/* Bytes from one row of a table, or of an arena, to the next. */
#define DS_ROW_STRIDE(p) ((i64)((DS_ROW_SIZE((p)->nData) + 7) & ~(size_t)7))

int dsHashTableBuild(DsHashTable *p, DsMem *pMem, int nPart,
                     DsRow *const *apList, const i64 *anRow,
                     DsArena *const *apArena, DsOp *pOp);
void dsHashTableFree(DsHashTable *p);
i64 dsHashTableDirectoryBytes(const i64 *anRow, int nPart);

/* The rows of hash h's slot in sub-table iPart: from the one returned to
** *ppEnd (excluded), each DS_ROW_STRIDE() after the last. */
static inline DsRow *dsHashTableSlot(const DsHashTable *p, int iPart, u64 h,
                                     const u8 **ppEnd){
  assert( iPart>=0 && iPart<p->nPart );
  const DsHashPart *pPart = &p->aPart[iPart];
  const i64 *pOff = &pPart->aOff[h & pPart->mask];
  *ppEnd = pPart->aRow + pOff[1];
  return (DsRow *)(pPart->aRow + pOff[0]);
}

/* Where hash h's slot starts in the directory, for prefetching. */
static inline const void *dsHashTableSlotAddr(const DsHashTable *p,
                                              int iPart, u64 h){
  const DsHashPart *pPart = &p->aPart[iPart];
  return &pPart->aOff[h & pPart->mask];
}

/*
** A Bloom filter of key hashes (hashtable.c): a power-of-two array of
** 64-bit words; a hash sets three bits of one word.  The bits come from
** the hash itself (every bit is as good as another), the three bit
** positions from its low 18 bits and the word from the bits above them,
** below the 5 high bits that choose a partition (so the filter of one
** partition, whose hashes share those, still spreads).  One word per key
** keeps a test to one cache miss.  It never says no to a hash that was
** added.
*/
typedef struct DsBloom DsBloom;
struct DsBloom {
  u64 *aWord;             /* NULL: no filter */
  u64 mask;               /* words - 1 */
};

int dsBloomInit(DsBloom *p, DsMem *pMem, i64 nWord);
void dsBloomFree(DsBloom *p, DsMem *pMem);
void dsBloomAddList(DsBloom *p, const DsRow *pList);

/* splitmix64's finalizer: fresh, well-mixed bits from a hash. */
static inline u64 dsMix64(u64 x){
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27; x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

static inline u64 dsBloomWordBits(u64 h){
  return (1ULL << (h & 63)) | (1ULL << ((h >> 6) & 63))
       | (1ULL << ((h >> 12) & 63));
}

static inline void dsBloomAdd(DsBloom *p, u64 hash){
  assert( p->aWord!=0 );
  p->aWord[(hash >> 18) & p->mask] |= dsBloomWordBits(hash);
}

static inline int dsBloomMayHave(const DsBloom *p, u64 hash){
  u64 bits = dsBloomWordBits(hash);
  return (p->aWord[(hash >> 18) & p->mask] & bits)==bits;
}


int dsHashJoinOpen(DsOp *pOp, int iBuild, int bRepartition,
                   DsPairIter **ppIter);
int dsMergeJoinOpen(DsOp *pOp, DsPairIter **ppIter);


/*
** Spill files (spill.c): a temporary file of rows in the row format,
** written in one pass, then read back in the order written, as often as
** needed.  Writes and reads go through large buffers.  The file is
** unlinked as soon as it is created, so it vanishes with its descriptor
** on every path (success, error, interrupt, crash).
*/
typedef struct DsSpill DsSpill;
int dsSpillOpen(DsOp *pOp, DsSpill **ppSpill);
int dsSpillWrite(DsSpill *p, const DsRow *pRow);
int dsSpillRewind(DsSpill *p);
int dsSpillRead(DsSpill *p, DsArena *pArena, DsRow **ppRow);
void dsSpillClose(DsSpill *p);
i64 dsSpillBufferBytes(const DsOp *pOp);
#ifdef DS_TEST_HOOKS
/* Test-only fault hooks (spill.c, tests/testfixture.c). */
void dsSpillTestFault(int bWrite, int nCountdown, int eKind);
void dsSpillTestCalls(int bWrite, int *pnCall, int *pnFault);
#endif

/*
** Row buffers (rowbuf.c): copies of rows in the order appended, in memory
** while the budget allows and in a spill file after that; read back from
** the start as often as needed, through the embedded DsSource.
*/
typedef struct DsRowBuf DsRowBuf;
struct DsRowBuf {
  DsSource base;          /* reading it (xClose is not set: not owned) */
  DsOp *pOp;
  DsArena arena;          /* rows held in memory */
  DsRow *pHead, *pTail;   /* them, linked in order */
  i64 nMem;               /* rows in memory */
  DsSpill *pFile;         /* rows appended once memory ran out */
  i64 nMemMax;            /* bytes of rows to hold in memory at most;
                          ** 0: as many as the budget allows */
  i64 nReserve;           /* bytes of the budget a row kept in memory
                          ** must leave free */
  int bHoldFirst;         /* keep the first row in memory regardless */
  i64 nFileWidest;        /* the widest row in pFile (dsRowRoom()) */
  i64 nRow;               /* all rows */
  DsRow *pCur;            /* next row in memory to read */
  int bReadFile;
};
void dsRowBufInit(DsRowBuf *p, DsOp *pOp);
int dsRowBufAppend(DsRowBuf *p, const DsRow *pRow);
int dsRowBufRewind(DsRowBuf *p);
int dsRowBufNext(DsRowBuf *p, DsArena *pArena, DsRow **ppRow);
void dsRowBufClear(DsRowBuf *p);
void dsRowBufFree(DsRowBuf *p);

/* The cross product of a stream of rows, read once in blocks, and a row
** buffer, read once per block (rowbuf.c). */
typedef struct DsBlockCross DsBlockCross;
struct DsBlockCross {
  DsOp *pOp;
  DsSource *pOuter;       /* read once */
  DsRowBuf *pInner;       /* read once per block of pOuter */
  DsArena blockArena;     /* the rows of the current block */
  DsRow **aBlock;
  int nBlock, nAlloc, iBlock;
  u32 nBlockWidest;       /* nData of the widest row of the block */
  int bOuterDone;
  DsArena innerArena;     /* the current inner row, when read from a file */
  DsRow *pInnerRow;
  i64 nLoaded;            /* blocks loaded so far */
};
void dsBlockCrossInit(DsBlockCross *p, DsOp *pOp, DsSource *pOuter,
                      DsRowBuf *pInner);
int dsBlockCrossNext(DsBlockCross *p, DsRow **ppOuter, DsRow **ppInner);
void dsBlockCrossFree(DsBlockCross *p);

/*
** Sorting (sort.c): every row of a source, handed back in key order:
** DS_ORDER_KEY is SQLite's ORDER BY order of the key columns
** (dsRowKeyCompare), DS_ORDER_GROUP puts all NULL keys first as one group
** (dsRowGroupCompare).  dsSorterOpen() reads the whole source, sorting in
** memory and writing sorted runs to spill files past the budget;
** dsSorterNext() then merges.  A row stays valid until the next
** dsSorterNext() call on the same sorter.
*/
#define DS_ORDER_KEY   0
#define DS_ORDER_GROUP 1
typedef struct DsSorter DsSorter;
int dsSorterOpen(DsOp *pOp, DsSource *pSrc, int eOrder, DsSorter **ppSorter);
int dsSorterNext(DsSorter *p, DsRow **ppRow);
i64 dsSorterWidest(const DsSorter *p);
void dsSorterClose(DsSorter *p);

/*************************************************************************
** The CREATE VIRTUAL TABLE forms of the modules (vtab_args.c)
*/
/* The name=value arguments a module takes: the first nRequired of
** azName must be given, the others may be.  dsVtabArgsParse() fills one
** value per name (NULL for an optional one not given). */
typedef struct DsVtabArgSpec DsVtabArgSpec;
struct DsVtabArgSpec {
  const char *zFunc;      /* module name, for messages */
  int nName;
  int nRequired;
  const char *const *azName;
};

int dsVtabArgsParse(const DsVtabArgSpec *pSpec, int argc,
                    const char *const *argv, char **azValue, char **pzErr);
void dsVtabArgsFree(const DsVtabArgSpec *pSpec, char **azValue);
int dsVtabArgWord(const char *zValue, char **pzOut);
int dsVtabIsCreating(sqlite3 *db, const char *zSchema, const char *zTab);
int dsVtabIsFunctionForm(sqlite3 *db, int argc, const char *const *argv);

/* What the CREATE form of every two-input module keeps about its table:
** its name, the inputs as its columns were declared, why it is unusable
** (a reconnect that could not read its inputs: it has the placeholder
** schema), and how many of its xFilter/xNext calls are running (more than
** one can only come from tables that read each other in a cycle). */
typedef struct DsVtabTyped DsVtabTyped;
struct DsVtabTyped {
  const char *zFunc;      /* module name, for messages */
  char *zName;            /* the table's name */
  int bTemp;              /* in the temp schema: gone with the connection */
  char *zUnusable;        /* why the inputs could not be read on connect */
  DsInput *apIn[2];       /* the inputs as the columns were declared */
  int nActive;            /* xFilter or xNext calls of this table running */
};
int dsVtabTypedInit(DsVtabTyped *p, const char *zFunc, const char *zSchema,
                    const char *zName);
int dsVtabTypedConnected(sqlite3 *db, DsVtabTyped *p, int rc, int bCreating,
                         char **pzErr);
int dsVtabTypedUsable(sqlite3_vtab *pVtab, const DsVtabTyped *p);
int dsVtabTypedReopen(DsVtabTyped *p, sqlite3 *db, DsInput **apIn,
                      char **pzErr);
int dsVtabTypedWanted(const DsVtabTyped *p, const char *idxStr,
                      u8 **aaWant);
void dsVtabTypedClear(DsVtabTyped *p);

char *dsVtabPairName(DsInput *const apIn[2], int iSide, int iCol);
void dsVtabSchemaColumn(sqlite3_str *pSql, const char *zName,
                        const char *zDecl, const char *zColl);
int dsVtabCheckWidth(sqlite3 *db, const char *zFunc, const char *zTab,
                     int nCol, const char *zFrom, const char *zFix,
                     char **pzErr);
int dsVtabDeclare(sqlite3 *db, const char *zFunc, const char *zTab,
                  sqlite3_str *pSql, char **pzErr);
int dsVtabDeclarePair(sqlite3 *db, const char *zFunc, const char *zTab,
                      DsInput *const apIn[2], char **pzErr);
int dsVtabDeclarePlaceholder(sqlite3 *db);
int dsVtabFunctionBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo,
                            const DsVtabArgSpec *pSpec, int iFirst,
                            int *pmArg);
void dsVtabFunctionArgs(int mArg, int argc, sqlite3_value **argv, int nArg,
                        sqlite3_value **aArg);
void dsVtabSetError(sqlite3_vtab *pVtab, char *zMsg);
int dsVtabColUsed(u64 mUsed, int iCol);

/*************************************************************************
** The virtual-table skeleton (vtab.c): one set of methods serves every
** module, driven by the module's descriptor.  A module's table and cursor
** structs start with a DsVtab and a DsVtabCursor.
*/
#define DS_VTAB_MAX_ARG   6   /* arguments of a module at most */
#define DS_VTAB_USE_SHIFT 8   /* idxNum bit of the first output column used
                              ** (table-valued form; bits 0-5: arguments) */

typedef struct DsVtabModule DsVtabModule;
typedef struct DsVtab DsVtab;
typedef struct DsVtabCursor DsVtabCursor;

struct DsVtab {
  sqlite3_vtab base;
  const DsVtabModule *pMod;
  DsConn *pConn;
  int bTyped;             /* the CREATE VIRTUAL TABLE form */
  DsVtabTyped typed;      /* that form: name, inputs as declared, nActive */
};

struct DsVtabCursor {
  sqlite3_vtab_cursor base;
  /* xColumn of the form: a pointer, so that the two stay apart and the
  ** CREATE form's small one is not weighed down by the JSON one. */
  int (*xColumn)(DsVtabCursor *, sqlite3_context *, int);
  DsConn *pConn;
  DsVtab *pTab;
  sqlite3_value *apArg[DS_VTAB_MAX_ARG];  /* the arguments (hidden columns) */
  DsInput *apIn[2];       /* the inputs of the run */
  i64 iRowid;
  int bEof;
};

/* A module: see vtab.c for how each member is used. */
struct DsVtabModule {
  DsVtabArgSpec args;     /* name and arguments */
  const char *zSchema;    /* the table-valued form's schema */
  int iArg0;              /* its first hidden (argument) column */
  int nUse;               /* its output columns recorded in idxNum */
  i64 nFunctionRows;      /* its estimatedRows */
  i64 iRowid0;            /* rowid of the first row */
  size_t szTab, szCur;    /* sizes of the module's table and cursor */
  int bColUsedIdxStr;     /* CREATE form: colUsed goes to idxStr, as hex */
  /* The CREATE form; xSetup NULL: the module has none. */
  int (*xSetup)(sqlite3 *, DsVtab *, char **azValue, int bCreating,
                char **pzErr);
  void (*xTableClear)(DsVtab *);                              /* or NULL */
  int (*xTableBestIndex)(DsVtab *, sqlite3_index_info *);     /* or NULL */
  void (*xFunctionOrder)(DsVtab *, sqlite3_index_info *);     /* or NULL */
  /* A run: open the operator (aArg NULL for the CREATE form, whose
  ** inputs are in the cursor already), step it (SQLITE_ROW, SQLITE_DONE,
  ** or an error with *pzErr), release what the run set up. */
  int (*xStart)(DsVtabCursor *, int idxNum, const char *idxStr,
                sqlite3_value **aArg, char **pzErr);
  int (*xStep)(DsVtabCursor *, char **pzErr);
  void (*xReset)(DsVtabCursor *);
  void (*xCursorClear)(DsVtabCursor *);                       /* or NULL */
  int (*xFunctionColumn)(DsVtabCursor *, sqlite3_context *, int);
  int (*xTableColumn)(DsVtabCursor *, sqlite3_context *, int);
};

int dsVtabRegister(sqlite3 *db, const DsVtabModule *pMod, DsConn *pConn,
                   void (*xFreeConn)(void *));

/*************************************************************************
** Modules and functions
*/
int dsRegisterJoinVtab(sqlite3 *db, DsConn *pConn,
                       void (*xFreeConn)(void *));
int dsRegisterPlan(sqlite3 *db, DsConn *pConn);
int dsRegisterAggregates(sqlite3 *db, DsConn *pConn);

int dsRegisterKeyStats(sqlite3 *db, DsConn *pConn);   /* key_stats.c */

/* Flags newer SQLite headers define; older SQLite ignores unknown bits. */
#ifndef SQLITE_RESULT_SUBTYPE
# define SQLITE_RESULT_SUBTYPE 0x001000000
#endif
int dsRegisterCoGroupVtab(sqlite3 *db, DsConn *pConn);
int dsRegisterCrossVtab(sqlite3 *db, DsConn *pConn);

/*************************************************************************
** coGroup (cogroup.c): every distinct key of either input with the group
** of rows each side has for it.  Groups come in DS_ORDER_GROUP order: the
** NULL-key group of the left side, then that of the right side (they
** never meet), then the other keys ascending.  Each side's group is
** counted, and made into a JSON array of row objects where asked for.
*/
typedef struct DsCoGroupSpec DsCoGroupSpec;
struct DsCoGroupSpec {
  const char *zFunc;      /* the SQL function or module, for messages */
  DsInput *apIn[2];       /* left and right inputs */
  int nKey;               /* key columns per side */
  int *aaiKey[2];         /* their column numbers in each input */
  int abJson[2];          /* make the JSON array of each side's group */
};

typedef struct DsCoGroup DsCoGroup;
int dsCoGroupOpen(DsConn *pConn, const DsCoGroupSpec *pSpec,
                  DsCoGroup **ppGroup, char **pzErr);
int dsCoGroupNext(DsCoGroup *p, char **pzErr);
const DsRow *dsCoGroupKey(const DsCoGroup *p);
i64 dsCoGroupCount(const DsCoGroup *p, int iSide);
DsText *dsCoGroupJson(DsCoGroup *p, int iSide);
void dsCoGroupClose(DsCoGroup *p);

/*************************************************************************
** Cross product (cross.c).  Hints name the side to buffer (Flink's
** crossWithHuge and crossWithTiny); the other side is streamed once.
*/
#define DS_CROSS_OPTIMIZER    0
#define DS_CROSS_FIRST_SMALL  1
#define DS_CROSS_SECOND_SMALL 2
#define DS_N_CROSS_HINT       3
extern const char *const dsCrossHintName[DS_N_CROSS_HINT];

int dsParseCrossHintText(const char *zFunc, const char *z, int *peHint,
                         char **pzErr);
int dsParseCrossHint(const char *zFunc, sqlite3_value *pVal, int *peHint,
                     char **pzErr);

typedef struct DsCrossSpec DsCrossSpec;
struct DsCrossSpec {
  const char *zFunc;      /* the SQL function or module, for messages */
  DsInput *apIn[2];       /* left and right inputs */
  int anCol[2];           /* columns to carry from each side */
  int *aaiCol[2];         /* their column numbers in each input */
  int eHint;              /* DS_CROSS_* */
};

typedef struct DsCross DsCross;
int dsCrossOpen(DsConn *pConn, const DsCrossSpec *pSpec, DsCross **ppCross,
                char **pzErr);
int dsCrossNext(DsCross *p, DsRow **ap, char **pzErr);
void dsCrossClose(DsCross *p);

#endif /* DATASET_INT_H */
