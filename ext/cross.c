/*
** cross.c: the cross product, every pair of a left row and a right row.
**
** Flink's cross has two hints that name the small side: crossWithTiny
** (SECOND_IS_SMALL) and crossWithHuge (FIRST_IS_SMALL).  The small side is
** buffered and the other side is streamed exactly once:
**
**   In memory.  The small side is read whole into an arena; then each row
**   of the streamed side is paired with every buffered row in turn.
**
**   Block nested loop.  If the small side passes the memory budget while
**   it is read, all of it goes to a spill file instead.  The streamed side
**   is then read in blocks as large as the budget allows, and for each
**   block the spill file is read once, each spilled row being paired with
**   every row of the block.  The streamed side is still read once; the
**   spill file is read once per block.
**
** OPTIMIZER_CHOOSES buffers the input with fewer rows (from sqlite_stat1
** or counted), the right one on a tie, as crossWithTiny does.
**
** Producing pairs needs no interrupt checks of its own (each pair goes
** back to SQLite, which checks); the loops that produce nothing, such as
** moving buffered rows to the spill file, tick the operator.
*/
#include "dataset_int.h"

static const char *const azSide[2] = { "left", "right" };

const char *const dsCrossHintName[DS_N_CROSS_HINT] = {
  "OPTIMIZER_CHOOSES", "FIRST_IS_SMALL", "SECOND_IS_SMALL"
};

int dsParseCrossHintText(const char *zFunc, const char *z, int *peHint,
                         char **pzErr){
  int i;
  for(i=0; i<DS_N_CROSS_HINT; i++){
    if( sqlite3_stricmp(z, dsCrossHintName[i])==0 ){
      *peHint = i;
      return SQLITE_OK;
    }
  }
  *pzErr = sqlite3_mprintf("%s: unknown hint '%s'; valid hints: "
      "OPTIMIZER_CHOOSES, FIRST_IS_SMALL, SECOND_IS_SMALL", zFunc, z);
  return SQLITE_ERROR;
}

/* A hint argument: text, or NULL (or absent) for OPTIMIZER_CHOOSES. */
int dsParseCrossHint(const char *zFunc, sqlite3_value *pVal, int *peHint,
                     char **pzErr){
  *peHint = DS_CROSS_OPTIMIZER;
  if( pVal==0 || sqlite3_value_type(pVal)==SQLITE_NULL ) return SQLITE_OK;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: hint must be text or NULL, not %s",
                             zFunc, dsValueTypeNoun(pVal));
    return SQLITE_ERROR;
  }
  return dsParseCrossHintText(zFunc, (const char *)sqlite3_value_text(pVal),
                              peHint, pzErr);
}

struct DsCross {
  DsOp op;
  int iSmall;             /* the buffered side: 0 left, 1 right */
  DsSource *pSmallSrc;
  DsSource *pBigSrc;      /* the streamed side; NULL once exhausted */
  DsArena smallArena;     /* the small side, when it fits in memory */
  DsRow *pSmall;          /* its rows, in input order */
  DsRow *pSmallTail;
  DsSpill *pSpill;        /* the small side, when it did not fit */
  DsArena spillArena;     /* the spilled row being paired */
  DsArena bigArena;       /* the current row or block of the streamed side */
  DsRow **aBlock;         /* the block (block nested loop only) */
  i64 nBlock;
  i64 nBlockAlloc;
  i64 nBlocks;            /* blocks read so far */
  DsRow *pOuter;          /* the row being paired with the inner rows */
  DsRow *pInner;          /* in memory: next buffered row to pair */
  i64 iInner;             /* block nested loop: next block row to pair */
  int bDone;
  double tOut;            /* when pairing started */
};

/* Append to the operator's reason (a message in plain words). */
static int dsCrossAddReason(DsCross *p, const char *zMore){
  char *z = sqlite3_mprintf("%s%s", p->op.stats.zReason, zMore);
  if( z==0 ) return SQLITE_NOMEM;
  sqlite3_free(p->op.stats.zReason);
  p->op.stats.zReason = z;
  return SQLITE_OK;
}

/* Decide the side to buffer, and say why. */
static int dsCrossChooseSide(DsCross *p, const DsCrossSpec *pSpec){
  DsOp *pOp = &p->op;
  i64 anRow[2];
  if( pSpec->eHint!=DS_CROSS_OPTIMIZER ){
    p->iSmall = pSpec->eHint==DS_CROSS_FIRST_SMALL ? 0 : 1;
    pOp->stats.zReason = sqlite3_mprintf("as hinted: the %s input is "
        "buffered, the %s one streamed", azSide[p->iSmall],
        azSide[1 - p->iSmall]);
  }else{
    anRow[0] = dsInputEstimateRows(pOp->pConn->db, pSpec->apIn[0]);
    anRow[1] = dsInputEstimateRows(pOp->pConn->db, pSpec->apIn[1]);
    p->iSmall = (anRow[0]>=0 && (anRow[1]<0 || anRow[0]<anRow[1])) ? 0 : 1;
    if( anRow[0]==anRow[1] ){
      pOp->stats.zReason = sqlite3_mprintf("the inputs have the same number "
          "of rows (%lld): the right one is buffered, as crossWithTiny "
          "does, the left one streamed", anRow[0]);
    }else{
      pOp->stats.zReason = sqlite3_mprintf("the %s input is the smaller "
          "(%lld rows against %lld): it is buffered, the %s one streamed",
          azSide[p->iSmall], anRow[p->iSmall], anRow[1 - p->iSmall],
          azSide[1 - p->iSmall]);
    }
  }
  pOp->stats.zStrategy = dsCrossHintName[p->iSmall==0 ? DS_CROSS_FIRST_SMALL
                                                      : DS_CROSS_SECOND_SMALL];
  pOp->stats.iBuild = p->iSmall;
  return pOp->stats.zReason ? SQLITE_OK : SQLITE_NOMEM;
}

