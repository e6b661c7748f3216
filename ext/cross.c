/*
** cross.c: the cross product, every pair of a left row and a right row.
**
** Flink's cross has two hints that name the small side: crossWithTiny
** (SECOND_IS_SMALL) and crossWithHuge (FIRST_IS_SMALL).  The small side is
** buffered and the other side is streamed exactly once:
**
**   The small side is read whole into a row buffer (rowbuf.c): in memory
**   while the budget allows, in a spill file after that.  The streamed
**   side is then read in blocks, and each block is paired with every
**   buffered row (DsBlockCross, the core's block nested loop).  The
**   streamed side is read once; the buffer's spilled part once per block,
**   so blocks are made as large as the budget allows.
**
** OPTIMIZER_CHOOSES buffers the input with fewer rows (from sqlite_stat1
** or counted), the right one on a tie, as crossWithTiny does; but a table
** small enough beside a view or query is buffered without counting the
** view or query, by the join's rule (plan.c): in a cross product of a
** cross product of ... of views, counts would run the innermost 2^n times.
**
** Producing pairs needs no interrupt checks of its own: each pair goes
** back to SQLite, which checks, and reading an input steps statements,
** which check too.
*/
#include "dataset_int.h"

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
  const char *z;
  int rc = dsOptionalTextArg(zFunc, "hint", pVal, &z, pzErr);
  *peHint = DS_CROSS_OPTIMIZER;
  if( rc!=SQLITE_OK || z==0 ) return rc;
  return dsParseCrossHintText(zFunc, z, peHint, pzErr);
}

