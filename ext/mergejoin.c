/*
** mergejoin.c: the REPARTITION_SORT_MERGE strategy.
**
** Both sides go through the sorter (sort.c), which sorts in memory or,
** past the budget, in sorted runs on disk merged as rows are asked for.
** The two sorted streams are then merged (groupmerge.c): the side with
** the smaller key advances, producing its row alone when the join type
** keeps it; when the keys are equal, the rows of that key on each side
** are gathered into row buffers (rowbuf.c, which spill when a group
** outgrows memory) and their cross product is produced block by block,
** so one key larger than memory on both sides still completes.  The
** right side's rows are gathered first: when there is one of them, the
** commonest case (a foreign key joined to the key it refers to), the left
** side's rows of that key are paired with it as they come from their
** sorter, not copied first.
**
** Keys sort as ORDER BY on the key columns would sort them, NULL first; a
** key with a NULL part never matches.  The output therefore comes in key
** order, with NULL keys where SQLite would put them.
*/
#include "dataset_int.h"

typedef struct DsMergeJoin DsMergeJoin;
struct DsMergeJoin {
  DsPairIter base;
  DsOp *pOp;
  int abKeep[2];          /* produce unmatched rows of left, right */
  DsGroupMerge merge;     /* both sides in key order, and their heads */
  int abAdvance[2];       /* head s was used: fetch the next one first */
  DsRowBuf aGroup[2];     /* the rows of one key on each side */
  DsBlockCross cross;     /* their cross product */
  int bInGroup;           /* producing that cross product */
  int bStream;            /* pairing left rows with aGroup[1]'s one row */
};

/* Make the head of side s its next row. */
static int dsMergeFetch(DsMergeJoin *p, int s){
  p->abAdvance[s] = 0;
  return dsGroupMergeFetch(&p->merge, s);
}

/*
** Move the rows of side s equal in key to its head into aGroup[s].  The
** right side's are gathered first, and the first of them, which stays in
** memory (bHoldFirst), has the group's key: the left side's first row may
** have gone to the group's file.
*/
static int dsMergeGather(DsMergeJoin *p, int s){
  DsRowBuf *pGroup = &p->aGroup[s];
  int rc = dsRowBufAppend(pGroup, p->merge.apHead[s]);
  while( rc==SQLITE_OK ){
    if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) break;
    rc = dsMergeFetch(p, s);
    if( rc!=SQLITE_OK ) break;
    if( !dsGroupMergeInGroup(&p->merge, s, p->aGroup[1].pHead) ) break;
    rc = dsRowBufAppend(pGroup, p->merge.apHead[s]);
  }
  if( rc==SQLITE_OK ) rc = dsRowBufRewind(pGroup);
  return rc;
}

/*
** Start pairing the rows of the key both heads share: the right side's
** rows are gathered; if there is just one, the left side's rows are
** streamed against it (bStream), else they are gathered too and crossed.
*/
static int dsMergeStartGroup(DsMergeJoin *p){
  int rc = dsMergeGather(p, 1);
  if( rc!=SQLITE_OK ) return rc;
  if( p->aGroup[1].nRow==1 ){
    p->bStream = 1;
    return SQLITE_OK;
  }
  rc = dsMergeGather(p, 0);
  if( rc!=SQLITE_OK ) return rc;
  dsBlockCrossInit(&p->cross, p->pOp, &p->aGroup[0].base, &p->aGroup[1]);
  p->bInGroup = 1;
  return SQLITE_OK;
}

