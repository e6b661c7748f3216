/*
** stageahead.c: batches of rows staged on a worker thread, ahead of
** the caller.
**
** An operator's stage (DsRowStage, dsrow.h: a hash join's probe, which
** looks each row up in a table that no longer changes) need not run on
** the thread that hands the rows to SQLite.  A DsStageAhead is a ring of
** slots, each a batch of rows in an arena of its own with the entries the
** stage kept of it, and one worker.  Every slot goes
**
**     free -> filled (rows read) -> staged -> held by the caller -> free
**
** in the ring's order, so the caller is handed the batches in the order
** they were read.  Who fills a slot depends on what is read:
**
**   - A source any thread may read (a spill file: spill.c; a sort's merge
**     of its runs: sort.c) is read by the worker itself, which fills and
**     stages each slot.  Once every slot is staged it sleeps until the
**     caller has taken half of them: a wake-up costs the caller a system
**     call, which for every batch would be a tenth of the work it hands
**     over.  Likewise a caller that finds the oldest slot not staged yet
**     sleeps until half of them are (or the last one).
**   - A source only the caller may read (SQLite stepping a view or a
**     query: reader.c) is read by the caller, which fills a slot, passes
**     it to the worker, and reads on while the worker stages it.  Asked
**     for a batch, the caller takes the oldest slot if it is staged, else
**     reads another while slots are free, and waits only when none is.
**     Half the slots do: the caller is the slower of the two.
**
** Where no worker can start, the caller fills and stages each batch
** itself, one slot at a time: the rows and the stage's entries are the
** same.  Where the caller fills, it also stages the first batch itself
** and starts the worker only when a second is asked for, which an input
** whose first batch was its last (SQLITE_DONE) never is: such an input is
** not worth a thread.
**
** Memory.  A slot's rows are charged to nothing: with nMaxByte at 1/128
** of memory_limit, the 8 slots' take at most 1/16 of it, out of the quarter
** of the budget an operator leaves free (as a range reader's batches,
** rangeread.c), and 32 bytes more for each row a slot can hold.  An owner
** that leaves no such room chooses the slots' size and charges the most
** they can hold itself (dsStageAheadBytes: a sort's merge).
**
** Stopping.  The caller waiting for a slot checks for an interrupt (the
** owner's xCheck) every DS_STAGE_WAIT_MS; the worker looks for the stop
** flag between batches and is joined by dsStageAheadStop(), which the owner
** calls before it frees what the stage reads or what the worker fills
** from, and by dsStageAheadFree().
*/
#include "dataset_int.h"
#include <errno.h>

#define DS_STAGE_SLOTS 8
#define DS_STAGE_WAIT_MS 20

#ifdef DS_TEST_HOOKS
/* Sources staged ahead since the process started: with a worker, and
** without (none could start).  With bNoThread set (1), or cleared
** (0), no worker can start from now on, as if pthread_create() failed;
** -1 leaves that as it is. */
#include <stdatomic.h>
static atomic_int dsStageWorkers, dsStageCallers, dsStageNoThread;
void dsStageAheadTest(int bNoThread, int *pnWorker, int *pnCaller){
  if( bNoThread>=0 ) atomic_store(&dsStageNoThread, bNoThread);
  *pnWorker = atomic_load(&dsStageWorkers);
  *pnCaller = atomic_load(&dsStageCallers);
}
# define dsStageCount(bWorker) \
  atomic_fetch_add((bWorker) ? &dsStageWorkers : &dsStageCallers, 1)
# define dsStageThreadCreate(pT, x, pArg) \
  (atomic_load(&dsStageNoThread) ? EAGAIN : pthread_create(pT, 0, x, pArg))
#else
# define dsStageCount(bWorker)
# define dsStageThreadCreate(pT, x, pArg) pthread_create(pT, 0, x, pArg)
#endif

typedef struct DsStageSlot DsStageSlot;
struct DsStageSlot {
  DsMem mem;              /* its rows' (charged to nothing: see above) */
  DsArena arena;
  int nRow;               /* rows read into aRow[] */
  int nOut;               /* entries of aOut[] the stage filled */
  int rc;                 /* SQLITE_OK; SQLITE_DONE: the source's last
                          ** rows; or the error that ended the batch */
  int bFilled;            /* passed to the worker to stage (caller fills;
                          ** under the mutex) */
  int bFull;              /* staged, for the caller (under the mutex) */
  DsRow **aRow;           /* nSlotRow entries */
  DsStaged *aOut;         /* nSlotRow entries */
};

