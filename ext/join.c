/*
** join.c: the equi-join driver shared by every join interface.
**
** It parses hints and join types, applies strict_hints, opens a reader on
** each input (key columns first, then the columns the caller needs),
** resolves OPTIMIZER_CHOOSES to a strategy (plan.c), and runs that
** strategy as an iterator of (left, right) pairs.  It also owns the
** operator context (DsOp) every strategy works in: memory accounting,
** statistics, and the interrupt check for CPU-only loops.
*/
#include "dataset_int.h"

#include <stdarg.h>

const char *const dsHintName[DS_N_HINT] = {
  "OPTIMIZER_CHOOSES",
  "BROADCAST_HASH_FIRST",
  "BROADCAST_HASH_SECOND",
  "REPARTITION_HASH_FIRST",
  "REPARTITION_HASH_SECOND",
  "REPARTITION_SORT_MERGE"
};

const char *const dsJoinTypeName[4] = {
  "INNER", "LEFT_OUTER", "RIGHT_OUTER", "FULL_OUTER"
};

int dsParseHintText(const char *zFunc, const char *z, int *peHint,
                    char **pzErr){
  int i;
  for(i=0; i<DS_N_HINT; i++){
    if( sqlite3_stricmp(z, dsHintName[i])==0 ){
      *peHint = i;
      return SQLITE_OK;
    }
  }
  *pzErr = sqlite3_mprintf(
      "%s: unknown hint '%s'; valid hints: OPTIMIZER_CHOOSES, "
      "BROADCAST_HASH_FIRST, BROADCAST_HASH_SECOND, REPARTITION_HASH_FIRST, "
      "REPARTITION_HASH_SECOND, REPARTITION_SORT_MERGE", zFunc, z);
  return SQLITE_ERROR;
}

int dsParseJoinTypeText(const char *zFunc, const char *z, int *peType,
                        char **pzErr){
  static const struct { const char *zName; int eType; } aType[] = {
    { "INNER", DS_JOIN_INNER },
    { "LEFT_OUTER", DS_JOIN_LEFT }, { "LEFT", DS_JOIN_LEFT },
    { "RIGHT_OUTER", DS_JOIN_RIGHT }, { "RIGHT", DS_JOIN_RIGHT },
    { "FULL_OUTER", DS_JOIN_FULL }, { "FULL", DS_JOIN_FULL },
  };
  size_t i;
  for(i=0; i<sizeof(aType)/sizeof(aType[0]); i++){
    if( sqlite3_stricmp(z, aType[i].zName)==0 ){
      *peType = aType[i].eType;
      return SQLITE_OK;
    }
  }
  *pzErr = sqlite3_mprintf(
      "%s: unknown join type '%s'; valid join types: INNER, LEFT_OUTER, "
      "RIGHT_OUTER, FULL_OUTER (or LEFT, RIGHT, FULL)", zFunc, z);
  return SQLITE_ERROR;
}

/* A hint argument: text, or NULL for the default. */
int dsParseHint(const char *zFunc, sqlite3_value *pVal, int *peHint,
                char **pzErr){
  int rc;
  *peHint = DS_HINT_OPTIMIZER;
  if( pVal==0 || sqlite3_value_type(pVal)==SQLITE_NULL ) return SQLITE_OK;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: hint must be text or NULL, not %s",
                             zFunc, dsTypeNoun(pVal));
    return SQLITE_ERROR;
  }
  rc = dsArgRefuseNul(zFunc, "hint", pVal, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  return dsParseHintText(zFunc, (const char *)sqlite3_value_text(pVal),
                         peHint, pzErr);
}

/* A join type argument: text, or NULL for INNER. */
int dsParseJoinType(const char *zFunc, sqlite3_value *pVal, int *peType,
                    char **pzErr){
  int rc;
  *peType = DS_JOIN_INNER;
  if( pVal==0 || sqlite3_value_type(pVal)==SQLITE_NULL ) return SQLITE_OK;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: join_type must be text or NULL, not %s",
                             zFunc, dsTypeNoun(pVal));
    return SQLITE_ERROR;
  }
  rc = dsArgRefuseNul(zFunc, "join_type", pVal, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  return dsParseJoinTypeText(zFunc, (const char *)sqlite3_value_text(pVal),
                             peType, pzErr);
}

