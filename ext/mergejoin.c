/*
** mergejoin.c: the REPARTITION_SORT_MERGE strategy.
**
** Both sides are sorted on the key (sort.c), then merged: the side with
** the smaller key advances, producing its row alone when the join type
** keeps it; when the keys are equal, the group of that key on each side
** is found and their cross product is produced.  Keys sort as ORDER BY
** on the key columns would sort them, NULL first; a key with a NULL part
** never matches, so the output comes in key order, NULL keys where SQLite
** would put them.
*/
#include "dataset_int.h"

typedef struct DsMergeJoin DsMergeJoin;
struct DsMergeJoin {
  DsPairIter base;
  DsOp *pOp;
  int abKeep[2];          /* produce unmatched rows of left, right */
  DsSorted aSide[2];      /* both sides, sorted */
  i64 aiNext[2];          /* next row of each side */
  int bInGroup;           /* producing the cross product of two groups */
  i64 aiEnd[2];           /* end of the group on each side */
  i64 iGroupRight;        /* first right row of the group */
  i64 iLeft, iRight;      /* the pair to produce next */
};

/* End of the run of rows equal in key to row i of side s. */
static i64 dsMergeGroupEnd(const DsSorted *pSide, i64 i){
  i64 j = i + 1;
  while( j<pSide->nRow && dsRowKeyCompare(pSide->aRow[i], pSide->aRow[j])==0 ){
    j++;
  }
  return j;
}

/* The next row of side s alone, if the join keeps it; advances. */
static int dsMergeAlone(DsMergeJoin *p, int s, DsRow **ap){
  DsRow *pRow = p->aSide[s].aRow[p->aiNext[s]++];
  if( p->abKeep[s] ){
    ap[s] = pRow;
    ap[1 - s] = 0;
    return SQLITE_ROW;
  }
  return dsOpTick(p->pOp);
}

static int dsMergeNext(DsPairIter *pIter, DsRow **ap){
  DsMergeJoin *p = (DsMergeJoin *)pIter;
  for(;;){
    DsRow *pL, *pR;
    int c, rc;
    if( p->bInGroup ){
      ap[0] = p->aSide[0].aRow[p->iLeft];
      ap[1] = p->aSide[1].aRow[p->iRight];
      if( ++p->iRight==p->aiEnd[1] ){
        p->iRight = p->iGroupRight;
        if( ++p->iLeft==p->aiEnd[0] ){
          p->bInGroup = 0;
          p->aiNext[0] = p->aiEnd[0];
          p->aiNext[1] = p->aiEnd[1];
        }
      }
      return SQLITE_ROW;
    }
    pL = p->aiNext[0]<p->aSide[0].nRow ? p->aSide[0].aRow[p->aiNext[0]] : 0;
    pR = p->aiNext[1]<p->aSide[1].nRow ? p->aSide[1].aRow[p->aiNext[1]] : 0;
    if( pL==0 && pR==0 ) return SQLITE_DONE;
    if( pR==0 ){
      c = -1;
    }else if( pL==0 ){
      c = 1;
    }else{
      c = dsRowKeyCompare(pL, pR);
      /* Equal keys with a NULL part never match: left ones go first. */
      if( c==0 && (pL->flags & DS_ROW_NULLKEY) ) c = -1;
    }
    if( c<0 ){
      if( pR==0 && !p->abKeep[0] ){ p->aiNext[0] = p->aSide[0].nRow; continue; }
      rc = dsMergeAlone(p, 0, ap);
      if( rc!=SQLITE_OK ) return rc;
    }else if( c>0 ){
      if( pL==0 && !p->abKeep[1] ){ p->aiNext[1] = p->aSide[1].nRow; continue; }
      rc = dsMergeAlone(p, 1, ap);
      if( rc!=SQLITE_OK ) return rc;
    }else{
      p->aiEnd[0] = dsMergeGroupEnd(&p->aSide[0], p->aiNext[0]);
      p->aiEnd[1] = dsMergeGroupEnd(&p->aSide[1], p->aiNext[1]);
      p->iLeft = p->aiNext[0];
      p->iRight = p->iGroupRight = p->aiNext[1];
      p->bInGroup = 1;
    }
  }
}

static void dsMergeClose(DsPairIter *pIter){
  DsMergeJoin *p = (DsMergeJoin *)pIter;
  if( p ){
    dsSortedFree(&p->aSide[0], &p->pOp->mem);
    dsSortedFree(&p->aSide[1], &p->pOp->mem);
    sqlite3_free(p);
  }
}

/* Sort both sides; the merge happens as pairs are asked for. */
int dsMergeJoinOpen(DsOp *pOp, DsPairIter **ppIter){
  DsMergeJoin *p = sqlite3_malloc64(sizeof(DsMergeJoin));
  double t = dsNowMs();
  int rc;
  *ppIter = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsMergeNext;
  p->base.xClose = dsMergeClose;
  p->pOp = pOp;
  p->abKeep[0] = (pOp->eType & DS_KEEP_LEFT)!=0;
  p->abKeep[1] = (pOp->eType & DS_KEEP_RIGHT)!=0;
  dsArenaInit(&p->aSide[0].arena, &pOp->mem);
  dsArenaInit(&p->aSide[1].arena, &pOp->mem);
  pOp->stats.iBuild = -1;
  rc = dsSortSource(pOp, pOp->apSrc[0], DS_ORDER_KEY, &p->aSide[0]);
  if( rc==SQLITE_OK ){
    rc = dsSortSource(pOp, pOp->apSrc[1], DS_ORDER_KEY, &p->aSide[1]);
  }
  dsStatsPhase(&pOp->stats, DS_PHASE_SORT, &t);
  if( rc!=SQLITE_OK ){
    dsMergeClose(&p->base);
    return rc;
  }
  *ppIter = &p->base;
  return SQLITE_OK;
}