struct DsCross {
  DsOp op;
  int iSmall;             /* the buffered side: 0 left, 1 right */
  DsRowBuf small;         /* its rows: in memory, then in a spill file */
  DsBlockCross loop;      /* the streamed side, block by block, with them */
  int bLoop;              /* loop is initialized */
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

/* Rows of a view or query counted at most to pick the side to buffer. */
#define DS_CROSS_COUNT_CAP 10000000

/*
** The side to buffer for OPTIMIZER_CHOOSES, by the rule the join follows
** (plan.c): a table small enough beside a view or query is buffered and
** the view or query not counted; else the smaller side.  Views and
** queries are counted up to the point where the smaller side is clear
** enough: a product that large is rarely asked for.
*/
static int dsCrossChooseFromSizes(DsCross *p, const DsCrossSpec *pSpec){
  DsOp *pOp = &p->op;
  DsSides sides;
  i64 nBytes;
  int s, rc;
  memset(&sides, 0, sizeof(sides));
  sides.pOp = pOp;
  for(s=0; s<2; s++){
    sides.apIn[s] = pSpec->apIn[s];
    sides.anRowHint[s] = -1;
    sides.anPay[s] = pSpec->anCol[s];
    sides.aaiPay[s] = pSpec->aaiCol[s];
    sides.anCap[s] = DS_CROSS_COUNT_CAP;
  }
  rc = dsCountSides(pOp->pConn, &sides);
  if( rc!=SQLITE_OK ) return rc;
  p->iSmall = dsSmallBesideQuery(pOp->pConn, &sides, &nBytes);
  if( p->iSmall>=0 ){
    char *zSmall = dsSmallBesideQueryText(pOp->pConn, &sides, p->iSmall,
                                          nBytes, "buffer");
    if( zSmall ){
      pOp->stats.zReason = sqlite3_mprintf("%s: it is buffered, the %s one "
          "streamed, whatever its size: a view or query, which the cross "
          "product does not count (a count would run it once more)",
          zSmall, dsSideName(1 - p->iSmall));
      sqlite3_free(zSmall);
    }
  }else{
    char *zSmaller;
    p->iSmall = dsSmallerSide(sides.anRow, sides.abAtLeast);
    zSmaller = dsSmallerSideText(sides.anRow, sides.abAtLeast, p->iSmall);
    if( zSmaller ){
      pOp->stats.zReason = sqlite3_mprintf("%s: it is buffered, the %s one "
          "streamed", zSmaller, dsSideName(1 - p->iSmall));
      sqlite3_free(zSmaller);
    }
  }
  return SQLITE_OK;
}

/* Decide the side to buffer, and say why. */
static int dsCrossChooseSide(DsCross *p, const DsCrossSpec *pSpec){
  DsOp *pOp = &p->op;
  if( pSpec->eHint!=DS_CROSS_OPTIMIZER ){
    p->iSmall = pSpec->eHint==DS_CROSS_FIRST_SMALL ? 0 : 1;
    pOp->stats.zReason = sqlite3_mprintf("as hinted: the %s input is "
        "buffered, the %s one streamed", dsSideName(p->iSmall),
        dsSideName(1 - p->iSmall));
  }else{
    int rc = dsCrossChooseFromSizes(p, pSpec);
    if( rc!=SQLITE_OK ) return rc;
  }
  pOp->stats.zStrategy = dsCrossHintName[p->iSmall==0 ? DS_CROSS_FIRST_SMALL
                                                      : DS_CROSS_SECOND_SMALL];
  pOp->stats.iBuild = p->iSmall;
  return pOp->stats.zReason ? SQLITE_OK : SQLITE_NOMEM;
}

/* Read the small side whole into the row buffer. */
static int dsCrossReadSmall(DsCross *p){
  DsSource *pSrc = p->op.apSrc[p->iSmall];
  DsArena arena;          /* each row as read, until it is copied */
  int rc;
  dsArenaInit(&arena, &p->op.mem);
  dsOpStep(&p->op, "buffer");
  for(;;){
    DsRow *pRow;
    dsArenaReset(&arena);
    rc = pSrc->xNext(pSrc, &arena, &pRow);
    if( rc!=SQLITE_ROW ) break;
    rc = dsRowBufAppend(&p->small, pRow);
    if( rc!=SQLITE_OK ) break;
  }
  dsArenaClear(&arena);
  if( rc==SQLITE_DONE && p->small.pFile ){
    char *z = sqlite3_mprintf("; it did not fit in memory_limit (%lld "
        "bytes), so it was partly spilled to disk and read once per block "
        "of the %s input", p->op.pConn->nMemLimit, dsSideName(1 - p->iSmall));
    rc = z ? dsCrossAddReason(p, z) : SQLITE_NOMEM;
    sqlite3_free(z);
  }
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
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
  dsRowBufInit(&p->small, pOp);
  dsOpStep(pOp, "plan");
  /* Half the budget for the buffer, so that blocks of the streamed side
  ** (a quarter, rowbuf.c) still fit when it spills. */
  p->small.nMemMax = pConn->nMemLimit / 2;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsReaderOpen(pConn, pSpec->zFunc, pSpec->apIn[i], 0, 0,
                      pSpec->anCol[i], pSpec->aaiCol[i], &pOp->apSrc[i],
                      pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsCrossChooseSide(p, pSpec);
  if( rc==SQLITE_OK ) dsOpProgressInputs(pOp, pSpec->apIn);
  dsStatsPhase(&pOp->stats, DS_PHASE_PLAN, &t);
  if( rc==SQLITE_OK ) rc = dsCrossReadSmall(p);
  if( rc==SQLITE_OK ){
    /* An empty small side ends the loop before the other side is read. */
    dsBlockCrossInit(&p->loop, pOp, pOp->apSrc[1 - p->iSmall], &p->small);
    p->bLoop = 1;
  }
  dsStatsPhase(&pOp->stats, DS_PHASE_BUILD, &t);
  p->tOut = t;
  if( rc!=SQLITE_OK ){
    dsOpOpenFailed(pOp, rc, pzErr);
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
  if( p->op.bDone ) return SQLITE_DONE;
  dsOpStep(&p->op, "cross");
  rc = dsBlockCrossNext(&p->loop, &ap[1 - p->iSmall], &ap[p->iSmall]);
  return dsOpNextTail(&p->op, rc, pzErr);
}

void dsCrossClose(DsCross *p){
  if( p ){
    DsOp *pOp = &p->op;
    dsStatsPhase(&pOp->stats, DS_PHASE_PROBE, &p->tOut);
    if( p->bLoop ){
      if( p->small.pFile ){
        char *z = sqlite3_mprintf(" (%lld block%s)", p->loop.nLoaded,
                                  p->loop.nLoaded==1 ? "" : "s");
        if( z ) dsCrossAddReason(p, z);
        sqlite3_free(z);
        pOp->stats.nPartition = p->loop.nLoaded;
      }
      dsBlockCrossFree(&p->loop);
    }
    dsRowBufFree(&p->small);
    dsOpFinish(pOp);
    sqlite3_free(p);
  }
}
