/*
** sort.c: sorting rows on their keys, in SQLite's order of values.
**
** Comparing packed keys row by row is slow, so each row gets a 64-bit
** prefix that orders like its first key column: two bits of type class
** (NULL key, number, text, blob) and 62 bits of value (a number as an
** order-preserving image of its double, text and blobs by their first
** seven bytes).  The prefix never orders two keys against their true
** order; it may only tie keys that differ.  The entries (prefix, row) are
** sorted by a least-significant-digit radix sort, skipping the byte
** positions in which all prefixes agree, and each run of equal prefixes is
** then put in true key order with the full comparison.
*/
#include "dataset_int.h"

#include <stdlib.h>

typedef struct DsSortEntry DsSortEntry;
struct DsSortEntry {
  u64 prefix;
  DsRow *pRow;
};

/* The first seven bytes of z, big-endian, in the low 56 bits. */
static u64 dsBytesPrefix(const u8 *z, int n){
  u64 v = 0;
  int i;
  for(i=0; i<7; i++) v = (v << 8) | (i<n ? z[i] : 0);
  return v;
}

static u64 dsSortPrefix(const DsRow *pRow, int eOrder){
  DsValue v;
  double r;
  u64 b;
  if( eOrder==DS_ORDER_GROUP && (pRow->flags & DS_ROW_NULLKEY) ) return 0;
  dsValueDecode(pRow->aData, &v);
  switch( v.eType ){
    case DS_INT:
      r = (double)v.i;
      break;
    case DS_REAL:
      r = v.r==0.0 ? 0.0 : v.r;              /* -0.0 sorts as 0.0 */
      break;
    case DS_TEXT:
      return (2ULL << 62) | (dsBytesPrefix(v.z, v.n) << 6);
    case DS_BLOB:
      return (3ULL << 62) | (dsBytesPrefix(v.z, v.n) << 6);
    default:
      return 0;
  }
  memcpy(&b, &r, 8);
  b = (b >> 63) ? ~b : (b | 0x8000000000000000ULL);
  return (1ULL << 62) | (b >> 2);
}

/* Sort a[] by prefix, using aTmp (room for n entries) as the other
** buffer; returns whichever of the two holds the result. */
static DsSortEntry *dsRadixSort(DsSortEntry *a, DsSortEntry *aTmp, i64 n){
  int iByte;
  for(iByte=0; iByte<8; iByte++){
    i64 aCount[256];
    int shift = iByte * 8;
    i64 i, sum = 0;
    int b;
    DsSortEntry *pSwap;
    memset(aCount, 0, sizeof(aCount));
    for(i=0; i<n; i++) aCount[(a[i].prefix >> shift) & 0xff]++;
    if( aCount[(a[0].prefix >> shift) & 0xff]==n ) continue;
    for(b=0; b<256; b++){
      i64 c = aCount[b];
      aCount[b] = sum;
      sum += c;
    }
    for(i=0; i<n; i++) aTmp[aCount[(a[i].prefix >> shift) & 0xff]++] = a[i];
    pSwap = a;
    a = aTmp;
    aTmp = pSwap;
  }
  return a;
}

static int dsEntryKeyCompare(const void *pA, const void *pB){
  const DsSortEntry *a = (const DsSortEntry *)pA;
  const DsSortEntry *b = (const DsSortEntry *)pB;
  return dsRowKeyCompare(a->pRow, b->pRow);
}

static int dsEntryGroupCompare(const void *pA, const void *pB){
  const DsSortEntry *a = (const DsSortEntry *)pA;
  const DsSortEntry *b = (const DsSortEntry *)pB;
  return dsRowGroupCompare(a->pRow, b->pRow);
}

/* Put each run of equal prefixes in true order. */
static int dsSortTies(DsOp *pOp, DsSortEntry *a, i64 n, int eOrder){
  int (*xCmp)(const DsRow *, const DsRow *) =
      eOrder==DS_ORDER_GROUP ? dsRowGroupCompare : dsRowKeyCompare;
  i64 i = 0;
  int rc;
  while( i<n ){
    i64 j = i + 1;
    i64 k;
    int bSorted = 1;
    while( j<n && a[j].prefix==a[i].prefix ) j++;
    for(k=i+1; k<j && bSorted; k++){
      bSorted = xCmp(a[k-1].pRow, a[k].pRow)<=0;
    }
    if( !bSorted ){
      qsort(&a[i], (size_t)(j - i), sizeof(DsSortEntry),
            eOrder==DS_ORDER_GROUP ? dsEntryGroupCompare : dsEntryKeyCompare);
    }
    i = j;
    if( (rc = dsOpTick(pOp))!=SQLITE_OK ) return rc;
  }
  return SQLITE_OK;
}

