/*
** plan.c: how OPTIMIZER_CHOOSES picks a join strategy, and the plan that
** ds_join_plan() shows (its module is plan_vtab.c).
**
** The choice.  A query that wants rows in key order gets
** REPARTITION_SORT_MERGE, whose output is in key order anyway.  Otherwise
** the smaller input is the build side (on a tie the right one, as with
** Flink's joinWithTiny): it is broadcast when its hash table fits in half
** of memory_limit, and both sides are repartitioned when it does not.
** (Repartitioning both sides when the table was larger than a CPU cache
** and both fitted was faster once; since the broadcast's table is made
** and probed on every thread it is not: uni 1M x 1M took 0.44 s
** broadcast against 0.47 s repartitioned with threads 1, 0.34 s against
** 0.45 s with threads 2.)
** Input sizes come from the caller when known (the CREATE form keeps an
** estimate per table), else from sqlite_stat1, else from a count that
** reads at most as many rows of a view or query as would fit: beyond that
** the exact size does not change the choice; of two tables, the larger
** is counted only as far as it takes to know it is the larger
** (dsCountTablesFirst); and a view or query beside a table small enough
** is not counted at all (dsIsSmallBesideQuery).
** That counting (DsSides, dsCountSides) also serves ds_cross, whose
** buffered side is chosen by the same rule.
**
** ds_join_plan(left, right, left_key, right_key [, hint [, join_type]])
** returns one row describing the join without forming it:
**
**     strategy, build_side, left_rows, right_rows, output_rows,
**     top_keys, memory_bytes, reason
**
** output_rows is exact: both sides' keys (only the keys) are sorted with
** the extension's own sorter, so with SPEC's key equality and within the
** memory budget, and merged group by group (groupmerge.c), adding n*m
** for a key found n times on the left and m times on the right, plus the
** unmatched rows the join type keeps.  top_keys lists the ten keys that
** produce the most rows: the check for a join that would blow up into a
** cartesian product.
*/
#include "dataset_int.h"
#include "dsplan.h"

#define DS_FUNC_PLAN "ds_join_plan"
#define DS_TOP_KEYS  10

/* What the choice of a join's strategy knows of its sides before it
** counts: a count of a view or query stops at the rows whose table would
** fill half the budget, beyond which the exact size changes nothing. */
static void dsJoinSides(DsConn *pConn, DsOp *pOp, const DsJoinSpec *pSpec,
                        DsSides *p){
  int s;
  memset(p, 0, sizeof(*p));
  p->pOp = pOp;
  p->nKey = pSpec->nKey;
  for(s=0; s<2; s++){
    p->apIn[s] = pSpec->apIn[s];
    p->anRowHint[s] = pSpec->anRowHint[s];
    p->anPay[s] = pSpec->anPay[s];
    p->aaiKey[s] = pSpec->aaiKey[s];
    p->aaiPay[s] = pSpec->aaiPay[s];
    p->anCap[s] = pConn->nMemLimit / 2
                / dsRowCostEstimate(p->nKey, p->anPay[s], 0) + 1;
    p->anRow[s] = -1;
  }
}

