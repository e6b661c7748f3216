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
** it (dsHashAllocBlock).  The lists of a block are copied at once, by the
** caller and helper threads (dsSplitRun, threads.c), each taking the
** next list; so are the rows of every list counted into their slots
** first.  Partitioning uses high bits of the hash, the slot low bits.
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
** Lay out sub-table pPart of the rows of pList in its directory, given
** by dsHashPartAssign() (zeroed here first): aOff[s] gets the offset at
** which slot s starts, pPart->nByte the bytes of all the rows.
*/
static int dsHashPartCount(DsHashPart *pPart, DsRow *pList,
                           DsSplitWork *pWork){
  i64 *aOff = (i64 *)pPart->aOff;
  i64 nSlot = (i64)pPart->mask + 1;
  i64 s;
  DsRow *pRow;
  /* The directory's pages are made and zeroed here, on the thread that
  ** counts, not by the caller for every sub-table before the split. */
  dsMakePages(aOff, (nSlot + 1) * (i64)sizeof(i64));
  memset(aOff, 0, (size_t)(nSlot + 1) * sizeof(i64));
  /* Count the bytes of each slot, then make the counts start offsets. */
  for(pRow=pList; pRow; pRow=pRow->pNext){
    int rc;
    /* A row with a NULL key never enters a table (hashjoin.c). */
    assert( (pRow->flags & DS_ROW_NULLKEY)==0 );
    aOff[(pRow->hash & pPart->mask) + 1] += DS_ROW_STRIDE(pRow);
    if( (rc = dsSplitTick(pWork, DS_TICK_ROW/8))!=SQLITE_OK ) return rc;
  }
  for(s=0; s<nSlot; s++) aOff[s+1] += aOff[s];
  pPart->nByte = aOff[nSlot];
  return SQLITE_OK;
}