/*
** The next left row of the streamed key, paired with the right side's one
** row of that key (which a group of one always holds in memory):
** SQLITE_ROW, or SQLITE_DONE when the left side has moved past the key.
*/
static int dsMergeStreamNext(DsMergeJoin *p, DsRow **ap){
  DsRow *pOne = p->aGroup[1].pHead;
  assert( pOne!=0 && p->aGroup[1].nRow==1 );
  if( p->abAdvance[0] ){
    int rc = dsMergeFetch(p, 0);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( dsGroupMergeInGroup(&p->merge, 0, pOne) ){
    ap[0] = p->merge.apHead[0];
    ap[1] = pOne;
    p->abAdvance[0] = 1;
    return SQLITE_ROW;
  }
  dsRowBufClear(&p->aGroup[1]);
  p->bStream = 0;
  return SQLITE_DONE;
}

static void dsMergeEndGroup(DsMergeJoin *p){
  dsBlockCrossFree(&p->cross);
  dsRowBufClear(&p->aGroup[0]);
  dsRowBufClear(&p->aGroup[1]);
  p->bInGroup = 0;
}

static int dsMergeNext(DsPairIter *pIter, DsRow **ap){
  DsMergeJoin *p = (DsMergeJoin *)pIter;
  int s, rc;
  dsOpStep(p->pOp, "merge join");
  for(;;){
    int eSides;
    if( p->bStream ){
      rc = dsMergeStreamNext(p, ap);
      if( rc!=SQLITE_DONE ) return rc;
    }
    if( p->bInGroup ){
      rc = dsBlockCrossNext(&p->cross, &ap[0], &ap[1]);
      if( rc!=SQLITE_DONE ) return rc;
      dsMergeEndGroup(p);
    }
    for(s=0; s<2; s++){
      if( p->abAdvance[s] && (rc = dsMergeFetch(p, s))!=SQLITE_OK ) return rc;
    }
    /* Equal keys with a NULL part never match: the merge hands them out
    ** one side at a time, left ones first. */
    eSides = dsGroupMergeSides(&p->merge);
    if( eSides==0 ) return SQLITE_DONE;
    if( eSides==(DS_MERGE_LEFT|DS_MERGE_RIGHT) ){
      rc = dsMergeStartGroup(p);
      if( rc!=SQLITE_OK ) return rc;
      continue;
    }
    /* One side alone has the key: its row, if kept, goes out unmatched. */
    s = eSides==DS_MERGE_LEFT ? 0 : 1;
    if( p->merge.apHead[1-s]==0 && !p->abKeep[s] ) return SQLITE_DONE;
    p->abAdvance[s] = 1;
    if( p->abKeep[s] ){
      ap[s] = p->merge.apHead[s];
      ap[1-s] = 0;
      return SQLITE_ROW;
    }
    if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
  }
}

static void dsMergeClose(DsPairIter *pIter){
  DsMergeJoin *p = (DsMergeJoin *)pIter;
  if( p ){
    if( p->bInGroup ) dsBlockCrossFree(&p->cross);
    dsRowBufFree(&p->aGroup[0]);
    dsRowBufFree(&p->aGroup[1]);
    dsGroupMergeClose(&p->merge);
    sqlite3_free(p);
  }
}

/*
** Crossing one key's groups holds, at the least, the right group's first
** row (kept in memory for streaming) and a row of each side read back
** from the groups' files, with the files' buffers: a block's row and the
** inner row.  The sorters leave room for two rows of each side and a
** buffer (sort.c); the groups keep more rows in memory only while they
** leave room for the two read back.
*/
static void dsMergeMakeRoom(DsMergeJoin *p){
  i64 nRoom = dsSorterWidest(p->merge.apSorter[0])
            + dsSorterWidest(p->merge.apSorter[1])
            + 2*dsSpillBufferBytes(p->pOp);
  p->aGroup[0].nReserve = nRoom;
  p->aGroup[1].nReserve = nRoom;
}

/* Sort both sides; the merge happens as pairs are asked for. */
int dsMergeJoinOpen(DsOp *pOp, DsPairIter **ppIter){
  DsMergeJoin *p = sqlite3_malloc64(sizeof(DsMergeJoin));
  double t = dsNowMs();
  int rc = SQLITE_OK;
  int s;
  *ppIter = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsMergeNext;
  p->base.xClose = dsMergeClose;
  p->pOp = pOp;
  p->abKeep[0] = (pOp->eType & DS_KEEP_LEFT)!=0;
  p->abKeep[1] = (pOp->eType & DS_KEEP_RIGHT)!=0;
  dsRowBufInit(&p->aGroup[0], pOp);
  dsRowBufInit(&p->aGroup[1], pOp);
  p->aGroup[1].bHoldFirst = 1;
  pOp->stats.iBuild = -1;
  dsGroupMergeInit(&p->merge, pOp, DS_ORDER_KEY);
  for(s=0; s<2 && rc==SQLITE_OK; s++) rc = dsGroupMergeSort(&p->merge, s);
  if( rc==SQLITE_OK ) dsMergeMakeRoom(p);
  for(s=0; s<2 && rc==SQLITE_OK; s++) rc = dsMergeFetch(p, s);
  dsStatsPhase(&pOp->stats, DS_PHASE_SORT, &t);
  if( rc!=SQLITE_OK ){
    dsMergeClose(&p->base);
    return rc;
  }
  *ppIter = &p->base;
  return SQLITE_OK;
}
