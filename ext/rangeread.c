/*
** rangeread.c: reading a table input on worker threads, in ranges of
** rowids, each worker on a read-only connection of its own.
**
** dsReaderOpen() is where every operator opens the reader of an input.
** It always prepares the serial reader (reader.c) on the caller's
** connection first: that runs the caller's authorizer and gives the same
** errors whatever happens next.  Then, for an input that is a plain rowid
** table of an on-disk database, with ds_config('threads') above 1, it tries
** to read that table in parallel instead:
**
**   1. On the caller's connection, a statement reads the smallest and the
**      largest rowid, and is left on that row until the read is over: an
**      active statement holds the caller's read lock, so that in a
**      rollback-journal database no one can commit until the workers are
**      done (a commit needs an exclusive lock).
**
**   2. N = threads - 1 extra connections are opened on the same file with
**      the same VFS, read-only, and each begins a transaction and takes
**      its read lock at once.  Any failure (a lock refused, a schema the
**      new connection cannot parse, a collation only the caller has) means
**      the serial reader is used after all; nothing has been read yet.
**      Each reads the file through memory mapping (PRAGMA mmap_size, up
**      to SQLite's own limit): a page is then read where the kernel keeps
**      it, not copied into the connection's cache by a pread() call, which
**      took a tenth of a 10M-row join's CPU time.  Mapping is safe here
**      because of the rule below: no one can commit, and so shorten the
**      file, while the caller holds its read lock.
**
**   3. The rowids are cut into chunks, which the workers claim in order as
**      they come to them, each reading its chunk through a reader of its
**      own (reader.c, on its connection):
**
**          SELECT * FROM main."t" WHERE _rowid_ BETWEEN ?2 AND ?3
**
**      Each worker makes rows (ds_input_row(), the same row maker) into
**      batches, a few of them ahead, and the caller hands the batches out
**      in chunk order.  The caller reads too: when the batch it needs is
**      not ready it claims the next chunk itself and reads a batch of it
**      on its own connection (dsRangeAwait), so that every thread,
**      the caller's included, does a share that follows its speed.  The
**      operator so receives exactly the rows, in exactly the order, that
**      the serial reader would give it (a plain scan goes in rowid order):
**      results, their order and the statistics do not depend on `threads`.
**
**   4. Rows are handed out in one of two ways.  Copied, one batch at a
**      time, into the operator's arena (dsRangeBatch); or, for an operator
**      that gives the reader a stage (DsRowStage: a broadcast hash join's
**      probe), the stage runs on each batch on the thread that read it and
**      the caller is handed what it kept, in place (dsRangeStaged): the
**      operator's work per row is then spread over the threads as well.
**
** This is allowed only where the extra connections are certain to see the
** rows the caller's statement sees (dsRangeRefusal): the caller has no
** write transaction open on that database, the database is a file in a
** rollback-journal mode (in WAL mode a commit can land between the
** caller's snapshot and the workers' reads, and Debian's SQLite has no
** sqlite3_snapshot_open() to pin it), opened with locking (not nolock or
** immutable, not through a VFS that does not lock); and the caller's
** connection must read the table as a fresh one would: the same program
** (its authorizer may hide a column, reverse_unordered_selects turn the
** scan around: dsRangeSameProgram), no VIRTUAL generated column (computed
** with the caller's functions), no covering index SQLite would read it
** through in another order (dsRangeUsesIndex).  Views, queries, temp
** and in-memory tables, tables without rowid and virtual tables are read
** by the caller.  The reason the caller read an input is kept for
** ds_last_stats() (DsSource.zRead).
**
** Memory.  The batches read ahead, the caller's slot's included, take at
** most 1/16 of memory_limit in all (at least two 4 KiB batches per
** thread), and a stage's results 32 bytes per row a batch can hold.  They
** are not charged to the operator: its statistics and its decisions to
** spill stay those of a serial run, which leaves a quarter of the budget
** free.
**
** Stopping.  While the caller waits for a batch it checks for an interrupt
** (the ticker of interrupt.c, which also runs the progress handler) every
** DS_RANGE_WAIT_MS.  Closing the reader, on every path (the end, an error,
** an interrupt, a LIMIT, a reset or finalized statement), stops the
** workers: sqlite3_interrupt() on their connections ends a step at once,
** and a worker waiting for room sees the stop flag; all are joined before
** their connections are closed.  No worker outlives its reader.  (An
** interrupt that lands as a worker starts a chunk is cleared by SQLite,
** which clears it when a statement starts on an idle connection: that
** worker then reads one more batch, at most nBatchRow rows, before it
** sees the flag.  sqlite3_progress_handler() would close that gap, but
** builds may omit it: tests/clients.test keeps such calls out.)
**
** Test hook.  In the test program alone (tests/testfixture.c,
** -DDS_TEST_HOOKS; never in the shared library), dsRangeTestFault() makes
** the N-th pthread_create() of a reader from that moment fail with EAGAIN
** (and every later one, bPersist), so that tests reach the fallback to
** the caller's reader (bSerial), that of a worker started before another
** failed included.  An atomic countdown, as spill.c's faults: one setting
** per process.  The thread of a count made ahead has a switch of its own
** (dsRangeCountTest), which also tells how many such counts were made.
*/
#include "dataset_int.h"

#ifndef DS_OMIT_THREADS
#include <pthread.h>
#include <errno.h>
#endif

/* How often the caller waiting for a worker checks for an interrupt. */
#define DS_RANGE_WAIT_MS 20

/* Batches per worker (fewer under a small memory_limit: dsRangeShape),
** and the batches a chunk of rowids fills. */
#define DS_RANGE_QUEUE 64
#define DS_RANGE_CHUNK_BATCHES 8

/* Chunks at most: the rowids are cut into no more pieces than this. */
#define DS_RANGE_MAX_CHUNKS 65536

/* DsRangeRead.aOwner[]: a chunk not claimed yet; one the caller reads. */
#define DS_RANGE_NONE (-1)
#define DS_RANGE_MINE (-2)

#ifdef DS_TEST_HOOKS
#include <stdatomic.h>
static atomic_int dsRangeFaultCountdown;  /* creations until it; 0: none */
static atomic_int dsRangeFaultPersist;    /* every one from then on fails */
static atomic_int dsRangeFaultFailing;    /* persisting: failing now */
static atomic_int dsRangeFaultFailed;     /* failed since armed */

/* Arm (nCountdown>0) or disarm; the creations failed until now. */
int dsRangeTestFault(int nCountdown, int bPersist){
  int nPrev;
  atomic_store(&dsRangeFaultCountdown, 0);
  atomic_store(&dsRangeFaultFailing, 0);
  atomic_store(&dsRangeFaultPersist, bPersist);
  nPrev = atomic_exchange(&dsRangeFaultFailed, 0);
  if( nCountdown>0 ) atomic_store(&dsRangeFaultCountdown, nCountdown);
  return nPrev;
}

/* Tables counted ahead (dsRangeCountAhead) since the process started,
** whose counts were made.  With bNoThread set (1), or cleared (0), no
** count's thread can start from now on, as if pthread_create() failed;
** -1 leaves that as it is. */
static atomic_int dsRangeCounted, dsRangeCountNoThread;
void dsRangeCountTest(int bNoThread, int *pnCounted){
  if( bNoThread>=0 ) atomic_store(&dsRangeCountNoThread, bNoThread);
  *pnCounted = atomic_load(&dsRangeCounted);
}
# define dsRangeCountMade() atomic_fetch_add(&dsRangeCounted, 1)
# define dsRangeCountThreadCreate(pT, x, pArg) \
  (atomic_load(&dsRangeCountNoThread) ? EAGAIN : pthread_create(pT, 0, x, pArg))
#else
# define dsRangeCountMade() ((void)0)
# define dsRangeCountThreadCreate(pT, x, pArg) pthread_create(pT, 0, x, pArg)
#endif

#ifndef DS_OMIT_THREADS

#ifdef DS_TEST_HOOKS
static int dsRangeThreadCreate(pthread_t *pThread, void *(*x)(void *),
                               void *pArg){
  if( atomic_load(&dsRangeFaultFailing)
   || (atomic_load(&dsRangeFaultCountdown)>0
       && atomic_fetch_sub(&dsRangeFaultCountdown, 1)==1) ){
    if( atomic_load(&dsRangeFaultPersist) ){
      atomic_store(&dsRangeFaultFailing, 1);
    }
    atomic_fetch_add(&dsRangeFaultFailed, 1);
    return EAGAIN;
  }
  return pthread_create(pThread, 0, x, pArg);
}
#else
# define dsRangeThreadCreate(pT, x, pArg) pthread_create(pT, 0, x, pArg)
#endif

typedef struct DsRangeRead DsRangeRead;

typedef struct DsRangeWorker DsRangeWorker;

