/*
** operator.c: the layer every operator stands on.
**
** An operator (a join, a coGroup, a cross product, the plan's count) runs
** in a context, DsOp: its connection, its share of the memory budget
** (memory.c), its statistics (stats.c), its two inputs, the interrupt
** checks of its CPU-only loops (interrupt.c) and its own last error.
** The lower layers (sort.c, spill.c, rowbuf.c, hashtable.c) take that
** context and report through it; they never call into an operator's file.
**
** Beside the context: the names of the two sides, the hints and join
** types every join interface parses, the one table that says which side
** a join hint builds on, and the choice of the side to build on (a join's
** hash table, a cross product's buffer) from the sizes of the inputs,
** which joins, cross products and ds_join_plan() share.
*/
#include "dataset_int.h"

#include <stdarg.h>
#include <unistd.h>

/*************************************************************************
** Hints and join types.
*/
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
  const char *z;
  int rc = dsOptionalTextArg(zFunc, "hint", pVal, &z, pzErr);
  *peHint = DS_HINT_OPTIMIZER;
  if( rc!=SQLITE_OK || z==0 ) return rc;
  return dsParseHintText(zFunc, z, peHint, pzErr);
}

/* A join type argument: text, or NULL for INNER. */
int dsParseJoinType(const char *zFunc, sqlite3_value *pVal, int *peType,
                    char **pzErr){
  const char *z;
  int rc = dsOptionalTextArg(zFunc, "join_type", pVal, &z, pzErr);
  *peType = DS_JOIN_INNER;
  if( rc!=SQLITE_OK || z==0 ) return rc;
  return dsParseJoinTypeText(zFunc, z, peType, pzErr);
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

/*
** What each join hint builds on: the side of its hash table (-1 for
** none: OPTIMIZER_CHOOSES has not chosen yet, sort-merge builds none) and
** whether it partitions both sides first.  dsHashHint() is the inverse.
*/
const DsHintShape dsHintShape[DS_N_HINT] = {
  { -1, 0 },              /* OPTIMIZER_CHOOSES */
  {  0, 0 },              /* BROADCAST_HASH_FIRST */
  {  1, 0 },              /* BROADCAST_HASH_SECOND */
  {  0, 1 },              /* REPARTITION_HASH_FIRST */
  {  1, 1 },              /* REPARTITION_HASH_SECOND */
  { -1, 0 },              /* REPARTITION_SORT_MERGE */
};

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

/* The operator is finishing: close the spill files it kept for reuse
** (spill.c), and keep no more (a spill closed later closes its file). */
static void dsOpClosePool(DsOp *pOp){
  while( pOp->nFreeFd>0 ) close(pOp->aFreeFd[--pOp->nFreeFd]);
  sqlite3_free(pOp->aFreeFd);
  pOp->aFreeFd = 0;
  pOp->nFreeFdAlloc = 0;
  pOp->nFreeFd = -1;
}

/*
** Stop the work its sources do on other threads: before an operator frees
** what it gave them (a filter its probe side is read through).
*/
void dsOpStopSources(DsOp *pOp){
  int i;
  for(i=0; i<2; i++){
    DsSource *pSrc = pOp->apSrc[i];
    if( pSrc && pSrc->xStop ) pSrc->xStop(pSrc);
  }
}

/*
** Is the interrupt that stopped the run between two rows still on?  Two
** checks: SQLite calls a progress handler only once N instructions have
** passed since its last call, and one ping (about 90 instructions) may
** fall short of N = 100 where the last call came just before it.
*/
static int dsOpStillInterrupted(DsOp *pOp){
  int rc = dsTickerCheck(&pOp->tick);
  if( rc==SQLITE_OK ) rc = dsTickerCheck(&pOp->tick);
  return rc==SQLITE_INTERRUPT;
}

/* Release what the operator holds and publish its statistics. */
void dsOpFinish(DsOp *pOp){
  int i;
  if( !pOp->stats.bComplete && pOp->stats.rcStop==0
   && dsOpStillInterrupted(pOp) ){
    /* The run ends before its last row with no error of its own: a LIMIT
    ** met, an error elsewhere in the statement, or SQLite interrupted it
    ** between two rows.  The last is seen here, as the interrupt is still
    ** on while SQLite closes the statement's cursors. */
    pOp->stats.rcStop = SQLITE_INTERRUPT;
    pOp->stats.zStoppedIn = pOp->tick.zStep;
  }
  for(i=0; i<2; i++){
    if( pOp->apSrc[i] ){
      dsStatsSource(&pOp->stats, i, pOp->apSrc[i]);
      pOp->apSrc[i]->xClose(pOp->apSrc[i]);
      pOp->apSrc[i] = 0;
    }
  }
  dsOpClosePool(pOp);
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
  assert( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE );
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
  int i;
  if( rc==SQLITE_NOMEM ) return 0;
  if( rc==SQLITE_INTERRUPT ) return sqlite3_mprintf("%s: interrupted", pOp->zFunc);
  if( pOp->zErr ) return sqlite3_mprintf("%s: %s", pOp->zFunc, pOp->zErr);
  for(i=0; i<2; i++){
    if( pOp->apSrc[i] && pOp->apSrc[i]->zErr ){
      return sqlite3_mprintf("%s: reading the %s dataset: %s", pOp->zFunc,
                             dsSideName(i), pOp->apSrc[i]->zErr);
    }
  }
  return sqlite3_mprintf("%s: %s", pOp->zFunc, sqlite3_errstr(rc));
}

/* That message, as the operator fails with it (see above). */
char *dsOpErrMsg(DsOp *pOp, int rc){
  char *zMsg;
  assert( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE );
  zMsg = dsOpMessage(pOp, rc);
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

/*
** The rows of the operator's inputs not known yet, from sqlite_stat1 (a
** query, not a count: it costs a few microseconds), for its progress
** line; nothing when it has none.  Here rather than in progress.c, which
** readers call: the line reads no input itself.
*/
void dsOpProgressInputs(DsOp *pOp, DsInput *const apIn[2]){
  DsProgress *p = pOp->tick.pProg;
  int s;
  if( p==0 ) return;
  for(s=0; s<2; s++){
    if( apIn[s] && dsProgressWantsRows(p, s) ){
      dsProgressSetRows(p, s, dsInputStat1Count(pOp->pConn->db, apIn[s]));
    }
  }
}

/*************************************************************************
** The choice of the side to build on.
*/
/* Rough bytes a build row costs in memory: header, values, directory. */
i64 dsRowCostEstimate(int nKey, int nPay, i64 nKeyBytes){
  return (i64)DS_ROW_SIZE(0) + 16 + (nKeyBytes>0 ? nKeyBytes : 9*(i64)nKey)
       + 16 * (i64)nPay;
}

/* Bytes a row of side s costs in memory: as measured on the rows read
** ahead (dsReadAhead), else the rough estimate. */
static i64 dsSideRowCost(const DsSides *p, int s){
  if( p->anRowBytes[s]>0 ) return p->anRowBytes[s];
  return dsRowCostEstimate(p->nKey, p->anPay[s], 0);
}

/*************************************************************************
** Reading ahead.  A view or query is counted by reading it through the
** operator's own reader: the rows the count reads are kept, and the
** operator is handed a source that gives them out first and then reads
** on from where the count stopped.  So the input runs once, however deep
** the joins of views of joins nest (counting it with a query of its own
** ran it twice, and a join of a join of ... of views 2^n times).  The
** rows kept are also measured: the choice sizes them as they are.
**
** The rows are kept in blocks, each an arena of its own, freed as soon
** as its rows are handed out: copying them into the operator's buffers
** holds one block twice at most.
*/
typedef struct DsAheadBlock DsAheadBlock;
struct DsAheadBlock {
  DsAheadBlock *pNext;
  DsArena arena;          /* the rows of the block */
  DsRow *pFirst;          /* the first of them, linked through pNext */
};

typedef struct DsAhead DsAhead;
struct DsAhead {
  DsSource base;
  DsSource *pIn;          /* the reader, read on after the rows kept */
  DsMem *pMem;            /* what the blocks are charged to */
  DsAheadBlock *pHead;    /* the block being handed out */
  DsAheadBlock *pTail;    /* the last block */
  DsRow *pCur;            /* the next row of pHead to hand out */
  i64 nKept;              /* rows kept */
  i64 nGiven;             /* of them handed out (or turned away) */
};

/* Bytes of rows one block holds at most: small beside the budget. */
static i64 dsAheadBlockBytes(const DsMem *pMem){
  i64 n = pMem->pConn ? pMem->pConn->nMemLimit / 16 : 0;
  if( n > 256*1024 ) n = 256*1024;
  return n < 4096 ? 4096 : n;
}

static void dsAheadFreeHead(DsAhead *p){
  DsAheadBlock *pBlock = p->pHead;
  p->pHead = pBlock->pNext;
  if( p->pHead==0 ) p->pTail = 0;
  dsArenaClear(&pBlock->arena);
  dsFree(p->pMem, pBlock);
  p->pCur = p->pHead ? p->pHead->pFirst : 0;
}

/* The kept rows first, copied into pArena (through pFilter), then the
** reader's. */
static int dsAheadBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow,
                        int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                        int *pnRow){
  DsAhead *p = (DsAhead *)pSrc;
  int n = 0;
  int rc;
  while( p->pHead && n<nMax && (n==0 || dsArenaUsed(pArena)<nMaxByte) ){
    DsRow *pRow = p->pCur;
    if( pRow==0 ){
      dsAheadFreeHead(p);
      continue;
    }
    p->pCur = pRow->pNext;
    p->nGiven++;
    if( dsRowPasses(pFilter, pRow) ){
      DsRow *pCopy = dsRowCopy(pArena, pRow);
      if( pCopy==0 ) return SQLITE_NOMEM;
      aRow[n++] = pCopy;
    }
  }
  if( p->pHead && p->pCur==0 ) dsAheadFreeHead(p);
  if( n>0 || p->pHead ){
    p->base.nRow = p->nGiven;
    *pnRow = n;
    return SQLITE_OK;
  }
  rc = dsSourceBatch(p->pIn, pArena, aRow, nMax, nMaxByte, pFilter, pnRow);
  p->base.nRow = p->nGiven + p->pIn->nRow - p->nKept;
  if( rc!=SQLITE_OK && p->pIn->zErr && p->base.zErr==0 ){
    /* The reader's message, where the operator looks for it. */
    p->base.zErr = sqlite3_mprintf("%s", p->pIn->zErr);
  }
  return rc;
}

/* Keys first only for a reader that nothing was read from (input.c). */
static int dsAheadKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                            int *pbKeysFirst){
  DsAhead *p = (DsAhead *)pSrc;
  *pbKeysFirst = 0;
  if( p->nKept>0 ) return SQLITE_OK;
  return dsSourceKeysFirst(p->pIn, pFilter, pbKeysFirst);
}