/*
** Read every row of pSrc into pOut and sort them on their keys.  NULL keys
** come first.
*/
int dsSortSource(DsOp *pOp, DsSource *pSrc, int eOrder, DsSorted *pOut){
  DsMem *pMem = &pOp->mem;
  DsSortEntry *a = 0, *aTmp = 0;
  DsSortEntry *aSorted = 0;
  i64 nAlloc = 0;
  i64 n = 0;
  i64 i;
  int rc;
  memset(pOut, 0, sizeof(*pOut));
  dsArenaInit(&pOut->arena, pMem);
  for(;;){
    DsRow *pRow;
    rc = pSrc->xNext(pSrc, &pOut->arena, &pRow);
    if( rc==SQLITE_DONE ) break;
    if( rc!=SQLITE_ROW ) goto sort_out;
    if( n==nAlloc ){
      i64 nNew = nAlloc ? nAlloc*2 : 1024;
      DsSortEntry *aNew = dsRealloc(pMem, a, nNew * (i64)sizeof(DsSortEntry));
      if( aNew==0 ){ rc = SQLITE_NOMEM; goto sort_out; }
      a = aNew;
      nAlloc = nNew;
    }
    a[n].prefix = dsSortPrefix(pRow, eOrder);
    a[n].pRow = pRow;
    n++;
  }
  rc = SQLITE_OK;
  aSorted = a;
  if( n>1 ){
    aTmp = dsMalloc(pMem, n * (i64)sizeof(DsSortEntry));
    if( aTmp==0 ){ rc = SQLITE_NOMEM; goto sort_out; }
    aSorted = dsRadixSort(a, aTmp, n);
    rc = dsSortTies(pOp, aSorted, n, eOrder);
    if( rc!=SQLITE_OK ) goto sort_out;
  }
  pOut->aRow = dsMalloc(pMem, (n ? n : 1) * (i64)sizeof(DsRow *));
  if( pOut->aRow==0 ){ rc = SQLITE_NOMEM; goto sort_out; }
  for(i=0; i<n; i++) pOut->aRow[i] = aSorted[i].pRow;
  pOut->nRow = n;

sort_out:
  dsFree(pMem, a);
  dsFree(pMem, aTmp);
  if( rc!=SQLITE_OK ) dsSortedFree(pOut, pMem);
  return rc;
}

void dsSortedFree(DsSorted *p, DsMem *pMem){
  dsFree(pMem, p->aRow);
  p->aRow = 0;
  p->nRow = 0;
  dsArenaClear(&p->arena);
}

/*************************************************************************
** The sorter: a stream of a source's rows in key order.
*/
struct DsSorter {
  DsOp *pOp;
  DsSorted sorted;        /* the rows, sorted in memory */
  i64 iNext;              /* next row to hand out */
};

int dsSorterOpen(DsOp *pOp, DsSource *pSrc, int eOrder, DsSorter **ppSorter){
  DsSorter *p = sqlite3_malloc64(sizeof(DsSorter));
  int rc;
  *ppSorter = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->pOp = pOp;
  rc = dsSortSource(pOp, pSrc, eOrder, &p->sorted);
  if( rc!=SQLITE_OK ){
    sqlite3_free(p);
    return rc;
  }
  *ppSorter = p;
  return SQLITE_OK;
}

int dsSorterNext(DsSorter *p, DsRow **ppRow){
  if( p->iNext>=p->sorted.nRow ) return SQLITE_DONE;
  *ppRow = p->sorted.aRow[p->iNext++];
  return SQLITE_ROW;
}

void dsSorterClose(DsSorter *p){
  if( p ){
    dsSortedFree(&p->sorted, &p->pOp->mem);
    sqlite3_free(p);
  }
}