/*
** The small side passed the budget: move the rows read so far to a spill
** file, then copy the rest of the small side there.
*/
static int dsCrossSpillSmall(DsCross *p){
  DsOp *pOp = &p->op;
  DsRow *pRow;
  int rc = dsSpillOpen(pOp, &p->pSpill);
  for(pRow=p->pSmall; pRow && rc==SQLITE_OK; pRow=pRow->pNext){
    rc = dsSpillWrite(p->pSpill, pRow);
    if( rc==SQLITE_OK ) rc = dsOpTick(pOp);
  }
  p->pSmall = p->pSmallTail = 0;
  dsArenaClear(&p->smallArena);
  while( rc==SQLITE_OK ){
    dsArenaReset(&p->smallArena);
    rc = p->pSmallSrc->xNext(p->pSmallSrc, &p->smallArena, &pRow);
    if( rc==SQLITE_ROW ) rc = dsSpillWrite(p->pSpill, pRow);
  }
  dsArenaClear(&p->smallArena);
  if( rc==SQLITE_DONE ) rc = dsSpillRewind(p->pSpill);
  if( rc==SQLITE_OK ){
    char *z = sqlite3_mprintf("; it did not fit in memory_limit (%lld "
        "bytes), so it was spilled to disk and read once per block of the "
        "%s input", pOp->pConn->nMemLimit, azSide[1 - p->iSmall]);
    rc = z ? dsCrossAddReason(p, z) : SQLITE_NOMEM;
    sqlite3_free(z);
  }
  return rc;
}

/* Read the small side: into memory, or to a spill file past the budget. */
static int dsCrossReadSmall(DsCross *p){
  for(;;){
    DsRow *pRow;
    int rc = p->pSmallSrc->xNext(p->pSmallSrc, &p->smallArena, &pRow);
    if( rc==SQLITE_DONE ) return SQLITE_OK;
    if( rc!=SQLITE_ROW ) return rc;
    if( p->pSmallTail ){
      p->pSmallTail->pNext = pRow;
    }else{
      p->pSmall = pRow;
    }
    p->pSmallTail = pRow;
    if( dsMemOverBudget(&p->op.mem) ) return dsCrossSpillSmall(p);
  }
}