/*
** Pick the strategy for OPTIMIZER_CHOOSES given each side's rows (in
** pSides, -1 when unknown) and key bytes per row (0 when unknown);
** explain in *pzReason.
*/
static int dsChooseFromSizes(DsConn *pConn, const DsJoinSpec *pSpec,
                             const DsSides *pSides, const i64 *anKeyBytes,
                             int *peStrategy, char **pzReason){
  const i64 *anRow = pSides->anRow;
  const int *abAtLeast = pSides->abAtLeast;
  i64 anCost[2];
  i64 nBytes;
  int bFits;              /* the smaller side's table fits in half the budget */
  int iSmall;
  char *zSmaller;
  if( pSpec->bWantOrder ){
    *peStrategy = DS_HINT_SORT_MERGE;
    *pzReason = sqlite3_mprintf("the query asks for rows in key order, which "
                                "sort-merge produces anyway");
    return *pzReason ? SQLITE_OK : SQLITE_NOMEM;
  }
  iSmall = dsSmallBesideQuery(pConn, pSides, &nBytes);
  if( iSmall>=0 ){
    char *zSmall = dsSmallBesideQueryText(pConn, pSides, iSmall, nBytes,
                                          "hash table");
    if( zSmall==0 ) return SQLITE_NOMEM;
    *peStrategy = dsHashHint(iSmall, 0);
    *pzReason = sqlite3_mprintf("%s: broadcast it, whatever the size of the "
        "%s input, a view or query, which the join does not count (a count "
        "would run it once more)", zSmall, dsSideName(1-iSmall));
    sqlite3_free(zSmall);
    return *pzReason ? SQLITE_OK : SQLITE_NOMEM;
  }
  {
    int s;
    for(s=0; s<2; s++){
      anCost[s] = pSides->anRowBytes[s]>0 ? pSides->anRowBytes[s]
                : dsRowCostEstimate(pSpec->nKey, pSpec->anPay[s],
                                    anKeyBytes[s]);
    }
  }
  iSmall = dsSmallerSide(anRow, abAtLeast);
  if( anRow[0]>=0 && anRow[1]>=0 && !abAtLeast[0] && !abAtLeast[1]
   && anRow[1-iSmall]*anCost[1-iSmall] < anRow[iSmall]*anCost[iSmall] ){
    /* Fewer rows, but wider ones: the table of the other side is the
    ** smaller, and the smaller table is the one to build. */
    iSmall = 1-iSmall;
    zSmaller = sqlite3_mprintf("the %s input is the smaller in bytes (%lld "
        "rows of about %lld bytes against %lld rows of about %lld bytes)",
        dsSideName(iSmall), anRow[iSmall], anCost[iSmall], anRow[1-iSmall],
        anCost[1-iSmall]);
  }else{
    zSmaller = dsSmallerSideText(anRow, abAtLeast, iSmall);
  }
  nBytes = anRow[iSmall]<0 ? -1 : anRow[iSmall] * anCost[iSmall];
  /* Not a reason with a hole in it: out of memory is the answer. */
  if( zSmaller==0 ) return SQLITE_NOMEM;
  bFits = nBytes>=0 && !abAtLeast[iSmall] && nBytes <= pConn->nMemLimit/2;
  if( bFits && pSpec->bLimit ){
    /* A LIMIT reads what it needs of the probe side and stops: a
    ** broadcast streams, where a repartition reads both sides whole. */
    *peStrategy = dsHashHint(iSmall, 0);
    *pzReason = sqlite3_mprintf(
        "%s and its hash table (about %lld bytes) fits in half of "
        "memory_limit (%lld bytes): broadcast it, so that the query's "
        "LIMIT stops the probe side early", zSmaller, nBytes,
        pConn->nMemLimit);
  }else if( bFits ){
    *peStrategy = dsHashHint(iSmall, 0);
    *pzReason = sqlite3_mprintf(
        "%s and its hash table (about %lld bytes) fits in half of "
        "memory_limit (%lld bytes): broadcast it",
        zSmaller, nBytes, pConn->nMemLimit);
  }else{
    *peStrategy = dsHashHint(iSmall, 1);
    *pzReason = sqlite3_mprintf(
        "%s but its hash table %s in half of memory_limit (%lld bytes): "
        "partition both sides and build on the %s", zSmaller,
        nBytes<0 ? "is of unknown size, so it may not fit" : "would not fit",
        pConn->nMemLimit, dsSideName(iSmall));
  }
  sqlite3_free(zSmaller);
  return *pzReason ? SQLITE_OK : SQLITE_NOMEM;
}

int dsChooseStrategy(DsOp *pOp, const DsJoinSpec *pSpec,
                     int *peStrategy, char **pzReason){
  DsConn *pConn = pOp->pConn;
  DsSides sides;
  i64 anKeyBytes[2] = {0, 0};
  dsJoinSides(pConn, pOp, pSpec, &sides);
  if( !pSpec->bWantOrder ){
    int rc = dsCountSides(pConn, &sides);
    if( rc!=SQLITE_OK ) return rc;
  }
  return dsChooseFromSizes(pConn, pSpec, &sides, anKeyBytes, peStrategy,
                           pzReason);
}

/*************************************************************************
** Counting the output of a join from its keys.
*/

