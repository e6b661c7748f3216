/*
** hashjoin.c: the hash strategies, BROADCAST_HASH_x and REPARTITION_HASH_x,
** as one hybrid hash join that completes on inputs of any size.
**
** Both build a chained hash table (hashtable.c) on one side, the build
** side, and stream the other side, the probe side, through it:
**
**   BROADCAST_HASH_x      One table holds the build side; the probe side is
**                         read once, in batches of DS_BATCH rows whose hash
**                         slots are prefetched before any is probed.
**
**   REPARTITION_HASH_x    The build side and then the probe side are split
**                         into partitions first; then, partition by
**                         partition, a table is built and probed.
**
** Build rows are always stored by partition (DS_FANOUT partitions chosen
** by high bits of the key hash), each partition in its own arena.  While
** everything fits in memory_limit that costs nothing: the broadcast table
** simply spans all partitions.  When the budget runs out, the largest
** partition is spilled: its rows go to a spill file, a Bloom filter of
** their hashes is kept, and its later build rows follow them to the file.
** Probe rows of a spilled partition are written to a probe file of its
** own unless the Bloom filter proves they match nothing (then they are
** dropped, or produced at once as unmatched when the join type keeps
** them).  When the rows in memory are done, each spilled partition becomes
** a task: the same join, one level deeper, with fresh hash bits choosing
** the partitions.  A task whose build rows all share one hash cannot be
** split: it runs as a block nested loop, a chunk of build rows that fits
** in memory at a time against the whole probe file, so it completes in
** time linear in its output.  In that loop the probe rows' matched flags
** travel in the probe file, which is rewritten on each pass.
**
** Outer joins: a probe row that found no partner is produced with NULL on
** the other side once its chain is exhausted; build rows carry a matched
** flag, and the unmatched ones are produced by a scan of the table after
** its probe rows.  A row with a NULL key never enters a table: it is
** dropped, or produced at once when its side is kept.
*/
#include "dataset_int.h"
#include "dshash.h"

#define DS_FANOUT_BITS 5
#define DS_FANOUT      (1 << DS_FANOUT_BITS)
#define DS_MAX_LEVEL   11        /* 64 bits of hash, 5 at a time, mixed */

/* Probe rows between the one probed and the one whose chain is prefetched */
#define DS_PREFETCH_AHEAD 16

/* Pairs the probe loop makes before it returns (DsPairIter.apQueue). */
#define DS_QUEUE 128

#define PH_BUILD     1      /* read the build side into partitions */
#define PH_PARTPROBE 2      /* read the probe side into partitions */
#define PH_PROBE     3      /* produce the matches of probe rows */
#define PH_DRAIN     4      /* produce unmatched build rows of the table */
#define PH_NEXTPART  5      /* table of the next partition (repartition) */
#define PH_ENDTASK   6      /* queue spilled partitions, free the rest */
#define PH_NEXTTASK  7      /* start the next spilled partition */
#define PH_BNLLOAD   8      /* block nested loop: load a chunk of build rows */
#define PH_BNLFINAL  9      /* block nested loop: the unmatched probe rows */
#define PH_DONE      10

typedef struct DsPart DsPart;
struct DsPart {
  DsArena arena;          /* build rows held in memory */
  DsRow *pBuild;          /* them, as a list */
  i64 nBuild;
  DsSpill *pBuildFile;    /* the build rows, once the partition spilled */
  DsBloom bloom;          /* Bloom filter of the spilled build rows */
  u64 minHash, maxHash;   /* range of build hashes: equal means unsplittable */
  DsArena probeArena;     /* probe rows held in memory (repartition) */
  DsRow *pProbe;
  i64 nProbe;
  DsSpill *pProbeFile;    /* probe rows written out */
};

/* A spilled partition waiting to be joined. */
typedef struct DsTask DsTask;
struct DsTask {
  DsTask *pNext;
  DsSpill *pBuild;
  DsSpill *pProbe;        /* may be NULL: no probe rows */
  int iLevel;             /* partitioning level of its rows */
  int bOneHash;           /* every build row has the same hash */
};

typedef struct DsHashJoin DsHashJoin;
struct DsHashJoin {
  DsPairIter base;
  DsOp *pOp;
  int iBuild;             /* side of the build rows: 0 left, 1 right */
  int bKeepBuild;         /* produce unmatched build rows */
  int bKeepProbe;         /* produce unmatched probe rows */
  int bRepartition;       /* REPARTITION_HASH_x at the top level */
  int ePhase;

  /* The join being run: the top level, or a task. */
  int iLevel;
  int bPartProbe;         /* partition the probe side before joining */
  DsSource *pBuildSrc;    /* rows still to read */
  DsSource *pProbeSrc;
  DsTask *pTask;          /* the task being run (owns its files), or NULL */
  DsPart aPart[DS_FANOUT];
  DsChunkPool pool;       /* the chunks of the partitions' arenas */
  i64 nMemRows;           /* build rows held in memory */
  i64 nDirBytes;          /* dsHashOverBudget(): the size of the directory */
  i64 nDirLo, nDirHi;     /* of any count of rows above nDirLo, up to
                          ** nDirHi (its slots: a power of two) */
  i64 nMaxPart;           /* bytes of the largest partition in memory, or
                          ** more: making the table copies one at a time */
  int iPart;              /* repartition: the partition being joined */
  DsArena scratch;        /* the row just read, before it is placed */

  DsHashTable ht;
  DsRowFilter filter;     /* drops probe rows that cannot match as read */
  DsBloom bloom;          /* of the build rows in memory, for the filter */
  i64 nFilterRead;        /* rows read with the filter, this window */
  i64 nFilterPass;        /* of which it let through */
  i64 nFilterSkip;        /* rows to read without the filter first */
  int bProbeKeysFirst;    /* the probe side's keys are read first */
  DsRow *aBatch[DS_BATCH];/* rows read at once, then probed or placed */
  int nBatch;
  int iBatch;
  DsArena batchArena;     /* probe rows read from a source */
  DsMem batchMem;         /* which it charges: the connection, not the
                          ** operator's peak (the budget's reserve) */
  DsRowStage stage;       /* the probe run by the threads reading */
  int bStaged;            /* the probe side is read through it */
  DsStaged *aStaged;      /* probe rows the threads probed, in order */
  int nStaged;
  int iStaged;
  DsRow *pProbeList;      /* probe rows in memory not yet batched */
  DsRow *pProbe;          /* the probe row being matched */
  DsRow *pChain;          /* next build row to compare with pProbe */
  const u8 *pChainEnd;    /* the end of its slot's rows */
  int bProbeMatched;
  DsRow *aQueue[2*DS_QUEUE];  /* pairs made ahead (base.apQueue) */
  int iDrainPart;         /* next sub-table of the drain */
  DsRow *pDrain;          /* next row of the sub-table being drained */
  const u8 *pDrainEnd;    /* the end of its rows */

  /* Block nested loop of an unsplittable task. */
  int bBnl;
  DsArena chunkArena;     /* the chunk of build rows */
  DsSpill *pProbeNext;    /* probe rows with their flags, for the next pass */

  DsTask *pTasks;         /* spilled partitions waiting */
  i64 nSpilledParts;      /* statistics */
  i64 nTasks;
  i64 nBnlTasks;
};

/* The partition of a hash at a level: high bits, re-mixed below level 0
** so that every level splits by bits of its own. */
static int dsPartOf(u64 hash, int iLevel){
  u64 h = iLevel ? dsMix64(hash + (u64)iLevel * 0x9e3779b97f4a7c15ULL) : hash;
  return (int)(h >> (64 - DS_FANOUT_BITS));
}

/* The sub-table of table pHt, made at level iLevel, that holds hash: the
** table of a broadcast has one per partition, that of one partition or
** chunk only one. */
static int dsHashSubTable(const DsHashTable *pHt, int iLevel, u64 hash){
  return pHt->nPart==1 ? 0 : dsPartOf(hash, iLevel);
}

