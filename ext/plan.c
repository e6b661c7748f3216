/*
** plan.c: how OPTIMIZER_CHOOSES picks a join strategy, and ds_join_plan().
**
** The choice.  A query that wants rows in key order gets
** REPARTITION_SORT_MERGE, whose output is in key order anyway.  Otherwise
** the smaller input is the build side (on a tie the right one, as with
** Flink's joinWithTiny): it is broadcast when its hash table fits in half
** of memory_limit, and both sides are repartitioned when it does not, or
** when the table is larger than a CPU cache (DS_CACHE_BYTES) and both
** sides fit in memory_limit together: a partition's table then stays in
** the cache while it is probed, and nothing is spilled.
** Input sizes come from the caller when known (the CREATE form keeps an
** estimate per table), else from sqlite_stat1, else from a count that
** reads at most as many rows of a view or query as would fit: beyond that
** the exact size does not change the choice; and a view or query beside
** a table small enough is not counted at all (dsIsSmallBesideQuery).
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
** memory budget, and merged group by group, adding n*m for a key found
** n times on the left and m times on the right, plus the unmatched rows
** the join type keeps.  top_keys lists the ten keys that produce the most
** rows: the check for a join that would blow up into a cartesian product.
*/
#include "dataset_int.h"

#define DS_FUNC_PLAN "ds_join_plan"
#define DS_TOP_KEYS  10

/* A hash table larger than this is taken not to stay in a CPU's cache:
** its probes miss, where the table of one of 32 partitions does not.
** On uni 1M x 1M (tables of about 60 MB) repartitioning was 1.25 times
** faster than broadcasting, with no spill (docs/strategies.md). */
#define DS_CACHE_BYTES ((i64)16 << 20)

static const char *const azSide[2] = { "left", "right" };