/* One of the keys producing the most rows. */
typedef struct DsTopKey DsTopKey;
struct DsTopKey {
  char *zKey;             /* JSON of the key */
  i64 anRow[2];           /* its rows on each side */
  i64 nOut;               /* anRow[0] * anRow[1] */
};

typedef struct DsPlanCount DsPlanCount;
struct DsPlanCount {
  DsOp *pOp;
  int nKey;
  DsGroupMerge merge;     /* both sides' keys in key order, their heads */
  DsArena groupArena;     /* the key of the group being counted */
  i64 anRow[2];           /* rows of each side */
  i64 anKeyBytes[2];      /* bytes of their keys */
  i64 anUnmatched[2];     /* rows of each side that match nothing */
  i64 nMatched;           /* pairs of matching rows */
  DsTopKey aTop[DS_TOP_KEYS];
  int nTop;
};

static i64 dsSatAdd(i64 a, i64 b){
  i64 r;
  return __builtin_add_overflow(a, b, &r) ? (i64)0x7fffffffffffffffLL : r;
}
static i64 dsSatMul(i64 a, i64 b){
  i64 r;
  return __builtin_mul_overflow(a, b, &r) ? (i64)0x7fffffffffffffffLL : r;
}

static int dsPlanFetch(DsPlanCount *p, int s){
  int rc = dsOpTick(p->pOp);
  if( rc!=SQLITE_OK ) return rc;
  rc = dsGroupMergeFetch(&p->merge, s);
  if( rc==SQLITE_OK && p->merge.apHead[s] ){
    p->anRow[s]++;
    p->anKeyBytes[s] += p->merge.apHead[s]->nKey;
  }
  return rc;
}

/* Count the rows of side s with the key of pKey, moving past them (pKey
** has no NULL part: a key with one is equal to no such key). */
static int dsPlanGroup(DsPlanCount *p, int s, const DsRow *pKey, i64 *pn){
  i64 n = 0;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK && dsGroupMergeInGroup(&p->merge, s, pKey) ){
    n++;
    rc = dsPlanFetch(p, s);
  }
  *pn = n;
  return rc;
}

/* Render the key of pRow as the `key` column shows it, in JSON. */
static char *dsPlanKeyJson(const DsPlanCount *p, const DsRow *pRow){
  DsText txt;
  DsValue *aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)p->nKey);
  if( aVal==0 ) return 0;
  dsTextInit(&txt);
  dsRowValues(pRow, p->nKey, aVal);
  dsJsonKey(&txt, aVal, p->nKey);
  sqlite3_free(aVal);
  return dsTextFinish(&txt);
}

/* Consider key pKey, found nL and nR times, for the top list. */
static int dsPlanTop(DsPlanCount *p, const DsRow *pKey, i64 nL, i64 nR){
  i64 nOut = dsSatMul(nL, nR);
  int i = p->nTop;
  char *zKey;
  if( i==DS_TOP_KEYS && nOut <= p->aTop[DS_TOP_KEYS-1].nOut ) return SQLITE_OK;
  /* The new key's text first: if it cannot be had, the list stays whole
  ** (the entry it would replace is still owned, and freed, by it). */
  zKey = dsPlanKeyJson(p, pKey);
  if( zKey==0 ) return SQLITE_NOMEM;
  if( i==DS_TOP_KEYS ) sqlite3_free(p->aTop[--i].zKey);
  /* Insert in descending order of output; earlier keys first on ties. */
  while( i>0 && p->aTop[i-1].nOut < nOut ){
    p->aTop[i] = p->aTop[i-1];
    i--;
  }
  p->aTop[i].zKey = zKey;
  p->aTop[i].anRow[0] = nL;
  p->aTop[i].anRow[1] = nR;
  p->aTop[i].nOut = nOut;
  if( p->nTop<DS_TOP_KEYS ) p->nTop++;
  return SQLITE_OK;
}