/* Rows a worker made of one piece of a chunk. */
typedef struct DsRangeBatch DsRangeBatch;
struct DsRangeBatch {
  DsRangeBatch *pNext;    /* in its worker's queue or free list */
  DsRangeWorker *pWorker; /* whose it is */
  DsArena arena;          /* the rows */
  DsRow **aRow;           /* them, in order */
  i64 *aRowAt;            /* rows the worker read up to each (a filter's
                          ** rejects too), from the batch's start */
  int nRow;
  DsStaged *aStaged;      /* what the operator's stage kept of them */
  int nStaged;
  i64 nRead;              /* rows the worker read for the batch in all */
  int bEnd;               /* the chunk ends here (a batch of no rows) */
  int rc;                 /* the error that stopped the worker, or 0 */
  char *zErr;             /* its message, or NULL */
  int bSqlite;            /* rc is SQLite's own error (DsConn.rcSqlite) */
};

/* Batches in a line, first in first out: a worker's filled batches, as
** the caller takes them in order, and its free ones (dsBatchPush). */
typedef struct DsBatchQueue DsBatchQueue;
struct DsBatchQueue {
  DsRangeBatch *pHead;
  DsRangeBatch *pTail;
};

struct DsRangeWorker {
  DsRangeRead *pRead;
  int iWorker;            /* or DS_RANGE_MINE */
  DsConn conn;            /* its connection, as its reader sees it (the
                          ** caller's slot: no connection, a budget) */
  DsConn *pReadConn;      /* the connection its reader reads on */
  DsMem mem;              /* its batches (charged to conn alone) */
  DsSource *pSrc;         /* its reader */
  pthread_t thread;
  int bThread;            /* thread is running (to be joined) */
  int bExited;            /* it returned (under the mutex) */
  i64 iStarted;           /* the last chunk it began to read, or -1 */
  DsRangeBatch *aBatch;   /* all its batches */
  DsBatchQueue free;      /* to fill, the longest free first */
  DsBatchQueue filled;    /* filled, oldest first */
};

struct DsRangeRead {
  DsSource base;
  DsConn *pConn;          /* the caller's */
  const char *zFunc;
  sqlite3_stmt *pHold;    /* on the caller's connection, kept on its row */
  i64 iMin;               /* smallest rowid */
  u64 nLast;              /* largest rowid, less iMin */
  u64 nStep;              /* rowids per chunk */
  i64 nChunk;
  int nWorker;
  DsRangeWorker *aWorker;
  DsRangeWorker *pMine;   /* the caller's slot: chunks it reads itself */
  int *aOwner;            /* the reader of each chunk, DS_RANGE_NONE yet */
  i64 iNextClaim;         /* chunks before it have a reader */
  i64 iMineChunk;         /* the chunk the caller is reading, or -1 */
  int rcMine;             /* the error in starting it, or SQLITE_OK */
  int nQueue;             /* batches per worker */
  int nBatchRow;          /* a batch holds at most this many rows */
  i64 nBatchByte;         /* or about this many bytes */
  pthread_mutex_t mutex;
  pthread_cond_t filled;  /* a worker filled a batch */
  pthread_cond_t freed;   /* the caller gave a batch back; or stop */
  int bMutex;             /* mutex and conditions initialized */
  int bStarted;           /* the threads were started (at the first read) */
  int bSerial;            /* they could not be: pSerial reads instead */
  int bKeysFirst;         /* the caller's reader would read keys first */
  DsSource *pSerial;      /* the caller's own reader: its sample of keys
                          ** decides keys first, as it would serially */
  const DsRowStage *pStage;  /* the operator's work on the rows, or NULL */
  DsMem mem;              /* the caller's batch when it reads pSerial */
  DsArena serialArena;    /* for a stage (dsRangeStagedSerial) */
  DsRow **aSerialRow;
  DsStaged *aSerialStaged;
  i64 nRowDone;           /* rows read of the batches before pCur */
  int bStop;              /* workers must stop */
  char *zCountBody;       /* the table on a worker's connection, to count */
  i64 nCountCap;          /* count up to this many rows (0: all) */
  i64 nCounted;           /* the count, -1 if it failed */
  int bCountAtLeast;      /* nCounted reached nCountCap */
  int bCounting;          /* the first worker's thread counts (to join) */
  int bCountDone;         /* it has (under the mutex) */
  i64 iChunk;             /* the chunk being handed out */
  DsRangeBatch *pCur;     /* its batch being handed out, or NULL */
  int iCur;               /* the next row of pCur */
  DsTicker tick;          /* the caller's interrupt checks while waiting */
};

/* The rowids of chunk k. */
static void dsRangeChunk(const DsRangeRead *p, i64 k, i64 *piLo, i64 *piHi){
  u64 nOff = (u64)k * p->nStep;
  u64 nEnd = nOff + p->nStep - 1;
  assert( k>=0 && k<p->nChunk && nOff<=p->nLast );
  if( nEnd>p->nLast || nEnd<nOff ) nEnd = p->nLast;
  /* Two's complement: iMin + an offset up to nLast lands on a rowid. */
  *piLo = (i64)((u64)p->iMin + nOff);
  *piHi = (i64)((u64)p->iMin + nEnd);
}

/*
** Add b at the end of q; take the batch at its head (q not empty).  The
** mutex is held, or the slot is the caller's own.
**
** Free batches too are filled in the order they were freed.  The batch
** the caller has just handed back is the one whose rows it still holds
** in its cache; filled again at once (last freed, first filled), its
** every line would be written while the caller's core holds a copy.
** Filled last, DS_RANGE_QUEUE batches later, most of those copies are
** gone: uni 1Mx10M's broadcast join took 12% less time with threads 2 so
** (docs/performance.md).
*/
static void dsBatchPush(DsBatchQueue *q, DsRangeBatch *b){
  b->pNext = 0;
  if( q->pTail ) q->pTail->pNext = b;
  else q->pHead = b;
  q->pTail = b;
}
static DsRangeBatch *dsBatchPop(DsBatchQueue *q){
  DsRangeBatch *b = q->pHead;
  assert( b!=0 );
  q->pHead = b->pNext;
  if( q->pHead==0 ) q->pTail = 0;
  b->pNext = 0;
  return b;
}

/* A batch to fill for worker w with rows of its chunk k; NULL once the
** workers must stop, or, with *pbLost, when the caller took chunk k over
** before w began it (dsRangeAwait). */
static DsRangeBatch *dsRangeTakeFree(DsRangeRead *p, DsRangeWorker *w, i64 k,
                                     int *pbLost){
  DsRangeBatch *b = 0;
  pthread_mutex_lock(&p->mutex);
  while( !p->bStop && w->free.pHead==0 ){
    pthread_cond_wait(&p->freed, &p->mutex);
  }
  *pbLost = p->aOwner[k]!=w->iWorker;
  if( !p->bStop && !*pbLost ){
    b = dsBatchPop(&w->free);
    w->iStarted = k;
  }
  pthread_mutex_unlock(&p->mutex);
  return b;
}

/* Worker w filled b: queue it for the caller. */
static void dsRangePut(DsRangeRead *p, DsRangeWorker *w, DsRangeBatch *b){
  pthread_mutex_lock(&p->mutex);
  dsBatchPush(&w->filled, b);
  pthread_cond_signal(&p->filled);
  pthread_mutex_unlock(&p->mutex);
}

/* Fill b from w's reader; the chunk ends with a batch of no rows. */
static int dsRangeFill(DsRangeRead *p, DsRangeWorker *w, DsRangeBatch *b){
  int rc, i;
  i64 nBefore = w->pSrc->nRow;
  dsArenaReset(&b->arena);
  dsReaderCountRows(w->pSrc, b->aRowAt);
  rc = dsSourceBatch(w->pSrc, &b->arena, b->aRow, p->nBatchRow,
                     p->nBatchByte, 0, &b->nRow);
  b->nRead = w->pSrc->nRow - nBefore;
  for(i=0; i<b->nRow; i++) b->aRowAt[i] -= nBefore;
  b->bEnd = rc!=SQLITE_OK || b->nRow==0;
  b->nStaged = 0;
  if( p->pStage && rc==SQLITE_OK && b->nRow>0 ){
    b->nStaged = p->pStage->xBatch(p->pStage, b->aRow, b->nRow, b->aStaged);
  }
  if( rc!=SQLITE_OK ){
    const char *zMsg = w->pSrc->zErr;
    b->rc = rc;
    b->bSqlite = w->pReadConn->rcSqlite!=0;
    /* The caller's own read: the code goes with the batch, and is the
    ** connection's again only if the batch is handed out (dsRangeFailed),
    ** not if the statement ends before its turn. */
    if( w->pReadConn==p->pConn ) p->pConn->rcSqlite = 0;
    if( rc!=SQLITE_NOMEM ){
      b->zErr = sqlite3_mprintf("%s", zMsg ? zMsg : sqlite3_errstr(rc));
    }
  }
  return rc;
}