/* The first row of hash's slot in table pHt of level iLevel, and the end
** of its rows into *ppEnd. */
DS_PREFETCHER DsRow *dsHashSlotRows(const DsHashTable *pHt, int iLevel,
                                    u64 hash, const u8 **ppEnd){
  return dsHashTableSlot(pHt, dsHashSubTable(pHt, iLevel, hash), hash,
                         ppEnd);
}

/* Fetch the directory entry of hash's slot into the cache, ahead of the
** probe that reads it. */
DS_PREFETCHER void dsHashPrefetchSlot(const DsHashTable *pHt, int iLevel,
                                      u64 hash){
  __builtin_prefetch(dsHashTableSlotAddr(pHt,
                                         dsHashSubTable(pHt, iLevel, hash),
                                         hash));
}

/* Prefetch for the probe of row i of aRow, in two steps: the directory
** entry of the row twice the distance ahead, and the first build row of
** the slot of the row at the distance, whose directory entry should be in
** the cache by then.  Without the second step each probe waits for the
** slot's rows after its directory entry: a dependent miss per row. */
DS_PREFETCHER void dsHashPrefetchAhead(const DsHashTable *pHt, int iLevel,
                                       DsRow *const *aRow, int i, int nRow){
  int iAhead = i + DS_PREFETCH_AHEAD;
  if( iAhead + DS_PREFETCH_AHEAD < nRow ){
    dsHashPrefetchSlot(pHt, iLevel, aRow[iAhead + DS_PREFETCH_AHEAD]->hash);
  }
  if( iAhead < nRow ){
    const u8 *pEnd;
    const DsRow *pFirst = dsHashSlotRows(pHt, iLevel, aRow[iAhead]->hash,
                                         &pEnd);
    dsRowSpanPrefetch((const u8 *)pFirst, pEnd);
  }
}

/* The join starts step zStep of its work; all of an unsplittable task's
** steps are its block nested loop. */
static void dsHashStep(DsHashJoin *p, const char *zStep){
  dsOpStep(p->pOp, p->bBnl ? "block nested loop" : zStep);
}

static int dsHashEmit(DsHashJoin *p, DsRow **ap, DsRow *pBuild,
                      DsRow *pProbe){
  ap[p->iBuild] = pBuild;
  ap[1 - p->iBuild] = pProbe;
  return SQLITE_ROW;
}

/* Queue a pair of the probe loop; true when the queue is full. */
static int dsHashQueue(DsHashJoin *p, DsRow *pBuild, DsRow *pProbe){
  dsHashEmit(p, &p->aQueue[2*p->base.nQueue++], pBuild, pProbe);
  return p->base.nQueue>=DS_QUEUE;
}

/* Hand out the queued pairs: the first now, the others by dsJoinNext(). */
static int dsHashFlush(DsHashJoin *p, DsRow **ap){
  ap[0] = p->aQueue[0];
  ap[1] = p->aQueue[1];
  p->base.iQueue = 1;
  return SQLITE_ROW;
}

/* Copy of pRow in pArena, pushed on *ppList. */
static int dsListPushCopy(DsArena *pArena, DsRow **ppList, const DsRow *pRow){
  DsRow *pNew = dsArenaAlloc(pArena, (i64)DS_ROW_SIZE(pRow->nData));
  if( pNew==0 ) return SQLITE_NOMEM;
  memcpy(DS_ROW_IMAGE(pNew), DS_ROW_IMAGE((DsRow *)pRow),
         DS_ROW_HDR + pRow->nData);
  pNew->pNext = *ppList;
  *ppList = pNew;
  return SQLITE_OK;
}

/* Bytes the hash directory for n rows will take, as the table sizes it
** (dsHashTableDirectoryBytes); the rows in one sub-table at worst. */
static i64 dsDirectoryBytes(i64 n){
  return dsHashTableDirectoryBytes(&n, 1);
}

/*
** Would the rows in memory, with their directory and a copy of the
** largest partition (made while the table is made), pass the budget?  A
** quarter of it is kept for what the probe phase adds: a batch of probe
** rows (at most an eighth) and the buffers of probe files being written
** (an eighth between them: see nSpillBuf).
*/
static int dsHashOverBudget(DsHashJoin *p){
  const DsConn *pConn = p->pOp->pConn;
  /* Asked for each row placed, while the directory's size changes only
  ** where the count of rows passes a power of two: worked out again only
  ** then. */
  if( p->nMemRows>p->nDirHi || p->nMemRows<=p->nDirLo ){
    p->nDirBytes = dsDirectoryBytes(p->nMemRows);
    p->nDirHi = p->nMemRows ? p->nDirBytes/(i64)sizeof(i64) - 1 : 0;
    p->nDirLo = p->nDirHi>1 ? p->nDirHi/2 : p->nDirHi - 1;
    assert( p->nMemRows>p->nDirLo && p->nMemRows<=p->nDirHi );
  }
  return pConn->nMemUsed + p->nDirBytes + p->nMaxPart
           > pConn->nMemLimit - pConn->nMemLimit/4;
}

/* Find nMaxPart again, after a partition left memory. */
static void dsHashFindMaxPart(DsHashJoin *p){
  int i;
  p->nMaxPart = 0;
  for(i=0; i<DS_FANOUT; i++){
    const DsPart *pPart = &p->aPart[i];
    if( pPart->pBuildFile==0 && pPart->arena.nByte>p->nMaxPart ){
      p->nMaxPart = pPart->arena.nByte;
    }
  }
}

/*************************************************************************
** Spilling partitions.
*/

/* Spill partition pPart's build rows: write them, keep only a filter. */
static int dsSpillBuildPart(DsHashJoin *p, DsPart *pPart){
  DsOp *pOp = p->pOp;
  i64 nWord = 128;
  i64 nMaxWord = pOp->pConn->nMemLimit / (8 * DS_FANOUT * 8);
  DsRow *pRow;
  int rc = dsSpillOpen(pOp, &pPart->pBuildFile);
  if( rc!=SQLITE_OK ) return rc;
  /* About 16 bits per row seen so far, twice over for rows to come. */
  while( nWord < pPart->nBuild/2 && nWord < nMaxWord ) nWord *= 2;
  rc = dsBloomInit(&pPart->bloom, &pOp->mem, nWord);
  if( rc!=SQLITE_OK ) return rc;
  dsBloomAddList(&pPart->bloom, pPart->pBuild);
  for(pRow=pPart->pBuild; pRow && rc==SQLITE_OK; pRow=pRow->pNext){
    rc = dsSpillWrite(pPart->pBuildFile, pRow);
  }
  p->nMemRows -= pPart->nBuild;
  pPart->pBuild = 0;
  pPart->nBuild = 0;
  dsArenaClear(&pPart->arena);
  dsHashFindMaxPart(p);
  p->nSpilledParts++;
  /* Spilled after the build side ended: nothing more will be written. */
  if( rc==SQLITE_OK && p->pBuildSrc==0 ) rc = dsSpillRewind(pPart->pBuildFile);
  return rc;
}

/* Spill the in-memory partition holding the most build rows; *pbNone
** if there is none left in memory. */
static int dsSpillLargestBuild(DsHashJoin *p, int *pbNone){
  DsPart *pBest = 0;
  int i;
  for(i=0; i<DS_FANOUT; i++){
    DsPart *pPart = &p->aPart[i];
    if( pPart->pBuildFile==0 && pPart->nBuild>0
     && (pBest==0 || pPart->arena.nByte > pBest->arena.nByte) ){
      pBest = pPart;
    }
  }
  *pbNone = pBest==0;
  return pBest ? dsSpillBuildPart(p, pBest) : SQLITE_OK;
}

