/*
** hashjoin.c: the hash strategies, BROADCAST_HASH_x and REPARTITION_HASH_x.
**
** Both build a chained hash table (hashtable.c) on one side, the build
** side, and stream the other side, the probe side, through it:
**
**   BROADCAST_HASH_x      One table holds the whole build side.  The probe
**                         side is read once, in batches of DS_BATCH rows
**                         whose hash slots are prefetched before any of
**                         them is probed, and is never stored.
**
**   REPARTITION_HASH_x    Both sides are first split into partitions on
**                         high bits of the key hash.  Then partition by
**                         partition, a table is built on the build side's
**                         part and the probe side's part is probed.
**
** Outer joins: a probe row that found no partner is produced with NULL on
** the other side as soon as its chain is exhausted; build rows carry a
** matched flag, and the unmatched ones are produced by a scan of the table
** once the probe rows are done.  A row with a NULL key never enters a
** table: it is dropped, or kept aside and produced at the end when its
** side is kept by the join type.
*/
#include "dataset_int.h"

#define PH_PROBE    1     /* produce the matches of probe rows */
#define PH_DRAIN    2     /* produce unmatched build rows of the table */
#define PH_NEXTPART 3     /* set up the next partition (repartition only) */
#define PH_NULLS    4     /* produce the NULL-key rows kept aside */
#define PH_DONE     5

/* Rows per partition that REPARTITION_HASH_x aims at. */
#define DS_PART_ROWS 16384
#define DS_PART_MAX  1024

typedef struct DsHashPart DsHashPart;
struct DsHashPart {
  DsRow *pBuild;          /* build rows of this partition */
  i64 nBuild;
  DsRow *pProbe;          /* probe rows of this partition */
};

typedef struct DsHashJoin DsHashJoin;
struct DsHashJoin {
  DsPairIter base;
  DsOp *pOp;
  int iBuild;             /* side of the build rows: 0 left, 1 right */
  int bKeepBuild;         /* produce unmatched build rows */
  int bKeepProbe;         /* produce unmatched probe rows */
  int bRepartition;       /* REPARTITION_HASH_x rather than broadcast */
  DsSource *pBuildSrc;
  DsSource *pProbeSrc;
  DsArena buildArena;     /* build rows (and, repartitioned, probe rows) */
  DsArena probeArena;     /* the current probe batch of a broadcast join */
  DsRow *pNullBuild;      /* NULL-key build rows kept for the output */
  DsRow *pNullProbe;      /* NULL-key probe rows kept for the output */
  int nPart;              /* partitions (1 for broadcast) */
  int iPart;              /* the partition being joined */
  DsHashPart *aPart;
  DsHashTable ht;
  DsRow *aBatch[DS_BATCH];/* probe rows about to be probed */
  int nBatch;
  int iBatch;
  DsRow *pProbeList;      /* probe rows of this partition not yet batched */
  DsRow *pProbe;          /* the probe row being matched */
  DsRow *pChain;          /* next build row to compare with pProbe */
  int bProbeMatched;      /* pProbe found a partner */
  u64 iSlot;              /* next directory slot of the drain */
  DsRow *pDrain;          /* next row of the chain being drained */
  int ePhase;
};

static int dsHashEmit(DsHashJoin *p, DsRow **ap, DsRow *pBuild,
                      DsRow *pProbe){
  ap[p->iBuild] = pBuild;
  ap[1 - p->iBuild] = pProbe;
  return SQLITE_ROW;
}

static int dsPartOf(const DsHashJoin *p, u64 hash){
  return (int)((hash >> 40) & (u64)(p->nPart - 1));
}

/* Push pRow on the list *ppList. */
static void dsListPush(DsRow **ppList, DsRow *pRow){
  pRow->pNext = *ppList;
  *ppList = pRow;
}

/* Read the build side whole into one list; NULL keys kept aside. */
static int dsHashReadBuild(DsHashJoin *p, DsRow **ppList, i64 *pnRow){
  DsRow *pList = 0;
  i64 nRow = 0;
  for(;;){
    DsRow *pRow;
    int rc = p->pBuildSrc->xNext(p->pBuildSrc, &p->buildArena, &pRow);
    if( rc==SQLITE_DONE ) break;
    if( rc!=SQLITE_ROW ) return rc;
    if( pRow->flags & DS_ROW_NULLKEY ){
      if( p->bKeepBuild ){
        dsListPush(&p->pNullBuild, pRow);
      }else{
        dsArenaUndo(&p->buildArena, pRow);
      }
      continue;
    }
    dsListPush(&pList, pRow);
    nRow++;
  }
  *ppList = pList;
  *pnRow = nRow;
  return SQLITE_OK;
}

