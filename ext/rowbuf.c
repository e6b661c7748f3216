/*
** rowbuf.c: row buffers, and the block nested loop that crosses a stream
** of rows with one.
**
** A DsRowBuf keeps copies of rows in the order they were appended: in
** memory while the connection is within its memory budget, and in a spill
** file from the moment it is not.  It can be read back from the start any
** number of times, through the DsSource it embeds.  Operators use it for
** whatever must be read more than once: the small side of a cross
** product, the groups of one key in a sort-merge join, the chunks of a
** block nested loop.
**
** DsBlockCross produces the cross product of a stream (the outer side,
** read once, a block at a time) and a DsRowBuf (the inner side, read once
** per block).  A block is as many outer rows as a quarter of the budget
** holds, so when the inner side is on disk it is re-read |outer|/block
** times: the cost stays linear in the output, which is |outer|*|inner|.
*/
#include "dataset_int.h"

/* Rows in a block: enough to make inner passes rare, bounded by memory. */
#define DS_BLOCK_MAX_ROWS (1 << 20)

static int dsRowBufSourceNext(DsSource *pSrc, DsArena *pArena, DsRow **pp){
  return dsRowBufNext((DsRowBuf *)pSrc, pArena, pp);
}

void dsRowBufInit(DsRowBuf *p, DsOp *pOp){
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsRowBufSourceNext;
  p->pOp = pOp;
  dsArenaInit(&p->arena, &pOp->mem);
}

/* Forget every row; the buffer can be used again. */
void dsRowBufClear(DsRowBuf *p){
  dsArenaReset(&p->arena);
  dsSpillClose(p->pFile);
  p->pFile = 0;
  p->pHead = p->pTail = p->pCur = 0;
  p->nRow = p->nMem = 0;
  p->nFileWidest = 0;
  p->bReadFile = 0;
  p->base.nRow = 0;
}

/* Clear and give back the memory too. */
void dsRowBufFree(DsRowBuf *p){
  dsRowBufClear(p);
  dsArenaClear(&p->arena);
}

/*
** Does a row of nSize bytes go to memory?  Not once rows go to the file
** (they are read back in order); else while the budget allows and leaves
** nReserve bytes free, up to nMemMax.  With bHoldFirst the first row
** stays in memory regardless (a merge join pairs a key's one right row
** with the left rows as they stream past).
*/
static int dsRowBufInMemory(const DsRowBuf *p, i64 nSize){
  if( p->pFile ) return 0;
  if( p->nMem==0 && p->bHoldFirst ) return 1;
  return !dsMemOverBudget(&p->pOp->mem)
      && !dsArenaWouldExceed(&p->arena, nSize, p->nReserve)
      && (p->nMemMax==0 || p->arena.nByte < p->nMemMax);
}

/* Append a copy of pRow (flags included). */
int dsRowBufAppend(DsRowBuf *p, const DsRow *pRow){
  i64 nSize = (i64)DS_ROW_SIZE(pRow->nData);
  i64 nRoom;
  DsRow *pNew;
  assert( pRow->nKey<=pRow->nData );
  p->nRow++;
  if( dsRowBufInMemory(p, nSize) ){
    pNew = dsArenaAlloc(&p->arena, nSize);
    if( pNew==0 ) return SQLITE_NOMEM;
    memcpy(DS_ROW_IMAGE(pNew), DS_ROW_IMAGE((DsRow *)pRow),
           DS_ROW_HDR + pRow->nData);
    pNew->pNext = 0;
    if( p->pTail ){
      p->pTail->pNext = pNew;
    }else{
      p->pHead = pNew;
    }
    p->pTail = pNew;
    p->nMem++;
    return SQLITE_OK;
  }
  if( p->pFile==0 ){
    int rc = dsSpillOpen(p->pOp, &p->pFile);
    if( rc!=SQLITE_OK ) return rc;
  }
  nRoom = dsRowRoom(&p->pOp->mem, pRow->nData);
  if( nRoom > p->nFileWidest ) p->nFileWidest = nRoom;
  return dsSpillWrite(p->pFile, pRow);
}

/* Start reading from the first row. */
int dsRowBufRewind(DsRowBuf *p){
  p->pCur = p->pHead;
  p->bReadFile = 0;
  p->base.nRow = 0;
  return p->pFile ? dsSpillRewind(p->pFile) : SQLITE_OK;
}

/*
** The next row: SQLITE_ROW or SQLITE_DONE.  A row from memory stays valid
** until the buffer is cleared; one from the file is allocated in pArena.
*/
int dsRowBufNext(DsRowBuf *p, DsArena *pArena, DsRow **ppRow){
  if( p->pCur ){
    *ppRow = p->pCur;
    p->pCur = p->pCur->pNext;
    p->base.nRow++;
    return SQLITE_ROW;
  }
  if( p->pFile ){
    int rc = dsSpillRead(p->pFile, pArena, ppRow);
    if( rc==SQLITE_ROW ) p->base.nRow++;
    return rc;
  }
  return SQLITE_DONE;
}