static void dsAheadStop(DsSource *pSrc){
  DsAhead *p = (DsAhead *)pSrc;
  if( p->pIn->xStop ) p->pIn->xStop(p->pIn);
}

static void dsAheadClose(DsSource *pSrc){
  DsAhead *p = (DsAhead *)pSrc;
  while( p->pHead ) dsAheadFreeHead(p);
  p->pIn->xClose(p->pIn);
  sqlite3_free(p->base.zErr);
  sqlite3_free(p->base.zRead);
  dsFree(p->pMem, p);
}

/*
** Read *ppSrc ahead: up to nCap rows, stopping sooner once the rows read
** cost more than nMaxByte in a hash table (their bytes and a directory
** entry each).  *ppSrc becomes a source that hands out those rows, then
** the rest of the input.  *pnRow gets the rows read, *pbAtLeast whether
** the input may hold more (it was not read to its end), *pnRowBytes the
** bytes a row of them costs, on average (0 when none was read).
*/
static int dsReadAhead(DsOp *pOp, DsSource **ppSrc, i64 nCap, i64 nMaxByte,
                       i64 *pnRow, int *pbAtLeast, i64 *pnRowBytes){
  DsAhead *p;
  DsRow **aRow;
  int nBatch;
  i64 nCost = 0;
  i64 nBlockByte = dsAheadBlockBytes(&pOp->mem);
  int rc = SQLITE_OK;
  *pnRow = 0;
  *pbAtLeast = 0;
  *pnRowBytes = 0;
  /* Batches of fewer rows under a small budget: the array counts. */
  nBatch = (int)(pOp->pConn->nMemLimit / 256 < DS_BATCH
                 ? pOp->pConn->nMemLimit / 256 : DS_BATCH);
  if( nBatch<16 ) nBatch = 16;
  p = dsMalloc(&pOp->mem, sizeof(DsAhead));
  aRow = dsMalloc(&pOp->mem, sizeof(DsRow *) * nBatch);
  if( p==0 || aRow==0 ){
    dsFree(&pOp->mem, p);
    dsFree(&pOp->mem, aRow);
    return SQLITE_NOMEM;
  }
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsSourceNextOfBatch;
  p->base.xBatch = dsAheadBatch;
  p->base.xKeysFirst = dsAheadKeysFirst;
  p->base.xClose = dsAheadClose;
  p->base.xStop = dsAheadStop;
  p->pIn = *ppSrc;
  p->pMem = &pOp->mem;
  /* How the input is read is the reader's to say, through this source. */
  p->base.zRead = p->pIn->zRead;
  p->base.nWorker = p->pIn->nWorker;
  p->pIn->zRead = 0;
  *ppSrc = &p->base;
  while( rc==SQLITE_OK ){
    DsAheadBlock *pBlock;
    int n, i;
    if( p->nKept>=nCap || nCost>nMaxByte ){
      *pbAtLeast = 1;
      break;
    }
    pBlock = dsMalloc(&pOp->mem, sizeof(DsAheadBlock));
    if( pBlock==0 ){ rc = SQLITE_NOMEM; break; }
    memset(pBlock, 0, sizeof(*pBlock));
    dsArenaInit(&pBlock->arena, &pOp->mem);
    if( p->pTail ) p->pTail->pNext = pBlock; else p->pHead = pBlock;
    p->pTail = pBlock;
    n = nCap - p->nKept < nBatch ? (int)(nCap - p->nKept) : nBatch;
    rc = dsSourceBatch(p->pIn, &pBlock->arena, aRow, n, nBlockByte, 0, &n);
    if( rc!=SQLITE_OK ) break;
    for(i=0; i<n; i++){
      aRow[i]->pNext = i+1<n ? aRow[i+1] : 0;
      nCost += DS_ROW_STRIDE(aRow[i]) + 16;
    }
    pBlock->pFirst = n ? aRow[0] : 0;
    p->nKept += n;
    if( n==0 ) break;
    rc = dsOpCheckInterrupt(pOp);
  }
  dsFree(&pOp->mem, aRow);
  p->pCur = p->pHead ? p->pHead->pFirst : 0;
  p->base.nRow = 0;
  *pnRow = p->nKept;
  if( p->nKept>0 ) *pnRowBytes = (nCost + p->nKept - 1) / p->nKept;
  if( rc!=SQLITE_OK && p->pIn->zErr ){
    p->base.zErr = sqlite3_mprintf("%s", p->pIn->zErr);
  }
  return rc;
}

