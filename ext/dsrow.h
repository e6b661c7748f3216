/*
** dsrow.h: layer 2 of docs/ARCHITECTURE.md, values and text: the one row
** format (DsRow, DsValue) with the inline value codec and key fast paths
** every row of every operator runs through, text buffers and JSON (DsText),
** the SQL text helpers.  Included by dataset_int.h alone, after the
** connection, memory and interrupt declarations it builds on.
*/
#ifndef DSROW_H
#define DSROW_H

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
/* Bytes from one row of a table, or of an arena, to the next. */
#define DS_ROW_STRIDE(p) ((i64)((DS_ROW_SIZE((p)->nData) + 7) & ~(size_t)7))

/* Fetch the cache lines of a row of up to 64 bytes (a row of a few
** numbers) ahead of its use: it starts anywhere in a line, 8-aligned, so
** most such rows lie across two.  Where another thread made or last read
** the row, the second line is as sure a miss as the first.  The second
** address is worked out as an integer: past the end of a shorter row it
** is no pointer into it, and a prefetch of any address is harmless. */
DS_PREFETCHER void dsRowPrefetch(const DsRow *pRow){
  __builtin_prefetch(pRow);
  __builtin_prefetch((const void *)((uintptr_t)pRow + 63));
}

/* Fetch the cache lines of the rows from pFrom up to pTo (a span of a
** hash table's slot, where a key many rows share lies row after row),
** DS_SPAN_PREFETCH bytes of them at most.  The first two lines are those
** of dsRowPrefetch(); a probe that pairs its row with ten build rows
** otherwise waits for each line past them in turn. */
#define DS_SPAN_PREFETCH 1024
DS_PREFETCHER void dsRowSpanPrefetch(const u8 *pFrom, const u8 *pTo){
  uintptr_t iEnd = (uintptr_t)pFrom + DS_SPAN_PREFETCH;
  uintptr_t i;
  if( (uintptr_t)pTo < iEnd ) iEnd = (uintptr_t)pTo;
  dsRowPrefetch((const DsRow *)pFrom);
  /* The lines after the one that holds pFrom + 63. */
  for(i=(((uintptr_t)pFrom + 63) & ~(uintptr_t)63) + 64; i<iEnd; i+=64){
    __builtin_prefetch((const void *)i);
  }
}

i64 dsRowRoom(DsMem *pMem, u32 nData);

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

/*
** Work on the rows of an input that the threads reading it do for the
** operator, so that the calling thread only hands out what they found: a
** broadcast hash join's probe.  xBatch runs on the thread that read the
** batch, while others run it on theirs and the caller goes on with rows
** found before: it may only read what the operator keeps unchanged until
** the input has been read (the hash table).  For each row worth handing
** out it fills an entry of aOut[], in the rows' order, and returns how
** many it filled.
*/
typedef struct DsStaged DsStaged;
struct DsStaged {
  DsRow *pRow;            /* a row of the batch */
  const u8 *pFrom;        /* what the stage found for it: the probe's */
  const u8 *pTo;          /* span of table rows that may match it */
};
typedef struct DsRowStage DsRowStage;
struct DsRowStage {
  int (*xBatch)(const DsRowStage *, DsRow **aRow, int nRow, DsStaged *aOut);
  /* Or NULL.  Where the caller reads the rows (a view: stageahead.c), it
  ** asks before each batch for the filter rows must pass to be worth
  ** making (NULL: none), and tells how many it read and how many passed,
  ** on its own thread: the operator's, which may change its mind. */
  DsRowFilter *(*xFilter)(const DsRowStage *);
  void (*xFiltered)(const DsRowStage *, DsRowFilter *, i64 nRead, int nPass);
};

/* Does pRow, already made, pass pFilter (NULL: no filter)?  A row with a
** NULL key passes none. */
static inline int dsRowPasses(DsRowFilter *pFilter, const DsRow *pRow){
  return pFilter==0 || (!(pRow->flags & DS_ROW_NULLKEY)
                        && pFilter->xMayMatch(pFilter, pRow->hash));
}

/* A copy of pRow in pArena (unlinked), or NULL if memory ran out: how a
** source hands out rows it read ahead into arenas of its own. */
static inline DsRow *dsRowCopy(DsArena *pArena, const DsRow *pRow){
  DsRow *pCopy = (DsRow *)dsArenaAlloc(pArena, (i64)DS_ROW_SIZE(pRow->nData));
  if( pCopy ){
    memcpy(DS_ROW_IMAGE(pCopy), DS_ROW_IMAGE(pRow), DS_ROW_HDR + pRow->nData);
    pCopy->pNext = 0;
  }
  return pCopy;
}

/*
** Rows one thread writes for another to read, in memory it writes again
** and again (a batch of a sort's merge, which a worker fills for the
** caller: sort.c).  Written through the caches, a line the reader last
** held must first be taken back from the reader's core, at every line,
** and the writer waits: on a 2-core virtual machine that made the worker
** that merges slower than the caller had been alone.  On x86-64 such
** rows are written with non-temporal stores, which go around the caches
** and take no line back; DS_STREAM_FENCE() orders them before the batch
** is handed over.  Elsewhere they are plain copies.
*/
#if defined(__x86_64__) && defined(__SSE2__) && !defined(DS_OMIT_STREAMING)
# include <emmintrin.h>
# define DS_STREAMING 1
# define DS_STREAM_FENCE() _mm_sfence()
#else
# define DS_STREAM_FENCE()
#endif

/* Store the pointer v in the pointer at pp, around the caches where it
** can (memcpy: pp may be the address of any type of pointer). */
static inline void dsStreamPointer(void *pp, const void *v){
#ifdef DS_STREAMING
  _mm_stream_si64((long long *)pp, (long long)(intptr_t)v);
#else
  memcpy(pp, &v, sizeof(v));
#endif
}

/* dsRowCopy(), its words stored around the caches where it can.  The
** arena allocates rows in whole 8-byte words, so the last word copied
** lies within pRow's allocation and the copy's. */
static inline DsRow *dsRowCopyStreaming(DsArena *pArena, const DsRow *pRow){
#ifdef DS_STREAMING
  i64 n = DS_ROW_STRIDE(pRow);
  u8 *pTo = (u8 *)dsArenaAlloc(pArena, n);
  i64 k;
  if( pTo==0 ) return 0;
  _mm_stream_si64((long long *)pTo, 0);                      /* pNext */
  for(k=8; k<n; k+=8){
    long long w;
    memcpy(&w, (const u8 *)pRow + k, 8);
    _mm_stream_si64((long long *)(pTo + k), w);
  }
  return (DsRow *)pTo;
#else
  return dsRowCopy(pArena, pRow);
#endif
}

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

#endif /* DSROW_H */