/* Merge the two sorted key streams, counting. */
static int dsPlanMerge(DsPlanCount *p){
  DsRow **apHead = p->merge.apHead;
  int rc;
  dsOpStep(p->pOp, "count");
  rc = dsPlanFetch(p, 0);
  if( rc==SQLITE_OK ) rc = dsPlanFetch(p, 1);
  while( rc==SQLITE_OK ){
    DsRow *pKey;
    i64 anGroup[2];
    int s, eSides;
    /* A key with a NULL part matches nothing: such rows are counted as
    ** they reach the head, so the groups merged have keys without one. */
    for(s=0; s<2 && rc==SQLITE_OK; s++){
      while( rc==SQLITE_OK && apHead[s]
          && (apHead[s]->flags & DS_ROW_NULLKEY) ){
        p->anUnmatched[s]++;
        rc = dsPlanFetch(p, s);
      }
    }
    if( rc!=SQLITE_OK ) break;
    eSides = dsGroupMergeSides(&p->merge);
    if( eSides==0 ) break;
    s = eSides & DS_MERGE_LEFT ? 0 : 1;
    dsArenaReset(&p->groupArena);
    pKey = dsArenaAlloc(&p->groupArena, (i64)DS_ROW_SIZE(apHead[s]->nData));
    if( pKey==0 ) return SQLITE_NOMEM;
    memcpy(DS_ROW_IMAGE(pKey), DS_ROW_IMAGE(apHead[s]),
           DS_ROW_HDR + apHead[s]->nData);
    anGroup[0] = anGroup[1] = 0;
    if( eSides & DS_MERGE_LEFT ) rc = dsPlanGroup(p, 0, pKey, &anGroup[0]);
    if( (eSides & DS_MERGE_RIGHT) && rc==SQLITE_OK ){
      rc = dsPlanGroup(p, 1, pKey, &anGroup[1]);
    }
    if( rc!=SQLITE_OK ) break;
    if( eSides==(DS_MERGE_LEFT|DS_MERGE_RIGHT) ){
      p->nMatched = dsSatAdd(p->nMatched, dsSatMul(anGroup[0], anGroup[1]));
      rc = dsPlanTop(p, pKey, anGroup[0], anGroup[1]);
    }else{
      p->anUnmatched[s] += anGroup[s];
    }
    if( rc==SQLITE_OK ) rc = dsOpTick(p->pOp);
  }
  return rc;
}

/* Count what the join of the two sources would produce. */
static int dsPlanCountRun(DsPlanCount *p){
  int s, rc = SQLITE_OK;
  for(s=0; s<2 && rc==SQLITE_OK; s++) rc = dsGroupMergeSort(&p->merge, s);
  if( rc==SQLITE_OK ) rc = dsPlanMerge(p);
  return rc;
}

static void dsPlanCountFree(DsPlanCount *p){
  int i;
  dsGroupMergeClose(&p->merge);
  dsArenaClear(&p->groupArena);
  for(i=0; i<p->nTop; i++) sqlite3_free(p->aTop[i].zKey);
}

/* top_keys as JSON text. */
static char *dsPlanTopJson(const DsPlanCount *p){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  sqlite3_str_appendchar(pStr, 1, '[');
  for(i=0; i<p->nTop; i++){
    sqlite3_str_appendf(pStr, "%s{\"key\":%s,\"left\":%lld,\"right\":%lld,"
        "\"output\":%lld}", i ? "," : "", p->aTop[i].zKey,
        p->aTop[i].anRow[0], p->aTop[i].anRow[1], p->aTop[i].nOut);
  }
  sqlite3_str_appendchar(pStr, 1, ']');
  return sqlite3_str_finish(pStr);
}

/* Bytes the strategy's buffers would want, at most the budget. */
static i64 dsPlanMemory(const DsConn *pConn, const DsJoinSpec *pSpec,
                        const DsPlanCount *pCount, int eStrategy, int iBuild){
  i64 n = 0;
  int s;
  /* A broadcast holds its build side only; the others hold both sides. */
  int bOneSide = iBuild>=0 && !dsHintShape[eStrategy].bRepartition;
  for(s=0; s<2; s++){
    if( bOneSide && s!=iBuild ) continue;
    n += pCount->anRow[s] * dsRowCostEstimate(pSpec->nKey, pSpec->anPay[s],
        pCount->anRow[s] ? pCount->anKeyBytes[s]/pCount->anRow[s] : 0);
  }
  return n > pConn->nMemLimit ? pConn->nMemLimit : n;
}