/* A table's rows are measured on a sample of its first rows: a value is
** 9 bytes or a text of any length, not 16 bytes. */
static int dsSideMeasure(DsConn *pConn, DsSides *p, int s){
  i64 nData;
  int rc = dsInputSampleRowBytes(pConn, p->apIn[s], p->nKey, p->aaiKey[s],
                                 p->anPay[s], p->aaiPay[s], &nData);
  if( rc==SQLITE_OK && nData>0 ){
    p->anRowBytes[s] = (((i64)DS_ROW_SIZE(nData) + 7) & ~(i64)7) + 16;
  }
  return rc;
}

/* Table s has been counted (p->anRow[s], p->abAtLeast[s]): measure its
** rows, and give the progress line an exact count as the side's total. */
static int dsSideTableCounted(DsConn *pConn, DsSides *p, int s){
  if( p->pOp && p->apIn[s]->bPlainScan && p->anRow[s]>0
   && p->anRowBytes[s]==0 ){
    int rc = dsSideMeasure(pConn, p, s);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( p->anRow[s]>=0 && !p->abAtLeast[s] ){
    dsProgressKnowRows(pConn, s, p->anRow[s]);
  }
  return SQLITE_OK;
}

/* Rows of side s: the caller's figure, else an estimate capped at
** p->anCap[s] (-1: unknown).  A table is counted whole, unless nCapTable
** is more than 0: then only up to that many rows.  SQLITE_OK or
** SQLITE_NOMEM. */
static int dsSideRows(DsConn *pConn, DsSides *p, int s, i64 nCapTable){
  int rc = SQLITE_OK;
  p->abAtLeast[s] = 0;
  p->anRow[s] = p->anRowHint[s];
  if( p->anRow[s]<0 && p->pOp && !p->apIn[s]->bPlainScan ){
    /* A view or query: counted by reading it ahead, so that it runs once
    ** (see above); a plain scan of a table is counted by SQLite, which
    ** reads its b-tree without decoding rows or running anything. */
    rc = dsReadAhead(p->pOp, &p->pOp->apSrc[s], p->anCap[s],
                     pConn->nMemLimit/2, &p->anRow[s], &p->abAtLeast[s],
                     &p->anRowBytes[s]);
  }else if( p->anRow[s]<0 ){
    rc = dsInputEstimateRows(pConn, p->apIn[s],
                             nCapTable>0 ? nCapTable : p->anCap[s],
                             nCapTable>0, &p->anRow[s], &p->abAtLeast[s]);
    if( rc==SQLITE_OK ) rc = dsSideTableCounted(pConn, p, s);
    return rc;
  }
  /* An exact count is the progress line's total for the side. */
  if( rc==SQLITE_OK && p->anRow[s]>=0 && !p->abAtLeast[s] ){
    dsProgressKnowRows(pConn, s, p->anRow[s]);
  }
  return rc;
}

/* "123 rows" or "at least 123 rows" or "an unknown number of rows". */
static char *dsRowsText(i64 n, int bAtLeast){
  if( n<0 ) return sqlite3_mprintf("an unknown number of rows");
  return sqlite3_mprintf("%s%lld row%s", bAtLeast ? "at least " : "", n,
                         n==1 ? "" : "s");
}

/*
** The side (0 left, 1 right) to take as the smaller, given each side's
** rows (-1 when unknown, abAtLeast[] when counted only up to a cap): the
** one with fewer rows when both are counted exactly; a counted one over
** one that is not; an exact count over an "at least", whatever the two
** figures (an "at least" that is the lower tells nothing: its input was
** only counted so far); the right one when nothing tells them apart (a
** cross product then buffers the second input, as crossWithTiny does).
** Joins and cross products choose by this one rule.
*/
int dsSmallerSide(const i64 *anRow, const int *abAtLeast){
  if( anRow[0]<0 || anRow[1]<0 ) return anRow[0]>=0 ? 0 : 1;
  if( abAtLeast[0]!=abAtLeast[1] ) return abAtLeast[0] ? 1 : 0;
  if( abAtLeast[0] ) return 1;
  return anRow[0]<anRow[1] ? 0 : 1;
}

/*
** How side iSmall came to be taken as the smaller, given each side's rows
** (-1 when unknown, abAtLeast[] when counted only up to a cap), for the
** reason of a join or a cross product: "the left input is the smaller (3
** rows against 5 rows)", or, when the counts do not tell the sides apart,
** that they do not and which side was taken.  NULL on OOM.
*/
char *dsSmallerSideText(const i64 *anRow, const int *abAtLeast, int iSmall){
  char *azRows[2];
  char *zRet = 0;
  azRows[0] = dsRowsText(anRow[0], abAtLeast[0]);
  azRows[1] = dsRowsText(anRow[1], abAtLeast[1]);
  if( azRows[0] && azRows[1] ){
    if( anRow[0]<0 && anRow[1]<0 ){
      zRet = sqlite3_mprintf("neither input's number of rows is known, so "
                             "the %s input is taken as the smaller",
                             dsSideName(iSmall));
    }else if( anRow[0]==anRow[1] && abAtLeast[0]==abAtLeast[1] ){
      zRet = sqlite3_mprintf("both inputs have %s, so the %s input is taken "
                             "as the smaller", azRows[0], dsSideName(iSmall));
    }else if( abAtLeast[0] && abAtLeast[1] ){
      zRet = sqlite3_mprintf("both inputs were counted only so far (the left "
                             "has %s, the right %s), so the %s input is taken "
                             "as the smaller", azRows[0], azRows[1],
                             dsSideName(iSmall));
    }else if( anRow[1-iSmall]>=0 && abAtLeast[1-iSmall]
           && anRow[1-iSmall]<=anRow[iSmall] ){
      zRet = sqlite3_mprintf("the %s input has %s and the %s input %s, "
                             "counted only so far, so either may be the "
                             "smaller: the %s input, whose size is known, is "
                             "taken as the smaller", dsSideName(iSmall),
                             azRows[iSmall], dsSideName(1-iSmall),
                             azRows[1-iSmall], dsSideName(iSmall));
    }else{
      zRet = sqlite3_mprintf("the %s input is the smaller (%s against %s)",
                             dsSideName(iSmall), azRows[iSmall],
                             azRows[1-iSmall]);
    }
  }
  sqlite3_free(azRows[0]);
  sqlite3_free(azRows[1]);
  return zRet;
}

/* Can side s's rows be had without running it: the caller's figure, or
** a table's (sqlite_stat1, or SQLite's count of a b-tree)? */
static int dsSideCountIsCheap(const DsSides *p, int s){
  return p->anRowHint[s]>=0 || p->apIn[s]->bPlainScan;
}

/*
** Is side s, of p->anRow[s] rows (counted exactly), a table whose rows
** fit in a CPU cache and in half the budget, beside a view or query?
** Then it is the side built on (a join's hash table, a cross product's
** buffer) whatever the size of the other side, which is therefore not
** counted: counting a query runs it once more before the operator runs
** it, and in a join of a join of ... of such views each level would run
** its input twice, 2^n runs in all.  What the other's size could change
** is little: had it been the smaller, its rows would have taken less
** than this small table's.  *pnBytes gets the table's estimated size.
*/
static int dsIsSmallBesideQuery(DsConn *pConn, const DsSides *p, int s,
                                i64 *pnBytes){
  i64 nRow = p->anRow[s];
  *pnBytes = nRow * dsSideRowCost(p, s);
  return nRow>=0 && !p->abAtLeast[s] && dsSideCountIsCheap(p, s)
      && !dsSideCountIsCheap(p, 1-s)
      && *pnBytes<=DS_CACHE_BYTES && *pnBytes<=pConn->nMemLimit/2;
}

/*
** The side that is a table small enough beside a view or query
** (dsIsSmallBesideQuery), or -1.  *pnBytes gets its estimated size.
** The join and the cross product build on that side by this one rule.
*/
int dsSmallBesideQuery(DsConn *pConn, const DsSides *p, i64 *pnBytes){
  int s;
  for(s=0; s<2; s++){
    if( dsIsSmallBesideQuery(pConn, p, s, pnBytes) ) return s;
  }
  *pnBytes = -1;
  return -1;
}

/*
** "the right input has 300 rows and its hash table (about 15000 bytes)
** fits in a CPU cache (...) and in half of memory_limit (...)", zWhat
** naming what is built of side s; for the reason of the choice above.
*/
char *dsSmallBesideQueryText(DsConn *pConn, const DsSides *p, int s,
                             i64 nBytes, const char *zWhat){
  return sqlite3_mprintf("the %s input has %lld row%s and its %s (about "
      "%lld bytes) fits in a CPU cache (%lld bytes) and in half of "
      "memory_limit (%lld bytes)", dsSideName(s), p->anRow[s],
      p->anRow[s]==1 ? "" : "s", zWhat, nBytes, DS_CACHE_BYTES,
      pConn->nMemLimit);
}

/* Stepping through a table's rows costs SQLite about twice what its count
** of the table's b-tree costs per row (0.039 s for a million rows against
** 0.22 s for ten million, uni 1M x 10M): a table is counted only up to a
** cap where its span of rowids is more than twice that cap. */
#define DS_CAPPED_COUNT_GAIN 2

/* Rows of side 1-s to count at most to know whether it is the larger, in
** rows and in bytes, than nFirst rows of side s (both measured). */
static i64 dsCountNeed(const DsSides *p, int s, i64 nFirst){
  /* nOther rows of the other side take at least the bytes of the first */
  i64 nOther = (nFirst*dsSideRowCost(p, s) + dsSideRowCost(p, 1-s) - 1)
             / dsSideRowCost(p, 1-s);
  return (nOther>nFirst ? nOther : nFirst) + 1;
}

/*
** With threads, count each table on a thread of its own reader
** (dsReaderCountAhead), both at once, rather than one after the other on
** the caller's connection.  A reader's connection maps the file: its
** count took 12 ms where the caller's took 20 to 29 (uni 1Mx1M's build
** table), and the pages it maps are those it reads next.  abAhead[] says
** which started.  Table 1-s is counted up to the cap dsCountTablesFirst()
** would set with table s as full as its span of rowids allows: as many
** rows as that could need or more, so that the figures come out as if
** counted after (dsSideRowsAhead).  That needs both rows measured first,
** which dsCountTablesFirst() does later without this.  A table
** sqlite_stat1 knows is not counted at all.
*/
static int dsCountAhead(DsConn *pConn, DsSides *p, int s, const i64 *anSpan,
                        int *abAhead){
  i64 nMax;
  int i, rc;
  abAhead[0] = abAhead[1] = 0;
  if( p->pOp==0 ) return SQLITE_OK;
  for(i=0; i<2; i++){
    if( !dsReaderCountsAhead(p->pOp->apSrc[i])
     || dsInputStat1Count(pConn->db, p->apIn[i])>=0 ){
      return SQLITE_OK;
    }
  }
  /* Nothing measured them before: two tables are counted first. */
  assert( p->anRowBytes[0]==0 && p->anRowBytes[1]==0 );
  rc = dsSideMeasure(pConn, p, s);
  if( rc==SQLITE_OK ) rc = dsSideMeasure(pConn, p, 1-s);
  if( rc!=SQLITE_OK ) return rc;
  nMax = dsCountNeed(p, s, anSpan[s]);
  if( anSpan[1-s] <= DS_CAPPED_COUNT_GAIN*nMax ) nMax = 0;
  abAhead[1-s] = dsReaderCountAhead(p->pOp->apSrc[1-s], nMax);
  if( abAhead[1-s] ){
    abAhead[s] = dsReaderCountAhead(p->pOp->apSrc[s], 0);
  }else{
    /* Measured as the caller alone would, later. */
    p->anRowBytes[0] = p->anRowBytes[1] = 0;
  }
  return SQLITE_OK;
}

/*
** Table s's rows as dsSideRows(pConn, p, s, nCap) would find them, from
** the count started ahead (dsCountAhead) up to a cap of at least nCap
** (0: all rows); or, where that count failed or cannot stand for it,
** counted now by the caller.
*/
static int dsSideRowsAhead(DsConn *pConn, DsSides *p, int s, i64 nCap){
  i64 nRow;
  int bAtLeast;
  int rc = dsReaderCountWait(p->pOp->apSrc[s], &nRow, &bAtLeast);
  if( rc!=SQLITE_OK ) return rc;
  if( nRow<0 || (nCap==0 && bAtLeast) ) return dsSideRows(pConn, p, s, nCap);
  if( nCap>0 && nRow>=nCap ){
    nRow = nCap;
    bAtLeast = 1;
  }
  p->anRow[s] = nRow;
  p->abAtLeast[s] = nCap>0 && bAtLeast;
  return dsSideTableCounted(pConn, p, s);
}

/*
** Both sides are tables of unknown rows: their spans of rowids (at
** least their rows: dsInputSpanRows) tell which is likely the smaller,
** which is counted first and exactly.  The other is then counted only
** as far as the choice needs, when that is much less than its span: up
** to the rows beyond which it is the larger both in rows and in bytes
** (each side's row measured on a sample).  On uni 1M x 10M the plan took
** 0.28 to 0.36 s counting all 11 million rows, about a sixth of the join
** with threads 2.  Sets *psFirst and, for the other side, *pnCap (0: count
** it whole), and abAhead[] for a count still running ahead
** (dsCountAhead), which the caller must wait for (dsSideRowsAhead) on
** every path.  SQLITE_OK, SQLITE_NOMEM, or the interrupt that stopped a
** wait for a count.
*/
static int dsCountTablesFirst(DsConn *pConn, DsSides *p, int *psFirst,
                              i64 *pnCap, int *abAhead){
  i64 anSpan[2];
  i64 nNeed;
  int s, rc = SQLITE_OK;
  *pnCap = 0;
  abAhead[0] = abAhead[1] = 0;
  for(s=0; s<2 && rc==SQLITE_OK; s++){
    rc = dsInputSpanRows(pConn, p->apIn[s], &anSpan[s]);
  }
  if( rc!=SQLITE_OK ) return rc;
  *psFirst = anSpan[1]>=0 && (anSpan[0]<0 || anSpan[1]<anSpan[0]);
  s = *psFirst;
  if( anSpan[0]>=0 && anSpan[1]>=0 ){
    rc = dsCountAhead(pConn, p, s, anSpan, abAhead);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( abAhead[s] ){
    rc = dsSideRowsAhead(pConn, p, s, 0);
    abAhead[s] = 0;
  }else{
    rc = dsSideRows(pConn, p, s, 0);
  }
  if( rc==SQLITE_OK && abAhead[1-s] && p->anRow[s]<0 ){
    /* The caller alone measures neither without a count of the first. */
    p->anRowBytes[0] = p->anRowBytes[1] = 0;
  }
  if( rc!=SQLITE_OK || anSpan[1-s]<0 || p->anRow[s]<0 ) return rc;
  if( p->pOp && !abAhead[1-s] ) rc = dsSideMeasure(pConn, p, 1-s);
  if( rc!=SQLITE_OK ) return rc;
  nNeed = dsCountNeed(p, s, p->anRow[s]);
  if( anSpan[1-s] > DS_CAPPED_COUNT_GAIN*nNeed ){
    *pnCap = nNeed;
    /* The progress line takes the span for the side's total. */
    dsProgressKnowRows(pConn, 1-s, anSpan[1-s]);
  }
  return SQLITE_OK;
}

/*
** Find out the rows of both sides, as far as the choice needs them: the
** side that is cheap to count first, and the other not at all when the
** first is small enough beside it (dsIsSmallBesideQuery); of two tables,
** the one their rowids say is the smaller first, and the other only as
** far as it needs to be counted (dsCountTablesFirst).
*/
int dsCountSides(DsConn *pConn, DsSides *p){
  int sFirst = !dsSideCountIsCheap(p, 0) && dsSideCountIsCheap(p, 1);
  int i, rc = SQLITE_OK;
  i64 nBytes, nCap = 0;
  p->anRow[0] = p->anRow[1] = -1;
  p->abAtLeast[0] = p->abAtLeast[1] = 0;
  if( p->anRowHint[0]<0 && p->anRowHint[1]<0
   && p->apIn[0]->bPlainScan && p->apIn[1]->bPlainScan ){
    int abAhead[2];
    rc = dsCountTablesFirst(pConn, p, &sFirst, &nCap, abAhead);
    if( abAhead[1-sFirst] && rc==SQLITE_OK ){
      return dsSideRowsAhead(pConn, p, 1-sFirst, nCap);
    }
    for(i=0; i<2; i++){
      /* No count is left running, whatever happened. */
      i64 nRow;
      int bAtLeast;
      if( abAhead[i] ) dsReaderCountWait(p->pOp->apSrc[i], &nRow, &bAtLeast);
    }
    if( rc!=SQLITE_OK ) return rc;
    return dsSideRows(pConn, p, 1-sFirst, nCap);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    if( i==1 && dsSmallBesideQuery(pConn, p, &nBytes)>=0 ) break;
    rc = dsSideRows(pConn, p, i ? 1-sFirst : sFirst, 0);
  }
  return rc;
}
