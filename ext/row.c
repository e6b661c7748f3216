/*
** row.c: the one row format of the extension, and the one hash, equality
** and order of keys that every operator uses.
**
** A row (DsRow, see dataset_int.h) packs the values an operator needs,
** key columns first.  Each value is a type byte and its payload:
**
**     DS_NULL   nothing
**     DS_INT    8-byte native int64
**     DS_REAL   8-byte native double
**     DS_TEXT   4-byte length, then the UTF-8 bytes (no terminator)
**     DS_BLOB   4-byte length, then the bytes
**
** Payloads are unaligned and read with memcpy, which compilers turn into
** plain loads.
**
** Key equality is SQLite's comparison of two values without affinity, as
** in `+a = +b` under BINARY collation: INTEGER 1 equals REAL 1.0, TEXT '1'
** does not equal INTEGER 1, and NULL equals nothing.  So the hash treats
** a REAL that holds an integer in int64 range as that integer (which also
** folds -0.0 into 0), and everything else by its type and bytes:
** integers with SplitMix64's finalizer, the rest with XXH3.  A
** composite key hashes its parts in a chain, each seeded by the last.
**
** Key order, used by sorting, is SQLite's order of values: NULL first,
** then numbers (integers and reals compared exactly), then text (memcmp),
** then blobs (memcmp), part by part as ORDER BY sorts the key columns.
** Text is compared as its UTF-8 bytes, the order of its code points; that
** is SQLite's BINARY order in a UTF-8 database only (dsTextOrderIsBinary).
** Grouping (coGroup) instead puts every key with a NULL part first, as
** one group.
*/
#include "dataset_int.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Seeds that keep a text, a blob and a non-integral real with the same
** bytes from hashing alike.  Arbitrary odd constants. */
#define DS_SEED_REAL 0x9e3779b97f4a7c15ULL
#define DS_SEED_TEXT 0xc2b2ae3d27d4eb4fULL
#define DS_SEED_BLOB 0x165667b19e3779f9ULL

static u32 dsGetU32(const u8 *p){ u32 v; memcpy(&v, p, 4); return v; }

/* If r holds an integer in int64 range, store it in *pi and return 1. */
static int dsRealIsInt(double r, i64 *pi){
  if( r >= -9223372036854775808.0 && r < 9223372036854775808.0 ){
    i64 i = (i64)r;
    if( (double)i==r ){ *pi = i; return 1; }
  }
  return 0;
}

/* Compare integer i with real r exactly, as SQLite does. */
static int dsIntRealCompare(i64 i, double r){
  i64 y;
  if( r < -9223372036854775808.0 ) return 1;
  if( r >= 9223372036854775808.0 ) return -1;
  y = (i64)r;
  if( i < y ) return -1;
  if( i > y ) return 1;
  if( r > (double)y ) return -1;
  if( r < (double)y ) return 1;
  return 0;
}

const u8 *dsValueSkip(const u8 *p){
  switch( *p ){
    case DS_INT:
    case DS_REAL:
      return p + 9;
    case DS_TEXT:
    case DS_BLOB:
      return p + 5 + dsGetU32(p + 1);
    default:
      return p + 1;
  }
}

void dsRowValues(const DsRow *pRow, int nCol, DsValue *aVal){
  const u8 *p = pRow->aData;
  int i;
  for(i=0; i<nCol; i++) p = dsValueDecode(p, &aVal[i]);
}

/* The result of an SQL function or column: the value itself. */
void dsValueResult(sqlite3_context *ctx, const DsValue *pVal){
  switch( pVal->eType ){
    case DS_INT:  sqlite3_result_int64(ctx, pVal->i); break;
    case DS_REAL: sqlite3_result_double(ctx, pVal->r); break;
    case DS_TEXT:
      sqlite3_result_text(ctx, (const char *)pVal->z, pVal->n,
                          SQLITE_TRANSIENT);
      break;
    case DS_BLOB:
      sqlite3_result_blob(ctx, pVal->z, pVal->n, SQLITE_TRANSIENT);
      break;
    default:      sqlite3_result_null(ctx); break;
  }
}

