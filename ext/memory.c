/*
** memory.c: the memory budget of a connection and the row arena.
**
** All buffers an operator holds (rows, hash directories, sort arrays) are
** allocated through a DsMem.  It charges every byte to the operator and to
** its connection, so that the operators running at once on a connection
** share one `memory_limit` between them.  Operators ask dsMemOverBudget()
** after growing and spill when it says so; nothing here refuses memory
** short of a real allocation failure, which comes back as NULL.
**
** Rows live in an arena: a list of chunks carved front to back.  Chunks
** start small (a tiny input costs a few KiB, less under a small budget)
** and double up to a cap, so a large input costs few allocations; a row
** larger than that gets a chunk of its own, freed at the next reset.
** Rows are never freed one by one; a whole arena is reset or cleared at
** once.  The arenas of an operator that grows many at once may take
** their larger chunks from a pool of slabs on huge pages (DsChunkPool,
** below).
*/
#include "dataset_int.h"

#include <sys/mman.h>

#define DS_CHUNK_MIN  (4 * 1024)
#define DS_CHUNK_MAX  (1024 * 1024)

struct DsChunk {
  DsChunk *pPrev;         /* the older chunk */
  i64 nByte;              /* size of this allocation, header included */
};

static void dsMemCharge(DsMem *pMem, i64 n){
  pMem->nUsed += n;
  assert( pMem->nUsed>=0 );
  if( pMem->nUsed > pMem->nPeak ) pMem->nPeak = pMem->nUsed;
  if( pMem->pConn ) pMem->pConn->nMemUsed += n;
}

/* An allocation of n bytes failed: the message of the statement's error
** says how large it was (dsStatementError). */
static void dsMemFailed(DsMem *pMem, i64 n){
  if( pMem->pConn ) pMem->pConn->nNoMemBytes = n;
}

void dsMemInit(DsMem *pMem, DsConn *pConn){
  pMem->pConn = pConn;
  pMem->nUsed = 0;
  pMem->nPeak = 0;
  pMem->nRoomLimit = -1;
  pMem->nRoomChunk = 0;
  pMem->pPool = 0;
}

/*
** Fresh memory, touched for the first time.  Each first touch of a 4 KiB
** page is a page fault, and on some machines an expensive one: in a
** virtual machine that shadows the guest's page tables it took 5 to 10 us
** per page, so that a 1M-row hash join spent a third of its build (100
** ms and more) in the faults of the memory its rows were copied into.
** Two hints to the kernel make that cheaper, Linux's alone; each is only
** a hint, whose failure (an older kernel, an allocator's memory it does
** not apply to) changes nothing, and the memory stays the allocator's:
**
**   - a buffer of several MiB is asked for on transparent huge pages
**     (MADV_HUGEPAGE), over the part of it that covers whole 2 MiB pages:
**     one fault per 2 MiB;
**   - a buffer the caller is about to fill (dsMallocToFill: an arena's
**     chunk, a hash table's rows) has its pages made at once
**     (MADV_POPULATE_WRITE): one system call instead of a fault per page.
*/
#define DS_PAGE         ((uintptr_t)4096)
#define DS_HUGE_PAGE    ((uintptr_t)2 * 1024 * 1024)
#define DS_HUGE_MIN     (4 * 1024 * 1024)
#define DS_PREFAULT_MIN (64 * 1024)

/* -DDS_OMIT_PAGE_ADVICE leaves the hints out. */
#if defined(__linux__) && !defined(DS_OMIT_PAGE_ADVICE)
# define DS_PAGE_ADVICE 1
#endif

#ifdef DS_PAGE_ADVICE
/* madvise(iAdvice) on the whole pages (of nPage bytes) within p's n
** bytes.  (Where pages are larger than 4 KiB, the prefault's range may
** start inside one: madvise() refuses it, and nothing is lost.) */
static void dsAdvisePages(void *p, i64 n, uintptr_t nPage, int iAdvice){
  uintptr_t iStart = ((uintptr_t)p + nPage - 1) & ~(nPage - 1);
  uintptr_t iEnd = ((uintptr_t)p + (uintptr_t)n) & ~(nPage - 1);
  if( iEnd>iStart ) (void)madvise((void *)iStart, iEnd - iStart, iAdvice);
}
#endif