/*
** With strict_hints on, refuse what Flink refuses: broadcasting a side
** whose unmatched rows must be kept (a broadcast side cannot know what
** matched on the other machines).
*/
int dsCheckStrictHint(DsConn *pConn, const char *zFunc, int eHint,
                      int eType, char **pzErr){
  static const char *const azJoin[] = {
    0, "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin"
  };
  int bBad = 0;
  if( !pConn->bStrictHints ) return SQLITE_OK;
  if( eHint==DS_HINT_BROADCAST_FIRST ) bBad = (eType & DS_KEEP_LEFT)!=0;
  if( eHint==DS_HINT_BROADCAST_SECOND ) bBad = (eType & DS_KEEP_RIGHT)!=0;
  if( !bBad ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: Invalid JoinHint for %s: %s", zFunc,
                           azJoin[eType], dsHintName[eHint]);
  return SQLITE_ERROR;
}

/*************************************************************************
** The operator context.
*/
int dsOpInit(DsOp *pOp, DsConn *pConn, const char *zFunc,
             const char *zOperator){
  memset(pOp, 0, sizeof(*pOp));
  pOp->pConn = pConn;
  pOp->zFunc = zFunc;
  dsMemInit(&pOp->mem, pConn);
  dsStatsInit(&pOp->stats, zOperator);
  dsTickerInit(&pOp->tick, pConn);
  dsProgressStart(pOp);
  return SQLITE_OK;
}

/* SQLITE_INTERRUPT if the statement is to stop (interrupt.c). */
int dsOpCheckInterrupt(DsOp *pOp){
  return dsTickerCheck(&pOp->tick);
}

/* Release what the operator holds and publish its statistics. */
void dsOpFinish(DsOp *pOp){
  int i;
  if( !pOp->stats.bComplete && pOp->stats.rcStop==0
   && dsTickerCheck(&pOp->tick)==SQLITE_INTERRUPT ){
    /* The run ends before its last row with no error of its own: a LIMIT
    ** met, an error elsewhere in the statement, or SQLite interrupted it
    ** between two rows.  The last is seen here, as the interrupt is still
    ** on while SQLite closes the statement's cursors. */
    pOp->stats.rcStop = SQLITE_INTERRUPT;
    pOp->stats.zStoppedIn = pOp->tick.zStep;
  }
  for(i=0; i<2; i++){
    if( pOp->apSrc[i] ){
      pOp->stats.anRow[i] = pOp->apSrc[i]->nRow;
      pOp->apSrc[i]->xClose(pOp->apSrc[i]);
      pOp->apSrc[i] = 0;
    }
  }
  dsSpillPoolClose(pOp);
  dsTickerFinish(&pOp->tick);
  dsProgressFinish(pOp);
  sqlite3_free(pOp->zErr);
  pOp->zErr = 0;
  pOp->stats.nPeakMem = pOp->mem.nPeak;
  dsStatsPublish(pOp->pConn, &pOp->stats);
  dsStatsClear(&pOp->stats);
}

/*
** Record the operator's own error (a spill file that cannot be written,
** say): the message, prefixed with the function name, is what the user
** sees.  Returns rc.
*/
int dsOpError(DsOp *pOp, int rc, const char *zFormat, ...){
  va_list ap;
  char *zMsg;
  va_start(ap, zFormat);
  zMsg = sqlite3_vmprintf(zFormat, ap);
  va_end(ap);
  sqlite3_free(pOp->zErr);
  pOp->zErr = zMsg;
  return rc;
}

/*
** The message for error rc of a running operator: its own message, or a
** reader's where one failed, else SQLite's text for the code.  NULL for
** NOMEM, so that SQLite reports "out of memory" itself.
*/
static char *dsOpMessage(DsOp *pOp, int rc){
  static const char *const azSide[] = { "left", "right" };
  int i;
  if( rc==SQLITE_NOMEM ) return 0;
  if( rc==SQLITE_INTERRUPT ) return sqlite3_mprintf("%s: interrupted", pOp->zFunc);
  if( pOp->zErr ) return sqlite3_mprintf("%s: %s", pOp->zFunc, pOp->zErr);
  for(i=0; i<2; i++){
    if( pOp->apSrc[i] && pOp->apSrc[i]->zErr ){
      return sqlite3_mprintf("%s: reading the %s dataset: %s", pOp->zFunc,
                             azSide[i], pOp->apSrc[i]->zErr);
    }
  }
  return sqlite3_mprintf("%s: %s", pOp->zFunc, sqlite3_errstr(rc));
}

