/*
** stats.c: the statistics of an operator run, and ds_last_stats().
**
** Each operator fills a DsStats as it runs: rows read per side, rows
** produced, the strategy it really used and why, partitions, bytes
** spilled, peak memory, and wall-clock milliseconds per phase (a phase's
** time is measured from its start to its end, so the output phase
** includes the time SQLite spends consuming the rows).  When the operator
** ends, normally or not, its statistics become the connection's "last
** stats" as one JSON object (or NULL, if there is no memory for it).
** One that failed mid-way (interrupted, out of memory, disk full) also
** says so ("error"), names the step of its work it was in ("stopped_in":
** "radix sort", "probe", ...) and gives the statement's message
** ("message": what the error code alone does not say).
*/
#include "dataset_int.h"

#include <time.h>

static const char *const azPhase[DS_N_PHASE] = {
  "plan", "build", "probe", "sort", "merge"
};

double dsNowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1.0e6;
}

void dsStatsInit(DsStats *p, const char *zOperator){
  memset(p, 0, sizeof(*p));
  p->zOperator = zOperator;
  p->iBuild = -1;
  p->nThread = 1;
}

/* What the statistics say of input iSide, read through pSrc, as the
** operator is done with it. */
void dsStatsSource(DsStats *p, int iSide, const DsSource *pSrc){
  p->anRow[iSide] = pSrc->nRow;
  p->nReadConn += pSrc->nWorker;
  if( 1 + pSrc->nWorker + pSrc->nStager > p->nThread ){
    p->nThread = 1 + pSrc->nWorker + pSrc->nStager;
  }
  if( pSrc->zRead && p->azRead[iSide]==0 ){
    p->azRead[iSide] = sqlite3_mprintf("%s", pSrc->zRead);
    if( p->azRead[iSide]==0 ) p->bLost = 1;
  }
}

/* Add the time since *ptPrev to phase ePhase; *ptPrev becomes now. */
void dsStatsPhase(DsStats *p, int ePhase, double *ptPrev){
  double t = dsNowMs();
  p->aMs[ePhase] += t - *ptPrev;
  *ptPrev = t;
}

void dsStatsClear(DsStats *p){
  sqlite3_free(p->zReason);
  sqlite3_free(p->zMessage);
  sqlite3_free(p->azRead[0]);
  sqlite3_free(p->azRead[1]);
  p->zReason = 0;
  p->zMessage = 0;
  p->azRead[0] = p->azRead[1] = 0;
}

/* zVal as a JSON string, or null. */
static void dsJsonText(DsText *pOut, const char *zVal){
  if( zVal ){
    dsJsonString(pOut, zVal, (int)strlen(zVal));
  }else{
    dsTextAppend(pOut, "null", 4);
  }
}

static void dsJsonKeyText(DsText *pOut, const char *zKey,
                          const char *zVal){
  dsTextAppendf(pOut, ",\"%s\":", zKey);
  dsJsonText(pOut, zVal);
}

/* Make p the connection's last statistics. */
void dsStatsPublish(DsConn *pConn, DsStats *p){
  DsText out;
  DsText *pOut = &out;
  char *zJson;
  int i;
  dsTextInit(&out);
  dsTextAppendf(pOut, "{\"operator\":\"%s\"", p->zOperator);
  dsJsonKeyText(pOut, "hint", p->zHint);
  dsJsonKeyText(pOut, "join_type", p->zJoinType);
  dsJsonKeyText(pOut, "strategy", p->zStrategy);
  dsJsonKeyText(pOut, "build_side", p->iBuild>=0 ? dsSideName(p->iBuild) : 0);
  dsTextAppendf(pOut,
      ",\"left_rows\":%lld,\"right_rows\":%lld,\"output_rows\":%lld"
      ",\"partitions\":%lld,\"spilled_bytes\":%lld"
      ",\"peak_memory_bytes\":%lld",
      p->anRow[0], p->anRow[1], p->nOut, p->nPartition, p->nSpilled,
      p->nPeakMem);
  dsJsonKeyText(pOut, "reason", p->zReason);
  dsTextAppendAll(pOut, ",\"ms\":{");
  for(i=0; i<DS_N_PHASE; i++){
    dsTextAppendf(pOut, "%s\"%s\":%.3f", i ? "," : "", azPhase[i],
                        p->aMs[i]);
  }
  dsTextAppendAll(pOut, "}");
  dsTextAppendf(pOut, ",\"complete\":%s", p->bComplete ? "true" : "false");
  dsTextAppendf(pOut, ",\"threads\":%d,\"read_connections\":%lld",
                p->nThread, p->nReadConn);
  dsTextAppendAll(pOut, ",\"read\":{\"left\":");
  dsJsonText(pOut, p->azRead[0]);
  dsTextAppendAll(pOut, ",\"right\":");
  dsJsonText(pOut, p->azRead[1]);
  dsTextChar(pOut, '}');
  if( p->rcStop ){
    /* Only for an operator that failed mid-way: what stopped it, where. */
    dsJsonKeyText(pOut, "error", sqlite3_errstr(p->rcStop));
    dsJsonKeyText(pOut, "stopped_in", p->zStoppedIn);
    dsJsonKeyText(pOut, "message", p->zMessage);
  }
  dsTextChar(pOut, '}');
  /* Out of memory, the statistics are lost: ds_last_stats() then says
  ** NULL, never those of an earlier run as if they were these. */
  zJson = dsTextFinish(pOut);
  if( p->bLost ){
    sqlite3_free(zJson);
    zJson = 0;
  }
  sqlite3_free(pConn->zLastStats);
  pConn->zLastStats = zJson;
}

static void dsLastStatsFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  DsConn *pConn = (DsConn *)sqlite3_user_data(ctx);
  (void)argc;
  (void)argv;
  if( pConn->zLastStats ){
    dsResultText(ctx, "ds_last_stats", "the JSON object of the statistics",
                 pConn->zLastStats, (i64)strlen(pConn->zLastStats), 1);
  }
}

int dsRegisterStats(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_function(db, "ds_last_stats", 0,
                                 SQLITE_UTF8 | SQLITE_RESULT_SUBTYPE, pConn,
                                 dsLastStatsFunc, 0, 0);
}