/*************************************************************************
** The block nested loop.
*/
void dsBlockCrossInit(DsBlockCross *p, DsOp *pOp, DsSource *pOuter,
                      DsRowBuf *pInner){
  memset(p, 0, sizeof(*p));
  p->pOp = pOp;
  p->pOuter = pOuter;
  p->pInner = pInner;
  dsArenaInit(&p->blockArena, &pOp->mem);
  dsArenaInit(&p->innerArena, &pOp->mem);
}

void dsBlockCrossFree(DsBlockCross *p){
  dsArenaClear(&p->blockArena);
  dsArenaClear(&p->innerArena);
  dsFree(&p->pOp->mem, p->aBlock);
  p->aBlock = 0;
  p->nBlock = p->nAlloc = 0;
}

/*
** Is the block full?  At a quarter of the budget; or when the budget is
** spent; or when one more row as wide as the widest so far (what the
** block's arena would add for it) would leave no room for what a pass
** reads back from the inner file: its widest row and its buffer (a merge
** join crossing one key's groups of 200 KB rows went past the limit by a
** row, then by another reading the inner one).
*/
static int dsBlockCrossFull(const DsBlockCross *p){
  const DsConn *pConn = p->pOp->pConn;
  i64 nMore = dsArenaWouldAlloc(&p->blockArena,
                                (i64)DS_ROW_SIZE(p->nBlockWidest));
  if( p->pInner->pFile ){
    nMore += p->pInner->nFileWidest + dsSpillBufferBytes(p->pOp);
  }
  return p->blockArena.nByte >= pConn->nMemLimit / 4
      || dsMemOverBudget(&p->pOp->mem)
      || pConn->nMemUsed + nMore > pConn->nMemLimit;
}

/* Read the next block of outer rows; an empty block means the end. */
static int dsBlockCrossLoad(DsBlockCross *p){
  /* With the inner side all in memory a pass over it costs no I/O, and a
  ** large block would only hold memory: a batch will do. */
  int nMaxRows = p->pInner->pFile ? DS_BLOCK_MAX_ROWS : DS_BATCH;
  /* Cleared, not reset: the chunk a reset keeps would count in nByte (and
  ** against the budget) before any row is read, and shrink every later
  ** block to one row. */
  dsArenaClear(&p->blockArena);
  p->nBlock = 0;
  p->iBlock = 0;
  p->nBlockWidest = 0;
  while( !p->bOuterDone && p->nBlock<nMaxRows ){
    DsRow *pRow;
    int rc;
    if( p->nBlock>0 && dsBlockCrossFull(p) ) break;
    if( p->nBlock==p->nAlloc ){
      int nNew = p->nAlloc ? p->nAlloc*2 : 256;
      DsRow **aNew = dsRealloc(&p->pOp->mem, p->aBlock,
                               (i64)nNew * (i64)sizeof(DsRow *));
      if( aNew==0 ) return SQLITE_NOMEM;
      p->aBlock = aNew;
      p->nAlloc = nNew;
    }
    rc = p->pOuter->xNext(p->pOuter, &p->blockArena, &pRow);
    if( rc==SQLITE_DONE ){
      p->bOuterDone = 1;
      break;
    }
    if( rc!=SQLITE_ROW ) return rc;
    p->aBlock[p->nBlock++] = pRow;
    if( pRow->nData > p->nBlockWidest ) p->nBlockWidest = pRow->nData;
    /* The outer side may be rows in memory: no statement checks then. */
    if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
  }
  if( p->nBlock>0 ) p->nLoaded++;
  return SQLITE_OK;
}

/*
** The next pair (outer row, inner row): SQLITE_ROW, SQLITE_DONE or an
** error.  Both rows stay valid until the next call.
*/
int dsBlockCrossNext(DsBlockCross *p, DsRow **ppOuter, DsRow **ppInner){
  for(;;){
    int rc;
    if( p->pInnerRow && p->iBlock<p->nBlock ){
      *ppOuter = p->aBlock[p->iBlock++];
      *ppInner = p->pInnerRow;
      return SQLITE_ROW;
    }
    if( p->nBlock>0 ){
      dsArenaReset(&p->innerArena);
      rc = dsRowBufNext(p->pInner, &p->innerArena, &p->pInnerRow);
      if( rc==SQLITE_ROW ){
        p->iBlock = 0;
        continue;
      }
      if( rc!=SQLITE_DONE ) return rc;
    }
    /* This block has met every inner row: on to the next block. */
    p->pInnerRow = 0;
    if( p->pInner->nRow==0 ) return SQLITE_DONE;
    rc = dsBlockCrossLoad(p);
    if( rc!=SQLITE_OK ) return rc;
    if( p->nBlock==0 ) return SQLITE_DONE;
    rc = dsRowBufRewind(p->pInner);
    if( rc!=SQLITE_OK ) return rc;
    if( (rc = dsOpTick(p->pOp))!=SQLITE_OK ) return rc;
  }
}