/*
** The plan of the join pSpec into *p (zeroed by the caller): count,
** choose, explain.  The caller frees it with dsJoinPlanClear(), whether
** this succeeds or fails (with *pzErr set, or not for SQLITE_NOMEM).
*/
int dsJoinPlanCompute(DsConn *pConn, const DsJoinSpec *pSpec,
                      DsJoinPlan *p, char **pzErr){
  DsOp op;
  DsPlanCount count;
  i64 anKeyBytes[2];
  char *zHow = 0;
  int s, rc = SQLITE_OK;
  i64 nNeed;

  dsOpInit(&op, pConn, DS_FUNC_PLAN, "plan");
  op.eType = pSpec->eType;
  op.stats.zHint = dsHintName[pSpec->eHint];
  op.stats.zJoinType = dsJoinTypeName[pSpec->eType];
  memset(&count, 0, sizeof(count));
  count.pOp = &op;
  count.nKey = pSpec->nKey;
  dsGroupMergeInit(&count.merge, &op, DS_ORDER_KEY);
  dsArenaInit(&count.groupArena, &op.mem);
  for(s=0; s<2 && rc==SQLITE_OK; s++){
    rc = dsReaderOpen(pConn, DS_FUNC_PLAN, pSpec->apIn[s], pSpec->nKey,
                      pSpec->aaiKey[s], 0, 0, &op.apSrc[s], pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsPlanCountRun(&count);
  if( rc==SQLITE_OK ){
    for(s=0; s<2; s++){
      p->anRow[s] = count.anRow[s];
      anKeyBytes[s] = count.anRow[s] ? count.anKeyBytes[s]/count.anRow[s] : 0;
    }
    p->nOutput = count.nMatched;
    if( pSpec->eType & DS_KEEP_LEFT ){
      p->nOutput = dsSatAdd(p->nOutput, count.anUnmatched[0]);
    }
    if( pSpec->eType & DS_KEEP_RIGHT ){
      p->nOutput = dsSatAdd(p->nOutput, count.anUnmatched[1]);
    }
    p->eStrategy = pSpec->eHint;
    if( pSpec->eHint==DS_HINT_OPTIMIZER ){
      DsSides sides;
      dsJoinSides(pConn, 0, pSpec, &sides);
      for(s=0; s<2; s++) sides.anRow[s] = p->anRow[s];
      rc = dsChooseFromSizes(pConn, pSpec, &sides, anKeyBytes,
                             &p->eStrategy, &zHow);
    }else{
      zHow = sqlite3_mprintf("as hinted");
      if( zHow==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc==SQLITE_OK ){
    p->iBuild = dsHintShape[p->eStrategy].iBuild;
    p->zTopKeys = dsPlanTopJson(&count);
    nNeed = dsPlanMemory(pConn, pSpec, &count, p->eStrategy, p->iBuild);
    p->nMemory = nNeed;
    p->zReason = sqlite3_mprintf("%s; %lld output row%s%s%s", zHow,
        p->nOutput, p->nOutput==1 ? "" : "s",
        count.nTop ? ", the most from key " : "",
        count.nTop ? count.aTop[0].zKey : "");
    if( p->zTopKeys==0 || p->zReason==0 ) rc = SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK && *pzErr==0 ) *pzErr = dsOpErrMsg(&op, rc);
  /* A plan that failed chose nothing and produced no row: its statistics
  ** keep strategy and build_side NULL and output_rows 0. */
  if( rc==SQLITE_OK ){
    op.stats.zStrategy = dsHintName[p->eStrategy];
    op.stats.iBuild = p->iBuild;
    op.stats.nOut = 1;
    op.stats.bComplete = 1;
    op.stats.zReason = sqlite3_mprintf("counted the keys of both inputs for "
                                       "the plan: %s", p->zReason);
  }
  sqlite3_free(zHow);
  dsPlanCountFree(&count);
  dsOpFinish(&op);
  return rc;
}

void dsJoinPlanClear(DsJoinPlan *p){
  sqlite3_free(p->zTopKeys);
  sqlite3_free(p->zReason);
  p->zTopKeys = p->zReason = 0;
}