struct DsStageAhead {
  const DsRowStage *pStage;
  DsStageFill xFill;      /* reads a batch */
  void *pFillArg;
  int (*xCheck)(void *);  /* SQLITE_INTERRUPT if the caller is to stop */
  void *pCheckArg;
  int bWorkerFills;       /* the worker reads; else the caller does */
  int nSlot;              /* slots in the ring: aSlot[0..nSlot-1] */
  i64 nMaxByte;           /* a batch's rows take this many bytes at most */
  int nSlotRow;           /* and are this many at most */
  int bThread;            /* a worker runs (or ran); else the caller
                          ** stages too */
  int bMayThread;         /* a worker may start after the first batch */
  int nTaken;             /* batches handed to the caller */
  int bJoined;            /* the worker has been stopped and joined */
  pthread_t thread;
  pthread_mutex_t mutex;
  pthread_cond_t cFull;   /* a slot was staged */
  pthread_cond_t cWork;   /* a slot was freed or filled, or bStop set */
  int bStop;              /* the worker is to stop */
  int nFree;              /* slots neither taken, filled nor staged */
  int nFull;              /* slots staged, not yet given back */
  int bSleeping;          /* the worker waits for half the slots free */
  int iWork;              /* the worker's next slot */
  int iFill;              /* the caller's next slot to fill (caller fills) */
  int nPassed;            /* slots filled and not yet taken (caller fills) */
  int iTake;              /* the caller's next slot to take */
  int bHeld;              /* the caller holds the slot before iTake */
  int rcFill;             /* the caller's last read: SQLITE_OK, or
                          ** SQLITE_DONE or an error (caller fills) */
  int rcEnd;              /* after the last slot: SQLITE_DONE or error */
  DsStageSlot aSlot[DS_STAGE_SLOTS];
};

/* Bytes of rows a slot's batch holds: nSlotByte, or by default 1/128 of
** memory_limit (8 slots, 1/16 of it). */
static i64 dsStageSlotBytes(const DsConn *pConn, i64 nSlotByte){
  return nSlotByte>0 ? nSlotByte : pConn->nMemLimit / (16 * DS_STAGE_SLOTS);
}

/* Rows a slot can hold: as many of the narrowest as fit in nMaxByte, and
** one more (a batch reads until it passes nMaxByte); at most DS_BATCH, or,
** for slots of a size the owner chose (nSlotByte), as many as rows of 64
** bytes fill: a sort's merge hands over batches of many narrow rows, and
** fewer batches cost fewer wake-ups. */
static i64 dsStageSlotRows(i64 nMaxByte, i64 nSlotByte){
  i64 nSlotRow = nMaxByte / (i64)DS_ROW_SIZE(0) + 1;
  i64 nCap = nSlotByte/64 > DS_BATCH ? nSlotByte/64 : DS_BATCH;
  return nSlotRow>nCap ? nCap : nSlotRow;
}

/* A slot's entry of each row: the row's pointer and the stage's entry. */
#define DS_STAGE_ENTRY (sizeof(DsRow *) + sizeof(DsStaged))

/*
** The most the slots of a worker that fills them can hold at once, for
** an owner that charges it to its budget (sort.c): each slot's rows, at
** most nSlotByte (as dsStageAheadOpen() takes it) and one row of up to
** nWidest bytes, lie in arena chunks that at most double what they hold
** (their size doubles as they fill), from a first chunk of a few KiB;
** and its entries.
*/
i64 dsStageAheadBytes(const DsConn *pConn, i64 nSlotByte, i64 nWidest){
  i64 nMaxByte = dsStageSlotBytes(pConn, nSlotByte);
  i64 nSlot = DS_STAGE_SLOTS;
  return nSlot * (2*(nMaxByte + nWidest) + 4096
                  + dsStageSlotRows(nMaxByte, nSlotByte) * (i64)DS_STAGE_ENTRY);
}

/* Read the next batch into slot s; the source's code is kept in s->rc. */
static void dsStageRead(DsStageAhead *a, DsStageSlot *s){
  dsArenaReset(&s->arena);
  s->nRow = 0;
  s->rc = a->xFill(a->pFillArg, &s->arena, s->aRow, a->nSlotRow,
                   a->nMaxByte, &s->nRow);
  assert( s->rc!=SQLITE_OK || s->nRow>0 );
}