/*
** The hash of an integer, and of a real equal to one (1 = 1.0): the
** finalizer of SplitMix64 over the value mixed with the seed, a bijection
** of the value for each seed, with every output bit depending on every
** input bit.  Not XXH3, as for text: integers are the commonest keys, and
** this is a dozen instructions inline where XXH3's entry point is a call
** that checks lengths, for every row read.
*/
static inline u64 dsHashInt(i64 v, u64 seed){
  u64 z = ((u64)v ^ seed) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The hash of a REAL. */
static inline u64 dsHashReal(double r, u64 seed){
  i64 i;
  if( dsRealIsInt(r, &i) ) return dsHashInt(i, seed);
  return XXH3_64bits_withSeed(&r, 8, seed ^ DS_SEED_REAL);
}

/*
** Hash of one key value, chained from seed (0 for the first or only part
** of a key).  dsKeyHash() of a one-value key is dsValueHash(v, 0), so code
** that holds a value rather than a packed row hashes it alike.
*/
static inline u64 dsHashOf(const DsValue *pVal, u64 seed){
  switch( pVal->eType ){
    case DS_INT:
      return dsHashInt(pVal->i, seed);
    case DS_REAL:
      return dsHashReal(pVal->r, seed);
    case DS_TEXT:
      return XXH3_64bits_withSeed(pVal->z, (size_t)pVal->n,
                                  seed ^ DS_SEED_TEXT);
    case DS_BLOB:
      return XXH3_64bits_withSeed(pVal->z, (size_t)pVal->n,
                                  seed ^ DS_SEED_BLOB);
    default:
      return seed;
  }
}

u64 dsValueHash(const DsValue *pVal, u64 seed){
  return dsHashOf(pVal, seed);
}

/*
** Read SQL value pIn, of SQL type eSqlType, into *pVal if it is an
** INTEGER, REAL or NULL; 0 for TEXT and BLOB, which it leaves alone.  The
** one switch on a value's type that both of the row maker's paths use.
*/
static inline int dsReadNumber(sqlite3_value *pIn, int eSqlType,
                               DsValue *pVal){
  switch( eSqlType ){
    case SQLITE_INTEGER:
      pVal->eType = DS_INT;
      pVal->i = sqlite3_value_int64(pIn);
      return 1;
    case SQLITE_FLOAT:
      pVal->eType = DS_REAL;
      pVal->r = sqlite3_value_double(pIn);
      return 1;
    case SQLITE_NULL:
      pVal->eType = DS_NULL;
      return 1;
    default:
      return 0;
  }
}

/*
** Read one SQL value into *pVal (dsValueFromSql for text and blobs) and
** return the bytes it takes packed, or -1 if its text could not be had
** (SQLITE_NOMEM).
*/
static inline i64 dsReadValue(sqlite3_value *pIn, DsValue *pVal){
  if( !dsReadNumber(pIn, sqlite3_value_type(pIn), pVal)
   && dsValueFromSql(pIn, pVal) ){
    return -1;
  }
  return dsValueSize(pVal);
}

/*
** Is a row with this key hash and flags (DS_ROW_NULLKEY) one that pFilter,
** if any, turns away?  A NULL key matches nothing, with or without one.
*/
static inline int dsKeyFilteredOut(DsRowFilter *pFilter, u8 flags,
                                   u64 hash){
  return pFilter && (flags || !pFilter->xMayMatch(pFilter, hash));
}

/*
** Chain key value pVal onto the key's hash *pHash; a NULL sets
** DS_ROW_NULLKEY in *pFlags.  Every path that hashes a key as it reads it
** does it here.
*/
static inline void dsChainKeyValue(const DsValue *pVal, u64 *pHash,
                                   u8 *pFlags){
  if( pVal->eType==DS_NULL ) *pFlags = DS_ROW_NULLKEY;
  *pHash = dsHashOf(pVal, *pHash);
}

/*
** Pack SQL value pIn at *pp (dsValuePut) if it is an INTEGER, REAL or
** NULL, and chain its hash onto *pHash when pHash is not NULL (a key
** value: a NULL one sets DS_ROW_NULLKEY in *pFlags); 0 for TEXT and BLOB,
** which are left to the general path.
*/
static inline int dsPutNumber(u8 **pp, sqlite3_value *pIn, u64 *pHash,
                              u8 *pFlags){
  DsValue v;
  if( !dsReadNumber(pIn, sqlite3_value_type(pIn), &v) ) return 0;
  if( pHash ) dsChainKeyValue(&v, pHash, pFlags);
  *pp = dsValuePut(*pp, &v);
  return 1;
}

/*
** Does pFilter turn away the row whose key is the nKeyCol values apIn[]?
** 1 if so, 0 if not, -1 if a key value is TEXT or BLOB (the general path
** then asks itself).  The key is read once more for a row let through;
** a filter is only used while it turns most rows away, and those then
** cost only this.
*/
static int dsNumberKeyFilteredOut(DsRowFilter *pFilter,
                                  sqlite3_value **apIn, int nKeyCol){
  u64 hash = 0;
  u8 flags = 0;
  int i;
  for(i=0; i<nKeyCol; i++){
    DsValue v;
    if( !dsReadNumber(apIn[i], sqlite3_value_type(apIn[i]), &v) ) return -1;
    dsChainKeyValue(&v, &hash, &flags);
  }
  return dsKeyFilteredOut(pFilter, flags, hash);
}

/*
** Does pFilter turn away the row whose key is the nKeyCol values apIn[]
** (a key with a NULL part matches nothing)?  *pbOut gets the answer.
** SQLITE_NOMEM if a text key could not be had as UTF-8.  For a reader that
** tests each key before SQLite decodes the row's other columns
** (ds_input_key() in input.c), and for the sample of keys that decides
** whether it should.
*/
int dsKeyValuesFilteredOut(DsRowFilter *pFilter, sqlite3_value **apIn,
                           int nKeyCol, int *pbOut){
  int bOut;
  if( nKeyCol==1 && sqlite3_value_type(apIn[0])==SQLITE_INTEGER ){
    /* The commonest key, tested for most rows of a selective join. */
    u64 hash = dsHashInt(sqlite3_value_int64(apIn[0]), 0);
    *pbOut = !pFilter->xMayMatch(pFilter, hash);
    return SQLITE_OK;
  }
  bOut = dsNumberKeyFilteredOut(pFilter, apIn, nKeyCol);
  if( bOut<0 ){
    u64 hash = 0;
    u8 flags = 0;
    int i;
    for(i=0; i<nKeyCol; i++){
      DsValue v;
      if( dsReadValue(apIn[i], &v)<0 ) return SQLITE_NOMEM;
      dsChainKeyValue(&v, &hash, &flags);
    }
    if( flags ) hash = 0;
    bOut = dsKeyFilteredOut(pFilter, flags, hash);
  }
  *pbOut = bOut;
  return SQLITE_OK;
}

/* The outcome of dsRowFromNumbers(). */
#define DS_MADE    0      /* the row is made */
#define DS_GENERAL 1      /* it needs the general path */

/*
** The row maker's fast path, for a row of INTEGER, REAL and NULL values
** only, as most rows of most inputs are: each value is read once, straight
** into the free space of the arena's chunk (dsArenaPeek), which must have
** room for the largest such row.  Makes nothing and returns DS_GENERAL
** when a value is TEXT or BLOB or the chunk is nearly full.  The filter,
** if any, has been asked already (dsNumberKeyFilteredOut).
*/
static int dsRowFromNumbers(DsArena *pArena, sqlite3_value **apIn, int nCol,
                            int nKeyCol, DsRow **ppRow){
  DsRow *pRow = dsArenaPeek(pArena,
                            (i64)DS_ROW_SIZE(DS_NUMBER_SIZE*(i64)nCol));
  u8 *p;
  u64 hash = 0;
  u8 flags = 0;
  int i;
  if( pRow==0 ) return DS_GENERAL;
  p = pRow->aData;
  for(i=0; i<nKeyCol; i++){
    if( !dsPutNumber(&p, apIn[i], &hash, &flags) ) return DS_GENERAL;
  }
  if( flags ) hash = 0;
  pRow->nKey = (u32)(p - pRow->aData);
  for(; i<nCol; i++){
    if( !dsPutNumber(&p, apIn[i], 0, 0) ) return DS_GENERAL;
  }
  pRow->pNext = 0;
  pRow->hash = hash;
  pRow->nData = (u32)(p - pRow->aData);
  /* Without a NULL every value took DS_NUMBER_SIZE bytes. */
  if( pRow->nData==DS_NUMBER_SIZE*(u32)nCol ) flags |= DS_ROW_NUMBERS;
  pRow->flags = flags;
  dsArenaCommit(pArena, (i64)DS_ROW_SIZE(pRow->nData));
  *ppRow = pRow;
  return DS_MADE;
}

/*
** Make a row of the nCol values apIn[], of which the first nKeyCol are the
** key.  aVal has room for nCol values.  The key is read and hashed first:
** with a filter, a row whose key is NULL or whose hash the filter rejects
** cannot find a partner, so it is not made at all (*ppRow is NULL) and its
** other values are never even read.  A key of numbers is tested alone,
** before anything else (a filter is in use while it turns most rows
** away); one with TEXT or BLOB on the general path.  SQLITE_NOMEM or
** SQLITE_TOOBIG on failure.
*/
int dsRowFromValues(DsArena *pArena, sqlite3_value **apIn, int nCol,
                    int nKeyCol, DsValue *aVal, DsRowFilter *pFilter,
                    DsRow **ppRow){
  i64 nData = 0;
  i64 nKey;
  u64 hash = 0;
  int i;
  u8 flags = 0;
  DsRow *pRow;
  u8 *p;

  *ppRow = 0;
  if( pFilter ){
    int bOut = dsNumberKeyFilteredOut(pFilter, apIn, nKeyCol);
    if( bOut>0 ) return SQLITE_OK;
    if( bOut==0 ) pFilter = 0;
  }
  if( dsRowFromNumbers(pArena, apIn, nCol, nKeyCol, ppRow)==DS_MADE ){
    return SQLITE_OK;
  }
  for(i=0; i<nKeyCol; i++){
    i64 n = dsReadValue(apIn[i], &aVal[i]);
    if( n<0 ) return SQLITE_NOMEM;
    nData += n;
    dsChainKeyValue(&aVal[i], &hash, &flags);
  }
  if( flags ) hash = 0;
  if( dsKeyFilteredOut(pFilter, flags, hash) ) return SQLITE_OK;
  nKey = nData;
  for(i=nKeyCol; i<nCol; i++){
    i64 n = dsReadValue(apIn[i], &aVal[i]);
    if( n<0 ) return SQLITE_NOMEM;
    nData += n;
  }
  if( nData > 0x7fffffff ) return SQLITE_TOOBIG;
  pRow = dsArenaAlloc(pArena, (i64)DS_ROW_SIZE(nData));
  if( pRow==0 ) return SQLITE_NOMEM;
  pRow->pNext = 0;
  pRow->hash = hash;
  pRow->nData = (u32)nData;
  pRow->nKey = (u32)nKey;
  pRow->flags = flags;
  p = pRow->aData;
  for(i=0; i<nCol; i++) p = dsValuePut(p, &aVal[i]);
  *ppRow = pRow;
  return SQLITE_OK;
}

/* The hash of a key of nKeyCol packed values starting at aKey. */
u64 dsKeyHash(const u8 *aKey, int nKeyCol){
  u64 h = 0;
  int i;
  for(i=0; i<nKeyCol; i++){
    DsValue v;
    aKey = dsValueDecode(aKey, &v);
    h = dsValueHash(&v, h);
  }
  return h;
}

static int dsTypeClass(int eType){
  static const u8 aClass[] = { 0, 1, 1, 2, 3 };
  return aClass[eType];
}

static int dsBytesCompare(const DsValue *a, const DsValue *b){
  int n = a->n < b->n ? a->n : b->n;
  int c = n>0 ? memcmp(a->z, b->z, (size_t)n) : 0;
  if( c ) return c;
  return (a->n > b->n) - (a->n < b->n);
}

/*
** Is the order of text here SQLite's BINARY order in db, so that a
** virtual table may tell SQLite its rows are already sorted?  BINARY
** compares the bytes of the database's own encoding, and rows hold text
** as UTF-8.  In UTF-16 the two orders differ: in UTF-16le for most text
** beyond ASCII, in UTF-16be for characters above U+FFFF against U+E000
** to U+FFFF.  There SQLite has to sort (equality is the same in every
** encoding, so joins are unaffected).  0 also when the encoding cannot be
** read: SQLite's own sort is right either way.
*/
int dsTextOrderIsBinary(sqlite3 *db){
  sqlite3_stmt *pStmt = 0;
  int bUtf8 = 0;
  if( sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zEnc = (const char *)sqlite3_column_text(pStmt, 0);
    bUtf8 = zEnc!=0 && sqlite3_stricmp(zEnc, "UTF-8")==0;
  }
  sqlite3_finalize(pStmt);
  return bUtf8;
}

/* SQLite's order of two values: <0, 0 or >0.  NULL equals NULL here. */
int dsValueCompare(const DsValue *a, const DsValue *b){
  int ca = dsTypeClass(a->eType);
  int cb = dsTypeClass(b->eType);
  if( ca!=cb ) return ca < cb ? -1 : 1;
  switch( ca ){
    case 1:
      if( a->eType==DS_INT ){
        if( b->eType==DS_INT ) return (a->i > b->i) - (a->i < b->i);
        return dsIntRealCompare(a->i, b->r);
      }
      if( b->eType==DS_INT ) return -dsIntRealCompare(b->i, a->r);
      return (a->r > b->r) - (a->r < b->r);
    case 2:
    case 3:
      return dsBytesCompare(a, b);
    default:
      return 0;
  }
}

/* Keys of two rows, neither of them NULL, are equal. */
int dsRowKeyEqual(const DsRow *a, const DsRow *b){
  const u8 *pA = a->aData;
  const u8 *pB = b->aData;
  const u8 *pEndA = pA + a->nKey;
  if( a->nKey==b->nKey && memcmp(pA, pB, a->nKey)==0 ) return 1;
  while( pA < pEndA ){
    DsValue va, vb;
    pA = dsValueDecode(pA, &va);
    pB = dsValueDecode(pB, &vb);
    if( dsValueCompare(&va, &vb) ) return 0;
  }
  return 1;
}

/*
** SQLite's order of the keys of two rows, as ORDER BY on the key columns
** would sort them: part by part, NULL lowest (and equal to NULL).
** Callers use dsRowKeyCompare(), which handles keys of one INTEGER inline.
*/
int dsRowKeyCompareAll(const DsRow *a, const DsRow *b){
  const u8 *pA = a->aData;
  const u8 *pB = b->aData;
  const u8 *pEndA = pA + a->nKey;
  while( pA < pEndA ){
    DsValue va, vb;
    int c;
    pA = dsValueDecode(pA, &va);
    pB = dsValueDecode(pB, &vb);
    c = dsValueCompare(&va, &vb);
    if( c ) return c;
  }
  return 0;
}

/*
** The order of groups (coGroup): every NULL key first, as one group, then
** the others in key order.  The same as dsRowKeyCompare() for one column.
*/
int dsRowGroupCompare(const DsRow *a, const DsRow *b){
  int bNullA = (a->flags & DS_ROW_NULLKEY)!=0;
  int bNullB = (b->flags & DS_ROW_NULLKEY)!=0;
  if( bNullA || bNullB ) return bNullB - bNullA;
  return dsRowKeyCompare(a, b);
}