/* That message, as the operator fails with it (see above). */
char *dsOpErrMsg(DsOp *pOp, int rc){
  char *zMsg = dsOpMessage(pOp, rc);
  dsOpEnded(pOp);
  /* Every failure of a running operator comes here: remember where it
  ** stopped, and what the statement says, for ds_last_stats(). */
  if( pOp->stats.rcStop==0 ){
    pOp->stats.rcStop = rc;
    pOp->stats.zStoppedIn = pOp->tick.zStep;
    if( zMsg ) pOp->stats.zMessage = sqlite3_mprintf("%s", zMsg);
  }
  return zMsg;
}

/*
** The operator handed out its last row, or failed: erase its progress
** line now, before SQLite hands a result or an error message to the
** caller (the cursor, and so dsOpFinish(), may close only later).
*/
void dsOpEnded(DsOp *pOp){
  if( pOp->tick.pProg ) dsProgressEnd(pOp->tick.pProg);
}

/*************************************************************************
** The join driver.
*/
struct DsJoin {
  DsOp op;
  DsPairIter *pIter;
  int bDone;
  int eOutPhase;          /* the phase that produces the output */
  double tOut;            /* when it started */
  double msOtherAtOut;    /* ms of the other phases then */
};

static int dsJoinStart(DsJoin *p, const DsJoinSpec *pSpec, int eStrategy){
  DsOp *pOp = &p->op;
  switch( eStrategy ){
    case DS_HINT_BROADCAST_FIRST:
      return dsHashJoinOpen(pOp, 0, 0, &p->pIter);
    case DS_HINT_BROADCAST_SECOND:
      return dsHashJoinOpen(pOp, 1, 0, &p->pIter);
    case DS_HINT_REPARTITION_FIRST:
      return dsHashJoinOpen(pOp, 0, 1, &p->pIter);
    case DS_HINT_REPARTITION_SECOND:
      return dsHashJoinOpen(pOp, 1, 1, &p->pIter);
    default:
      (void)pSpec;
      return dsMergeJoinOpen(pOp, &p->pIter);
  }
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
  if( rc==SQLITE_OK ) dsProgressInputs(pOp, pSpec->apIn);
  dsStatsPhase(&pOp->stats, DS_PHASE_PLAN, &t);
  if( rc==SQLITE_OK ){
    pOp->stats.zStrategy = dsHintName[eStrategy];
    p->eOutPhase = eStrategy==DS_HINT_SORT_MERGE ? DS_PHASE_MERGE
                                                 : DS_PHASE_PROBE;
    rc = dsJoinStart(p, pSpec, eStrategy);
    p->tOut = dsNowMs();
    p->msOtherAtOut = dsJoinOtherMs(p);
    if( rc!=SQLITE_OK && *pzErr==0 ) *pzErr = dsOpErrMsg(pOp, rc);
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
  if( p->bDone ) return SQLITE_DONE;
  pIter->nQueue = pIter->iQueue = 0;
  rc = pIter->xNext(pIter, ap);
  if( rc==SQLITE_ROW ){
    p->op.stats.nOut++;
    return rc;
  }
  pIter->nQueue = 0;
  p->bDone = 1;
  /* One call on either path (dsOpErrMsg erases the line too): the
  ** per-row path of this function saves no more registers for it. */
  if( rc!=SQLITE_DONE ){
    *pzErr = dsOpErrMsg(&p->op, rc);
  }else{
    p->op.stats.bComplete = 1;
    dsOpEnded(&p->op);
  }
  return rc;
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
      p->pIter->xClose(p->pIter);
    }
    dsOpFinish(&p->op);
    sqlite3_free(p);
  }
}