/*
** Copy the rows of pList into pPart->aRow, laid out by dsHashPartCount():
** each row goes to its slot's next free offset, which moves aOff[s] on to
** where slot s+1 starts; then the directory is shifted back.
*/
static int dsHashPartPlace(DsHashPart *pPart, DsRow *pList,
                           DsSplitWork *pWork){
  i64 *aOff = (i64 *)pPart->aOff;
  i64 nSlot = (i64)pPart->mask + 1;
  DsRow *pRow;
  /* Its rows' pages, made on the thread that copies them (see above). */
  dsMakePages(pPart->aRow, pPart->nByte);
  for(pRow=pList; pRow; pRow=pRow->pNext){
    i64 *pOff = &aOff[pRow->hash & pPart->mask];
    DsRow *pNew = (DsRow *)&pPart->aRow[*pOff];
    int rc;
    memcpy(pNew, pRow, DS_ROW_SIZE(pRow->nData));
    pNew->pNext = 0;
    *pOff += DS_ROW_STRIDE(pRow);
    /* A table of millions of rows takes a while, each copy a likely
    ** cache miss: an interrupt must be noticed meanwhile. */
    if( (rc = dsSplitTick(pWork, DS_TICK_ROW/4))!=SQLITE_OK ) return rc;
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

/* Give sub-table pPart of n rows (n>0) its directory, the slots from
** *ppDir on, which moves on past them. */
static void dsHashPartAssign(DsHashPart *pPart, i64 n, i64 **ppDir){
  i64 nSlot = dsHashSlots(n);
  assert( n>0 );
  pPart->aOff = *ppDir;
  pPart->mask = (u64)nSlot - 1;
  *ppDir += nSlot + 1;
}

/*
** Allocate the rows of sub-tables iFirst to iEnd-1, nByte bytes in all,
** as one block if the connection's budget has room for it and nReserve
** bytes more (*pbBlock set); else nothing is allocated here (the caller
** allocates each sub-table's rows as it comes to it).  A sub-table frees
** the block it begins (DsHashPart.aBlock).
*/
static int dsHashAllocBlock(DsHashTable *p, int iFirst, int iEnd,
                            i64 nByte, i64 nReserve, int *pbBlock){
  const DsConn *pConn = p->pMem->pConn;
  u8 *aNext = 0;
  int i;
  *pbBlock = 0;
  if( pConn && pConn->nMemUsed + nByte > pConn->nMemLimit - nReserve ){
    return SQLITE_OK;
  }
  *pbBlock = 1;
  for(i=iFirst; i<iEnd; i++){
    DsHashPart *pPart = &p->aPart[i];
    if( pPart->nByte==0 ) continue;
    if( aNext==0 ){
      aNext = pPart->aBlock = dsMalloc(p->pMem, nByte);
      if( aNext==0 ) return SQLITE_NOMEM;
    }
    pPart->aRow = aNext;
    aNext += pPart->nByte;
  }
  return SQLITE_OK;
}

/*
** Making a table is split into items, run by the caller and helper
** threads at once (dsSplitRun): the counting of each sub-table's rows
** into its slots, then, block by block, the copying of each sub-table's
** rows to their slots.  Each item works on one sub-table: its list, its
** directory and its rows; the blocks are allocated, and the lists freed,
** by the caller between the runs.
*/
typedef struct DsHashMake DsHashMake;
struct DsHashMake {
  DsHashTable *p;
  DsRow *const *apList;
  const i64 *anRow;
  int iFirst;             /* the sub-table of the first item */
};

static int dsHashCountItem(void *pArg, int iItem, DsSplitWork *pWork){
  const DsHashMake *pMake = (const DsHashMake *)pArg;
  int i = pMake->iFirst + iItem;
  if( pMake->anRow[i]==0 || pMake->apList[i]==0 ) return SQLITE_OK;
  return dsHashPartCount(&pMake->p->aPart[i], pMake->apList[i], pWork);
}

static int dsHashPlaceItem(void *pArg, int iItem, DsSplitWork *pWork){
  const DsHashMake *pMake = (const DsHashMake *)pArg;
  int i = pMake->iFirst + iItem;
  if( pMake->p->aPart[i].nByte==0 ) return SQLITE_OK;
  return dsHashPartPlace(&pMake->p->aPart[i], pMake->apList[i], pWork);
}

/* Run xItem on sub-tables iFirst to iEnd-1, nRow rows between them: on
** helper threads too where they are many enough. */
static int dsHashSplit(DsHashMake *pMake, DsOp *pOp, int iFirst, int iEnd,
                       i64 nRow, int (*xItem)(void *, int, DsSplitWork *)){
  int bParallel = nRow >= pOp->pConn->nParallelMinRows;
  pMake->iFirst = iFirst;
  return dsSplitRun(pOp->pConn, &pOp->tick, bParallel, iEnd - iFirst, xItem,
                    pMake, &pOp->stats.nThread);
}

/*
** Make the table of the nPart lists apList[] (anRow[i] rows in list i),
** sub-table i of list i.  The rows are copied; apArena[i], where not
** NULL, holds list i's rows and is cleared once they are copied, so that
** making the table holds the lists and one block of rows more (a few
** lists' worth, see dsHashAllocBlock, or one list's where nReserve, the
** part of the budget the caller keeps free, leaves no room for that).
** pOp's interrupt check is ticked as rows are placed: SQLITE_INTERRUPT
** leaves a table that dsHashTableFree() frees.  The counting and the
** copying run on helper threads too (DsHashMake).
*/
int dsHashTableBuild(DsHashTable *p, DsMem *pMem, int nPart,
                     DsRow *const *apList, const i64 *anRow,
                     DsArena *const *apArena, i64 nReserve, DsOp *pOp){
  i64 nDir = dsHashTableDirectoryBytes(anRow, nPart);
  i64 nAll = 0;
  DsHashMake make;
  i64 *pDir;
  int i, iEnd, rc;
  memset(p, 0, sizeof(*p));
  p->pMem = pMem;
  p->aPart = dsMalloc(pMem, (i64)sizeof(DsHashPart) * nPart);
  if( p->aPart==0 ) return SQLITE_NOMEM;
  p->nPart = nPart;
  for(i=0; i<nPart; i++) dsHashPartEmpty(&p->aPart[i]);
  if( nDir>0 ){
    /* One block for every directory: on huge pages, where the directory
    ** of one sub-table is too small for them.  Each sub-table's part is
    ** made and zeroed by the thread that counts its rows. */
    p->aDir = dsMalloc(pMem, nDir);
    if( p->aDir==0 ) return SQLITE_NOMEM;
  }
  pDir = p->aDir;
  for(i=0; i<nPart; i++){
    if( anRow[i]>0 && apList[i] ){
      dsHashPartAssign(&p->aPart[i], anRow[i], &pDir);
      nAll += anRow[i];
    }
  }
  make.p = p;
  make.apList = apList;
  make.anRow = anRow;
  rc = dsHashSplit(&make, pOp, 0, nPart, nAll, dsHashCountItem);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<nPart; i=iEnd){
    i64 nBlock = 0;
    i64 nRow = 0;
    int bBlock, j;
    for(iEnd=i; iEnd<nPart && nBlock<DS_ROWS_BLOCK; iEnd++){
      nBlock += p->aPart[iEnd].nByte;
      nRow += anRow[iEnd];
    }
    rc = dsHashAllocBlock(p, i, iEnd, nBlock, nReserve, &bBlock);
    if( rc!=SQLITE_OK ) return rc;
    if( bBlock ){
      /* The block's sub-tables are copied at once, then their lists
      ** freed. */
      rc = dsHashSplit(&make, pOp, i, iEnd, nRow, dsHashPlaceItem);
      if( rc!=SQLITE_OK ) return rc;
      for(j=i; j<iEnd; j++){
        p->nRow += anRow[j];
        if( apArena && apArena[j] ) dsArenaClear(apArena[j]);
      }
      continue;
    }
    /* No room for a block: each sub-table gets its rows, and frees its
    ** list, before the next one takes its own. */
    for(j=i; j<iEnd; j++){
      DsHashPart *pPart = &p->aPart[j];
      if( pPart->nByte ){
        pPart->aBlock = dsMalloc(p->pMem, pPart->nByte);
        if( pPart->aBlock==0 ) return SQLITE_NOMEM;
        pPart->aRow = pPart->aBlock;
        rc = dsHashSplit(&make, pOp, j, j+1, anRow[j], dsHashPlaceItem);
        if( rc!=SQLITE_OK ) return rc;
      }
      p->nRow += anRow[j];
      if( apArena && apArena[j] ) dsArenaClear(apArena[j]);
    }
  }
  return SQLITE_OK;
}

void dsHashTableFree(DsHashTable *p){
  int i;
  if( p->aPart==0 ) return;
  for(i=0; i<p->nPart; i++) dsFree(p->pMem, p->aPart[i].aBlock);
  dsFree(p->pMem, p->aDir);
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