/* Rough bytes a build row costs in memory: header, values, directory. */
static i64 dsRowCostEstimate(int nKey, int nPay, i64 nKeyBytes){
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
  while( p->pHead && n<nMax && (n==0 || pArena->nByte<nMaxByte) ){
    DsRow *pRow = p->pCur;
    if( pRow==0 ){
      dsAheadFreeHead(p);
      continue;
    }
    p->pCur = pRow->pNext;
    p->nGiven++;
    if( pFilter==0 || (!(pRow->flags & DS_ROW_NULLKEY)
                       && pFilter->xMayMatch(pFilter, pRow->hash)) ){
      DsRow *pCopy = dsArenaAlloc(pArena, (i64)DS_ROW_SIZE(pRow->nData));
      if( pCopy==0 ) return SQLITE_NOMEM;
      memcpy(DS_ROW_IMAGE(pCopy), DS_ROW_IMAGE(pRow),
             DS_ROW_HDR + pRow->nData);
      pCopy->pNext = 0;
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

static int dsAheadNext(DsSource *pSrc, DsArena *pArena, DsRow **ppRow){
  int n;
  int rc = dsAheadBatch(pSrc, pArena, ppRow, 1, 0, 0, &n);
  if( rc!=SQLITE_OK ) return rc;
  return n ? SQLITE_ROW : SQLITE_DONE;
}

/* Keys first only for a reader that nothing was read from (input.c). */
static int dsAheadKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                            int *pbKeysFirst){
  DsAhead *p = (DsAhead *)pSrc;
  *pbKeysFirst = 0;
  if( p->nKept>0 ) return SQLITE_OK;
  return dsSourceKeysFirst(p->pIn, pFilter, pbKeysFirst);
}

static void dsAheadClose(DsSource *pSrc){
  DsAhead *p = (DsAhead *)pSrc;
  while( p->pHead ) dsAheadFreeHead(p);
  p->pIn->xClose(p->pIn);
  sqlite3_free(p->base.zErr);
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
  p->base.xNext = dsAheadNext;
  p->base.xBatch = dsAheadBatch;
  p->base.xKeysFirst = dsAheadKeysFirst;
  p->base.xClose = dsAheadClose;
  p->pIn = *ppSrc;
  p->pMem = &pOp->mem;
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

/* Rows of side s: the caller's figure, else an estimate capped at
** p->anCap[s] (-1: unknown).  SQLITE_OK or SQLITE_NOMEM. */
static int dsSideRows(DsConn *pConn, DsSides *p, int s){
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
    rc = dsInputEstimateRows(pConn, p->apIn[s], p->anCap[s],
                             &p->anRow[s], &p->abAtLeast[s]);
    if( rc==SQLITE_OK && p->pOp && p->apIn[s]->bPlainScan && p->anRow[s]>0 ){
      /* A table's rows are measured on a sample of its first rows: a value
      ** is 9 bytes or a text of any length, not 16 bytes. */
      i64 nData;
      rc = dsInputSampleRowBytes(pConn, p->apIn[s], p->nKey, p->aaiKey[s],
                                 p->anPay[s], p->aaiPay[s], &nData);
      if( rc==SQLITE_OK && nData>0 ){
        p->anRowBytes[s] = (((i64)DS_ROW_SIZE(nData) + 7) & ~(i64)7) + 16;
      }
    }
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
                             azSide[iSmall]);
    }else if( anRow[0]==anRow[1] && abAtLeast[0]==abAtLeast[1] ){
      zRet = sqlite3_mprintf("both inputs have %s, so the %s input is taken "
                             "as the smaller", azRows[0], azSide[iSmall]);
    }else if( abAtLeast[0] && abAtLeast[1] ){
      zRet = sqlite3_mprintf("both inputs were counted only so far (the left "
                             "has %s, the right %s), so the %s input is taken "
                             "as the smaller", azRows[0], azRows[1],
                             azSide[iSmall]);
    }else if( anRow[1-iSmall]>=0 && abAtLeast[1-iSmall]
           && anRow[1-iSmall]<=anRow[iSmall] ){
      zRet = sqlite3_mprintf("the %s input has %s and the %s input %s, "
                             "counted only so far, so either may be the "
                             "smaller: the %s input, whose size is known, is "
                             "taken as the smaller", azSide[iSmall],
                             azRows[iSmall], azSide[1-iSmall],
                             azRows[1-iSmall], azSide[iSmall]);
    }else{
      zRet = sqlite3_mprintf("the %s input is the smaller (%s against %s)",
                             azSide[iSmall], azRows[iSmall], azRows[1-iSmall]);
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
      "memory_limit (%lld bytes)", azSide[s], p->anRow[s],
      p->anRow[s]==1 ? "" : "s", zWhat, nBytes, DS_CACHE_BYTES,
      pConn->nMemLimit);
}

/*
** Find out the rows of both sides, as far as the choice needs them: the
** side that is cheap to count first, and the other not at all when the
** first is small enough beside it (dsIsSmallBesideQuery).
*/
int dsCountSides(DsConn *pConn, DsSides *p){
  int sFirst = !dsSideCountIsCheap(p, 0) && dsSideCountIsCheap(p, 1);
  int i, rc = SQLITE_OK;
  i64 nBytes;
  p->anRow[0] = p->anRow[1] = -1;
  p->abAtLeast[0] = p->abAtLeast[1] = 0;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    if( i==1 && dsSmallBesideQuery(pConn, p, &nBytes)>=0 ) break;
    rc = dsSideRows(pConn, p, i ? 1-sFirst : sFirst);
  }
  return rc;
}

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
    p->anCap[s] = pConn->nMemLimit / 2 / dsSideRowCost(p, s) + 1;
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
  i64 nBytes, nOther;
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
    *peStrategy = iSmall ? DS_HINT_BROADCAST_SECOND : DS_HINT_BROADCAST_FIRST;
    *pzReason = sqlite3_mprintf("%s: broadcast it, whatever the size of the "
        "%s input, a view or query, which the join does not count (a count "
        "would run it once more)", zSmall, azSide[1-iSmall]);
    sqlite3_free(zSmall);
    return *pzReason ? SQLITE_OK : SQLITE_NOMEM;
  }
  {
    int s;
    for(s=0; s<2; s++){
      anCost[s] = pSides->anRowBytes[s]>0 ? pSides->anRowBytes[s]
                : dsRowCostEstimate(pSpec->nKey, pSpec->anPay[s], anKeyBytes[s]);
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
        azSide[iSmall], anRow[iSmall], anCost[iSmall], anRow[1-iSmall],
        anCost[1-iSmall]);
  }else{
    zSmaller = dsSmallerSideText(anRow, abAtLeast, iSmall);
  }
  nBytes = anRow[iSmall]<0 ? -1 : anRow[iSmall] * anCost[iSmall];
  nOther = anRow[1-iSmall]<0 || abAtLeast[1-iSmall]
         ? -1 : anRow[1-iSmall] * anCost[1-iSmall];
  /* Not a reason with a hole in it: out of memory is the answer. */
  if( zSmaller==0 ) return SQLITE_NOMEM;
  bFits = nBytes>=0 && !abAtLeast[iSmall] && nBytes <= pConn->nMemLimit/2;
  if( bFits && pSpec->bLimit ){
    /* A LIMIT reads what it needs of the probe side and stops: a
    ** broadcast streams, where a repartition reads both sides whole. */
    *peStrategy = iSmall ? DS_HINT_BROADCAST_SECOND : DS_HINT_BROADCAST_FIRST;
    *pzReason = sqlite3_mprintf(
        "%s and its hash table (about %lld bytes) fits in half of "
        "memory_limit (%lld bytes): broadcast it, so that the query's "
        "LIMIT stops the probe side early", zSmaller, nBytes,
        pConn->nMemLimit);
  }else if( bFits && nBytes>DS_CACHE_BYTES
   && nOther>=0 && nBytes + nOther <= pConn->nMemLimit ){
    *peStrategy = iSmall ? DS_HINT_REPARTITION_SECOND
                         : DS_HINT_REPARTITION_FIRST;
    *pzReason = sqlite3_mprintf(
        "%s; its hash table (about %lld bytes) fits in half of memory_limit "
        "(%lld bytes) but not in a CPU cache (%lld bytes), and both sides "
        "fit in memory_limit together: partition both sides, so that each "
        "partition's table stays in the cache, and build on the %s",
        zSmaller, nBytes, pConn->nMemLimit, DS_CACHE_BYTES, azSide[iSmall]);
  }else if( bFits ){
    *peStrategy = iSmall ? DS_HINT_BROADCAST_SECOND : DS_HINT_BROADCAST_FIRST;
    *pzReason = sqlite3_mprintf(
        "%s and its hash table (about %lld bytes) fits in half of "
        "memory_limit (%lld bytes): broadcast it",
        zSmaller, nBytes, pConn->nMemLimit);
  }else{
    *peStrategy = iSmall ? DS_HINT_REPARTITION_SECOND
                         : DS_HINT_REPARTITION_FIRST;
    *pzReason = sqlite3_mprintf(
        "%s but its hash table %s in half of memory_limit (%lld bytes): "
        "partition both sides and build on the %s", zSmaller,
        nBytes<0 ? "is of unknown size, so it may not fit" : "would not fit",
        pConn->nMemLimit, azSide[iSmall]);
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
  DsSorter *apSorter[2];
  DsRow *apHead[2];       /* next row of each side, NULL at its end */
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
  rc = dsSorterNext(p->apSorter[s], &p->apHead[s]);
  if( rc==SQLITE_ROW ){
    p->anRow[s]++;
    p->anKeyBytes[s] += p->apHead[s]->nKey;
    return SQLITE_OK;
  }
  p->apHead[s] = 0;
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* Count the rows of side s with the key of pKey, moving past them. */
static int dsPlanGroup(DsPlanCount *p, int s, const DsRow *pKey, i64 *pn){
  i64 n = 0;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK && p->apHead[s]
      && !(p->apHead[s]->flags & DS_ROW_NULLKEY)
      && dsRowKeyCompare(pKey, p->apHead[s])==0 ){
    n++;
    rc = dsPlanFetch(p, s);
  }
  *pn = n;
  return rc;
}

