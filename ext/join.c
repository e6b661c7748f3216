/*
** join.c: the equi-join driver shared by every join interface.
**
** It applies strict_hints, opens a reader on each input (key columns
** first, then the columns the caller needs), resolves OPTIMIZER_CHOOSES
** to a strategy (plan.c), and runs that strategy as an iterator of
** (left, right) pairs.  The operator context every strategy works in,
** the hints and join types, are operator.c's.
*/
#include "dataset_int.h"

struct DsJoin {
  DsOp op;
  DsPairIter *pIter;
  int eOutPhase;          /* the phase that produces the output */
  double tOut;            /* when it started */
  double msOtherAtOut;    /* ms of the other phases then */
};

static int dsJoinStart(DsJoin *p, int eStrategy){
  const DsHintShape *pShape = &dsHintShape[eStrategy];
  if( pShape->iBuild<0 ) return dsMergeJoinOpen(&p->op, &p->pIter);
  return dsHashJoinOpen(&p->op, pShape->iBuild, pShape->bRepartition,
                        &p->pIter);
}

/* Milliseconds booked so far to phases other than the output phase. */
static double dsJoinOtherMs(const DsJoin *p){
  double ms = 0;
  int i;
  for(i=0; i<DS_N_PHASE; i++){
    if( i!=p->eOutPhase ) ms += p->op.stats.aMs[i];
  }
  return ms;
}

int dsJoinOpen(DsConn *pConn, const DsJoinSpec *pSpec, DsJoin **ppJoin,
               char **pzErr){
  DsJoin *p;
  DsOp *pOp;
  int eStrategy = pSpec->eHint;
  int rc, i;
  double t = dsNowMs();

  assert( pSpec->nKey>0 );
  assert( pSpec->eHint>=0 && pSpec->eHint<DS_N_HINT );
  assert( pSpec->eType>=DS_JOIN_INNER && pSpec->eType<=DS_JOIN_FULL );
  *ppJoin = 0;
  rc = dsCheckStrictHint(pConn, pSpec->zFunc, pSpec->eHint, pSpec->eType,
                         pzErr);
  if( rc!=SQLITE_OK ) return rc;
  p = sqlite3_malloc64(sizeof(DsJoin));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  pOp = &p->op;
  dsOpInit(pOp, pConn, pSpec->zFunc, "join");
  pOp->eType = pSpec->eType;
  pOp->stats.zHint = dsHintName[pSpec->eHint];
  pOp->stats.zJoinType = dsJoinTypeName[pSpec->eType];
  dsOpStep(pOp, "plan");

  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsReaderOpen(pConn, pSpec->zFunc, pSpec->apIn[i], pSpec->nKey,
                      pSpec->aaiKey[i], pSpec->anPay[i], pSpec->aaiPay[i],
                      &pOp->apSrc[i], pzErr);
  }
  if( rc==SQLITE_OK && eStrategy==DS_HINT_OPTIMIZER ){
    rc = dsChooseStrategy(pOp, pSpec, &eStrategy, &pOp->stats.zReason);
    /* Counting a view or query reads it (plan.c): its error is the
    ** join's. */
    if( rc!=SQLITE_OK && *pzErr==0 ) *pzErr = dsOpErrMsg(pOp, rc);
  }else if( rc==SQLITE_OK ){
    pOp->stats.zReason = sqlite3_mprintf("as hinted");
    if( pOp->stats.zReason==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) dsOpProgressInputs(pOp, pSpec->apIn);
  dsStatsPhase(&pOp->stats, DS_PHASE_PLAN, &t);
  if( rc==SQLITE_OK ){
    pOp->stats.zStrategy = dsHintName[eStrategy];
    p->eOutPhase = eStrategy==DS_HINT_SORT_MERGE ? DS_PHASE_MERGE
                                                 : DS_PHASE_PROBE;
    rc = dsJoinStart(p, eStrategy);
    p->tOut = dsNowMs();
    p->msOtherAtOut = dsJoinOtherMs(p);
    if( rc!=SQLITE_OK ) dsOpOpenFailed(pOp, rc, pzErr);
  }
  if( rc!=SQLITE_OK ){
    dsJoinClose(p);
    return rc;
  }
  *ppJoin = p;
  return SQLITE_OK;
}

/* The next pair: SQLITE_ROW, SQLITE_DONE, or an error with *pzErr set. */
int dsJoinNext(DsJoin *p, DsRow **ap, char **pzErr){
  DsPairIter *pIter = p->pIter;
  int rc;
  if( pIter->iQueue < pIter->nQueue ){
    DsRow **apPair = &pIter->apQueue[2*pIter->iQueue++];
    ap[0] = apPair[0];
    ap[1] = apPair[1];
    p->op.stats.nOut++;
    return SQLITE_ROW;
  }
  if( p->op.bDone ) return SQLITE_DONE;
  pIter->nQueue = pIter->iQueue = 0;
  rc = pIter->xNext(pIter, ap);
  if( rc!=SQLITE_ROW ) pIter->nQueue = 0;
  return dsOpNextTail(&p->op, rc, pzErr);
}

void dsJoinClose(DsJoin *p){
  if( p ){
    if( p->pIter ){
      /* The output phase is the time since it started less what the
      ** strategy itself booked to other phases meanwhile (a hash join
      ** builds when the first row is asked for). */
      double msOther = dsJoinOtherMs(p) - p->msOtherAtOut;
      dsStatsPhase(&p->op.stats, p->eOutPhase, &p->tOut);
      p->op.stats.aMs[p->eOutPhase] -= msOther;
      dsOpStopSources(&p->op);
      p->pIter->xClose(p->pIter);
    }
    dsOpFinish(&p->op);
    sqlite3_free(p);
  }
}