/* Move the probe rows held in memory for the partition with the most of
** them to its probe file; failing that, spill build rows.  *pbNone if
** nothing was left in memory to move. */
static int dsSpillLargestProbe(DsHashJoin *p, int *pbNone){
  DsPart *pBest = 0;
  DsRow *pRow;
  int i, rc = SQLITE_OK;
  for(i=0; i<DS_FANOUT; i++){
    DsPart *pPart = &p->aPart[i];
    if( pPart->nProbe>0
     && (pBest==0 || pPart->probeArena.nByte > pBest->probeArena.nByte) ){
      pBest = pPart;
    }
  }
  if( pBest==0 ) return dsSpillLargestBuild(p, pbNone);
  *pbNone = 0;
  if( pBest->pProbeFile==0 ) rc = dsSpillOpen(p->pOp, &pBest->pProbeFile);
  for(pRow=pBest->pProbe; pRow && rc==SQLITE_OK; pRow=pRow->pNext){
    rc = dsSpillWrite(pBest->pProbeFile, pRow);
  }
  pBest->pProbe = 0;
  pBest->nProbe = 0;
  dsArenaClear(&pBest->probeArena);
  return rc;
}

/*************************************************************************
** Reading the two sides into partitions.
*/

/* Place build row pRow (in scratch) in its partition. */
static int dsPlaceBuild(DsHashJoin *p, DsRow *pRow){
  DsPart *pPart = &p->aPart[dsPartOf(pRow->hash, p->iLevel)];
  int bNone = 0;
  int rc;
  if( pPart->nBuild==0 && pPart->pBuildFile==0 ){
    pPart->minHash = pPart->maxHash = pRow->hash;
  }else if( pRow->hash < pPart->minHash ){
    pPart->minHash = pRow->hash;
  }else if( pRow->hash > pPart->maxHash ){
    pPart->maxHash = pRow->hash;
  }
  if( pPart->pBuildFile ){
    dsBloomAdd(&pPart->bloom, pRow->hash);
    return dsSpillWrite(pPart->pBuildFile, pRow);
  }
  rc = dsListPushCopy(&pPart->arena, &pPart->pBuild, pRow);
  if( rc!=SQLITE_OK ) return rc;
  pPart->nBuild++;
  p->nMemRows++;
  if( pPart->arena.nByte>p->nMaxPart ) p->nMaxPart = pPart->arena.nByte;
  while( rc==SQLITE_OK && !bNone && dsHashOverBudget(p) ){
    rc = dsSpillLargestBuild(p, &bNone);
  }
  return rc;
}

/*
** Does probe row pRow need keeping for a spilled partition?  Writes it to
** the partition's probe file if it may match; else says whether the join
** produces it alone (*pbAlone).
*/
static int dsProbeSpilled(DsHashJoin *p, DsPart *pPart, DsRow *pRow,
                          int *pbAlone){
  int rc = SQLITE_OK;
  *pbAlone = 0;
  if( !dsBloomMayHave(&pPart->bloom, pRow->hash) ){
    *pbAlone = p->bKeepProbe;
    return SQLITE_OK;
  }
  if( pPart->pProbeFile==0 ) rc = dsSpillOpen(p->pOp, &pPart->pProbeFile);
  if( rc==SQLITE_OK ) rc = dsSpillWrite(pPart->pProbeFile, pRow);
  return rc;
}

/* Fetch the filter word dsProbeSpilled() will test for probe row pRow if
** its partition is on disk.  The filters of a few dozen spilled
** partitions outgrow the cache, and without this each probe row read
** while they are kept waits for one miss after another's. */
DS_PREFETCHER void dsHashPrefetchSpilled(const DsHashJoin *p,
                                        const DsRow *pRow){
  const DsPart *pPart = &p->aPart[dsPartOf(pRow->hash, p->iLevel)];
  if( pPart->pBuildFile ) dsBloomPrefetch(&pPart->bloom, pRow->hash);
}

/* Place probe row pRow (repartition): in memory, a file, or nowhere;
** *pbAlone says it is to be produced alone, now. */
static int dsPlaceProbe(DsHashJoin *p, DsRow *pRow, int *pbAlone){
  DsPart *pPart = &p->aPart[dsPartOf(pRow->hash, p->iLevel)];
  int bNone = 0;
  int rc;
  *pbAlone = 0;
  if( pPart->pBuildFile ) return dsProbeSpilled(p, pPart, pRow, pbAlone);
  if( pPart->nBuild==0 ){
    *pbAlone = p->bKeepProbe;
    return SQLITE_OK;
  }
  if( pPart->pProbeFile ) return dsSpillWrite(pPart->pProbeFile, pRow);
  rc = dsListPushCopy(&pPart->probeArena, &pPart->pProbe, pRow);
  if( rc!=SQLITE_OK ) return rc;
  pPart->nProbe++;
  while( rc==SQLITE_OK && !bNone && dsHashOverBudget(p) ){
    rc = dsSpillLargestProbe(p, &bNone);
  }
  return rc;
}

/*************************************************************************
** The probe filter.
**
** When the join does not keep unmatched probe rows, a probe row is worth
** making only if it may match: the reader asks dsHashMayMatch() about each
** row's key hash before it copies the row (dsSourceBatch), so that a
** selective join pays little more than reading for the rows that find
** nothing.  A build row in memory is in the Bloom filter p->bloom, made
** when the build side has been read; a spilled partition has a filter of
** its own.  Where nearly every probe row matches the filter only costs,
** so it is switched off for a while when it lets through more than 7/8
** of a window of rows, and tried again later.
*/
#define DS_FILTER_WINDOW 65536

static int dsHashMayMatch(DsRowFilter *pFilter, u64 hash){
  DsHashJoin *p = (DsHashJoin *)((char *)pFilter
                                 - offsetof(DsHashJoin, filter));
  DsPart *pPart = &p->aPart[dsPartOf(hash, p->iLevel)];
  if( pPart->pBuildFile ) return dsBloomMayHave(&pPart->bloom, hash);
  return dsBloomMayHave(&p->bloom, hash);
}

/* The same when no partition is on disk, nor can be any more (the
** broadcast's probe phase): the filter of the rows in memory alone. */
static int dsHashMayMatchInMemory(DsRowFilter *pFilter, u64 hash){
  DsHashJoin *p = (DsHashJoin *)((char *)pFilter
                                 - offsetof(DsHashJoin, filter));
  return dsBloomMayHave(&p->bloom, hash);
}

/* Bits per build row in the filter: 16, fewer when memory is short. */
static i64 dsHashFilterWords(const DsHashJoin *p){
  const DsConn *pConn = p->pOp->pConn;
  i64 nRoom = pConn->nMemLimit - pConn->nMemLimit/4 - pConn->nMemUsed
            - dsDirectoryBytes(p->nMemRows);
  i64 nWord = 64;
  while( nWord*4 < p->nMemRows ) nWord *= 2;
  /* Halve while too large, down to 4 bits a row. */
  while( nWord*8 > nRoom && nWord>64 && (nWord/2)*16 >= p->nMemRows ){
    nWord /= 2;
  }
  return nWord*8 <= nRoom ? nWord : 0;
}

/* Let the probe input sample its keys against the filter and read keys
** first if most are turned away.  The sample is part of choosing how to
** read, so its time is booked to the plan phase, not to the build phase
** that runs around it (ds_last_stats: ms.plan holds every count and
** sample). */
static int dsHashSampleProbeKeys(DsHashJoin *p){
  double t0 = dsNowMs(), t = t0;
  int rc = dsSourceKeysFirst(p->pProbeSrc, &p->filter, &p->bProbeKeysFirst);
  dsStatsPhase(&p->pOp->stats, DS_PHASE_PLAN, &t);
  p->pOp->stats.aMs[DS_PHASE_BUILD] -= t - t0;
  return rc;
}