/* Render the key of pRow as the `key` column shows it, in JSON. */
static char *dsPlanKeyJson(const DsPlanCount *p, const DsRow *pRow){
  DsText txt;
  DsText *pStr = &txt;
  const u8 *z = pRow->aData;
  int k;
  dsTextInit(&txt);
  if( p->nKey>1 ) dsTextChar(pStr, '[');
  for(k=0; k<p->nKey; k++){
    DsValue v;
    z = dsValueDecode(z, &v);
    if( k ) dsTextChar(pStr, ',');
    dsJsonValue(pStr, &v);
  }
  if( p->nKey>1 ) dsTextChar(pStr, ']');
  return dsTextFinish(pStr);
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
  int rc;
  dsOpStep(p->pOp, "count");
  rc = dsPlanFetch(p, 0);
  if( rc==SQLITE_OK ) rc = dsPlanFetch(p, 1);
  while( rc==SQLITE_OK && (p->apHead[0] || p->apHead[1]) ){
    DsRow *pKey;
    i64 anGroup[2];
    int s, c;
    /* A key with a NULL part matches nothing. */
    for(s=0; s<2 && rc==SQLITE_OK; s++){
      while( rc==SQLITE_OK && p->apHead[s]
          && (p->apHead[s]->flags & DS_ROW_NULLKEY) ){
        p->anUnmatched[s]++;
        rc = dsPlanFetch(p, s);
      }
    }
    if( rc!=SQLITE_OK || (p->apHead[0]==0 && p->apHead[1]==0) ) break;
    if( p->apHead[0]==0 ) c = 1;
    else if( p->apHead[1]==0 ) c = -1;
    else c = dsRowKeyCompare(p->apHead[0], p->apHead[1]);
    s = c<=0 ? 0 : 1;
    dsArenaReset(&p->groupArena);
    pKey = dsArenaAlloc(&p->groupArena, (i64)DS_ROW_SIZE(p->apHead[s]->nData));
    if( pKey==0 ) return SQLITE_NOMEM;
    memcpy(DS_ROW_IMAGE(pKey), DS_ROW_IMAGE(p->apHead[s]),
           DS_ROW_HDR + p->apHead[s]->nData);
    anGroup[0] = anGroup[1] = 0;
    if( c<=0 ) rc = dsPlanGroup(p, 0, pKey, &anGroup[0]);
    if( c>=0 && rc==SQLITE_OK ) rc = dsPlanGroup(p, 1, pKey, &anGroup[1]);
    if( rc!=SQLITE_OK ) break;
    if( c==0 ){
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
  for(s=0; s<2 && rc==SQLITE_OK; s++){
    rc = dsSorterOpen(p->pOp, p->pOp->apSrc[s], DS_ORDER_KEY,
                      &p->apSorter[s]);
  }
  if( rc==SQLITE_OK ) rc = dsPlanMerge(p);
  return rc;
}

static void dsPlanCountFree(DsPlanCount *p){
  int i;
  dsSorterClose(p->apSorter[0]);
  dsSorterClose(p->apSorter[1]);
  dsArenaClear(&p->groupArena);
  for(i=0; i<p->nTop; i++) sqlite3_free(p->aTop[i].zKey);
}

/*************************************************************************
** The ds_join_plan module: a table-valued function of one row.
*/
#define PCOL_STRATEGY   0
#define PCOL_BUILD      1
#define PCOL_LEFT_ROWS  2
#define PCOL_RIGHT_ROWS 3
#define PCOL_OUTPUT     4
#define PCOL_TOP_KEYS   5
#define PCOL_MEMORY     6
#define PCOL_REASON     7
#define PCOL_ARG0       8
#define PLAN_N_ARG      6

static const char *const azPlanArg[PLAN_N_ARG] = {
  "left", "right", "left_key", "right_key", "hint", "join_type"
};
static const DsVtabArgSpec dsPlanArgSpec = {
  DS_FUNC_PLAN, PLAN_N_ARG, 4, azPlanArg
};

typedef struct DsPlanTable DsPlanTable;
struct DsPlanTable {
  sqlite3_vtab base;
  DsConn *pConn;
};

typedef struct DsPlanCursor DsPlanCursor;
struct DsPlanCursor {
  sqlite3_vtab_cursor base;
  DsConn *pConn;
  int bEof;
  int eStrategy;
  int iBuild;             /* -1 for sort-merge */
  i64 anRow[2];
  i64 nOutput;
  char *zTopKeys;
  i64 nMemory;
  char *zReason;
  sqlite3_value *apArg[PLAN_N_ARG];
};

static int dsPlanConnect(sqlite3 *db, void *pAux, int argc,
                         const char *const *argv, sqlite3_vtab **ppVtab,
                         char **pzErr){
  DsPlanTable *pTab;
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(strategy TEXT, build_side TEXT, left_rows INTEGER, "
      "right_rows INTEGER, output_rows INTEGER, top_keys TEXT, "
      "memory_bytes INTEGER, reason TEXT, ds_left HIDDEN, ds_right HIDDEN, "
      "left_key HIDDEN, right_key HIDDEN, hint HIDDEN, join_type HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc64(sizeof(DsPlanTable));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = (DsConn *)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsPlanDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int dsPlanOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  DsPlanCursor *pCur = sqlite3_malloc64(sizeof(DsPlanCursor));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->pConn = ((DsPlanTable *)pVtab)->pConn;
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void dsPlanCursorReset(DsPlanCursor *pCur){
  int i;
  sqlite3_free(pCur->zTopKeys);
  sqlite3_free(pCur->zReason);
  pCur->zTopKeys = pCur->zReason = 0;
  for(i=0; i<PLAN_N_ARG; i++){
    sqlite3_value_free(pCur->apArg[i]);
    pCur->apArg[i] = 0;
  }
  pCur->bEof = 1;
}

static int dsPlanClose(sqlite3_vtab_cursor *pCursor){
  dsPlanCursorReset((DsPlanCursor *)pCursor);
  sqlite3_free(pCursor);
  return SQLITE_OK;
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
  for(s=0; s<2; s++){
    if( eStrategy!=DS_HINT_SORT_MERGE && s!=iBuild
     && eStrategy!=DS_HINT_REPARTITION_FIRST
     && eStrategy!=DS_HINT_REPARTITION_SECOND ){
      continue;
    }
    n += pCount->anRow[s] * dsRowCostEstimate(pSpec->nKey, pSpec->anPay[s],
        pCount->anRow[s] ? pCount->anKeyBytes[s]/pCount->anRow[s] : 0);
  }
  return n > pConn->nMemLimit ? pConn->nMemLimit : n;
}

/* Fill the cursor's row: count, choose, explain. */
static int dsPlanCompute(DsPlanCursor *pCur, const DsJoinSpec *pSpec,
                         char **pzErr){
  DsConn *pConn = pCur->pConn;
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
  dsArenaInit(&count.groupArena, &op.mem);
  for(s=0; s<2 && rc==SQLITE_OK; s++){
    rc = dsReaderOpen(pConn, DS_FUNC_PLAN, pSpec->apIn[s], pSpec->nKey,
                      pSpec->aaiKey[s], 0, 0, &op.apSrc[s], pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsPlanCountRun(&count);
  if( rc==SQLITE_OK ){
    for(s=0; s<2; s++){
      pCur->anRow[s] = count.anRow[s];
      anKeyBytes[s] = count.anRow[s] ? count.anKeyBytes[s]/count.anRow[s] : 0;
    }
    pCur->nOutput = count.nMatched;
    if( pSpec->eType & DS_KEEP_LEFT ){
      pCur->nOutput = dsSatAdd(pCur->nOutput, count.anUnmatched[0]);
    }
    if( pSpec->eType & DS_KEEP_RIGHT ){
      pCur->nOutput = dsSatAdd(pCur->nOutput, count.anUnmatched[1]);
    }
    pCur->eStrategy = pSpec->eHint;
    if( pSpec->eHint==DS_HINT_OPTIMIZER ){
      DsSides sides;
      dsJoinSides(pConn, 0, pSpec, &sides);
      for(s=0; s<2; s++) sides.anRow[s] = pCur->anRow[s];
      rc = dsChooseFromSizes(pConn, pSpec, &sides, anKeyBytes,
                             &pCur->eStrategy, &zHow);
    }else{
      zHow = sqlite3_mprintf("as hinted");
      if( zHow==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc==SQLITE_OK ){
    switch( pCur->eStrategy ){
      case DS_HINT_BROADCAST_FIRST:
      case DS_HINT_REPARTITION_FIRST:  pCur->iBuild = 0; break;
      case DS_HINT_BROADCAST_SECOND:
      case DS_HINT_REPARTITION_SECOND: pCur->iBuild = 1; break;
      default:                         pCur->iBuild = -1; break;
    }
    pCur->zTopKeys = dsPlanTopJson(&count);
    nNeed = dsPlanMemory(pConn, pSpec, &count, pCur->eStrategy, pCur->iBuild);
    pCur->nMemory = nNeed;
    pCur->zReason = sqlite3_mprintf("%s; %lld output row%s%s%s", zHow,
        pCur->nOutput, pCur->nOutput==1 ? "" : "s",
        count.nTop ? ", the most from key " : "",
        count.nTop ? count.aTop[0].zKey : "");
    if( pCur->zTopKeys==0 || pCur->zReason==0 ) rc = SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK && *pzErr==0 ) *pzErr = dsOpErrMsg(&op, rc);
  /* A plan that failed chose nothing and produced no row: its statistics
  ** keep strategy and build_side NULL and output_rows 0. */
  if( rc==SQLITE_OK ){
    op.stats.zStrategy = dsHintName[pCur->eStrategy];
    op.stats.iBuild = pCur->iBuild;
    op.stats.nOut = 1;
    op.stats.bComplete = 1;
    op.stats.zReason = sqlite3_mprintf("counted the keys of both inputs for "
                                       "the plan: %s", pCur->zReason);
  }
  sqlite3_free(zHow);
  dsPlanCountFree(&count);
  dsOpFinish(&op);
  return rc;
}

static int dsPlanFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                        const char *idxStr, int argc, sqlite3_value **argv){
  DsPlanCursor *pCur = (DsPlanCursor *)pCursor;
  sqlite3_value *aArg[PLAN_N_ARG];
  DsInput *apIn[2] = {0, 0};
  int *aaiKey[2] = {0, 0};
  DsJoinSpec spec;
  char *zErr = 0;
  int i, rc;
  (void)idxStr;
  dsPlanCursorReset(pCur);
  dsVtabFunctionArgs(idxNum, argc, argv, PLAN_N_ARG, aArg);
  for(i=0; i<PLAN_N_ARG; i++){
    if( aArg[i] && (pCur->apArg[i] = sqlite3_value_dup(aArg[i]))==0 ){
      rc = dsStatementError(pCur->pConn, DS_FUNC_PLAN, SQLITE_NOMEM, &zErr);
      dsVtabSetError(pCursor->pVtab, zErr);
      return rc;
    }
  }
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC_PLAN;
  spec.anRowHint[0] = spec.anRowHint[1] = -1;
  rc = dsInputOpenPair(pCur->pConn->db, DS_FUNC_PLAN, aArg, apIn, aaiKey,
                       &spec.nKey, &zErr);
  if( rc==SQLITE_OK ) rc = dsParseHint(DS_FUNC_PLAN, aArg[4], &spec.eHint, &zErr);
  if( rc==SQLITE_OK ){
    rc = dsParseJoinType(DS_FUNC_PLAN, aArg[5], &spec.eType, &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsCheckStrictHint(pCur->pConn, DS_FUNC_PLAN, spec.eHint, spec.eType,
                           &zErr);
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<2; i++){
      spec.apIn[i] = apIn[i];
      spec.aaiKey[i] = aaiKey[i];
      /* The table-valued join carries every column. */
      spec.anPay[i] = apIn[i]->nCol - spec.nKey > 0
                    ? apIn[i]->nCol - spec.nKey : 0;
    }
    rc = dsPlanCompute(pCur, &spec, &zErr);
  }
  for(i=0; i<2; i++){
    dsInputFree(apIn[i]);
    sqlite3_free(aaiKey[i]);
  }
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pCur->pConn, DS_FUNC_PLAN, rc, &zErr);
    dsVtabSetError(pCursor->pVtab, zErr);
    return rc;
  }
  pCur->bEof = 0;
  return SQLITE_OK;
}

static int dsPlanNext(sqlite3_vtab_cursor *pCursor){
  ((DsPlanCursor *)pCursor)->bEof = 1;
  return SQLITE_OK;
}

static int dsPlanEof(sqlite3_vtab_cursor *pCursor){
  return ((DsPlanCursor *)pCursor)->bEof;
}

static int dsPlanColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                        int iCol){
  DsPlanCursor *pCur = (DsPlanCursor *)pCursor;
  switch( iCol ){
    case PCOL_STRATEGY:
      sqlite3_result_text(ctx, dsHintName[pCur->eStrategy], -1, SQLITE_STATIC);
      break;
    case PCOL_BUILD:
      if( pCur->iBuild>=0 ){
        sqlite3_result_text(ctx, azSide[pCur->iBuild], -1, SQLITE_STATIC);
      }
      break;
    case PCOL_LEFT_ROWS:  sqlite3_result_int64(ctx, pCur->anRow[0]); break;
    case PCOL_RIGHT_ROWS: sqlite3_result_int64(ctx, pCur->anRow[1]); break;
    case PCOL_OUTPUT:     sqlite3_result_int64(ctx, pCur->nOutput); break;
    case PCOL_TOP_KEYS:
      dsResultText(ctx, DS_FUNC_PLAN, "top_keys", pCur->zTopKeys,
                   (i64)strlen(pCur->zTopKeys), 1);
      break;
    case PCOL_MEMORY:     sqlite3_result_int64(ctx, pCur->nMemory); break;
    case PCOL_REASON:
      dsResultText(ctx, DS_FUNC_PLAN, "the reason", pCur->zReason,
                   (i64)strlen(pCur->zReason), 0);
      break;
    default: {
      sqlite3_value *pArg = pCur->apArg[iCol - PCOL_ARG0];
      if( pArg ) sqlite3_result_value(ctx, pArg);
      break;
    }
  }
  return SQLITE_OK;
}

static int dsPlanRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  (void)pCursor;
  *pRowid = 1;
  return SQLITE_OK;
}

static int dsPlanBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int mArg;
  int rc = dsVtabFunctionBestIndex(pVtab, pInfo, &dsPlanArgSpec, PCOL_ARG0,
                                   &mArg);
  if( rc!=SQLITE_OK ) return rc;
  pInfo->idxNum = mArg;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1;
  return SQLITE_OK;
}

static const sqlite3_module dsPlanModule = {
  .iVersion = 0,
  .xConnect = dsPlanConnect,
  .xBestIndex = dsPlanBestIndex,
  .xDisconnect = dsPlanDisconnect,
  .xOpen = dsPlanOpen,
  .xClose = dsPlanClose,
  .xFilter = dsPlanFilter,
  .xNext = dsPlanNext,
  .xEof = dsPlanEof,
  .xColumn = dsPlanColumn,
  .xRowid = dsPlanRowid,
};

int dsRegisterPlan(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_module(db, DS_FUNC_PLAN, &dsPlanModule, pConn);
}