/* Split the build list into partitions, then read the probe side into
** the same partitions. */
static int dsHashPartitionBoth(DsHashJoin *p, DsRow *pList, i64 nBuild){
  int nPart = 2;
  int rc;
  while( nPart < DS_PART_MAX && (i64)nPart * DS_PART_ROWS < nBuild ){
    nPart *= 2;
  }
  p->nPart = nPart;
  p->aPart = dsMalloc(&p->pOp->mem, (i64)sizeof(DsHashPart) * nPart);
  if( p->aPart==0 ) return SQLITE_NOMEM;
  memset(p->aPart, 0, sizeof(DsHashPart) * (size_t)nPart);
  while( pList ){
    DsRow *pNext = pList->pNext;
    DsHashPart *pPart = &p->aPart[dsPartOf(p, pList->hash)];
    dsListPush(&pPart->pBuild, pList);
    pPart->nBuild++;
    pList = pNext;
    if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
  }
  for(;;){
    DsRow *pRow;
    rc = p->pProbeSrc->xNext(p->pProbeSrc, &p->buildArena, &pRow);
    if( rc==SQLITE_DONE ) break;
    if( rc!=SQLITE_ROW ) return rc;
    if( pRow->flags & DS_ROW_NULLKEY ){
      if( p->bKeepProbe ){
        dsListPush(&p->pNullProbe, pRow);
      }else{
        dsArenaUndo(&p->buildArena, pRow);
      }
      continue;
    }
    dsListPush(&p->aPart[dsPartOf(p, pRow->hash)].pProbe, pRow);
  }
  return SQLITE_OK;
}

/* Fill aBatch with the next probe rows and prefetch their chains. */
static int dsHashFillBatch(DsHashJoin *p){
  int n = 0;
  int i;
  if( p->bRepartition ){
    while( n<DS_BATCH && p->pProbeList ){
      p->aBatch[n++] = p->pProbeList;
      p->pProbeList = p->pProbeList->pNext;
    }
  }else if( p->pProbeSrc ){
    dsArenaReset(&p->probeArena);
    while( n<DS_BATCH ){
      int rc = p->pProbeSrc->xNext(p->pProbeSrc, &p->probeArena, &p->aBatch[n]);
      if( rc==SQLITE_DONE ){
        p->pProbeSrc = 0;
        break;
      }
      if( rc!=SQLITE_ROW ) return rc;
      n++;
    }
  }
  for(i=0; i<n; i++){
    __builtin_prefetch(dsHashTableSlot(&p->ht, p->aBatch[i]->hash));
  }
  p->nBatch = n;
  p->iBatch = 0;
  return SQLITE_OK;
}

/* Make the next probe row current, or set pProbe to NULL at the end. */
static int dsHashNextProbe(DsHashJoin *p){
  DsRow *pProbe;
  if( p->iBatch>=p->nBatch ){
    int rc = dsHashFillBatch(p);
    if( rc!=SQLITE_OK ) return rc;
    if( p->nBatch==0 ){
      p->pProbe = 0;
      return SQLITE_OK;
    }
  }
  pProbe = p->aBatch[p->iBatch++];
  p->pProbe = pProbe;
  p->bProbeMatched = 0;
  p->pChain = (pProbe->flags & DS_ROW_NULLKEY) ? 0
            : *dsHashTableSlot(&p->ht, pProbe->hash);
  return SQLITE_OK;
}

/* Build the table of partition iPart; say whether it needs probing. */
static int dsHashStartPart(DsHashJoin *p, int *pbSkip){
  DsHashPart *pPart = &p->aPart[p->iPart];
  int rc;
  *pbSkip = (pPart->nBuild==0 && !p->bKeepProbe)
         || (pPart->pProbe==0 && !p->bKeepBuild);
  if( *pbSkip ) return SQLITE_OK;
  rc = dsHashTableInit(&p->ht, &p->pOp->mem, pPart->nBuild);
  if( rc!=SQLITE_OK ) return rc;
  dsHashTableInsertList(&p->ht, pPart->pBuild);
  pPart->pBuild = 0;
  p->pProbeList = pPart->pProbe;
  pPart->pProbe = 0;
  p->nBatch = p->iBatch = 0;
  return SQLITE_OK;
}

/* The next unmatched build row of the table, or NULL. */
static DsRow *dsHashNextUnmatched(DsHashJoin *p){
  for(;;){
    while( p->pDrain ){
      DsRow *pRow = p->pDrain;
      p->pDrain = pRow->pNext;
      if( (pRow->flags & DS_ROW_MATCHED)==0 ) return pRow;
    }
    if( p->ht.aSlot==0 || p->iSlot>p->ht.mask ) return 0;
    p->pDrain = p->ht.aSlot[p->iSlot++];
  }
}

