/*
** plan.c: how OPTIMIZER_CHOOSES picks a join strategy.
**
** The choice rests on the inputs' row counts (from sqlite_stat1 where the
** table was analyzed, else counted) and the memory budget:
**
**   - a query that wants rows in key order gets REPARTITION_SORT_MERGE,
**     whose output is in key order anyway;
**   - else the smaller input is the build side (ties: the right one, as
**     Flink's joinWithTiny), broadcast when its table fits comfortably in
**     memory_limit, else repartitioned.
**
** The reason is written into the statistics in plain words.
*/
#include "dataset_int.h"

/* Rough bytes a build row costs in memory: header, values, directory. */
static i64 dsRowCostEstimate(const DsJoinSpec *pSpec, int iSide){
  return (i64)DS_ROW_SIZE(0) + 8 + 16 * (i64)(pSpec->nKey + pSpec->anPay[iSide]);
}

int dsChooseStrategy(DsConn *pConn, const DsJoinSpec *pSpec,
                     int *peStrategy, char **pzReason){
  static const char *const azSide[] = { "left", "right" };
  i64 anRow[2];
  i64 nBytes;
  int iSmall;
  if( pSpec->bWantOrder ){
    *peStrategy = DS_HINT_SORT_MERGE;
    *pzReason = sqlite3_mprintf("the query asks for rows in key order");
    return *pzReason ? SQLITE_OK : SQLITE_NOMEM;
  }
  anRow[0] = dsInputEstimateRows(pConn->db, pSpec->apIn[0]);
  anRow[1] = dsInputEstimateRows(pConn->db, pSpec->apIn[1]);
  iSmall = (anRow[0]>=0 && (anRow[1]<0 || anRow[0]<anRow[1])) ? 0 : 1;
  nBytes = anRow[iSmall]<0 ? -1 : anRow[iSmall] * dsRowCostEstimate(pSpec, iSmall);
  if( nBytes>=0 && nBytes <= pConn->nMemLimit/2 ){
    *peStrategy = iSmall ? DS_HINT_BROADCAST_SECOND : DS_HINT_BROADCAST_FIRST;
    *pzReason = sqlite3_mprintf(
        "the %s input is the smaller (%lld rows against %lld) and its hash "
        "table (about %lld bytes) fits in memory_limit (%lld bytes)",
        azSide[iSmall], anRow[iSmall], anRow[1-iSmall], nBytes,
        pConn->nMemLimit);
  }else{
    *peStrategy = iSmall ? DS_HINT_REPARTITION_SECOND
                         : DS_HINT_REPARTITION_FIRST;
    *pzReason = sqlite3_mprintf(
        "the %s input is the smaller (%lld rows against %lld) but its hash "
        "table (about %lld bytes) would not fit in half of memory_limit "
        "(%lld bytes): partition both sides", azSide[iSmall], anRow[iSmall],
        anRow[1-iSmall], nBytes, pConn->nMemLimit);
  }
  return *pzReason ? SQLITE_OK : SQLITE_NOMEM;
}