/* The build side has been read: make the filter of its rows in memory,
** if unmatched probe rows are not kept and memory allows. */
static int dsHashMakeFilter(DsHashJoin *p){
  i64 nWord;
  int i, rc;
  if( p->bKeepProbe || (p->nMemRows==0 && p->nSpilledParts==0) ){
    return SQLITE_OK;
  }
  nWord = dsHashFilterWords(p);
  if( nWord==0 ) return SQLITE_OK;
  rc = dsBloomInit(&p->bloom, &p->pOp->mem, nWord);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<DS_FANOUT; i++) dsBloomAddList(&p->bloom, p->aPart[i].pBuild);
  p->nFilterRead = p->nFilterPass = p->nFilterSkip = 0;
  p->filter.xMayMatch = (p->nSpilledParts || p->bPartProbe)
                      ? dsHashMayMatch : dsHashMayMatchInMemory;
  /* A selective join's probe rows are mostly turned away: an input may
  ** then test their keys before SQLite decodes their other columns. */
  if( p->pProbeSrc==0 ) return SQLITE_OK;
  return dsHashSampleProbeKeys(p);
}

/* The filter for the next batch of probe rows, or NULL. */
static DsRowFilter *dsHashProbeFilter(DsHashJoin *p){
  return p->bloom.aWord && p->nFilterSkip<=0 ? &p->filter : 0;
}

/* nRead rows were read for a batch of nPass, with pFilter (or none). */
static void dsHashFilterCount(DsHashJoin *p, DsRowFilter *pFilter,
                              i64 nRead, i64 nPass){
  if( pFilter==0 ){
    p->nFilterSkip -= nRead;
    return;
  }
  p->nFilterRead += nRead;
  p->nFilterPass += nPass;
  if( p->nFilterRead>=DS_FILTER_WINDOW ){
    if( p->nFilterPass*8 > p->nFilterRead*7 ){
      p->nFilterSkip = 16*DS_FILTER_WINDOW;
    }
    p->nFilterRead = p->nFilterPass = 0;
  }
}

/* Read the next batch of rows of pSrc into p->aBatch, in pArena (reset
** first), through the probe filter when one applies. */
static int dsHashReadBatch(DsHashJoin *p, DsSource *pSrc, DsArena *pArena,
                           DsRowFilter *pFilter){
  /* A batch holds DS_BATCH rows, or fewer when they are wide: at most an
  ** eighth of the budget. */
  i64 nMax = p->pOp->pConn->nMemLimit / 8;
  i64 nBefore = pSrc->nRow;
  int rc;
  dsArenaReset(pArena);
  rc = dsSourceBatch(pSrc, pArena, p->aBatch, DS_BATCH, nMax, pFilter,
                     &p->nBatch);
  p->iBatch = 0;
  if( rc!=SQLITE_OK ){
    p->nBatch = 0;
    return rc;
  }
  dsHashFilterCount(p, pFilter, pSrc->nRow - nBefore, p->nBatch);
  return SQLITE_OK;
}

/*************************************************************************
** Probing.
*/

/* Fill aBatch with the next probe rows (the in-memory list first, then
** the source) and prefetch their chains. */
static int dsHashFillBatch(DsHashJoin *p){
  int n = 0;
  int i;
  while( n<DS_BATCH && p->pProbeList ){
    p->aBatch[n++] = p->pProbeList;
    p->pProbeList = p->pProbeList->pNext;
  }
  if( n==0 && p->pProbeSrc ){
    int rc = dsHashReadBatch(p, p->pProbeSrc, &p->batchArena,
                             p->bBnl ? 0 : dsHashProbeFilter(p));
    if( rc!=SQLITE_OK ) return rc;
    n = p->nBatch;
    if( n==0 ) p->pProbeSrc = 0;
  }
  if( p->ht.aPart ){
    /* The directory entries of the first rows; dsHashNextProbe() keeps
    ** this many ahead as it goes (a thousand prefetches at once would
    ** mostly be dropped: the CPU tracks only so many misses). */
    for(i=0; i<n && i<2*DS_PREFETCH_AHEAD; i++){
      dsHashPrefetchSlot(&p->ht, p->iLevel, p->aBatch[i]->hash);
    }
  }
  p->nBatch = n;
  p->iBatch = 0;
  return SQLITE_OK;
}

/*************************************************************************
** The probe on the threads that read the probe side.
**
** A broadcast's table stays as it is once built when nothing spilled: the
** threads reading the probe side in parallel (rangeread.c) then probe it
** too, each row as it is read, and hand the caller only the rows worth
** producing, each with the span of its slot from its first to its last
** match, or to the slot's end when many rows follow the first match
** (dsHashStageBatch: a thread walking a key's thousands of rows for every
** probe row of a batch would not stop when asked).  The caller walks that
** span as it walks a chain it found itself, so the pairs, their order and
** every statistic are those of a serial probe; it no longer copies or
** looks up a row.
** Build rows' matched flags, which an outer join on the build side sets,
** are the one thing written meanwhile, by the caller alone: the threads
** never read them.
*/
/* Build rows a stage looks at past a probe row's first match, at most. */
#define DS_STAGE_WALK 64

/* The join whose stage pStage is, on the caller's thread (the stage is
** const for the threads that run it, not for the join's owner). */
static DsHashJoin *dsHashOfStage(const DsRowStage *pStage){
  return (DsHashJoin *)((char *)(size_t)pStage - offsetof(DsHashJoin, stage));
}

/* xFilter and xFiltered of the stage: the serial probe's row filter, and
** its counts, which turn the filter off where it passes almost all. */
static DsRowFilter *dsHashStageFilter(const DsRowStage *pStage){
  return dsHashProbeFilter(dsHashOfStage(pStage));
}
static void dsHashStageFiltered(const DsRowStage *pStage,
                                DsRowFilter *pFilter, i64 nRead, int nPass){
  dsHashFilterCount(dsHashOfStage(pStage), pFilter, nRead, nPass);
}

static int dsHashStageBatch(const DsRowStage *pStage, DsRow **aRow, int nRow,
                            DsStaged *aOut){
  const DsHashJoin *p = (const DsHashJoin *)((const char *)pStage
                                 - offsetof(DsHashJoin, stage));
  /* Copies of what the loop reads of the join, taken once a batch.  Read
  ** through p for every row, they may share a cache line with what the
  ** caller writes for every row it hands out (the queue, the span being
  ** walked), and each write takes the line from this thread: that
  ** slowed the probe by a tenth, or not at all, as the layout of
  ** DsHashJoin happened to fall. */
  const DsHashTable ht = p->ht;
  const int iLevel = p->iLevel;
  const int bKeepProbe = p->bKeepProbe;
  int i, n = 0;
  for(i=0; i<nRow && i<2*DS_PREFETCH_AHEAD; i++){
    dsHashPrefetchSlot(&ht, iLevel, aRow[i]->hash);
  }
  for(i=0; i<nRow; i++){
    DsRow *pRow = aRow[i];
    const u8 *pFrom = 0, *pTo = 0;
    dsHashPrefetchAhead(&ht, iLevel, aRow, i, nRow);
    if( (pRow->flags & DS_ROW_NULLKEY)==0 ){
      const u8 *pEnd;
      const DsRow *pBuild = dsHashSlotRows(&ht, iLevel, pRow->hash, &pEnd);
      int nAfter = 0;
      while( (const u8 *)pBuild < pEnd ){
        const u8 *pNext = (const u8 *)pBuild + DS_ROW_STRIDE(pBuild);
        if( pFrom && ++nAfter>DS_STAGE_WALK ){
          /* A key many build rows share: the caller walks the rest of the
          ** slot, as the serial probe does, pair by pair with its checks
          ** for an interrupt.  Walked to its end here, for every row of
          ** the batch, it would keep this thread (the caller's too, when
          ** it reads) from stopping for as long as a LIMIT or an
          ** interrupt should take, and for nothing past the pairs the
          ** statement asks for. */
          pTo = pEnd;
          break;
        }
        if( pBuild->hash==pRow->hash && dsRowKeyEqualFast(pBuild, pRow) ){
          if( pFrom==0 ) pFrom = (const u8 *)pBuild;
          pTo = pNext;
        }
        pBuild = (const DsRow *)pNext;
      }
    }
    if( pFrom || bKeepProbe ){
      aOut[n].pRow = pRow;
      aOut[n].pFrom = pFrom;
      aOut[n].pTo = pTo;
      n++;
    }
  }
  return n;
}