/* Read the next row of the streamed side into pOuter (NULL at the end). */
static int dsCrossNextOuter(DsCross *p){
  int rc;
  p->pOuter = 0;
  if( p->pBigSrc==0 ) return SQLITE_OK;
  dsArenaReset(&p->bigArena);
  rc = p->pBigSrc->xNext(p->pBigSrc, &p->bigArena, &p->pOuter);
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  p->pOuter = 0;
  p->pBigSrc = 0;
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* Read the next block of the streamed side, as large as the budget
** allows but at least one row; nBlock is 0 at the end. */
static int dsCrossReadBlock(DsCross *p){
  DsMem *pMem = &p->op.mem;
  p->nBlock = 0;
  /* Cleared, not reset: a chunk kept for reuse would count against the
  ** budget and shrink every later block. */
  dsArenaClear(&p->bigArena);
  while( p->pBigSrc && (p->nBlock==0 || !dsMemOverBudget(pMem)) ){
    DsRow *pRow;
    int rc = p->pBigSrc->xNext(p->pBigSrc, &p->bigArena, &pRow);
    if( rc==SQLITE_DONE ){
      p->pBigSrc = 0;
      break;
    }
    if( rc!=SQLITE_ROW ) return rc;
    if( p->nBlock==p->nBlockAlloc ){
      i64 nNew = p->nBlockAlloc ? p->nBlockAlloc*2 : 1024;
      DsRow **aNew = dsRealloc(pMem, p->aBlock, nNew * (i64)sizeof(DsRow *));
      if( aNew==0 ) return SQLITE_NOMEM;
      p->aBlock = aNew;
      p->nBlockAlloc = nNew;
    }
    p->aBlock[p->nBlock++] = pRow;
  }
  if( p->nBlock ) p->nBlocks++;
  return SQLITE_OK;
}

/* The pair of a small-side row and a streamed-side row. */
static int dsCrossEmit(DsCross *p, DsRow **ap, DsRow *pSmall, DsRow *pBig){
  ap[p->iSmall] = pSmall;
  ap[1 - p->iSmall] = pBig;
  return SQLITE_ROW;
}

/* In memory: each streamed row with every buffered row. */
static int dsCrossStepMemory(DsCross *p, DsRow **ap){
  for(;;){
    int rc;
    if( p->pOuter && p->pInner ){
      DsRow *pSmall = p->pInner;
      p->pInner = pSmall->pNext;
      return dsCrossEmit(p, ap, pSmall, p->pOuter);
    }
    if( (rc = dsCrossNextOuter(p))!=SQLITE_OK ) return rc;
    if( p->pOuter==0 ) return SQLITE_DONE;
    p->pInner = p->pSmall;
  }
}

/* Block nested loop: each spilled row with every row of the block. */
static int dsCrossStepBlocks(DsCross *p, DsRow **ap){
  for(;;){
    int rc;
    if( p->pOuter && p->iInner<p->nBlock ){
      return dsCrossEmit(p, ap, p->pOuter, p->aBlock[p->iInner++]);
    }
    if( p->nBlock ){
      dsArenaReset(&p->spillArena);
      rc = dsSpillRead(p->pSpill, &p->spillArena, &p->pOuter);
      if( rc==SQLITE_ROW ){
        p->iInner = 0;
        continue;
      }
      if( rc!=SQLITE_DONE ) return rc;
      p->pOuter = 0;
    }
    if( (rc = dsCrossReadBlock(p))!=SQLITE_OK ) return rc;
    if( p->nBlock==0 ) return SQLITE_DONE;
    if( (rc = dsSpillRewind(p->pSpill))!=SQLITE_OK ) return rc;
  }
}

int dsCrossOpen(DsConn *pConn, const DsCrossSpec *pSpec, DsCross **ppCross,
                char **pzErr){
  DsCross *p;
  DsOp *pOp;
  int rc = SQLITE_OK;
  int i;
  double t = dsNowMs();

  *ppCross = 0;
  p = sqlite3_malloc64(sizeof(DsCross));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  pOp = &p->op;
  dsOpInit(pOp, pConn, pSpec->zFunc, "cross");
  pOp->stats.zHint = dsCrossHintName[pSpec->eHint];
  dsArenaInit(&p->smallArena, &pOp->mem);
  dsArenaInit(&p->spillArena, &pOp->mem);
  dsArenaInit(&p->bigArena, &pOp->mem);
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsReaderOpen(pConn, pSpec->zFunc, pSpec->apIn[i], 0, 0,
                      pSpec->anCol[i], pSpec->aaiCol[i], &pOp->apSrc[i],
                      pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsCrossChooseSide(p, pSpec);
  dsStatsPhase(&pOp->stats, DS_PHASE_PLAN, &t);
  if( rc==SQLITE_OK ){
    p->pSmallSrc = pOp->apSrc[p->iSmall];
    p->pBigSrc = pOp->apSrc[1 - p->iSmall];
    rc = dsCrossReadSmall(p);
    /* Nothing to pair with: the streamed side need not be read at all. */
    if( rc==SQLITE_OK && p->pSmall==0
     && (p->pSpill==0 || dsSpillRows(p->pSpill)==0) ){
      p->pBigSrc = 0;
    }
  }
  dsStatsPhase(&pOp->stats, DS_PHASE_BUILD, &t);
  p->tOut = t;
  if( rc!=SQLITE_OK ){
    if( *pzErr==0 ) *pzErr = dsOpErrMsg(pOp, rc);
    dsCrossClose(p);
    return rc;
  }
  *ppCross = p;
  return SQLITE_OK;
}

/*
** The next pair: ap[0] the left row, ap[1] the right row, valid until the
** next call.  SQLITE_ROW, SQLITE_DONE, or an error with *pzErr set.
*/
int dsCrossNext(DsCross *p, DsRow **ap, char **pzErr){
  int rc;
  if( p->bDone ) return SQLITE_DONE;
  rc = p->pSpill ? dsCrossStepBlocks(p, ap) : dsCrossStepMemory(p, ap);
  if( rc==SQLITE_ROW ){
    p->op.stats.nOut++;
    return rc;
  }
  p->bDone = 1;
  if( rc!=SQLITE_DONE ) *pzErr = dsOpErrMsg(&p->op, rc);
  return rc;
}

void dsCrossClose(DsCross *p){
  if( p ){
    DsOp *pOp = &p->op;
    dsStatsPhase(&pOp->stats, DS_PHASE_PROBE, &p->tOut);
    if( p->nBlocks && pOp->stats.zReason ){
      char *z = sqlite3_mprintf(" (%lld block%s)", p->nBlocks,
                                p->nBlocks==1 ? "" : "s");
      if( z ) dsCrossAddReason(p, z);
      sqlite3_free(z);
    }
    pOp->stats.nPartition = p->nBlocks;
    dsSpillClose(p->pSpill);
    dsFree(&pOp->mem, p->aBlock);
    dsArenaClear(&p->smallArena);
    dsArenaClear(&p->spillArena);
    dsArenaClear(&p->bigArena);
    dsOpFinish(pOp);
    sqlite3_free(p);
  }
}