/* A worker: its chunks in order, each read whole into batches. */
static void *dsRangeWorkerRun(DsRangeWorker *w);

/* A worker thread: its chunks, then a word to the caller that it ended
** (a caller waiting for one of its batches then stops waiting). */
static void *dsRangeWorkerMain(void *pArg){
  DsRangeWorker *w = (DsRangeWorker *)pArg;
  DsRangeRead *p = w->pRead;
  dsRangeWorkerRun(w);
  pthread_mutex_lock(&p->mutex);
  w->bExited = 1;
  pthread_cond_broadcast(&p->filled);
  pthread_mutex_unlock(&p->mutex);
  return 0;
}

/* The next chunk no one reads yet, now w's; -1 if none is left. */
static i64 dsRangeClaim(DsRangeRead *p, DsRangeWorker *w){
  i64 k = -1;
  pthread_mutex_lock(&p->mutex);
  if( !p->bStop && p->iNextClaim<p->nChunk ){
    k = p->iNextClaim++;
    p->aOwner[k] = w->iWorker;
  }
  pthread_mutex_unlock(&p->mutex);
  return k;
}

static void *dsRangeWorkerRun(DsRangeWorker *w){
  DsRangeRead *p = w->pRead;
  i64 k;
  while( (k = dsRangeClaim(p, w))>=0 ){
    i64 iLo, iHi;
    int rc;
    dsRangeChunk(p, k, &iLo, &iHi);
    rc = dsReaderSetRange(w->pSrc, iLo, iHi);
    for(;;){
      int bLost;
      DsRangeBatch *b = dsRangeTakeFree(p, w, k, &bLost);
      if( bLost ) break;
      if( b==0 ) return 0;
      if( rc==SQLITE_OK ){
        rc = dsRangeFill(p, w, b);
      }else{
        b->rc = rc;
        b->bEnd = 1;
        b->nRow = 0;
        b->nRead = 0;
      }
      dsRangePut(p, w, b);
      if( rc!=SQLITE_OK ) return 0;
      if( b->bEnd ) break;
    }
  }
  return 0;
}

/* Stop and join every worker (any order of their states). */
static void dsRangeStop(DsRangeRead *p){
  int i;
  if( !p->bMutex || p->aWorker==0 ) return;
  pthread_mutex_lock(&p->mutex);
  p->bStop = 1;
  pthread_cond_broadcast(&p->freed);
  pthread_mutex_unlock(&p->mutex);
  for(i=0; i<p->nWorker; i++){
    if( p->aWorker[i].conn.db ) sqlite3_interrupt(p->aWorker[i].conn.db);
  }
  for(i=0; i<p->nWorker; i++){
    if( p->aWorker[i].bThread ){
      pthread_join(p->aWorker[i].thread, 0);
      p->aWorker[i].bThread = 0;
    }
  }
}

static void dsRangeWorkerFree(DsRangeRead *p, DsRangeWorker *w){
  int i;
  (void)p;
  if( w->aBatch ){
    for(i=0; i<p->nQueue; i++){
      dsArenaClear(&w->aBatch[i].arena);
      sqlite3_free(w->aBatch[i].aRow);
      sqlite3_free(w->aBatch[i].aRowAt);
      sqlite3_free(w->aBatch[i].aStaged);
      sqlite3_free(w->aBatch[i].zErr);
    }
    sqlite3_free(w->aBatch);
  }
  if( w->pSrc ) w->pSrc->xClose(w->pSrc);
  if( w->conn.db ) sqlite3_close_v2(w->conn.db);
}

static void dsRangeClose(DsSource *pSrc){
  DsRangeRead *p = (DsRangeRead *)pSrc;
  int i;
  dsRangeStop(p);
  for(i=0; p->aWorker && i<p->nWorker; i++){
    dsRangeWorkerFree(p, &p->aWorker[i]);
  }
  if( p->pMine ) dsRangeWorkerFree(p, p->pMine);
  sqlite3_free(p->pMine);
  sqlite3_free(p->aWorker);
  sqlite3_free(p->aOwner);
  if( p->bMutex ){
    pthread_cond_destroy(&p->filled);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->mutex);
  }
  sqlite3_finalize(p->pHold);
  if( p->pSerial ) p->pSerial->xClose(p->pSerial);
  dsArenaClear(&p->serialArena);
  sqlite3_free(p->aSerialRow);
  sqlite3_free(p->aSerialStaged);
  dsTickerFinish(&p->tick);
  sqlite3_free(p->base.zErr);
  sqlite3_free(p->base.zRead);
  sqlite3_free(p->zCountBody);
  sqlite3_free(p);
}

/* Give the batch being handed out back to its worker. */
static void dsRangeRelease(DsRangeRead *p){
  DsRangeBatch *b = p->pCur;
  DsRangeWorker *w;
  if( b==0 ) return;
  w = b->pWorker;
  p->pCur = 0;
  p->nRowDone += b->nRead;
  p->base.nRow = p->nRowDone;
  pthread_mutex_lock(&p->mutex);
  dsBatchPush(&w->free, b);
  pthread_cond_broadcast(&p->freed);
  pthread_mutex_unlock(&p->mutex);
}

/* Wait up to DS_RANGE_WAIT_MS on the filled condition (mutex held). */
static void dsRangeWait(DsRangeRead *p){
  dsCondWaitMs(&p->filled, &p->mutex, DS_RANGE_WAIT_MS);
}

/*
** The caller's own share of the reading.  Rather than wait for a worker,
** the caller reads chunks too, on its own connection (its reader of the
** same ranges, which sees what its statement sees), into batches of its
** own slot that it hands out in their turn like a worker's.  A chunk the
** caller claimed is read a batch at a time: ahead of its turn while the
** caller would otherwise wait, and on demand once its turn comes; so the
** slot never needs more batches than it has, and the work spreads over
** every thread, the caller's too, whatever each costs.
*/

/* Read the next batch of the caller's chunk into its slot's queue.  An
** error travels in the batch, as a worker's does; the interrupt checks of
** the caller's work come back. */
static int dsRangeMineRead(DsRangeRead *p){
  DsRangeWorker *m = p->pMine;
  DsRangeBatch *b;
  assert( m->free.pHead!=0 && p->iMineChunk>=0 );
  b = dsBatchPop(&m->free);
  if( p->rcMine==SQLITE_OK ){
    dsRangeFill(p, m, b);
  }else{
    b->rc = p->rcMine;
    b->bEnd = 1;
    b->nRow = b->nStaged = 0;
    b->nRead = 0;
  }
  if( b->bEnd ) p->iMineChunk = -1;
  dsBatchPush(&m->filled, b);
  /* Reading is the caller's work now: it checks for interrupts as it goes. */
  return dsTickerTick(&p->tick, (u32)b->nRead * DS_TICK_ROW);
}

/* The caller is to read chunk k (mutex held). */
static void dsRangeMineStart(DsRangeRead *p, i64 k){
  i64 iLo, iHi;
  assert( p->iMineChunk<0 );
  p->aOwner[k] = DS_RANGE_MINE;
  p->iMineChunk = k;
  dsRangeChunk(p, k, &iLo, &iHi);
  p->rcMine = dsReaderSetRange(p->pMine->pSrc, iLo, iHi);
}

/* Claim chunk k, the next no one reads, for the caller (mutex held). */
static void dsRangeMineClaim(DsRangeRead *p, i64 k){
  assert( k==p->iNextClaim );
  p->iNextClaim++;
  dsRangeMineStart(p, k);
}

/* The next filled batch of the chunk being handed out, reading it or
** others meanwhile, or waiting for it: SQLITE_OK with *pb set, or an
** interrupt. */
static int dsRangeAwait(DsRangeRead *p, DsRangeBatch **pb){
  DsRangeWorker *m = p->pMine;
  i64 k = p->iChunk;
  for(;;){
    DsRangeWorker *w;
    int bWork = 0;
    int bReady;
    pthread_mutex_lock(&p->mutex);
    if( p->aOwner[k]==DS_RANGE_NONE ){
      /* No worker has come to it yet: the caller reads it. */
      dsRangeMineClaim(p, k);
    }
    if( p->aOwner[k]==DS_RANGE_MINE ){
      pthread_mutex_unlock(&p->mutex);
      if( m->filled.pHead==0 ){
        int rc = dsRangeMineRead(p);
        if( rc!=SQLITE_OK ) return rc;
      }
      *pb = dsBatchPop(&m->filled);
      return SQLITE_OK;
    }
    w = &p->aWorker[p->aOwner[k]];
    if( w->filled.pHead ){
      *pb = dsBatchPop(&w->filled);
      pthread_mutex_unlock(&p->mutex);
      return SQLITE_OK;
    }
    if( w->bExited || p->bStop ){
      /* Nothing more will come: the reader was stopped, or read past
      ** an error it reported. */
      pthread_mutex_unlock(&p->mutex);
      return SQLITE_MISUSE;
    }
    if( w->iStarted<k && p->iMineChunk<0 && m->filled.pHead==0
     && m->free.pHead ){
      /* Its worker claimed it but has not begun it (it may not even have
      ** a core just now): rather than wait, the caller reads it, and the
      ** worker, finding it gone, claims another (dsRangeTakeFree).  Only
      ** with nothing of its own queued: the caller's batches go out in
      ** the order it read them. */
      dsRangeMineStart(p, k);
      pthread_mutex_unlock(&p->mutex);
      continue;
    }
    if( m->free.pHead ){
      if( p->iMineChunk<0 && p->iNextClaim<p->nChunk ){
        dsRangeMineClaim(p, p->iNextClaim);
      }
      bWork = p->iMineChunk>=0;
    }
    if( !bWork ) dsRangeWait(p);
    bReady = w->filled.pHead!=0;
    pthread_mutex_unlock(&p->mutex);
    if( bWork || !bReady ){
      int rc = bWork ? dsRangeMineRead(p) : dsTickerCheck(&p->tick);
      if( rc!=SQLITE_OK ) return rc;
    }
  }
}