/* Has a partition of this level gone to disk? */
static int dsHashAnySpilled(const DsHashJoin *p){
  int i;
  for(i=0; i<DS_FANOUT; i++){
    if( p->aPart[i].pBuildFile ) return 1;
  }
  return 0;
}

/* May the probe side be probed by the threads reading it?  Where the
** table is all in memory and will stay unchanged while the side is read,
** from its first row: a broadcast's probe side (read in rowid ranges), or
** a task's probe file (read ahead by a worker: spill.c). */
static int dsHashMayStage(const DsHashJoin *p){
  return p->pProbeSrc && p->pProbeSrc->xStaged && p->pProbeSrc->nRow==0
      && p->pProbeList==0
      && !p->bPartProbe && !p->bBnl && !dsHashAnySpilled(p) && p->ht.aPart;
}

/* The next probe row of the threads' probe, with its span as its chain
** (pProbe NULL at the end, or when the rows are done while pairs are
** queued: they may be rows of the batch the next call gives back). */
static int dsHashNextStaged(DsHashJoin *p){
  const DsStaged *pNext;
  while( p->iStaged>=p->nStaged ){
    i64 nBefore;
    int rc;
    p->pProbe = 0;
    if( p->base.nQueue || p->pProbeSrc==0 ) return SQLITE_OK;
    nBefore = p->pProbeSrc->nRow;
    rc = dsSourceStaged(p->pProbeSrc, &p->stage, &p->aStaged, &p->nStaged);
    p->iStaged = 0;
    if( rc!=SQLITE_OK ){
      p->nStaged = 0;
      if( rc!=SQLITE_DONE ) return rc;
      /* The threads are done with the table: stop them for certain. */
      if( p->pProbeSrc->xStop ) p->pProbeSrc->xStop(p->pProbeSrc);
      p->pProbeSrc = 0;
      p->bStaged = 0;
      return SQLITE_OK;
    }
    /* A tick for every row the threads read (a batch's worth at most), as
    ** the serial probe ticks. */
    rc = dsOpTickN(p->pOp, (u32)(p->pProbeSrc->nRow - nBefore)*DS_TICK_ROW);
    if( rc!=SQLITE_OK ) return rc;
  }
  /* The caller reads the span's build rows and the probe row, all last
  ** touched by the thread that staged them: fetch them ahead.  (Of the
  ** first line alone, the join took 10% longer with threads 2; of the
  ** span's first row alone, m2m's ten build rows a key, 18% longer.) */
  if( p->iStaged + 8 < p->nStaged ){
    const DsStaged *pAhead = &p->aStaged[p->iStaged + 8];
    if( pAhead->pFrom ) dsRowSpanPrefetch(pAhead->pFrom, pAhead->pTo);
    dsRowPrefetch(pAhead->pRow);
  }
  pNext = &p->aStaged[p->iStaged++];
  p->pProbe = pNext->pRow;
  p->bProbeMatched = 0;
  p->pChain = (DsRow *)pNext->pFrom;
  p->pChainEnd = pNext->pTo;
  return SQLITE_OK;
}

/* Make the next probe row current (pProbe NULL at the end, or when the
** batch is done while pairs are queued).  A row that
** needs no probing here (NULL key, spilled partition) is dealt with and
** skipped, unless it is to be produced alone: then *ppAlone is set. */
static int dsHashNextProbe(DsHashJoin *p, DsRow **ppAlone){
  *ppAlone = 0;
  if( p->bStaged ) return dsHashNextStaged(p);
  for(;;){
    DsRow *pRow;
    int rc;
    if( p->iBatch>=p->nBatch ){
      /* Queued pairs may hold rows of the batch, whose arena refilling
      ** would reuse: they are handed out first. */
      if( p->base.nQueue ){
        p->pProbe = 0;
        return SQLITE_OK;
      }
      rc = dsHashFillBatch(p);
      if( rc!=SQLITE_OK ) return rc;
      if( p->nBatch==0 ){
        p->pProbe = 0;
        return SQLITE_OK;
      }
    }
    if( p->ht.aPart ){
      dsHashPrefetchAhead(&p->ht, p->iLevel, p->aBatch, p->iBatch,
                          p->nBatch);
    }
    pRow = p->aBatch[p->iBatch++];
    /* The one tick per probe row, skipped or not. */
    if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
    if( pRow->flags & DS_ROW_NULLKEY ){
      if( p->bKeepProbe ){ *ppAlone = pRow; return SQLITE_OK; }
      continue;
    }
    if( p->nSpilledParts && !p->bPartProbe && !p->bBnl ){
      DsPart *pPart = &p->aPart[dsPartOf(pRow->hash, p->iLevel)];
      if( p->iBatch + DS_PREFETCH_AHEAD < p->nBatch ){
        dsHashPrefetchSpilled(p, p->aBatch[p->iBatch + DS_PREFETCH_AHEAD]);
      }
      if( pPart->pBuildFile ){
        int bAlone;
        rc = dsProbeSpilled(p, pPart, pRow, &bAlone);
        if( rc!=SQLITE_OK ) return rc;
        if( bAlone ){ *ppAlone = pRow; return SQLITE_OK; }
        continue;
      }
    }
    p->pProbe = pRow;
    p->bProbeMatched = (pRow->flags & DS_ROW_MATCHED)!=0;
    p->pChain = dsHashSlotRows(&p->ht, p->iLevel, pRow->hash,
                               &p->pChainEnd);
    return SQLITE_OK;
  }
}

/* The next unmatched build row of the table into *ppRow, NULL at the
** end.  A scan of the whole directory, ticking as it goes. */
static int dsHashNextUnmatched(DsHashJoin *p, DsRow **ppRow){
  int rc;
  *ppRow = 0;
  for(;;){
    while( (const u8 *)p->pDrain < p->pDrainEnd ){
      DsRow *pRow = p->pDrain;
      p->pDrain = (DsRow *)((u8 *)pRow + DS_ROW_STRIDE(pRow));
      if( (pRow->flags & DS_ROW_MATCHED)==0 ){
        *ppRow = pRow;
        return SQLITE_OK;
      }
      if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
    }
    if( p->ht.aPart==0 || p->iDrainPart>=p->ht.nPart ) return SQLITE_OK;
    p->pDrain = (DsRow *)p->ht.aPart[p->iDrainPart].aRow;
    p->pDrainEnd = p->ht.aPart[p->iDrainPart].aRow
                 + p->ht.aPart[p->iDrainPart].nByte;
    p->iDrainPart++;
    if( (rc = dsOpTickN(p->pOp, 1))!=SQLITE_OK ) return rc;
  }
}

