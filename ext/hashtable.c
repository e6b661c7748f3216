/*
** hashtable.c: the hash table of build rows shared by every hash strategy.
**
** The table is made once, when all its rows are known, from one or more
** lists of rows (a hash join hands over one list per partition), and is
** then only probed.  Each list becomes a sub-table of its own: a
** power-of-two directory of slots, indexed with the low bits of the hash,
** and one array holding copies of the list's rows sorted by slot, so that
** the rows of a slot lie next to each other:
**
**     aOff:  | 0 | 0 | 48 | 96 | 96 | ...     slot s holds the rows in
**     aRow:  [row a][row b][row c] ...        aRow[aOff[s] .. aOff[s+1])
**
** A probe reads two adjacent directory entries and then the slot's rows
** one after the other, instead of following a chain of pointers from row
** to row across the whole build side: past the first row there is no
** dependent cache miss, and duplicates of a key simply make a slot longer
** (open addressing with a slot per duplicate collapses on duplicate-heavy
** inputs).  Rows carry their full 64-bit hash, so a probe compares hashes
** before it compares keys.  The directory has one slot per row.
**
** The rows are copied list by list and each list's arena is freed as soon
** as its rows are in place, so making the table holds at most one list
** twice, or a block of a few lists' rows where the budget has room for
** it (dsHashAllocBlock).  Partitioning uses high bits of the hash, the
** slot low bits.
**
** The Bloom filter of key hashes (DsBloom) lives here too: hash joins keep
** one per spilled partition, and one over the build rows in memory that
** lets a probe row that cannot match be dropped as it is read.
*/
#include "dataset_int.h"
#include "dshash.h"

/* The directory of a sub-table without rows: every slot empty (const:
** the extension keeps no writable static data, see concurrency.test). */
static const i64 aNoOffsets[2] = { 0, 0 };
/* ... and its rows: none, but a real address, so that a probe's
** aRow + aOff[s] is defined (no arithmetic on a null pointer, which
** UBSan reports from the fuzz target).  Never written: no slot of it
** holds a row whose matched flag could be set. */
static const u8 aNoRows[8];

/* Slots for n rows: a power of two, at least n.  Without a loop: a
** caller may ask for the directory's size at every row it adds. */
static i64 dsHashSlots(i64 n){
  if( n<=1 ) return 1;
  return (i64)1 << (64 - __builtin_clzll((u64)(n - 1)));
}

/* Bytes the directories of sub-tables of these row counts will take. */
i64 dsHashTableDirectoryBytes(const i64 *anRow, int nPart){
  i64 n = 0;
  int i;
  for(i=0; i<nPart; i++){
    if( anRow[i]>0 ) n += (dsHashSlots(anRow[i]) + 1) * (i64)sizeof(i64);
  }
  return n;
}

/* Sub-table pPart without rows: every slot empty. */
static void dsHashPartEmpty(DsHashPart *pPart){
  pPart->aOff = aNoOffsets;
  pPart->aRow = (u8 *)aNoRows;
  pPart->mask = 0;
  pPart->nByte = 0;
  pPart->aBlock = 0;
}

/*
** Lay out sub-table pPart of the n rows of pList (n>0) in its directory
** aOff (dsHashSlots(n)+1 entries, all 0): aOff[s] gets the offset at
** which slot s starts, pPart->nByte the bytes of all the rows.
*/
static void dsHashPartCount(DsHashPart *pPart, i64 *aOff, DsRow *pList,
                            i64 n){
  i64 nSlot = dsHashSlots(n);
  i64 s;
  DsRow *pRow;
  assert( n>0 );
  pPart->aOff = aOff;
  pPart->mask = (u64)nSlot - 1;
  /* Count the bytes of each slot, then make the counts start offsets. */
  for(pRow=pList; pRow; pRow=pRow->pNext){
    /* A row with a NULL key never enters a table (hashjoin.c). */
    assert( (pRow->flags & DS_ROW_NULLKEY)==0 );
    aOff[(pRow->hash & pPart->mask) + 1] += DS_ROW_STRIDE(pRow);
  }
  for(s=0; s<nSlot; s++) aOff[s+1] += aOff[s];
  pPart->nByte = aOff[nSlot];
}