/* A worker's error, as the reader's: its message where the operator
** looks for it. */
static int dsRangeFailed(DsRangeRead *p, DsRangeBatch *b){
  int rc = b->rc;
  sqlite3_free(p->base.zErr);
  p->base.zErr = 0;
  if( rc==SQLITE_NOMEM ) return rc;
  p->base.zErr = sqlite3_mprintf("%s%s",
                                 b->zErr ? b->zErr : sqlite3_errstr(rc),
                                 b->pWorker==p->pMine ? ""
                                 : " (a read connection)");
  /* SQLite's own error in reading the input keeps its code, as in the
  ** caller's own reader (dsStepInput); any other is the extension's own,
  ** and fails the statement alone (errors.c). */
  if( b->bSqlite ){
    dsSqliteError(p->pConn, rc);
  }else if( rc!=SQLITE_INTERRUPT ){
    rc = SQLITE_ERROR;
  }
  return p->base.zErr ? rc : SQLITE_NOMEM;
}

/* Make p->pCur a batch with rows to hand out: SQLITE_OK, with p->pCur
** NULL at the end of the input; or an error. */
static int dsRangeNextBatch(DsRangeRead *p){
  dsRangeRelease(p);
  while( p->iChunk<p->nChunk ){
    DsRangeBatch *b = 0;
    int rc = dsRangeAwait(p, &b);
    if( rc!=SQLITE_OK ) return rc;
    if( b->bEnd ) p->iChunk++;
    p->pCur = b;
    p->iCur = 0;
    if( b->rc ) return dsRangeFailed(p, b);
    if( b->nRow>0 ){
      if( p->pConn->pProgress ) dsProgressAdvance(p->pConn->pProgress);
      return SQLITE_OK;
    }
    dsRangeRelease(p);
  }
  return SQLITE_OK;
}