/*
** Build the table over every build row held in memory, a sub-table per
** partition.  Making it copies one partition at a time: first make sure
** that the largest, twice, fits in the budget with the directories.  (It
** copies a few at a time into one block where that leaves the quarter of
** the budget kept for the probe free: hashtable.c.)
*/
static int dsHashBuildTable(DsHashJoin *p){
  const DsConn *pConn = p->pOp->pConn;
  DsRow *apList[DS_FANOUT];
  i64 anRow[DS_FANOUT];
  DsArena *apArena[DS_FANOUT];
  int i, rc = SQLITE_OK;
  dsOpStep(p->pOp, "hash table");
  for(;;){
    i64 nMax = 0;
    int bNone = 0;
    for(i=0; i<DS_FANOUT; i++){
      DsPart *pPart = &p->aPart[i];
      anRow[i] = pPart->pBuildFile ? 0 : pPart->nBuild;
      if( anRow[i] && pPart->arena.nByte>nMax ) nMax = pPart->arena.nByte;
    }
    if( pConn->nMemUsed + nMax + dsHashTableDirectoryBytes(anRow, DS_FANOUT)
          <= pConn->nMemLimit - pConn->nMemLimit/4 ){
      break;
    }
    rc = dsSpillLargestBuild(p, &bNone);
    if( rc!=SQLITE_OK ) return rc;
    if( bNone ) break;
  }
  for(i=0; i<DS_FANOUT; i++){
    apList[i] = p->aPart[i].pBuildFile ? 0 : p->aPart[i].pBuild;
    apArena[i] = &p->aPart[i].arena;
    p->aPart[i].pBuild = 0;
  }
  return dsHashTableBuild(&p->ht, &p->pOp->mem, DS_FANOUT, apList, anRow,
                          apArena, pConn->nMemLimit/4, p->pOp);
}

/* Start probing the table with pList, then pSrc. */
static void dsHashStartProbe(DsHashJoin *p, DsRow *pList, DsSource *pSrc){
  p->pProbeList = pList;
  p->pProbeSrc = pSrc;
  p->nBatch = p->iBatch = 0;
  p->pProbe = 0;
  p->ePhase = PH_PROBE;
}

/* Build the table of partition iPart (repartition); *pbSkip if the
** partition can produce nothing. */
static int dsHashStartPart(DsHashJoin *p, int *pbSkip){
  DsPart *pPart = &p->aPart[p->iPart];
  int bNoProbe = pPart->nProbe==0 && pPart->pProbeFile==0;
  int rc;
  *pbSkip = pPart->pBuildFile!=0 || pPart->nBuild==0
         || (bNoProbe && !p->bKeepBuild);
  if( *pbSkip ) return SQLITE_OK;
  dsOpStep(p->pOp, "hash table");
  {
    DsArena *pArena = &pPart->arena;
    rc = dsHashTableBuild(&p->ht, &p->pOp->mem, 1, &pPart->pBuild,
                          &pPart->nBuild, &pArena, 0, p->pOp);
  }
  pPart->pBuild = 0;
  if( rc!=SQLITE_OK ) return rc;
  if( pPart->pProbeFile ){
    rc = dsSpillRewind(pPart->pProbeFile);
    if( rc!=SQLITE_OK ) return rc;
  }
  dsHashStartProbe(p, pPart->pProbe, (DsSource *)pPart->pProbeFile);
  pPart->pProbe = 0;
  return SQLITE_OK;
}

/* Free partition iPart's memory (its files stay). */
static void dsPartFreeMemory(DsPart *pPart, DsMem *pMem){
  dsArenaClear(&pPart->arena);
  dsArenaClear(&pPart->probeArena);
  dsBloomFree(&pPart->bloom, pMem);
  pPart->pBuild = pPart->pProbe = 0;
  pPart->nBuild = pPart->nProbe = 0;
}

/*************************************************************************
** Tasks: spilled partitions joined after the rows in memory.
*/

static void dsTaskFree(DsTask *pTask){
  if( pTask ){
    dsSpillClose(pTask->pBuild);
    dsSpillClose(pTask->pProbe);
    sqlite3_free(pTask);
  }
}

/* Queue every spilled partition of this level as a task; free the rest. */
static int dsHashEndLevel(DsHashJoin *p){
  int i, rc = SQLITE_OK;
  dsHashTableFree(&p->ht);
  /* The probe's batches go too: read ahead by a worker, a task's are not
  ** the connection's, and the next task's decisions to spill must be the
  ** same either way. */
  dsArenaClear(&p->batchArena);
  dsBloomFree(&p->bloom, &p->pOp->mem);
  for(i=0; i<DS_FANOUT; i++){
    DsPart *pPart = &p->aPart[i];
    DsTask *pTask;
    int bUseless;
    dsPartFreeMemory(pPart, &p->pOp->mem);
    if( pPart->pBuildFile==0 ){
      dsSpillClose(pPart->pProbeFile);
      pPart->pProbeFile = 0;
      continue;
    }
    /* Without probe rows, only an outer join on the build side needs it. */
    bUseless = pPart->pProbeFile==0 && !p->bKeepBuild;
    pTask = bUseless ? 0 : sqlite3_malloc64(sizeof(DsTask));
    if( pTask ){
      /* Done writing: the files give their buffers back while they wait. */
      int rc2 = dsSpillRewind(pPart->pBuildFile);
      if( rc2==SQLITE_OK && pPart->pProbeFile ){
        rc2 = dsSpillRewind(pPart->pProbeFile);
      }
      if( rc2!=SQLITE_OK && rc==SQLITE_OK ) rc = rc2;
      pTask->pBuild = pPart->pBuildFile;
      pTask->pProbe = pPart->pProbeFile;
      pTask->iLevel = p->iLevel + 1;
      pTask->bOneHash = pPart->minHash==pPart->maxHash;
      pTask->pNext = p->pTasks;
      p->pTasks = pTask;
    }else{
      if( !bUseless ) rc = SQLITE_NOMEM;
      dsSpillClose(pPart->pBuildFile);
      dsSpillClose(pPart->pProbeFile);
    }
    pPart->pBuildFile = pPart->pProbeFile = 0;
  }
  dsTaskFree(p->pTask);
  p->pTask = 0;
  return rc;
}

/* Start the next task, or finish. */
static int dsHashNextTask(DsHashJoin *p){
  DsTask *pTask = p->pTasks;
  int rc;
  if( pTask==0 ){
    p->ePhase = PH_DONE;
    return SQLITE_OK;
  }
  p->pTasks = pTask->pNext;
  p->pTask = pTask;
  p->nTasks++;
  p->iLevel = pTask->iLevel;
  p->bPartProbe = 0;
  p->nMemRows = 0;
  p->nMaxPart = 0;
  rc = dsSpillRewind(pTask->pBuild);
  if( rc==SQLITE_OK && pTask->pProbe ) rc = dsSpillRewind(pTask->pProbe);
  if( rc!=SQLITE_OK ) return rc;
  p->pBuildSrc = (DsSource *)pTask->pBuild;
  p->pProbeSrc = (DsSource *)pTask->pProbe;
  if( pTask->bOneHash || pTask->iLevel>DS_MAX_LEVEL ){
    p->bBnl = 1;
    p->nBnlTasks++;
    p->ePhase = PH_BNLLOAD;
  }else{
    p->bBnl = 0;
    p->ePhase = PH_BUILD;
  }
  return SQLITE_OK;
}

/*************************************************************************
** The block nested loop, for a task that cannot be split.
*/

