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
** twice.  Partitioning uses high bits of the hash, the slot low bits.
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

/* Make sub-table pPart of the n rows of pList. */
static int dsHashPartBuild(DsHashPart *pPart, DsMem *pMem, DsRow *pList,
                           i64 n, DsOp *pOp){
  i64 nSlot, s;
  i64 *aOff;
  DsRow *pRow;
  if( n==0 || pList==0 ){
    pPart->aOff = aNoOffsets;
    pPart->aRow = (u8 *)aNoRows;
    pPart->mask = 0;
    return SQLITE_OK;
  }
  nSlot = dsHashSlots(n);
  aOff = dsMalloc(pMem, (nSlot + 1) * (i64)sizeof(i64));
  if( aOff==0 ) return SQLITE_NOMEM;
  memset(aOff, 0, (size_t)(nSlot + 1) * sizeof(i64));
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
  pPart->aRow = dsMalloc(pMem, pPart->nByte);
  if( pPart->aRow==0 ) return SQLITE_NOMEM;
  /* Place each row at its slot's next free offset, which moves aOff[s]
  ** on to where slot s+1 starts; then shift the directory back. */
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
** Make the table of the nPart lists apList[] (anRow[i] rows in list i),
** sub-table i of list i.  The rows are copied; apArena[i], where not
** NULL, holds list i's rows and is cleared once they are copied.  pOp's
** interrupt check is ticked as rows are placed: SQLITE_INTERRUPT leaves a
** table that dsHashTableFree() frees.
*/
int dsHashTableBuild(DsHashTable *p, DsMem *pMem, int nPart,
                     DsRow *const *apList, const i64 *anRow,
                     DsArena *const *apArena, DsOp *pOp){
  int i;
  memset(p, 0, sizeof(*p));
  p->pMem = pMem;
  p->aPart = dsMalloc(pMem, (i64)sizeof(DsHashPart) * nPart);
  if( p->aPart==0 ) return SQLITE_NOMEM;
  memset(p->aPart, 0, sizeof(DsHashPart) * (size_t)nPart);
  p->nPart = nPart;
  for(i=0; i<nPart; i++){
    int rc = dsHashPartBuild(&p->aPart[i], pMem, apList[i], anRow[i], pOp);
    if( rc!=SQLITE_OK ) return rc;
    p->nRow += anRow[i];
    if( apArena && apArena[i] ) dsArenaClear(apArena[i]);
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
    if( p->aPart[i].aRow!=(u8 *)aNoRows ) dsFree(p->pMem, p->aPart[i].aRow);
  }
  dsFree(p->pMem, p->aPart);
  memset(p, 0, sizeof(*p));
}

/* A filter of nWord words (a power of two), all clear. */
int dsBloomInit(DsBloom *p, DsMem *pMem, i64 nWord){
  p->aWord = dsMalloc(pMem, nWord * 8);
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