static int dsHashNext(DsPairIter *pIter, DsRow **ap){
  DsHashJoin *p = (DsHashJoin *)pIter;
  int rc;
  for(;;){
    switch( p->ePhase ){
      case PH_PROBE: {
        DsRow *pProbe = p->pProbe;
        if( pProbe ){
          DsRow *pBuild;
          while( (pBuild = p->pChain)!=0 ){
            p->pChain = pBuild->pNext;
            if( pBuild->hash==pProbe->hash && dsRowKeyEqual(pBuild, pProbe) ){
              pBuild->flags |= DS_ROW_MATCHED;
              p->bProbeMatched = 1;
              return dsHashEmit(p, ap, pBuild, pProbe);
            }
          }
          p->pProbe = 0;
          if( !p->bProbeMatched && p->bKeepProbe ){
            return dsHashEmit(p, ap, 0, pProbe);
          }
        }
        if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
        if( (rc = dsHashNextProbe(p))!=SQLITE_OK ) return rc;
        if( p->pProbe==0 ){
          p->ePhase = PH_DRAIN;
          p->iSlot = 0;
          p->pDrain = 0;
        }
        break;
      }
      case PH_DRAIN: {
        DsRow *pRow = p->bKeepBuild ? dsHashNextUnmatched(p) : 0;
        if( pRow ) return dsHashEmit(p, ap, pRow, 0);
        dsHashTableFree(&p->ht);
        p->ePhase = p->bRepartition ? PH_NEXTPART : PH_NULLS;
        break;
      }
      case PH_NEXTPART: {
        int bSkip = 1;
        while( bSkip && ++p->iPart < p->nPart ){
          if( (rc = dsHashStartPart(p, &bSkip))!=SQLITE_OK ) return rc;
        }
        p->ePhase = bSkip ? PH_NULLS : PH_PROBE;
        break;
      }
      case PH_NULLS: {
        DsRow *pRow;
        if( (pRow = p->pNullBuild)!=0 ){
          p->pNullBuild = pRow->pNext;
          return dsHashEmit(p, ap, pRow, 0);
        }
        if( (pRow = p->pNullProbe)!=0 ){
          p->pNullProbe = pRow->pNext;
          return dsHashEmit(p, ap, 0, pRow);
        }
        p->ePhase = PH_DONE;
        break;
      }
      default:
        return SQLITE_DONE;
    }
  }
}

static void dsHashClose(DsPairIter *pIter){
  DsHashJoin *p = (DsHashJoin *)pIter;
  if( p ){
    DsMem *pMem = &p->pOp->mem;
    dsHashTableFree(&p->ht);
    dsFree(pMem, p->aPart);
    dsArenaClear(&p->buildArena);
    dsArenaClear(&p->probeArena);
    sqlite3_free(p);
  }
}

/*
** Start a hash join with side iBuild as the build side.  The build side
** (and, with bRepartition, the probe side too) is read before this
** returns; the rest happens as pairs are asked for.
*/
int dsHashJoinOpen(DsOp *pOp, int iBuild, int bRepartition,
                   DsPairIter **ppIter){
  DsHashJoin *p = sqlite3_malloc64(sizeof(DsHashJoin));
  DsRow *pList = 0;
  i64 nBuild = 0;
  int rc;
  double t = dsNowMs();
  *ppIter = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsHashNext;
  p->base.xClose = dsHashClose;
  p->pOp = pOp;
  p->iBuild = iBuild;
  p->bKeepBuild = (pOp->eType & (iBuild==0 ? DS_KEEP_LEFT : DS_KEEP_RIGHT))!=0;
  p->bKeepProbe = (pOp->eType & (iBuild==0 ? DS_KEEP_RIGHT : DS_KEEP_LEFT))!=0;
  p->bRepartition = bRepartition;
  p->pBuildSrc = pOp->apSrc[iBuild];
  p->pProbeSrc = pOp->apSrc[1 - iBuild];
  p->nPart = 1;
  p->iPart = -1;
  dsArenaInit(&p->buildArena, &pOp->mem);
  dsArenaInit(&p->probeArena, &pOp->mem);
  pOp->stats.iBuild = iBuild;

  rc = dsHashReadBuild(p, &pList, &nBuild);
  if( rc==SQLITE_OK ){
    if( bRepartition ){
      rc = dsHashPartitionBoth(p, pList, nBuild);
      p->ePhase = PH_NEXTPART;
    }else{
      rc = dsHashTableInit(&p->ht, &pOp->mem, nBuild);
      if( rc==SQLITE_OK ) dsHashTableInsertList(&p->ht, pList);
      /* An empty table matches nothing: skip the probe side if it is
      ** not kept. */
      if( nBuild==0 && !p->bKeepProbe ) p->pProbeSrc = 0;
      p->ePhase = PH_PROBE;
    }
  }
  pOp->stats.nPartition = p->nPart;
  dsStatsPhase(&pOp->stats, DS_PHASE_BUILD, &t);
  if( rc!=SQLITE_OK ){
    dsHashClose(&p->base);
    return rc;
  }
  *ppIter = &p->base;
  return SQLITE_OK;
}
