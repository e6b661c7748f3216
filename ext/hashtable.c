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

/*
** Insert every row of the list pList (linked through pNext), ticking
** pOp's interrupt check: a table of millions of rows takes a while, each
** insert a likely cache miss.  SQLITE_INTERRUPT leaves the rows not yet
** inserted out of the table (they stay in their arenas).
*/
int dsHashTableInsertList(DsHashTable *p, DsRow *pList, DsOp *pOp){
  while( pList ){
    DsRow *pNext = pList->pNext;
    DsRow **pp = dsHashTableSlot(p, pList->hash);
    int rc;
    pList->pNext = *pp;
    *pp = pList;
    p->nRow++;
    pList = pNext;
    if( (rc = dsOpTickN(pOp, DS_TICK_ROW/4))!=SQLITE_OK ) return rc;
  }
  return SQLITE_OK;
}