/* Run the stage on the rows of slot s. */
static void dsStageStage(DsStageAhead *a, DsStageSlot *s){
  s->nOut = 0;
  if( s->nRow>0 && (s->rc==SQLITE_OK || s->rc==SQLITE_DONE) ){
    s->nOut = a->pStage->xBatch(a->pStage, s->aRow, s->nRow, s->aOut);
  }
}

/* Wait, as the worker, for slot s to be the worker's: free (the worker
** fills) or filled (the caller does).  0 to go on, 1 to stop. */
static int dsStageWaitWork(DsStageAhead *a, DsStageSlot *s){
  int bStop;
  pthread_mutex_lock(&a->mutex);
  if( a->bWorkerFills ){
    if( a->nFree==0 ){
      a->bSleeping = 1;
      while( a->nFree<a->nSlot/2 && !a->bStop ){
        pthread_cond_wait(&a->cWork, &a->mutex);
      }
      a->bSleeping = 0;
    }
    if( !a->bStop ){
      assert( !s->bFull );
      a->nFree--;
    }
  }else{
    while( !s->bFilled && !a->bStop ) pthread_cond_wait(&a->cWork, &a->mutex);
  }
  bStop = a->bStop;
  pthread_mutex_unlock(&a->mutex);
  return bStop;
}

/* The worker: reads (where it fills) and stages one slot after the other
** until it is stopped, or, where it reads, until the source ends. */
static void *dsStageThread(void *pArg){
  DsStageAhead *a = (DsStageAhead *)pArg;
  for(;;){
    DsStageSlot *s = &a->aSlot[a->iWork];
    if( dsStageWaitWork(a, s) ) break;
    if( a->bWorkerFills ) dsStageRead(a, s);
    dsStageStage(a, s);
    pthread_mutex_lock(&a->mutex);
    s->bFilled = 0;
    s->bFull = 1;
    a->nFull++;
    /* Where the worker reads, a caller waiting for it is woken when half
    ** the slots are ready, or the last: a wake-up for every batch cost
    ** each thread a system call a batch, and in a virtual machine the
    ** sleeping one's core a trip through the hypervisor. */
    if( !a->bWorkerFills || a->nFull>=a->nSlot/2 || s->rc!=SQLITE_OK ){
      pthread_cond_signal(&a->cFull);
    }
    pthread_mutex_unlock(&a->mutex);
    if( a->bWorkerFills && s->rc!=SQLITE_OK ) break;
    a->iWork = (a->iWork + 1) % a->nSlot;
  }
  return 0;
}

/* Start the worker of a: SQLITE_OK if it runs, else an error (the caller
** then stages itself). */
static int dsStageStartThread(DsStageAhead *a){
  if( pthread_mutex_init(&a->mutex, 0)==0 ){
    if( dsCondInitTimed(&a->cFull)==0 ){
      if( pthread_cond_init(&a->cWork, 0)==0 ){
        if( dsStageThreadCreate(&a->thread, dsStageThread, a)==0 ){
          a->bThread = 1;
          return SQLITE_OK;
        }
        pthread_cond_destroy(&a->cWork);
      }
      pthread_cond_destroy(&a->cFull);
    }
    pthread_mutex_destroy(&a->mutex);
  }
  return SQLITE_ERROR;
}