/*
** Copy the rows of pList into pPart->aRow, laid out by dsHashPartCount():
** each row goes to its slot's next free offset, which moves aOff[s] on to
** where slot s+1 starts; then the directory is shifted back.
*/
static int dsHashPartPlace(DsHashPart *pPart, DsRow *pList, DsOp *pOp){
  i64 *aOff = (i64 *)pPart->aOff;
  i64 nSlot = (i64)pPart->mask + 1;
  DsRow *pRow;
  for(pRow=pList; pRow; pRow=pRow->pNext){
    i64 *pOff = &aOff[pRow->hash & pPart->mask];
    DsRow *pNew = (DsRow *)&pPart->aRow[*pOff];
    int rc;
    memcpy(pNew, pRow, DS_ROW_SIZE(pRow->nData));
    pNew->pNext = 0;
    *pOff += DS_ROW_STRIDE(pRow);
    /* A table of millions of rows takes a while, each copy a likely
    ** cache miss: an interrupt must be noticed meanwhile. */
    if( (rc = dsOpTickN(pOp, DS_TICK_ROW/4))!=SQLITE_OK ) return rc;
  }
  memmove(&aOff[1], &aOff[0], (size_t)nSlot * sizeof(i64));
  aOff[0] = 0;
  return SQLITE_OK;
}

/*
** The rows of sub-tables are allocated together, in blocks of at least
** this many bytes where the budget has room for one (dsHashAllocBlock), so
** that they go on huge pages (memory.c): a 1M-row table in 32 sub-tables
** of 1.5 MB took a third less time to make in blocks of 8 MiB.  A larger
** block would only hold more memory at once while the lists are freed.
*/
#define DS_ROWS_BLOCK (8 * 1024 * 1024)

/* Give sub-table iPart of the n rows of pList its directory, and lay out
** its rows in it (dsHashPartCount).  It stays empty if there are none. */
static int dsHashLayOut(DsHashTable *p, int iPart, DsRow *pList, i64 n){
  i64 nDir = (dsHashSlots(n) + 1) * (i64)sizeof(i64);
  i64 *aOff;
  if( n==0 || pList==0 ) return SQLITE_OK;
  aOff = dsMallocToFill(p->pMem, nDir);
  if( aOff==0 ) return SQLITE_NOMEM;
  memset(aOff, 0, (size_t)nDir);
  dsHashPartCount(&p->aPart[iPart], aOff, pList, n);
  return SQLITE_OK;
}

/*
** Allocate the rows of sub-tables iFirst to iEnd-1, nByte bytes in all,
** as one block if the connection's budget has room for it and nReserve
** bytes more; else nothing is allocated here (dsHashPlaceRows allocates
** each sub-table's rows as it comes to it).  A sub-table frees the block
** it begins (DsHashPart.aBlock).
*/
static int dsHashAllocBlock(DsHashTable *p, int iFirst, int iEnd,
                            i64 nByte, i64 nReserve){
  const DsConn *pConn = p->pMem->pConn;
  u8 *aNext = 0;
  int i;
  if( pConn && pConn->nMemUsed + nByte > pConn->nMemLimit - nReserve ){
    return SQLITE_OK;
  }
  for(i=iFirst; i<iEnd; i++){
    DsHashPart *pPart = &p->aPart[i];
    if( pPart->nByte==0 ) continue;
    if( aNext==0 ){
      aNext = pPart->aBlock = dsMallocToFill(p->pMem, nByte);
      if( aNext==0 ) return SQLITE_NOMEM;
    }
    pPart->aRow = aNext;
    aNext += pPart->nByte;
  }
  return SQLITE_OK;
}