/*
** Start the workers, at the first read: a reader opened for later (the
** probe side, read once the build side is in) costs no CPU meanwhile, and
** keys first (dsRangeKeysFirst) can still be decided.  If a thread cannot
** be started, nothing has been read yet: the caller's own reader reads
** the input instead, and the statistics say so.
*/
static int dsRangeStartThreads(DsRangeRead *p){
  int i;
  p->bStarted = 1;
  for(i=0; i<p->nWorker; i++){
    DsRangeWorker *w = &p->aWorker[i];
    if( dsRangeThreadCreate(&w->thread, dsRangeWorkerMain, w)!=0 ) break;
    w->bThread = 1;
  }
  if( i<p->nWorker ){
    dsRangeStop(p);
    sqlite3_free(p->base.zRead);
    p->base.zRead = sqlite3_mprintf("by the caller: threads could not be "
                                    "started");
    p->base.nWorker = 0;
    p->bSerial = 1;
    if( p->base.zRead==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/*
** Counting ahead.  OPTIMIZER_CHOOSES counts the rows of both tables of a
** join before it reads either (operator.c, dsCountSides): one after the
** other on the caller's connection, they took about a sixth of uni
** 1Mx1M's join.  A table read in rowid ranges can be counted on its first
** worker's connection instead, which sees the rows the caller sees and
** maps the file (so the pages it counts are mapped for the reading), by
** the thread that will read it later: both tables at once, the caller
** waiting.  The worker makes the count the caller would
** (dsInputEstimateRows), and is joined when the count is wanted, before
** any reading starts; the reading starts the thread afresh.  A count
** that fails there is made again by the caller, so the figures never
** depend on threads.
*/
static void *dsRangeCountMain(void *pArg){
  DsRangeRead *p = (DsRangeRead *)pArg;
  DsInput in;
  i64 nRow = -1;
  int bAtLeast = 0;
  int rc;
  memset(&in, 0, sizeof(in));
  in.zBody = p->zCountBody;
  in.bPlainScan = 1;
  rc = dsInputEstimateRows(&p->aWorker[0].conn, &in, p->nCountCap,
                           p->nCountCap>0, &nRow, &bAtLeast);
  pthread_mutex_lock(&p->mutex);
  p->nCounted = rc==SQLITE_OK ? nRow : -1;
  p->bCountAtLeast = bAtLeast;
  p->bCountDone = 1;
  pthread_cond_signal(&p->filled);
  pthread_mutex_unlock(&p->mutex);
  return 0;
}

/* Start counting the table on the first worker's thread: 1 if it runs. */
static int dsRangeCountAhead(DsRangeRead *p, i64 nCap){
  DsRangeWorker *w = p->aWorker;
  if( p->bStarted || p->bCounting || p->nWorker<1 ) return 0;
  assert( !w->bThread && p->bMutex );
  p->nCountCap = nCap;
  p->bCountDone = 0;
  if( dsRangeCountThreadCreate(&w->thread, dsRangeCountMain, p)!=0 ){
    return 0;
  }
  w->bThread = 1;
  p->bCounting = 1;
  return 1;
}

/* Wait for the count, checking for an interrupt as a read would; an
** interrupt stops the count too. */
static int dsRangeCountWait(DsRangeRead *p, i64 *pnRow, int *pbAtLeast){
  DsRangeWorker *w = p->aWorker;
  int rc = SQLITE_OK;
  if( !p->bCounting ) return SQLITE_OK;
  pthread_mutex_lock(&p->mutex);
  while( !p->bCountDone ){
    dsRangeWait(p);
    if( !p->bCountDone && rc==SQLITE_OK ){
      pthread_mutex_unlock(&p->mutex);
      rc = dsTickerCheck(&p->tick);
      if( rc!=SQLITE_OK ) sqlite3_interrupt(w->conn.db);
      pthread_mutex_lock(&p->mutex);
    }
  }
  pthread_mutex_unlock(&p->mutex);
  pthread_join(w->thread, 0);
  w->bThread = 0;
  p->bCounting = 0;
  if( rc==SQLITE_OK ){
    *pnRow = p->nCounted;
    *pbAtLeast = p->bCountAtLeast;
    if( *pnRow>=0 ) dsRangeCountMade();
  }
  return rc;
}

/*
** Keys first: decided on the caller's own reader by its sample of keys,
** as a serial read would decide it, so that the statistics say the same.
** The workers make every row, and the filter of each batch is applied as
** the rows are handed out (dsRangeBatch), as ds_input_key() would apply
** it: a filter is the operator's, and may change between batches (a
** partition spilled while the probe side is read), so no worker sees it.
*/
static int dsRangeKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                            int *pbKeysFirst){
  DsRangeRead *p = (DsRangeRead *)pSrc;
  int rc = SQLITE_OK;
  if( !p->bStarted && !p->bKeysFirst ){
    rc = dsSourceKeysFirst(p->pSerial, pFilter, &p->bKeysFirst);
  }
  *pbKeysFirst = p->bKeysFirst;
  return rc;
}

/* The operator is about to free what it gave the source (the filter of
** keys first): no worker may use it any more. */
static void dsRangeStopSource(DsSource *pSrc){
  dsRangeStop((DsRangeRead *)pSrc);
}

/* A batch of the caller's own reader, where the threads could not be
** started: its count of rows and its error are the reader's. */
static int dsRangeSerialBatch(DsRangeRead *p, DsArena *pArena, DsRow **aRow,
                              int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                              int *pnRow){
  int rc = dsSourceBatch(p->pSerial, pArena, aRow, nMax, nMaxByte, pFilter,
                         pnRow);
  p->base.nRow = p->pSerial->nRow;
  if( rc!=SQLITE_OK && p->pSerial->zErr && p->base.zErr==0 ){
    p->base.zErr = sqlite3_mprintf("%s", p->pSerial->zErr);
  }
  return rc;
}

/* Up to nMax rows (fewer once pArena holds nMaxByte bytes), copied from
** the workers' batches through pFilter; *pnRow 0 at the end. */
static int dsRangeBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow,
                        int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                        int *pnRow){
  DsRangeRead *p = (DsRangeRead *)pSrc;
  int n = 0;
  *pnRow = 0;
  assert( p->pStage==0 );
  if( !p->bStarted ){
    int rc = dsRangeStartThreads(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( p->bSerial ){
    return dsRangeSerialBatch(p, pArena, aRow, nMax, nMaxByte, pFilter,
                              pnRow);
  }
  while( n<nMax && (n==0 || dsArenaUsed(pArena)<nMaxByte) ){
    const DsRow *pRow;
    if( p->pCur==0 || p->iCur>=p->pCur->nRow ){
      int rc = dsRangeNextBatch(p);
      if( rc!=SQLITE_OK ) return rc;
      if( p->pCur==0 ) break;
    }
    /* Counted as the caller's reader counts: every row read up to the
    ** last one handed out, those a filter dropped too. */
    p->base.nRow = p->nRowDone + p->pCur->aRowAt[p->iCur];
    pRow = p->pCur->aRow[p->iCur++];
    if( dsRowPasses(pFilter, pRow) ){
      DsRow *pCopy = dsRowCopy(pArena, pRow);
      if( pCopy==0 ) return SQLITE_NOMEM;
      aRow[n++] = pCopy;
    }
  }
  *pnRow = n;
  return SQLITE_OK;
}

/*
** The caller's own reader in place of workers that could not be started,
** with the stage run here: what pStage kept of pSerial's next batch.
*/
static int dsRangeStagedSerial(DsRangeRead *p, DsStaged **paOut,
                               int *pnOut){
  int nRow = 0;
  int rc;
  dsArenaReset(&p->serialArena);
  rc = dsRangeSerialBatch(p, &p->serialArena, p->aSerialRow, p->nBatchRow,
                          p->nBatchByte, 0, &nRow);
  if( rc!=SQLITE_OK ) return rc;
  if( nRow==0 ) return SQLITE_DONE;
  *paOut = p->aSerialStaged;
  *pnOut = p->pStage->xBatch(p->pStage, p->aSerialRow, nRow,
                             p->aSerialStaged);
  return SQLITE_OK;
}

/* Room for what pStage keeps of every batch, the caller's too. */
static int dsRangeAllocStaged(DsRangeRead *p){
  size_t nByte = sizeof(DsStaged) * (size_t)p->nBatchRow;
  int i, j;
  for(i=0; i<=p->nWorker; i++){
    DsRangeWorker *w = i<p->nWorker ? &p->aWorker[i] : p->pMine;
    for(j=0; j<p->nQueue; j++){
      DsRangeBatch *b = &w->aBatch[j];
      if( b->aStaged==0 ) b->aStaged = sqlite3_malloc64(nByte);
      if( b->aStaged==0 ) return SQLITE_NOMEM;
    }
  }
  if( p->aSerialRow==0 ){
    p->aSerialRow = sqlite3_malloc64(sizeof(DsRow *) * (size_t)p->nBatchRow);
  }
  if( p->aSerialStaged==0 ) p->aSerialStaged = sqlite3_malloc64(nByte);
  return p->aSerialRow && p->aSerialStaged ? SQLITE_OK : SQLITE_NOMEM;
}

/*
** xStaged: the workers run pStage on each batch as they read it, and the
** caller is handed only what it kept of each batch, in the rows' order
** (SQLITE_OK, perhaps nothing), and SQLITE_DONE at the end: no row is
** copied.  The rows stay in the worker's batch until the next call, which
** gives it back.  The stage is fixed at the first call, before the
** threads start; the reader must not have been read otherwise.  The rows
** read are counted a batch at a time.
*/
static int dsRangeStaged(DsSource *pSrc, const DsRowStage *pStage,
                         DsStaged **paOut, int *pnOut){
  DsRangeRead *p = (DsRangeRead *)pSrc;
  *pnOut = 0;
  if( p->bStarted && p->pStage!=pStage ) return SQLITE_MISUSE;
  if( !p->bStarted ){
    int rc = dsRangeAllocStaged(p);
    if( rc!=SQLITE_OK ) return rc;
    p->pStage = pStage;
    rc = dsRangeStartThreads(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  assert( p->pStage==pStage );
  if( p->bSerial ) return dsRangeStagedSerial(p, paOut, pnOut);
  {
    int rc = dsRangeNextBatch(p);
    if( rc!=SQLITE_OK ) return rc;
    if( p->pCur==0 ) return SQLITE_DONE;
    p->base.nRow = p->nRowDone + p->pCur->nRead;
    *paOut = p->pCur->aStaged;
    *pnOut = p->pCur->nStaged;
    return SQLITE_OK;
  }
}

/*************************************************************************
** Whether an input may be read in parallel, and where from.
*/
typedef struct DsRangeTable DsRangeTable;
struct DsRangeTable {
  char *zSchema;          /* the database holding the table */
  char *zName;            /* the table, as the schema spells it */
  const char *zFile;      /* its file */
  const char *zVfs;       /* the VFS it was opened with */
  const char *zRowid;     /* a name of the rowid no column hides */
};

static void dsRangeTableClear(DsRangeTable *t){
  sqlite3_free(t->zSchema);
  sqlite3_free(t->zName);
  memset(t, 0, sizeof(*t));
}

/*
** Find the table input pIn names, as SQLite resolves the name (temp, then
** main, then the attached databases in order, unless a schema is named):
** *pzWhy is NULL if it is a rowid table that a connection of its own could
** read, else why not.  SQLITE_OK or SQLITE_NOMEM.
*/
static int dsRangeFindTable(sqlite3 *db, const DsInput *pIn,
                            DsRangeTable *t, const char **pzWhy){
  static const char zSql[] =
    "SELECT t.schema, t.name, t.type, t.wr"
    " FROM pragma_table_list AS t JOIN pragma_database_list AS d"
    " ON d.name=t.schema"
    " WHERE t.name=?1 COLLATE NOCASE"
    " AND (?2 IS NULL OR t.schema=?2 COLLATE NOCASE)"
    " ORDER BY d.name<>'temp', d.seq LIMIT 1";
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  *pzWhy = "not a table";
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, pIn->zName, -1, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 2, pIn->zSchema, -1, 0);
  if( rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zType = (const char *)sqlite3_column_text(pStmt, 2);
    rc = SQLITE_OK;
    t->zSchema = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
    t->zName = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 1));
    if( t->zSchema==0 || t->zName==0 || zType==0 ){
      rc = SQLITE_NOMEM;
    }else if( strcmp(zType, "view")==0 ){
      *pzWhy = "a view";
    }else if( strcmp(zType, "virtual")==0 ){
      *pzWhy = "a virtual table";
    }else if( sqlite3_column_int(pStmt, 3) ){
      *pzWhy = "a table without rowid";
    }else if( sqlite3_stricmp(t->zSchema, "temp")==0 ){
      *pzWhy = "a temp table";
    }else{
      *pzWhy = 0;
    }
  }
  sqlite3_finalize(pStmt);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* The journal mode of database zSchema is WAL? */
static int dsRangeIsWal(sqlite3 *db, const char *zSchema, int *pbWal){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("PRAGMA \"%w\".journal_mode", zSchema);
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  *pbWal = 1;             /* unknown: as good as WAL, not safe */
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zMode = (const char *)sqlite3_column_text(pStmt, 0);
    *pbWal = zMode==0 || sqlite3_stricmp(zMode, "wal")==0;
  }
  rc = sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** Would a connection of its own see exactly the rows of t the caller sees,
** for as long as the caller holds its read lock?  NULL if so, else why
** not (see the comment at the top).  Fills t->zFile and t->zVfs.
*/
static int dsRangeSafe(sqlite3 *db, DsRangeTable *t, const char **pzWhy){
  sqlite3_vfs *pVfs = 0;
  int bWal = 1;
  int rc;
  t->zFile = sqlite3_db_filename(db, t->zSchema);
  if( t->zFile==0 || t->zFile[0]==0 ){
    *pzWhy = "an in-memory database";
    return SQLITE_OK;
  }
  if( sqlite3_uri_boolean(t->zFile, "nolock", 0)
   || sqlite3_uri_boolean(t->zFile, "immutable", 0) ){
    *pzWhy = "a database opened with nolock or immutable";
    return SQLITE_OK;
  }
  if( sqlite3_file_control(db, t->zSchema, SQLITE_FCNTL_VFS_POINTER,
                           &pVfs)!=SQLITE_OK || pVfs==0 ){
    *pzWhy = "a VFS without locks";
    return SQLITE_OK;
  }
  t->zVfs = pVfs->zName;
  if( strcmp(t->zVfs, "memdb")==0 ){
    *pzWhy = "an in-memory database";
    return SQLITE_OK;
  }
  if( strstr(t->zVfs, "-none") ){
    *pzWhy = "a VFS without locks";
    return SQLITE_OK;
  }
  if( sqlite3_txn_state(db, t->zSchema)==SQLITE_TXN_WRITE ){
    *pzWhy = "uncommitted changes in this database";
    return SQLITE_OK;
  }
  rc = dsRangeIsWal(db, t->zSchema, &bWal);
  if( bWal ) *pzWhy = "WAL mode (this SQLite has no snapshots)";
  return rc;
}

/* Does t have a VIRTUAL generated column?  Its values are computed as
** they are read, with the functions of the connection that reads them;
** the caller's may differ from a fresh connection's. */
static int dsRangeHasVirtualColumns(sqlite3 *db, const DsRangeTable *t,
                                    const char **pzWhy){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_xinfo(?1, ?2)"
                              " WHERE hidden=2", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, t->zName, -1, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 2, t->zSchema, -1, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    *pzWhy = "a table with virtual generated columns";
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* A name of the rowid that no column of pIn takes, or NULL. */
static const char *dsRangeRowidName(const DsInput *pIn){
  static const char *const azName[] = { "_rowid_", "rowid", "oid" };
  int i, j;
  for(i=0; i<3; i++){
    for(j=0; j<pIn->nCol && sqlite3_stricmp(pIn->azCol[j], azName[i]); j++){}
    if( j==pIn->nCol ) return azName[i];
  }
  return 0;
}

/*
** Does SQLite read the table through an index in the caller's own reader
** (pSerial)?  A covering index of the columns needed is narrower than the
** table, and SQLite prefers it; but it hands the rows out in the index's
** order, and rows read in rowid ranges would come in another: the results
** and statistics of a run could then depend on `threads`.
*/
static int dsRangeUsesIndex(sqlite3 *db, DsSource *pSerial, int *pbIndex){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("EXPLAIN QUERY PLAN %s",
                               dsReaderSqlOf(pSerial));
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  *pbIndex = 1;             /* unknown: as good as an index, not safe */
  if( rc==SQLITE_OK ){
    *pbIndex = 0;
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      const char *zDetail = (const char *)sqlite3_column_text(pStmt, 3);
      if( zDetail==0 || strstr(zDetail, " INDEX ") ) *pbIndex = 1;
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* Why the caller reads pIn itself, or NULL: it may be read in parallel,
** from the table described in *t. */
static int dsRangeRefusal(DsConn *pConn, const DsInput *pIn, DsRangeTable *t,
                          i64 *pnRow, const char **pzWhy){
  int rc;
  if( pConn->nThread<=1 ){
    *pzWhy = "threads is 1";
    return SQLITE_OK;
  }
  *pzWhy = dsThreadModeRefused(pConn);
  if( *pzWhy ) return SQLITE_OK;
  if( pIn->zName==0 ){
    *pzWhy = "a query";
    return SQLITE_OK;
  }
  /* Before any statement is prepared: in a transaction that wrote, an
  ** allocation failing in one would cost the caller that transaction. */
  if( sqlite3_txn_state(pConn->db, pIn->zSchema)==SQLITE_TXN_WRITE ){
    *pzWhy = "uncommitted changes in this database";
    return SQLITE_OK;
  }
  rc = dsRangeFindTable(pConn->db, pIn, t, pzWhy);
  if( rc==SQLITE_OK && *pzWhy==0 ) rc = dsRangeSafe(pConn->db, t, pzWhy);
  if( rc!=SQLITE_OK || *pzWhy ) return rc;
  rc = dsRangeHasVirtualColumns(pConn->db, t, pzWhy);
  if( rc!=SQLITE_OK || *pzWhy ) return rc;
  t->zRowid = dsRangeRowidName(pIn);
  if( t->zRowid==0 ){
    *pzWhy = "a table whose columns hide its rowid";
    return SQLITE_OK;
  }
  rc = dsInputQuickRows(pConn, pIn, pnRow);
  if( pConn->nParallelMinRows>0 ){
    if( rc==SQLITE_OK && *pnRow<pConn->nParallelMinRows ){
      *pzWhy = "fewer rows than parallel_min_rows";
    }
  }
  return rc;
}

/*************************************************************************
** Starting a parallel read.
*/

/*
** Step the statement that holds the caller's read lock (and gives the
** span of the rowids) and leave it on its row.  *pbEmpty if the table has
** no rows.
*/
static int dsRangeHold(DsRangeRead *p, const DsRangeTable *t, int *pbEmpty){
  /* Two subqueries: SQLite finds a lone min() or max() in one descent of
  ** the b-tree, both in one query only by a scan. */
  char *zSql = sqlite3_mprintf("SELECT (SELECT min(%s) FROM \"%w\".\"%w\"),"
                               " (SELECT max(%s) FROM \"%w\".\"%w\")",
                               t->zRowid, t->zSchema, t->zName,
                               t->zRowid, t->zSchema, t->zName);
  int rc = zSql ? sqlite3_prepare_v2(p->pConn->db, zSql, -1, &p->pHold, 0)
                : SQLITE_NOMEM;
  sqlite3_free(zSql);
  *pbEmpty = 1;
  if( rc==SQLITE_OK ) rc = sqlite3_step(p->pHold);
  if( rc==SQLITE_ROW ){
    rc = SQLITE_OK;
    if( sqlite3_column_type(p->pHold, 0)==SQLITE_INTEGER ){
      *pbEmpty = 0;
      p->iMin = sqlite3_column_int64(p->pHold, 0);
      p->nLast = (u64)sqlite3_column_int64(p->pHold, 1) - (u64)p->iMin;
    }
  }
  return rc;
}

/* Batch sizes and the chunks of the rowids (see the top: memory). */
static void dsRangeShape(DsRangeRead *p, i64 nRowGuess){
  i64 nAll = p->pConn->nMemLimit / 16;
  i64 nChunkRow;
  u64 nSpan;
  p->nQueue = DS_RANGE_QUEUE;
  for(;;){
    /* The caller's slot has as many batches as a worker. */
    p->nBatchByte = nAll / ((i64)(p->nWorker + 1) * p->nQueue);
    if( p->nBatchByte>=4096 || p->nQueue<=2 ) break;
    p->nQueue /= 2;
  }
  if( p->nBatchByte<4096 ) p->nBatchByte = 4096;
  if( p->nBatchByte>256*1024 ) p->nBatchByte = 256*1024;
  p->nBatchRow = DS_BATCH;
  /* A chunk fills DS_RANGE_CHUNK_BATCHES batches (or half a worker's,
  ** when the budget leaves fewer), so that each worker has its next
  ** chunk ready while the others' are handed out. */
  nChunkRow = (i64)(p->nQueue/2 < DS_RANGE_CHUNK_BATCHES
                    ? p->nQueue/2 : DS_RANGE_CHUNK_BATCHES)
            * (p->nBatchByte/64 < DS_BATCH ? p->nBatchByte/64 : DS_BATCH);
  if( nChunkRow<1 ) nChunkRow = 1;
  nSpan = p->nLast + 1;   /* 0: every rowid there is */
  if( nRowGuess<0 ) nRowGuess = nSpan ? (i64)(nSpan>>1) : (i64)(~(u64)0>>1);
  p->nChunk = nRowGuess / nChunkRow;
  if( p->nChunk<p->nWorker ) p->nChunk = p->nWorker;
  if( p->nChunk>DS_RANGE_MAX_CHUNKS ) p->nChunk = DS_RANGE_MAX_CHUNKS;
  if( nSpan && (u64)p->nChunk>nSpan ) p->nChunk = (i64)nSpan;
  /* No more chunks than rows: a few rows far apart need no more workers
  ** than they are. */
  if( p->nChunk>(nRowGuess>0 ? nRowGuess : 1) ){
    p->nChunk = nRowGuess>0 ? nRowGuess : 1;
  }
  if( nSpan ){
    p->nStep = nSpan / (u64)p->nChunk + (nSpan % (u64)p->nChunk!=0);
    p->nChunk = (i64)(nSpan / p->nStep + (nSpan % p->nStep!=0));
  }else{
    /* Every rowid there is, 2^64 of them: at least two chunks, so that
    ** a chunk's size fits in 64 bits. */
    if( p->nChunk<2 ) p->nChunk = 2;
    p->nStep = ((u64)1 << 63) / (u64)p->nChunk * 2;
    p->nChunk = (i64)((p->nLast / p->nStep) + 1);
  }
  assert( p->nChunk>=1 && p->nStep>=1 );
}

/* The text of a reader of table t's rowid ranges, in database zDb. */
static char *dsRangeBody(const DsRangeTable *t, const char *zDb){
  return sqlite3_mprintf("SELECT * FROM \"%w\".\"%w\" WHERE %s BETWEEN ?2 "
                         "AND ?3", zDb, t->zName, t->zRowid);
}

/* Run zSql on w's connection; SQLITE_OK or its error. */
static int dsRangeExec(DsRangeWorker *w, const char *zSql){
  return sqlite3_exec(w->conn.db, zSql, 0, 0, 0);
}

/* The mmap_size asked of a worker's connection: the whole file, which
** SQLite cuts to its compile-time SQLITE_MAX_MMAP_SIZE (2 GiB by default;
** 0, no mapping, where the build or the VFS has none). */
#define DS_RANGE_MMAP "PRAGMA main.mmap_size = 1099511627776"

/*
** Open worker w's connection on t's file, take its read lock inside a
** transaction (kept until it closes), and prepare its reader of pIn's
** columns over a range of rowids.
*/
static int dsRangeConnect(DsRangeRead *p, DsRangeWorker *w,
                          const DsRangeTable *t, const DsInput *pIn,
                          int nKey, const int *aiKey, int nPay,
                          const int *aiPay){
  DsInput in = *pIn;
  char *zErr = 0;
  char *zLock;
  int rc;
  memset(&w->conn, 0, sizeof(w->conn));
  w->pReadConn = &w->conn;
  w->conn.nMemLimit = p->pConn->nMemLimit;
  w->conn.nThread = 1;
  dsMemInit(&w->mem, &w->conn);
  rc = sqlite3_open_v2(t->zFile, &w->conn.db,
                       SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, t->zVfs);
  if( rc==SQLITE_OK ){
    int i;
    /* The caller's limits (a length it lowered must fail here too). */
    for(i=0; i<=SQLITE_LIMIT_WORKER_THREADS; i++){
      sqlite3_limit(w->conn.db, i, sqlite3_limit(p->pConn->db, i, -1));
    }
    rc = dsRegisterReader(w->conn.db);
  }
  if( rc==SQLITE_OK ) rc = dsRangeExec(w, DS_RANGE_MMAP);
  if( rc==SQLITE_OK ) rc = dsRangeExec(w, "BEGIN");
  zLock = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM main.\"%w\" "
                          "LIMIT 1)", t->zName);
  if( rc==SQLITE_OK ) rc = zLock ? dsRangeExec(w, zLock) : SQLITE_NOMEM;
  sqlite3_free(zLock);
  in.zBody = dsRangeBody(t, "main");
  in.zName = in.zSchema = 0;
  in.bPlainScan = 1;
  if( rc==SQLITE_OK ){
    rc = in.zBody==0 ? SQLITE_NOMEM
         : dsSerialReaderOpen(&w->conn, p->zFunc, &in, nKey, aiKey, nPay,
                              aiPay, &w->pSrc, &zErr);
  }
  sqlite3_free(in.zBody);
  sqlite3_free(zErr);
  return rc;
}

/* The names of the opcodes of zSql's program on db, as one text; NULL
** if it cannot be prepared or memory ran out (*pbNoMem then). */
static char *dsRangeOpcodes(sqlite3 *db, const char *zSql, int *pbNoMem){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *pOut = sqlite3_str_new(db);
  char *zExplain = sqlite3_mprintf("EXPLAIN %s", zSql);
  char *zOut;
  int rc = zExplain ? sqlite3_prepare_v2(db, zExplain, -1, &pStmt, 0)
                    : SQLITE_NOMEM;
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_str_appendf(pOut, "%s ", sqlite3_column_text(pStmt, 1));
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  sqlite3_free(zExplain);
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pOut);
  zOut = sqlite3_str_finish(pOut);
  if( rc!=SQLITE_OK ){
    *pbNoMem = dsIsNoMem(rc);
    sqlite3_free(zOut);
    return 0;
  }
  return zOut;
}

/*
** Would the caller's own connection run worker w's reader as w does?  The
** same reader prepared there (where the caller's authorizer runs, which
** can turn a column into NULL) must give the same opcodes as on w's
** connection, which has no authorizer and default settings
** (reverse_unordered_selects would turn the scan around).  *pbSame.
*/
static int dsRangeSameProgram(DsRangeRead *p, DsRangeWorker *w,
                              const DsRangeTable *t, const DsInput *pIn,
                              int nKey, const int *aiKey, int nPay,
                              const int *aiPay, int *pbSame){
  DsInput in = *pIn;
  DsSource *pMine = 0;
  char *zErr = 0;
  char *zMine = 0, *zTheirs = 0;
  int bNoMem = 0;
  int rc;
  *pbSame = 0;
  in.zBody = dsRangeBody(t, t->zSchema);
  in.zName = in.zSchema = 0;
  in.bPlainScan = 1;
  if( in.zBody==0 ) return SQLITE_NOMEM;
  rc = dsSerialReaderOpen(p->pConn, p->zFunc, &in, nKey, aiKey, nPay, aiPay,
                          &pMine, &zErr);
  sqlite3_free(zErr);
  if( rc==SQLITE_OK ){
    zMine = dsRangeOpcodes(p->pConn->db, dsReaderSqlOf(pMine), &bNoMem);
    zTheirs = dsRangeOpcodes(w->conn.db, dsReaderSqlOf(w->pSrc), &bNoMem);
    *pbSame = zMine && zTheirs && strcmp(zMine, zTheirs)==0;
    /* The same: it is the caller's reader of its own share of chunks. */
    if( *pbSame ) p->pMine->pSrc = pMine;
    else pMine->xClose(pMine);
  }
  sqlite3_free(in.zBody);
  sqlite3_free(zMine);
  sqlite3_free(zTheirs);
  if( rc==SQLITE_NOMEM || bNoMem ) return SQLITE_NOMEM;
  return SQLITE_OK;
}

/* The batches of worker w, empty and free. */
static int dsRangeAllocBatches(DsRangeRead *p, DsRangeWorker *w){
  int i;
  w->aBatch = sqlite3_malloc64(sizeof(DsRangeBatch) * (size_t)p->nQueue);
  if( w->aBatch==0 ) return SQLITE_NOMEM;
  memset(w->aBatch, 0, sizeof(DsRangeBatch) * (size_t)p->nQueue);
  for(i=0; i<p->nQueue; i++){
    w->aBatch[i].pWorker = w;
    dsArenaInit(&w->aBatch[i].arena, &w->mem);
  }
  for(i=0; i<p->nQueue; i++){
    DsRangeBatch *b = &w->aBatch[i];
    b->aRow = sqlite3_malloc64(sizeof(DsRow *) * (size_t)p->nBatchRow);
    b->aRowAt = sqlite3_malloc64(sizeof(i64) * (size_t)p->nBatchRow);
    if( b->aRow==0 || b->aRowAt==0 ) return SQLITE_NOMEM;
    dsBatchPush(&w->free, b);
  }
  return SQLITE_OK;
}

/* Open every worker's connection and start the threads.  An error other
** than SQLITE_NOMEM leaves *pzWhy saying why the caller reads instead. */
static int dsRangeStart(DsRangeRead *p, const DsRangeTable *t,
                        const DsInput *pIn, int nKey, const int *aiKey,
                        int nPay, const int *aiPay, char **pzWhy){
  DsRangeWorker *m;
  i64 k;
  int i;
  int rc = SQLITE_OK;
  p->pMine = m = sqlite3_malloc64(sizeof(DsRangeWorker));
  if( m ) memset(m, 0, sizeof(*m));
  p->aOwner = sqlite3_malloc64(sizeof(int) * (size_t)p->nChunk);
  if( m==0 || p->aOwner==0 ) return SQLITE_NOMEM;
  m->pRead = p;
  m->iWorker = DS_RANGE_MINE;
  m->pReadConn = p->pConn;
  m->conn.nMemLimit = p->pConn->nMemLimit;
  dsMemInit(&m->mem, &m->conn);
  for(k=0; k<p->nChunk; k++) p->aOwner[k] = DS_RANGE_NONE;
  p->iMineChunk = -1;
  for(i=0; rc==SQLITE_OK && i<p->nWorker; i++){
    DsRangeWorker *w = &p->aWorker[i];
    w->pRead = p;
    w->iWorker = i;
    w->iStarted = -1;
    rc = dsRangeConnect(p, w, t, pIn, nKey, aiKey, nPay, aiPay);
    if( rc==SQLITE_OK && i==0 ){
      int bSame = 0;
      rc = dsRangeSameProgram(p, w, t, pIn, nKey, aiKey, nPay, aiPay, &bSame);
      if( rc==SQLITE_OK && !bSame ){
        *pzWhy = sqlite3_mprintf("by the caller: its connection reads the "
                                 "table otherwise (an authorizer, a "
                                 "setting)");
        return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    }
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
      *pzWhy = sqlite3_mprintf("by the caller: the connections could not "
                               "be opened (%s)", w->conn.db
                               ? sqlite3_errmsg(w->conn.db)
                               : sqlite3_errstr(rc));
      return *pzWhy ? rc : SQLITE_NOMEM;
    }
    if( rc==SQLITE_OK ) rc = dsRangeAllocBatches(p, w);
  }
  if( rc==SQLITE_OK ) rc = dsRangeAllocBatches(p, m);
  if( rc!=SQLITE_OK ) return rc;
  if( pthread_mutex_init(&p->mutex, 0)==0 ){
    if( dsCondInitTimed(&p->filled)==0 ){
      if( pthread_cond_init(&p->freed, 0)==0 ){
        p->bMutex = 1;
      }else{
        pthread_cond_destroy(&p->filled);
        pthread_mutex_destroy(&p->mutex);
      }
    }else{
      pthread_mutex_destroy(&p->mutex);
    }
  }
  return p->bMutex ? SQLITE_OK : SQLITE_NOMEM;
}

/*
** Try to read pIn in parallel.  SQLITE_OK with *ppSrc set; or SQLITE_OK
** with *ppSrc NULL and *pzWhy saying why the caller reads it (NULL if
** memory ran out for that text alone); or SQLITE_NOMEM.
*/
static int dsRangeOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                       int nKey, const int *aiKey, int nPay,
                       const int *aiPay, DsSource *pSerial, DsSource **ppSrc,
                       char **pzWhy){
  DsRangeTable t;
  DsRangeRead *p;
  const char *zWhy = 0;
  i64 nRow = -1;
  int bEmpty = 1;
  int rc;
  *ppSrc = 0;
  *pzWhy = 0;
  memset(&t, 0, sizeof(t));
  rc = dsRangeRefusal(pConn, pIn, &t, &nRow, &zWhy);
  if( rc==SQLITE_OK && zWhy==0 ){
    int bIndex = 1;
    rc = dsRangeUsesIndex(pConn->db, pSerial, &bIndex);
    if( bIndex ) zWhy = "SQLite reads it through an index";
  }
  if( rc!=SQLITE_OK || zWhy ){
    dsRangeTableClear(&t);
    if( rc==SQLITE_OK ){
      *pzWhy = sqlite3_mprintf("by the caller: %s", zWhy);
      if( *pzWhy==0 ) rc = SQLITE_NOMEM;
    }
    return rc;
  }
  p = sqlite3_malloc64(sizeof(DsRangeRead));
  if( p==0 ){
    dsRangeTableClear(&t);
    return SQLITE_NOMEM;
  }
  memset(p, 0, sizeof(*p));
  dsMemInit(&p->mem, pConn);
  dsArenaInit(&p->serialArena, &p->mem);
  p->base.xNext = dsSourceNextOfBatch;
  p->base.xBatch = dsRangeBatch;
  p->base.xClose = dsRangeClose;
  p->base.xKeysFirst = dsRangeKeysFirst;
  p->base.xStop = dsRangeStopSource;
  p->base.xStaged = dsRangeStaged;
  p->pConn = pConn;
  p->zFunc = zFunc;
  dsTickerInit(&p->tick, pConn);
  rc = dsRangeHold(p, &t, &bEmpty);
  if( rc==SQLITE_OK && bEmpty ){
    *pzWhy = sqlite3_mprintf("by the caller: an empty table");
    if( *pzWhy==0 ) rc = SQLITE_NOMEM;
  }else if( rc==SQLITE_OK ){
    /* The caller is one of the threads: it hands the rows out, and the
    ** operator does its work with them there. */
    p->nWorker = pConn->nThread - 1;
    dsRangeShape(p, nRow);
    if( p->nChunk<p->nWorker ) p->nWorker = (int)p->nChunk;
    p->aWorker = sqlite3_malloc64(sizeof(DsRangeWorker) * (size_t)p->nWorker);
    if( p->aWorker==0 ) rc = SQLITE_NOMEM;
    if( rc==SQLITE_OK ){
      memset(p->aWorker, 0, sizeof(DsRangeWorker) * (size_t)p->nWorker);
      rc = dsRangeStart(p, &t, pIn, nKey, aiKey, nPay, aiPay, pzWhy);
    }
    if( rc==SQLITE_OK && *pzWhy==0 ){
      p->zCountBody = sqlite3_mprintf("SELECT 1 FROM main.\"%w\"", t.zName);
      if( p->zCountBody==0 ) rc = SQLITE_NOMEM;
    }
  }else if( rc!=SQLITE_NOMEM ){
    *pzWhy = sqlite3_mprintf("by the caller: %s", sqlite3_errmsg(pConn->db));
    if( *pzWhy==0 ) rc = SQLITE_NOMEM;
  }
  dsRangeTableClear(&t);
  if( rc==SQLITE_OK && *pzWhy==0 ){
    p->base.nWorker = p->nWorker;
    p->base.zRead = sqlite3_mprintf("rowid ranges on %d connection%s",
                                    p->nWorker, p->nWorker>1 ? "s" : "");
    if( p->base.zRead ){
      p->pSerial = pSerial;
      *ppSrc = &p->base;
      return SQLITE_OK;
    }
    rc = SQLITE_NOMEM;
  }
  dsRangeClose(&p->base);
  return rc==SQLITE_NOMEM ? rc : SQLITE_OK;
}

#else  /* DS_OMIT_THREADS */

static int dsRangeOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                       int nKey, const int *aiKey, int nPay,
                       const int *aiPay, DsSource *pSerial, DsSource **ppSrc,
                       char **pzWhy){
  (void)zFunc; (void)pSerial; (void)pIn; (void)nKey; (void)aiKey;
  (void)nPay; (void)aiPay;
  *ppSrc = 0;
  *pzWhy = sqlite3_mprintf("by the caller: %s", pConn->nThread<=1
                           ? "threads is 1" : "built without threads");
  return SQLITE_OK;
}

#endif /* DS_OMIT_THREADS */

/*
** Open a reader of pIn returning rows of the key columns aiKey[] followed
** by the columns aiPay[]: in parallel where that is allowed (above), else
** the caller's own serial reader (reader.c).  The source says which in
** zRead, and how many workers read it in nWorker.
*/
int dsReaderOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                 int nKey, const int *aiKey, int nPay, const int *aiPay,
                 DsSource **ppSrc, char **pzErr){
  DsSource *pSerial = 0;
  DsSource *pRange = 0;
  char *zWhy = 0;
  int rc = dsSerialReaderOpen(pConn, zFunc, pIn, nKey, aiKey, nPay, aiPay,
                              &pSerial, pzErr);
  *ppSrc = 0;
  if( rc!=SQLITE_OK ) return rc;
  rc = dsRangeOpen(pConn, zFunc, pIn, nKey, aiKey, nPay, aiPay, pSerial,
                   &pRange, &zWhy);
  if( rc!=SQLITE_OK ){
    sqlite3_free(zWhy);
    pSerial->xClose(pSerial);
    return rc;
  }
  if( pRange ){
    *ppSrc = pRange;      /* which keeps pSerial (dsRangeKeysFirst) */
  }else{
    /* The caller reads it; a worker may still do an operator's work on
    ** the rows it reads (reader.c, "Staged on a worker"). */
    if( dsThreadsRefused(pConn)==0 ) dsReaderStageAhead(pSerial);
    pSerial->zRead = zWhy;
    *ppSrc = pSerial;
  }
  return SQLITE_OK;
}

/*
** Counting ahead (above): can pSrc count its rows on a thread of its own,
** before it is read?  Only a table read in rowid ranges can.
*/
int dsReaderCountsAhead(const DsSource *pSrc){
#ifndef DS_OMIT_THREADS
  return pSrc->xClose==dsRangeClose;
#else
  (void)pSrc;
  return 0;
#endif
}

/*
** Count pSrc's rows, up to nCap of them (0: all), on a thread of its own
** while the caller goes on: 1 if that started, and dsReaderCountWait()
** must then be called before pSrc is read; 0 if the caller is to count
** them itself.
*/
int dsReaderCountAhead(DsSource *pSrc, i64 nCap){
#ifndef DS_OMIT_THREADS
  if( dsReaderCountsAhead(pSrc) ){
    return dsRangeCountAhead((DsRangeRead *)pSrc, nCap);
  }
#endif
  (void)pSrc;
  (void)nCap;
  return 0;
}

/*
** The count dsReaderCountAhead() started, as dsInputEstimateRows() would
** give it with the same cap: *pnRow, -1 if it could not be made (the
** caller then counts itself), and *pbAtLeast.  SQLITE_OK, or the
** interrupt that stopped the wait.
*/
int dsReaderCountWait(DsSource *pSrc, i64 *pnRow, int *pbAtLeast){
  *pnRow = -1;
  *pbAtLeast = 0;
#ifndef DS_OMIT_THREADS
  if( dsReaderCountsAhead(pSrc) ){
    return dsRangeCountWait((DsRangeRead *)pSrc, pnRow, pbAtLeast);
  }
#endif
  (void)pSrc;
  return SQLITE_OK;
}
