/*
** hashtable.c: the hash table of build rows shared by every hash strategy.
**
** Chained: a power-of-two directory of pointers, each the head of a list
** linked through DsRow.pNext.  Rows carry their full 64-bit hash, so a
** probe compares hashes before it compares keys, and duplicates of a key
** simply lengthen one chain (open addressing with a slot per duplicate
** collapses on duplicate-heavy inputs).  The directory is sized once, for
** the rows about to be inserted, at one slot per row, and is indexed with
** the low bits of the hash; partitioning uses high bits.
**
** The Bloom filter of key hashes (DsBloom) lives here too: hash joins keep
** one per spilled partition, and one over the build rows in memory that
** lets a probe row that cannot match be dropped as it is read.
*/
#include "dataset_int.h"

int dsHashTableInit(DsHashTable *p, DsMem *pMem, i64 nRow){
  i64 nSlot = 16;
  while( nSlot < nRow ) nSlot *= 2;
  p->pMem = pMem;
  p->nRow = 0;
  p->aSlot = dsMalloc(pMem, nSlot * (i64)sizeof(DsRow *));
  if( p->aSlot==0 ){
    p->mask = 0;
    return SQLITE_NOMEM;
  }
  memset(p->aSlot, 0, (size_t)nSlot * sizeof(DsRow *));
  p->mask = (u64)nSlot - 1;
  return SQLITE_OK;
}

void dsHashTableFree(DsHashTable *p){
  dsFree(p->pMem, p->aSlot);
  p->aSlot = 0;
  p->mask = 0;
  p->nRow = 0;
}

/* Insert every row of the list pList (linked through pNext). */
void dsHashTableInsertList(DsHashTable *p, DsRow *pList){
  while( pList ){
    DsRow *pNext = pList->pNext;
    DsRow **pp = dsHashTableSlot(p, pList->hash);
    pList->pNext = *pp;
    *pp = pList;
    p->nRow++;
    pList = pNext;
  }
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