/* Copy the rows of pList into sub-table iPart, laid out already, giving
** it a block of its own first unless it has its share of one. */
static int dsHashPlaceRows(DsHashTable *p, int iPart, DsRow *pList,
                           DsOp *pOp){
  DsHashPart *pPart = &p->aPart[iPart];
  if( pPart->nByte==0 ) return SQLITE_OK;
  if( pPart->aRow==(u8 *)aNoRows ){
    pPart->aBlock = dsMallocToFill(p->pMem, pPart->nByte);
    if( pPart->aBlock==0 ) return SQLITE_NOMEM;
    pPart->aRow = pPart->aBlock;
  }
  return dsHashPartPlace(pPart, pList, pOp);
}

/*
** Make the table of the nPart lists apList[] (anRow[i] rows in list i),
** sub-table i of list i.  The rows are copied; apArena[i], where not
** NULL, holds list i's rows and is cleared once they are copied, so that
** making the table holds the lists and one block of rows more (a few
** lists' worth, see dsHashAllocBlock, or one list's where nReserve, the
** part of the budget the caller keeps free, leaves no room for that).
** pOp's interrupt check is ticked as rows are placed: SQLITE_INTERRUPT
** leaves a table that dsHashTableFree() frees.
*/
int dsHashTableBuild(DsHashTable *p, DsMem *pMem, int nPart,
                     DsRow *const *apList, const i64 *anRow,
                     DsArena *const *apArena, i64 nReserve, DsOp *pOp){
  int i, iEnd, rc;
  memset(p, 0, sizeof(*p));
  p->pMem = pMem;
  p->aPart = dsMalloc(pMem, (i64)sizeof(DsHashPart) * nPart);
  if( p->aPart==0 ) return SQLITE_NOMEM;
  p->nPart = nPart;
  for(i=0; i<nPart; i++) dsHashPartEmpty(&p->aPart[i]);
  for(i=0; i<nPart; i=iEnd){
    i64 nBlock = 0;
    int j;
    for(iEnd=i; iEnd<nPart && nBlock<DS_ROWS_BLOCK; iEnd++){
      rc = dsHashLayOut(p, iEnd, apList[iEnd], anRow[iEnd]);
      if( rc!=SQLITE_OK ) return rc;
      nBlock += p->aPart[iEnd].nByte;
    }
    rc = dsHashAllocBlock(p, i, iEnd, nBlock, nReserve);
    if( rc!=SQLITE_OK ) return rc;
    for(j=i; j<iEnd; j++){
      rc = dsHashPlaceRows(p, j, apList[j], pOp);
      if( rc!=SQLITE_OK ) return rc;
      p->nRow += anRow[j];
      if( apArena && apArena[j] ) dsArenaClear(apArena[j]);
    }
  }
  return SQLITE_OK;
}

void dsHashTableFree(DsHashTable *p){
  int i;
  if( p->aPart==0 ) return;
  for(i=0; i<p->nPart; i++){
    if( p->aPart[i].aOff!=aNoOffsets ){
      dsFree(p->pMem, (void *)p->aPart[i].aOff);
    }
    dsFree(p->pMem, p->aPart[i].aBlock);
  }
  dsFree(p->pMem, p->aPart);
  memset(p, 0, sizeof(*p));
}

/* A filter of nWord words (a power of two), all clear. */
int dsBloomInit(DsBloom *p, DsMem *pMem, i64 nWord){
  p->aWord = dsMallocToFill(pMem, nWord * 8);
  if( p->aWord==0 ){
    p->mask = 0;
    return SQLITE_NOMEM;
  }
  memset(p->aWord, 0, (size_t)nWord * 8);
  p->mask = (u64)nWord - 1;
  return SQLITE_OK;
}

void dsBloomFree(DsBloom *p, DsMem *pMem){
  dsFree(pMem, p->aWord);
  p->aWord = 0;
  p->mask = 0;
}

/* Add the hash of every row of the list pList (linked through pNext). */
void dsBloomAddList(DsBloom *p, const DsRow *pList){
  for(; pList; pList=pList->pNext) dsBloomAdd(p, pList->hash);
}