/* Ask for huge pages for p's n bytes, where they would cover enough. */
static void dsAdviseHugePages(void *p, i64 n){
#if defined(DS_PAGE_ADVICE) && defined(MADV_HUGEPAGE)
  if( n>=DS_HUGE_MIN ) dsAdvisePages(p, n, DS_HUGE_PAGE, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

/* Make the pages of p's n bytes now, where there are enough of them. */
static void dsPrefault(void *p, i64 n){
#if defined(DS_PAGE_ADVICE) && defined(MADV_POPULATE_WRITE)
  if( n>=DS_PREFAULT_MIN ) dsAdvisePages(p, n, DS_PAGE, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* The pages of p's n bytes hold nothing worth keeping: the kernel may
** take them back (the range stays mapped; touched again, it reads as
** zeros). */
static void dsGiveBackPages(void *p, i64 n){
#if defined(DS_PAGE_ADVICE) && defined(MADV_DONTNEED)
  if( n>=DS_PREFAULT_MIN ) dsAdvisePages(p, n, DS_PAGE, MADV_DONTNEED);
#else
  (void)p;
  (void)n;
#endif
}

void *dsMalloc(DsMem *pMem, i64 n){
  void *p = sqlite3_malloc64((sqlite3_uint64)(n > 0 ? n : 1));
  if( p ){
    dsMemCharge(pMem, (i64)sqlite3_msize(p));
    dsAdviseHugePages(p, n);
  }else{
    dsMemFailed(pMem, n);
  }
  return p;
}

/* dsMalloc() of n bytes that the caller is about to write, all of them:
** their pages are made at once. */
void *dsMallocToFill(DsMem *pMem, i64 n){
  void *p = dsMalloc(pMem, n);
  if( p ) dsPrefault(p, n);
  return p;
}

/* The pages of n bytes at p, part of a dsMalloc() block that threads fill
** part by part, are made now, on the thread about to fill them: the
** kernel's zeroing of fresh pages is then spread over the threads too. */
void dsMakePages(void *p, i64 n){
  dsPrefault(p, n);
}

void *dsRealloc(DsMem *pMem, void *pOld, i64 n){
  i64 nOld = pOld ? (i64)sqlite3_msize(pOld) : 0;
  void *p = sqlite3_realloc64(pOld, (sqlite3_uint64)(n > 0 ? n : 1));
  if( p ) dsMemCharge(pMem, (i64)sqlite3_msize(p) - nOld);
  else dsMemFailed(pMem, n);
  return p;
}

void dsFree(DsMem *pMem, void *p){
  if( p ){
    dsMemCharge(pMem, -(i64)sqlite3_msize(p));
    sqlite3_free(p);
  }
}

/* Charge (n>0) or give back (n<0) bytes that the operator holds outside
** its own allocations: the batches a worker fills for it, which it must
** not charge itself (sort.c). */
void dsMemReserve(DsMem *pMem, i64 n){
  dsMemCharge(pMem, n);
}

/* True when the connection's operators together hold more than the limit. */
int dsMemOverBudget(const DsMem *pMem){
  const DsConn *pConn = pMem->pConn;
  return pConn && pConn->nMemUsed > pConn->nMemLimit;
}

/*
** Chunk pools.  An operator that grows many arenas side by side (a hash
** join's partitions, DS_FANOUT of them) has their larger chunks cut from
** slabs of several MiB, which the kernel backs with huge pages, rather
** than allocated one by one.  An arena's chunks are 1 MiB at most, too
** small to hold a whole 2 MiB page, so that each of their 4 KiB pages is
** made when first touched: where that is expensive (5 us a page in a
** virtual machine that shadows the guest's page tables) it took a third
** of the time of reading a 1M-row build side into its partitions.
**
** Only chunks of the regular sizes from DS_POOL_MIN_CHUNK (64 KiB, where
** pages start to be made at once anyway: dsPrefault) up to DS_CHUNK_MAX
** come from slabs, and only once the pool's arenas hold DS_SLAB_MIN
** bytes: a small join takes no slab.  A slab is as large as what they
** hold then, from DS_SLAB_MIN up to 1/16 of the budget or DS_SLAB_MAX,
** so that the part of the newest slab not cut yet, the memory the pool
** holds beyond its chunks, is at most what they hold.  A chunk given back
** goes to the free list of its size, for the next chunk of that size,
** and its pages go back to the kernel: memory the budget no longer counts
** is not held.  Other chunks (smaller ones, one made for a wide row) are
** allocated and freed as without a pool.  Every chunk is charged to the
** budget as it is taken and given back, as allocated chunks are, so the
** operator's decisions to spill do not change.  A budget too small for a
** slab of DS_SLAB_MIN gets none.
**
** The pool belongs to the operator (dsPoolStart, dsPoolEnd), and is
** reached through its DsMem: the arenas made by dsArenaInitPool() use
** it, the operator's other arenas do not.  (A pointer in each arena
** would make it 8 bytes larger, and with it every buffer the operator
** charges for structures that hold an arena.)  A slab starts with a
** DsSlab; a chunk on a free list is linked through its DsChunk.pPrev.
*/
#define DS_POOL_MIN_CHUNK (64 * 1024)
#define DS_SLAB_MIN  (4 * 1024 * 1024)
#define DS_SLAB_MAX  (16 * 1024 * 1024)

struct DsSlab {
  DsSlab *pPrev;          /* the older slab */
  i64 nByte;              /* size of this allocation, header included */
};
#define DS_SLAB_HDR ((i64)((sizeof(DsSlab) + 7) & ~(size_t)7))

/* Start pool p for the arenas of pMem made by dsArenaInitPool(). */
void dsPoolStart(DsChunkPool *p, DsMem *pMem){
  i64 nMax = pMem->pConn ? pMem->pConn->nMemLimit / 16 : DS_SLAB_MAX;
  memset(p, 0, sizeof(*p));
  if( nMax > DS_SLAB_MAX ) nMax = DS_SLAB_MAX;
  p->nSlabMax = nMax>=DS_SLAB_MIN ? nMax : 0;
  assert( pMem->pPool==0 );
  pMem->pPool = p;
}

/* Free every slab of p, the pool of pMem.  Every chunk taken must have
** been given back. */
void dsPoolEnd(DsChunkPool *p, DsMem *pMem){
  assert( p->nTaken==0 );
  assert( pMem->pPool==p );
  while( p->pSlab ){
    DsSlab *pPrev = p->pSlab->pPrev;
    sqlite3_free(p->pSlab);
    p->pSlab = pPrev;
  }
  memset(p->apFree, 0, sizeof(p->apFree));
  pMem->pPool = 0;
}

/* The free list of chunks of n bytes, or -1 if such chunks are never cut
** from slabs. */
static int dsPoolClass(const DsChunkPool *p, i64 n){
  int i = 0;
  i64 m = DS_POOL_MIN_CHUNK;
  if( p->nSlabMax==0 ) return -1;
  while( m<n && i<DS_POOL_CLASSES-1 ){ m *= 2; i++; }
  return m==n ? i : -1;
}

/* Was pChunk cut from one of p's slabs?  (Compared as integers: C
** orders pointers into the same allocation only.) */
static int dsPoolOwns(const DsChunkPool *p, const DsChunk *pChunk){
  const DsSlab *pSlab;
  uintptr_t iChunk = (uintptr_t)pChunk;
  for(pSlab=p->pSlab; pSlab; pSlab=pSlab->pPrev){
    uintptr_t iSlab = (uintptr_t)pSlab;
    if( iChunk>iSlab && iChunk - iSlab < (uintptr_t)pSlab->nByte ) return 1;
  }
  return 0;
}

/* Cut n bytes from the newest slab, or from a new one; NULL if the pool
** holds too little yet for a slab, or on OOM. */
static DsChunk *dsPoolCut(DsChunkPool *p, i64 n){
  u8 *pChunk;
  if( p->pSlab==0 || p->iCut + n > p->pSlab->nByte ){
    i64 nSlab = p->nTaken;
    DsSlab *pSlab;
    if( nSlab < DS_SLAB_MIN ) return 0;
    if( nSlab > p->nSlabMax ) nSlab = p->nSlabMax;
    pSlab = sqlite3_malloc64((sqlite3_uint64)nSlab);
    if( pSlab==0 ) return 0;
    dsAdviseHugePages(pSlab, nSlab);
    pSlab->pPrev = p->pSlab;
    pSlab->nByte = nSlab;
    p->pSlab = pSlab;
    p->iCut = DS_SLAB_HDR;
  }
  pChunk = (u8 *)p->pSlab + p->iCut;
  p->iCut += n;
  return (DsChunk *)pChunk;
}

/* A chunk of n bytes from pMem's pool, charged to pMem, its pages made;
** NULL on OOM. */
static DsChunk *dsPoolTake(DsMem *pMem, i64 n){
  DsChunkPool *p = pMem->pPool;
  int iClass = dsPoolClass(p, n);
  DsChunk *pChunk = 0;
  if( iClass>=0 ){
    pChunk = p->apFree[iClass];
    if( pChunk ){
      p->apFree[iClass] = pChunk->pPrev;
    }else{
      pChunk = dsPoolCut(p, n);
    }
  }
  if( pChunk ){
    dsPrefault(pChunk, n);
    dsMemCharge(pMem, n);
  }else if( (pChunk = dsMallocToFill(pMem, n))==0 ){
    return 0;
  }
  p->nTaken += n;
  return pChunk;
}

/* Give back pChunk, of n bytes, taken by dsPoolTake(). */
static void dsPoolGive(DsMem *pMem, DsChunk *pChunk, i64 n){
  DsChunkPool *p = pMem->pPool;
  assert( p->nTaken>=n );
  p->nTaken -= n;
  if( dsPoolOwns(p, pChunk) ){
    int iClass = dsPoolClass(p, n);
    assert( iClass>=0 );
    dsMemCharge(pMem, -n);
    dsGiveBackPages(pChunk, n);
    pChunk->pPrev = p->apFree[iClass];
    p->apFree[iClass] = pChunk;
  }else{
    dsFree(pMem, pChunk);
  }
}

/* The first chunk: 4 KiB, or 1/256 of a small budget (an operator may
** keep dozens of arenas, one per partition), but not under 256 bytes. */
static i64 dsFirstChunk(const DsConn *pConn){
  i64 n = pConn ? pConn->nMemLimit / 256 : DS_CHUNK_MIN;
  if( n > DS_CHUNK_MIN ) n = DS_CHUNK_MIN;
  if( n < 256 ) n = 256;
  return n;
}

static const DsConn *dsArenaConn(const DsArena *p){
  return p->pMem ? p->pMem->pConn : 0;
}

void dsArenaInit(DsArena *p, DsMem *pMem){
  memset(p, 0, sizeof(*p));
  p->pMem = pMem;
  p->nNext = (u32)dsFirstChunk(dsArenaConn(p));
}

/* An arena of pMem whose chunks come from pMem's pool (dsPoolStart()),
** which must outlive them. */
void dsArenaInitPool(DsArena *p, DsMem *pMem){
  dsArenaInit(p, pMem);
  p->bPool = 1;
}

/* A new chunk of n bytes for arena p, charged; NULL on OOM. */
static DsChunk *dsArenaNewChunk(DsArena *p, i64 n){
  if( p->bPool ) return dsPoolTake(p->pMem, n);
  return dsMallocToFill(p->pMem, n);
}

/* Free pChunk, a chunk of arena p. */
static void dsArenaFreeChunk(DsArena *p, DsChunk *pChunk){
  if( p->bPool ){
    dsPoolGive(p->pMem, pChunk, pChunk->nByte);
  }else{
    dsFree(p->pMem, pChunk);
  }
}

/* Chunks stop growing at 1/16 of the budget, so that an arena that is
** reset keeps little and a small budget is not eaten by one chunk. */
static int dsChunkMayDouble(const DsConn *pConn, i64 nChunk){
  return nChunk < DS_CHUNK_MAX
      && nChunk < (pConn ? pConn->nMemLimit / 16 : DS_CHUNK_MAX);
}

#define DS_CHUNK_HDR ((i64)((sizeof(DsChunk) + 7) & ~(size_t)7))

/*
** The room a buffer makes in the budget for one row of nData bytes of
** values: what an arena may take to hold it.  A row wider than a regular
** chunk grows gets a chunk just its size; a narrower one may sit in a
** regular chunk up to twice its size, as chunks double (under 1 MiB a
** run reader holding one 33 KB row at a time held a 64 KiB chunk).  A
** row wider than the whole budget counts 0: room cannot be made for it
** (it is held once, past the limit), and counting it would shrink every
** run, merge and block after it to nothing (a 5 MB row among small ones
** under 1 MiB: sort.test 8.x).
*/
i64 dsRowRoom(DsMem *pMem, u32 nData){
  const DsConn *pConn = pMem->pConn;
  i64 n = (((i64)DS_ROW_SIZE(nData) + 7) & ~(i64)7) + DS_CHUNK_HDR;
  i64 nChunk;
  if( pConn && n > pConn->nMemLimit ) return 0;
  /* Asked for every row a sorter gathers: the size chunks grow to is
  ** worked out again only when the limit changed. */
  if( pConn==0 || pMem->nRoomLimit!=pConn->nMemLimit ){
    nChunk = dsFirstChunk(pConn);
    while( dsChunkMayDouble(pConn, nChunk) ) nChunk *= 2;
    pMem->nRoomChunk = nChunk;
    pMem->nRoomLimit = pConn ? pConn->nMemLimit : 0;
  }
  nChunk = pMem->nRoomChunk;
  if( n > nChunk ) return n;
  return 2*n < nChunk ? 2*n : nChunk;
}

/* The size of the chunk that holds n more bytes (a multiple of 8): the
** regular size, or just big enough for a row that does not fit in one
** (doubling up to it could take twice the row's size). */
static i64 dsArenaChunkFor(const DsArena *p, i64 n){
  return n > p->nNext - DS_CHUNK_HDR ? n + DS_CHUNK_HDR : p->nNext;
}

/*
** Start a new chunk able to hold at least n bytes (a multiple of 8) and
** allocate them from it: dsArenaAlloc() when the chunk is full.  NULL on
** OOM.  A current chunk that holds nothing (kept by a reset, too small
** for this row) is given back first: an arena that holds one row at a
** time would hold two chunks for it.
*/
void *dsArenaGrow(DsArena *p, i64 n){
  i64 nChunk = dsArenaChunkFor(p, n);
  i64 nHdr = DS_CHUNK_HDR;
  DsChunk *pNew;
  if( p->pChunk && p->pFree==(u8 *)p->pChunk + nHdr ){
    DsChunk *pEmpty = p->pChunk;
    p->pChunk = pEmpty->pPrev;
    p->nByte -= pEmpty->nByte;
    p->pFree = p->pEnd = 0;     /* no room left to allocate from, on OOM */
    dsArenaFreeChunk(p, pEmpty);
  }
  pNew = dsArenaNewChunk(p, nChunk);
  if( pNew==0 ) return 0;
  pNew->pPrev = p->pChunk;
  pNew->nByte = nChunk;
  p->pChunk = pNew;
  p->nByte += nChunk;
  p->pFree = (u8 *)pNew + nHdr;
  p->pEnd = (u8 *)pNew + nChunk;
  if( dsChunkMayDouble(dsArenaConn(p), p->nNext) ) p->nNext *= 2;
  p->pFree += n;
  return p->pFree - n;
}

/*
** Give arena p, empty, a chunk with room for an allocation of n bytes,
** which every reset keeps: an arena that holds one row at a time, none
** wider than n bytes, then never allocates again, so that a worker
** thread may fill it (a sorted run's reader: sort.c).
*/
int dsArenaReserve(DsArena *p, i64 n){
  i64 nChunk = ((n + 7) & ~(i64)7) + DS_CHUNK_HDR;
  assert( p->pChunk==0 && nChunk<=0xffffffff );
  if( nChunk > p->nNext ) p->nNext = (u32)nChunk;
  if( dsArenaGrow(p, 8)==0 ) return SQLITE_NOMEM;
  dsArenaReset(p);
  assert( p->pChunk!=0 && p->pEnd - p->pFree >= ((n + 7) & ~(i64)7) );
  return SQLITE_OK;
}

/* The bytes dsArenaAlloc(p, n) would take from the allocator: none if n
** fits in the current chunk, else the size of the chunk it would add (as
** dsArenaGrow() sizes it). */
i64 dsArenaWouldAlloc(const DsArena *p, i64 n){
  n = (n + 7) & ~(i64)7;
  if( p->pEnd - p->pFree >= n ) return 0;
  return dsArenaChunkFor(p, n);
}

/*
** Would n more bytes from arena p take the connection past its limit, or
** leave less than nReserve bytes under it?  Only when they need a new
** chunk, which may be 1/16 of the budget: a buffer that asks this first
** goes to disk before crossing the limit rather than after.
*/
int dsArenaWouldExceed(const DsArena *p, i64 n, i64 nReserve){
  const DsConn *pConn = p->pMem ? p->pMem->pConn : 0;
  i64 nChunk = dsArenaWouldAlloc(p, n);
  return pConn && nChunk>0
      && pConn->nMemUsed + nChunk + nReserve > pConn->nMemLimit;
}

/*
** Forget every allocation but keep the newest chunk of the regular size
** for reuse.  A chunk made larger than that for one oversized row is
** freed: kept, it would stay charged to the budget for as long as the
** arena lives, and every sort run or batch after it would shrink.
*/
void dsArenaReset(DsArena *p){
  DsChunk *pKeep = 0;
  DsChunk *pChunk = p->pChunk;
  while( pChunk ){
    DsChunk *pPrev = pChunk->pPrev;
    if( pKeep==0 && pChunk->nByte<=p->nNext ){
      pKeep = pChunk;
      pKeep->pPrev = 0;
    }else{
      p->nByte -= pChunk->nByte;
      dsArenaFreeChunk(p, pChunk);
    }
    pChunk = pPrev;
  }
  p->pChunk = pKeep;
  if( pKeep ){
    p->pFree = (u8 *)pKeep + DS_CHUNK_HDR;
    p->pEnd = (u8 *)pKeep + pKeep->nByte;
  }else{
    p->pFree = p->pEnd = 0;
  }
}

/* Free every chunk. */
void dsArenaClear(DsArena *p){
  while( p->pChunk ){
    DsChunk *pPrev = p->pChunk->pPrev;
    dsArenaFreeChunk(p, p->pChunk);
    p->pChunk = pPrev;
  }
  p->pFree = p->pEnd = 0;
  p->nByte = 0;
  p->nNext = (u32)dsFirstChunk(dsArenaConn(p));
}

/* Give back pLast, the most recent allocation, for the next one to use. */
void dsArenaUndo(DsArena *p, void *pLast){
  if( p->pChunk && (u8 *)pLast >= (u8 *)p->pChunk && (u8 *)pLast < p->pFree ){
    p->pFree = pLast;
  }
}