/* Load the next chunk of build rows and build its table; *pbEnd when
** there are none left.  A chunk is a quarter of the budget (making its
** table copies it), whatever the rest of the connection holds: smaller
** chunks would only multiply the passes over the probe file. */
static int dsBnlLoad(DsHashJoin *p, int *pbEnd){
  DsConn *pConn = p->pOp->pConn;
  DsRow *pList = 0;
  i64 n = 0;
  int rc;
  *pbEnd = 0;
  dsHashTableFree(&p->ht);
  dsArenaClear(&p->chunkArena);
  for(;;){
    DsRow *pRow;
    if( n>0 && p->chunkArena.nByte + dsDirectoryBytes(n) > pConn->nMemLimit/4 ){
      break;
    }
    rc = p->pBuildSrc->xNext(p->pBuildSrc, &p->chunkArena, &pRow);
    if( rc==SQLITE_DONE ) break;
    if( rc!=SQLITE_ROW ) return rc;
    pRow->pNext = pList;
    pList = pRow;
    n++;
  }
  *pbEnd = n==0;
  if( n==0 ) return SQLITE_OK;
  {
    DsArena *pArena = &p->chunkArena;
    rc = dsHashTableBuild(&p->ht, &p->pOp->mem, 1, &pList, &n, &pArena, 0,
                          p->pOp);
  }
  if( rc!=SQLITE_OK ) return rc;
  if( p->pTask->pProbe ){
    rc = dsSpillRewind(p->pTask->pProbe);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( p->bKeepProbe && p->pTask->pProbe ){
    rc = dsSpillOpen(p->pOp, &p->pProbeNext);
    if( rc!=SQLITE_OK ) return rc;
  }
  dsHashStartProbe(p, 0, (DsSource *)p->pTask->pProbe);
  return SQLITE_OK;
}

/* A chunk has met every probe row: the rewritten probe file (matched
** flags included) replaces the old one. */
static int dsBnlEndChunk(DsHashJoin *p){
  if( p->pProbeNext ){
    dsSpillClose(p->pTask->pProbe);
    p->pTask->pProbe = p->pProbeNext;
    p->pProbeNext = 0;
  }
  p->ePhase = PH_BNLLOAD;
  return SQLITE_OK;
}

/*************************************************************************
** The iterator.
*/

/* The build side has ended: its spill files give their write buffers
** back, making room for the probe phase's. */
static int dsHashSealBuildFiles(DsHashJoin *p){
  int i, rc = SQLITE_OK;
  for(i=0; i<DS_FANOUT && rc==SQLITE_OK; i++){
    if( p->aPart[i].pBuildFile ) rc = dsSpillRewind(p->aPart[i].pBuildFile);
  }
  return rc;
}

/* Read build rows until the side ends; NULL-key rows the join keeps are
** handed back in *ppAlone as they come. */
static int dsHashReadBuild(DsHashJoin *p, DsRow **ppAlone){
  int rc;
  *ppAlone = 0;
  for(;;){
    DsRow *pRow;
    if( p->iBatch>=p->nBatch ){
      rc = dsHashReadBatch(p, p->pBuildSrc, &p->scratch, 0);
      if( rc!=SQLITE_OK ) return rc;
      if( p->nBatch==0 ) break;
    }
    pRow = p->aBatch[p->iBatch++];
    if( pRow->flags & DS_ROW_NULLKEY ){
      if( p->bKeepBuild ){ *ppAlone = pRow; return SQLITE_OK; }
      continue;
    }
    rc = dsPlaceBuild(p, pRow);
    if( rc!=SQLITE_OK ) return rc;
  }
  p->pBuildSrc = 0;
  dsArenaClear(&p->scratch);
  rc = dsHashSealBuildFiles(p);
  if( rc==SQLITE_OK ) rc = dsHashMakeFilter(p);
  if( rc!=SQLITE_OK ) return rc;
  if( p->bPartProbe ){
    p->ePhase = PH_PARTPROBE;
    return SQLITE_OK;
  }
  rc = dsHashBuildTable(p);
  if( rc!=SQLITE_OK ) return rc;
  /* An empty table matches nothing: the probe side matters only if kept. */
  if( p->nMemRows==0 && !p->bKeepProbe && p->nSpilledParts==0 ){
    p->pProbeSrc = 0;
  }
  dsHashStartProbe(p, 0, p->pProbeSrc);
  p->bStaged = dsHashMayStage(p);
  return SQLITE_OK;
}

/* Read the probe side into partitions (repartition); rows produced alone
** come back in *ppAlone. */
static int dsHashReadProbe(DsHashJoin *p, DsRow **ppAlone){
  *ppAlone = 0;
  while( p->pProbeSrc ){
    DsRow *pRow;
    int bAlone;
    int rc;
    if( p->iBatch>=p->nBatch ){
      rc = dsHashReadBatch(p, p->pProbeSrc, &p->scratch,
                           dsHashProbeFilter(p));
      if( rc!=SQLITE_OK ) return rc;
      if( p->nBatch==0 ) break;
    }
    if( p->nSpilledParts && p->iBatch + DS_PREFETCH_AHEAD < p->nBatch ){
      dsHashPrefetchSpilled(p, p->aBatch[p->iBatch + DS_PREFETCH_AHEAD]);
    }
    pRow = p->aBatch[p->iBatch++];
    if( pRow->flags & DS_ROW_NULLKEY ){
      bAlone = p->bKeepProbe;
    }else{
      rc = dsPlaceProbe(p, pRow, &bAlone);
      if( rc!=SQLITE_OK ) return rc;
    }
    if( bAlone ){ *ppAlone = pRow; return SQLITE_OK; }
  }
  p->pProbeSrc = 0;
  p->nBatch = p->iBatch = 0;
  dsArenaClear(&p->scratch);
  p->iPart = -1;
  p->ePhase = PH_NEXTPART;
  return SQLITE_OK;
}

static int dsHashNext(DsPairIter *pIter, DsRow **ap){
  DsHashJoin *p = (DsHashJoin *)pIter;
  DsRow *pAlone;
  int rc;
  for(;;){
    switch( p->ePhase ){
      case PH_BUILD: {
        double t = dsNowMs();
        dsOpStep(p->pOp, "build");
        rc = dsHashReadBuild(p, &pAlone);
        dsStatsPhase(&p->pOp->stats, DS_PHASE_BUILD, &t);
        if( rc!=SQLITE_OK ) return rc;
        if( pAlone ) return dsHashEmit(p, ap, pAlone, 0);
        break;
      }
      case PH_PARTPROBE: {
        dsOpStep(p->pOp, "partition");
        rc = dsHashReadProbe(p, &pAlone);
        if( rc!=SQLITE_OK ) return rc;
        if( pAlone ) return dsHashEmit(p, ap, 0, pAlone);
        break;
      }
      case PH_PROBE: {
        dsHashStep(p, "probe");
        /* Row after row without leaving the case: this loop runs once
        ** for every probe row, and queues the pairs it makes instead of
        ** returning each.  Queued rows must outlive the call, so the
        ** queue is handed out when full, before the batch's arena is
        ** read into again, and before the phase ends. */
        for(;;){
          DsRow *pProbe = p->pProbe;
          if( pProbe ){
            DsRow *pBuild;
            while( (const u8 *)(pBuild = p->pChain) < p->pChainEnd ){
              p->pChain = (DsRow *)((u8 *)pBuild + DS_ROW_STRIDE(pBuild));
              if( pBuild->hash==pProbe->hash
               && dsRowKeyEqualFast(pBuild, pProbe) ){
                /* Only an outer join on the build side asks which build
                ** rows matched: other joins leave the table unwritten. */
                if( p->bKeepBuild ) pBuild->flags |= DS_ROW_MATCHED;
                p->bProbeMatched = 1;
                if( dsHashQueue(p, pBuild, pProbe) ) return dsHashFlush(p, ap);
              }
            }
            p->pProbe = 0;
            if( p->pProbeNext ){
              /* Block nested loop: the verdict waits for the last chunk. */
              if( p->bProbeMatched ) pProbe->flags |= DS_ROW_MATCHED;
              rc = dsSpillWrite(p->pProbeNext, pProbe);
              if( rc!=SQLITE_OK ) return rc;
            }else if( !p->bProbeMatched && p->bKeepProbe && !p->bBnl ){
              if( dsHashQueue(p, 0, pProbe) ) return dsHashFlush(p, ap);
            }
          }
          /* dsHashNextProbe() ticks for each probe row it hands out. */
          if( (rc = dsHashNextProbe(p, &pAlone))!=SQLITE_OK ) return rc;
          if( pAlone ){
            if( dsHashQueue(p, 0, pAlone) ) return dsHashFlush(p, ap);
            continue;
          }
          if( p->pProbe ) continue;
          /* The batch is done, and maybe the probe side: either way the
          ** queue goes first. */
          if( p->base.nQueue ) return dsHashFlush(p, ap);
          break;
        }
        p->ePhase = PH_DRAIN;
        p->iDrainPart = 0;
        p->pDrain = 0;
        p->pDrainEnd = 0;
        break;
      }
      case PH_DRAIN: {
        DsRow *pRow = 0;
        dsHashStep(p, "drain");
        if( p->bKeepBuild && (rc = dsHashNextUnmatched(p, &pRow))!=SQLITE_OK ){
          return rc;
        }
        if( pRow ) return dsHashEmit(p, ap, pRow, 0);
        dsHashTableFree(&p->ht);
        if( p->bBnl ){
          rc = dsBnlEndChunk(p);
          if( rc!=SQLITE_OK ) return rc;
        }else{
          p->ePhase = p->bPartProbe ? PH_NEXTPART : PH_ENDTASK;
        }
        break;
      }
      case PH_NEXTPART: {
        int bSkip = 1;
        if( p->iPart>=0 ) dsPartFreeMemory(&p->aPart[p->iPart], &p->pOp->mem);
        while( bSkip && ++p->iPart < DS_FANOUT ){
          if( (rc = dsHashStartPart(p, &bSkip))!=SQLITE_OK ) return rc;
        }
        if( bSkip ) p->ePhase = PH_ENDTASK;
        break;
      }
      case PH_ENDTASK: {
        rc = dsHashEndLevel(p);
        if( rc!=SQLITE_OK ) return rc;
        p->ePhase = PH_NEXTTASK;
        break;
      }
      case PH_NEXTTASK: {
        rc = dsHashNextTask(p);
        if( rc!=SQLITE_OK ) return rc;
        break;
      }
      case PH_BNLLOAD: {
        int bEnd;
        dsHashStep(p, "build");
        rc = dsBnlLoad(p, &bEnd);
        if( rc!=SQLITE_OK ) return rc;
        if( bEnd ){
          p->ePhase = PH_BNLFINAL;
          if( p->bKeepProbe && p->pTask->pProbe ){
            rc = dsSpillRewind(p->pTask->pProbe);
            if( rc!=SQLITE_OK ) return rc;
          }
        }
        break;
      }
      case PH_BNLFINAL: {
        DsRow *pRow;
        DsSpill *pFile = p->bKeepProbe ? p->pTask->pProbe : 0;
        dsHashStep(p, "probe");
        while( pFile ){
          dsArenaReset(&p->batchArena);
          rc = dsSpillRead(pFile, &p->batchArena, &pRow);
          if( rc==SQLITE_DONE ) break;
          if( rc!=SQLITE_ROW ) return rc;
          if( (pRow->flags & DS_ROW_MATCHED)==0 ){
            return dsHashEmit(p, ap, 0, pRow);
          }
          if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
        }
        dsArenaClear(&p->chunkArena);
        p->bBnl = 0;
        p->ePhase = PH_ENDTASK;
        break;
      }
      default:
        return SQLITE_DONE;
    }
  }
}

/* Say in the statistics how the join went, beyond the plan. */
static void dsHashReport(DsHashJoin *p){
  DsStats *pStats = &p->pOp->stats;
  sqlite3_str *pMore;
  char *zMore;
  if( p->nSpilledParts==0 && !p->bProbeKeysFirst ) return;
  pMore = sqlite3_str_new(0);
  sqlite3_str_appendall(pMore, pStats->zReason ? pStats->zReason : "");
  if( p->bProbeKeysFirst ){
    sqlite3_str_appendall(pMore, "; most keys of a sample of the probe "
        "side could not match: its keys were tested against the build "
        "keys before its other columns were read");
  }
  if( p->nSpilledParts ){
    sqlite3_str_appendf(pMore, "; the build side outgrew memory_limit: "
        "%lld partition%s spilled to disk and joined afterwards "
        "(%lld task%s%s)", p->nSpilledParts,
        p->nSpilledParts==1 ? "" : "s", p->nTasks, p->nTasks==1 ? "" : "s",
        p->nBnlTasks ? ", some keys too large for memory joined as a "
                       "block nested loop" : "");
  }
  zMore = sqlite3_str_finish(pMore);
  if( zMore==0 ){
    /* A reason without its end would mislead: none is published. */
    pStats->bLost = 1;
    return;
  }
  sqlite3_free(pStats->zReason);
  pStats->zReason = zMore;
}

static void dsHashClose(DsPairIter *pIter){
  DsHashJoin *p = (DsHashJoin *)pIter;
  if( p ){
    DsMem *pMem = &p->pOp->mem;
    int i;
    dsHashReport(p);
    /* A task's probe file read ahead by a worker that stages its rows
    ** against the table: the worker stops first.  (A broadcast's probe
    ** side, an input, was stopped by the join: dsOpStopSources.) */
    if( p->bStaged && p->pTask && p->pProbeSrc && p->pProbeSrc->xStop ){
      p->pProbeSrc->xStop(p->pProbeSrc);
    }
    dsHashTableFree(&p->ht);
    dsBloomFree(&p->bloom, pMem);
    for(i=0; i<DS_FANOUT; i++){
      dsPartFreeMemory(&p->aPart[i], pMem);
      dsSpillClose(p->aPart[i].pBuildFile);
      dsSpillClose(p->aPart[i].pProbeFile);
    }
    dsPoolEnd(&p->pool, pMem);
    while( p->pTasks ){
      DsTask *pNext = p->pTasks->pNext;
      dsTaskFree(p->pTasks);
      p->pTasks = pNext;
    }
    dsTaskFree(p->pTask);
    dsSpillClose(p->pProbeNext);
    dsArenaClear(&p->scratch);
    dsArenaClear(&p->batchArena);
    dsArenaClear(&p->chunkArena);
    sqlite3_free(p);
  }
}

/*
** Start a hash join with side iBuild as the build side.  Everything
** happens as pairs are asked for.
*/
int dsHashJoinOpen(DsOp *pOp, int iBuild, int bRepartition,
                   DsPairIter **ppIter){
  DsHashJoin *p = sqlite3_malloc64(sizeof(DsHashJoin));
  i64 nBuf;
  int i;
  *ppIter = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsHashNext;
  p->base.apQueue = p->aQueue;
  p->base.xClose = dsHashClose;
  p->filter.xMayMatch = dsHashMayMatch;
  p->stage.xBatch = dsHashStageBatch;
  p->stage.xFilter = dsHashStageFilter;
  p->stage.xFiltered = dsHashStageFiltered;
  p->pOp = pOp;
  p->iBuild = iBuild;
  p->bKeepBuild = (pOp->eType & (iBuild==0 ? DS_KEEP_LEFT : DS_KEEP_RIGHT))!=0;
  p->bKeepProbe = (pOp->eType & (iBuild==0 ? DS_KEEP_RIGHT : DS_KEEP_LEFT))!=0;
  p->bRepartition = bRepartition;
  p->bPartProbe = bRepartition;
  p->pBuildSrc = pOp->apSrc[iBuild];
  p->pProbeSrc = pOp->apSrc[1 - iBuild];
  dsPoolStart(&p->pool, &pOp->mem);
  for(i=0; i<DS_FANOUT; i++){
    dsArenaInitPool(&p->aPart[i].arena, &pOp->mem);
    dsArenaInitPool(&p->aPart[i].probeArena, &pOp->mem);
  }
  dsArenaInit(&p->scratch, &pOp->mem);
  dsMemInit(&p->batchMem, pOp->pConn);
  dsArenaInit(&p->batchArena, &p->batchMem);
  dsArenaInit(&p->chunkArena, &pOp->mem);
  /* Up to two files per partition may be written at once: give their
  ** buffers a quarter of the budget between them. */
  nBuf = pOp->pConn->nMemLimit / (8 * DS_FANOUT);
  pOp->nSpillBuf = (int)(nBuf > 256*1024 ? 256*1024 : nBuf);
  pOp->stats.iBuild = iBuild;
  pOp->stats.nPartition = bRepartition ? DS_FANOUT : 1;
  p->ePhase = PH_BUILD;
  *ppIter = &p->base;
  return SQLITE_OK;
}