/*
** Stage the batches xFill reads (see DsStageFill) through pStage, on a
** worker if one may run (dsThreadsRefused(): not where threads is 1) and
** starts, else on the caller's thread.  Where bWorkerFills, the worker
** starts now and calls xFill too; else only the caller reads, and the
** worker starts with the second batch.
** xCheck(pCheckArg) is the interrupt check of the caller's waits.  The
** batches hold at most nSlotByte bytes of rows (0: 1/128 of memory_limit),
** and as many rows as dsStageSlotRows() allows.  SQLITE_OK, with *ppAhead
** set, or SQLITE_NOMEM.
*/
int dsStageAheadOpen(DsConn *pConn, const DsRowStage *pStage,
                     DsStageFill xFill, void *pFillArg, int bWorkerFills,
                     i64 nSlotByte, int (*xCheck)(void *), void *pCheckArg,
                     DsStageAhead **ppAhead){
  DsStageAhead *a;
  /* The caller reading a slot while the worker stages another, and a
  ** slot held: a few are enough.  A worker reading runs further ahead. */
  int nSlot = bWorkerFills ? DS_STAGE_SLOTS : DS_STAGE_SLOTS/2;
  i64 nMaxByte = dsStageSlotBytes(pConn, nSlotByte);
  i64 nSlotRow = dsStageSlotRows(nMaxByte, nSlotByte);
  size_t nEntry = DS_STAGE_ENTRY;
  int i;
  *ppAhead = 0;
  a = sqlite3_malloc64(sizeof(*a) + nSlot*(size_t)nSlotRow*nEntry);
  if( a==0 ) return SQLITE_NOMEM;
  memset(a, 0, sizeof(*a));
  a->pStage = pStage;
  a->xFill = xFill;
  a->pFillArg = pFillArg;
  a->xCheck = xCheck;
  a->pCheckArg = pCheckArg;
  a->bWorkerFills = bWorkerFills;
  a->nSlot = nSlot;
  a->nFree = nSlot;
  a->nMaxByte = nMaxByte;
  a->nSlotRow = (int)nSlotRow;
  for(i=0; i<nSlot; i++){
    DsStageSlot *s = &a->aSlot[i];
    /* The entries follow the struct: the DsStaged arrays first, for
    ** their alignment, then the pointers. */
    s->aOut = (DsStaged *)&a[1] + (size_t)i*nSlotRow;
    s->aRow = (DsRow **)((DsStaged *)&a[1] + nSlot*(size_t)nSlotRow)
            + (size_t)i*nSlotRow;
    dsMemInit(&s->mem, 0);
    dsArenaInit(&s->arena, &s->mem);
  }
  if( dsThreadsRefused(pConn)!=0 ){
    dsStageCount(0);
  }else if( bWorkerFills ){
    dsStageStartThread(a);
    dsStageCount(a->bThread);
  }else{
    /* The caller reads and stages the first batch itself: an input of
    ** one batch is not worth a thread. */
    a->bMayThread = 1;
  }
  *ppAhead = a;
  return SQLITE_OK;
}

/* Does a worker stage a's batches (or did, before dsStageAheadStop)? */
int dsStageAheadHasWorker(const DsStageAhead *a){
  return a->bThread;
}

/* Stop a's worker, if it has one, and join it.  The slots stay, with the
** rows the caller was handed. */
void dsStageAheadStop(DsStageAhead *a){
  if( a==0 || !a->bThread || a->bJoined ) return;
  pthread_mutex_lock(&a->mutex);
  a->bStop = 1;
  pthread_cond_signal(&a->cWork);
  pthread_mutex_unlock(&a->mutex);
  pthread_join(a->thread, 0);
  a->bJoined = 1;
}

/* Stop a's worker and free a. */
void dsStageAheadFree(DsStageAhead *a){
  int i;
  if( a==0 ) return;
  dsStageAheadStop(a);
  if( a->bThread ){
    pthread_cond_destroy(&a->cWork);
    pthread_cond_destroy(&a->cFull);
    pthread_mutex_destroy(&a->mutex);
  }
  for(i=0; i<a->nSlot; i++) dsArenaClear(&a->aSlot[i].arena);
  sqlite3_free(a);
}

/* Wait until the worker has staged slot s, checking for an interrupt:
** SQLITE_OK or SQLITE_INTERRUPT. */
static int dsStageAwait(DsStageAhead *a, DsStageSlot *s){
  int rc = SQLITE_OK;
  pthread_mutex_lock(&a->mutex);
  while( !s->bFull && rc==SQLITE_OK ){
    dsCondWaitMs(&a->cFull, &a->mutex, DS_STAGE_WAIT_MS);
    if( !s->bFull ){
      pthread_mutex_unlock(&a->mutex);
      rc = a->xCheck(a->pCheckArg);
      pthread_mutex_lock(&a->mutex);
    }
  }
  pthread_mutex_unlock(&a->mutex);
  return rc;
}

/* Is slot s staged? */
static int dsStageIsFull(DsStageAhead *a, DsStageSlot *s){
  int bFull;
  pthread_mutex_lock(&a->mutex);
  bFull = s->bFull;
  pthread_mutex_unlock(&a->mutex);
  return bFull;
}

/* Give the worker back the slot the caller was handed last. */
static void dsStageRelease(DsStageAhead *a){
  if( a->bHeld ){
    DsStageSlot *s = &a->aSlot[(a->iTake + a->nSlot - 1) % a->nSlot];
    pthread_mutex_lock(&a->mutex);
    s->bFull = 0;
    a->nFull--;
    a->nFree++;
    if( a->bSleeping && a->nFree>=a->nSlot/2 ){
      pthread_cond_signal(&a->cWork);
    }
    pthread_mutex_unlock(&a->mutex);
    a->bHeld = 0;
  }
}

/* Read the next batch on the caller's thread into the next free slot and
** pass it to the worker (caller fills): SQLITE_OK, or the read's
** SQLITE_DONE or error, kept in a->rcFill. */
static int dsStageFillOne(DsStageAhead *a){
  DsStageSlot *s = &a->aSlot[a->iFill];
  assert( a->nFree>0 && a->rcFill==SQLITE_OK );
  dsStageRead(a, s);
  if( s->rc!=SQLITE_OK && s->rc!=SQLITE_DONE ){
    a->rcFill = s->rc;
    return s->rc;
  }
  a->rcFill = s->rc;
  if( s->nRow==0 ) return a->rcFill;
  pthread_mutex_lock(&a->mutex);
  s->bFilled = 1;
  a->nFree--;
  pthread_cond_signal(&a->cWork);
  pthread_mutex_unlock(&a->mutex);
  a->nPassed++;
  a->iFill = (a->iFill + 1) % a->nSlot;
  return a->rcFill;
}

/* The next staged slot, where the caller fills: the oldest if the worker
** is done with it; else, while slots are free, the caller reads more
** first.  SQLITE_DONE at the end. */
static int dsStageNextFilled(DsStageAhead *a, DsStageSlot **ppSlot){
  for(;;){
    DsStageSlot *s = &a->aSlot[a->iTake];
    int rc;
    if( a->nPassed>0 && dsStageIsFull(a, s) ) break;
    if( a->nFree>0 && a->rcFill==SQLITE_OK ){
      rc = dsStageFillOne(a);
      if( rc!=SQLITE_OK && rc!=SQLITE_DONE ) return rc;
      continue;
    }
    if( a->nPassed==0 ) return a->rcFill;
    rc = dsStageAwait(a, s);
    if( rc!=SQLITE_OK ) return rc;
    break;
  }
  a->nPassed--;
  *ppSlot = &a->aSlot[a->iTake];
  return SQLITE_OK;
}

/* The next staged slot, where the worker fills: its read's error, if it
** failed, and the worker has ended. */
static int dsStageNextRead(DsStageAhead *a, DsStageSlot **ppSlot){
  DsStageSlot *s = &a->aSlot[a->iTake];
  int rc = dsStageAwait(a, s);
  if( rc!=SQLITE_OK ) return rc;
  *ppSlot = s;
  if( s->rc!=SQLITE_OK && s->rc!=SQLITE_DONE ){
    dsStageAheadStop(a);
    return s->rc;
  }
  return SQLITE_OK;
}

/*
** The next batch: SQLITE_OK with *pnRow rows read (at least one) and the
** *pnOut entries the stage kept of them in *paOut, which stay until the
** next call; SQLITE_DONE after the last batch; or an error (the read's,
** or SQLITE_INTERRUPT), which every later call returns too.
*/
int dsStageAheadNext(DsStageAhead *a, DsStaged **paOut, int *pnOut,
                     int *pnRow){
  DsStageSlot *s = 0;
  int rc;
  *paOut = 0;
  *pnOut = 0;
  *pnRow = 0;
  if( a->rcEnd!=SQLITE_OK ) return a->rcEnd;
  if( a->bMayThread && a->nTaken>0 ){
    /* Every slot is free: the caller is done with the first. */
    a->bMayThread = 0;
    dsStageStartThread(a);
    dsStageCount(a->bThread);
  }
  if( !a->bThread ){
    s = &a->aSlot[0];
    dsStageRead(a, s);
    rc = s->rc==SQLITE_DONE ? SQLITE_OK : s->rc;
    if( rc==SQLITE_OK ) dsStageStage(a, s);
  }else{
    dsStageRelease(a);
    rc = a->bWorkerFills ? dsStageNextRead(a, &s) : dsStageNextFilled(a, &s);
    if( rc==SQLITE_OK ){
      a->iTake = (a->iTake + 1) % a->nSlot;
      a->bHeld = 1;
    }
  }
  if( rc!=SQLITE_OK ){
    a->rcEnd = rc;
    return rc;
  }
  /* Where the worker reads, the slot of the source's last rows says so. */
  if( s->rc==SQLITE_DONE ) a->rcEnd = SQLITE_DONE;
  if( s->nRow==0 ) return SQLITE_DONE;
  a->nTaken++;
  *paOut = s->aOut;
  *pnOut = s->nOut;
  *pnRow = s->nRow;
  return SQLITE_OK;
}
