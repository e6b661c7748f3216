/*
** threads.c: what every worker thread of the extension needs to know
** before it starts, the timed wait of a caller for one, work split
** between the caller and helper threads (dsSplitRun), and jobs run on one
** helper while the caller goes on (DsAsync).
**
** Workers (rangeread.c's range readers, stageahead.c's stages, sort.c's
** run writers, key_stats.c's counter) run only where threads is above 1
** and SQLite may be used from another thread than the caller's: a worker
** allocates with sqlite3_malloc(), and a range reader opens connections
** of its own.
** The caller waiting for a worker wakes every few milliseconds to check
** for an interrupt, on the monotonic clock.
*/
#include "dataset_int.h"

#include <time.h>
#ifndef DS_OMIT_THREADS
#include <errno.h>
#include <stdatomic.h>
#endif

/*
** A condition whose timed waits (dsCondWaitMs) run on the monotonic
** clock: a clock set back must not delay the interrupt checks of a caller
** waiting for a worker.  0 on success, as pthread_cond_init().  For every
** worker of the extension's that a caller waits for (rangeread.c's,
** stageahead.c's).
*/
int dsCondInitTimed(pthread_cond_t *pCond){
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if( rc==0 ){
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if( rc==0 ) rc = pthread_cond_init(pCond, &attr);
    pthread_condattr_destroy(&attr);
  }
  return rc;
}

/* Wait on pCond, made by dsCondInitTimed(), with pMutex held, for at most
** nMs milliseconds. */
void dsCondWaitMs(pthread_cond_t *pCond, pthread_mutex_t *pMutex, int nMs){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_nsec += nMs * 1000000L;
  if( ts.tv_nsec>=1000000000L ){
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(pCond, pMutex, &ts);
}

#ifndef DS_OMIT_THREADS

/*
** Why SQLite may not be used from other threads, or NULL.  Not when it
** was built without mutexes (sqlite3_threadsafe() is 0), nor when the
** host chose single-thread mode at run time (SQLITE_CONFIG_SINGLETHREAD),
** which sqlite3_threadsafe() does not tell: in that mode no connection
** gets a mutex, not even one opened with SQLITE_OPEN_FULLMUTEX.  A caller
** whose connection has one is therefore not in it; otherwise (opened
** with SQLITE_OPEN_NOMUTEX, or multi-thread mode) a connection of our
** own is opened to ask, once for the connection's life: the mode is set
** before SQLite initialises and stays until sqlite3_shutdown(), which
** every connection must be closed for.  If the open fails, say so rather
** than guess, and ask again next time.
*/
const char *dsThreadModeRefused(DsConn *pConn){
  sqlite3 *dbProbe = 0;
  const char *zWhy = 0;
  if( !sqlite3_threadsafe() ) return "SQLite built without threads";
  if( sqlite3_db_mutex(pConn->db) ) return 0;
  if( pConn->bThreadModeKnown ) return pConn->zNoThreads;
  if( sqlite3_open_v2(":memory:", &dbProbe,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, 0)
      !=SQLITE_OK ){
    zWhy = "SQLite's threading mode could not be found out";
  }else{
    if( sqlite3_db_mutex(dbProbe)==0 ) zWhy = "SQLite in single-thread mode";
    pConn->zNoThreads = zWhy;
    pConn->bThreadModeKnown = 1;
  }
  sqlite3_close(dbProbe);
  return zWhy;
}

/* Why no worker of the extension's that allocates or uses SQLite may run
** beside the caller, or NULL: threads is 1, or dsThreadModeRefused(). */
const char *dsThreadsRefused(DsConn *pConn){
  if( pConn->nThread<=1 ) return "threads is 1";
  return dsThreadModeRefused(pConn);
}

#else  /* DS_OMIT_THREADS */

const char *dsThreadsRefused(DsConn *pConn){
  return pConn->nThread<=1 ? "threads is 1" : "built without threads";
}

#endif /* DS_OMIT_THREADS */

/*
** Work split into items, run by the caller and by helper threads at once.
**
** An operator's own work on memory it already holds (making a hash table
** from rows read: counting them into slots, copying them to their slots)
** is cut into items that allocate nothing and call no SQLite, each on
** memory of its own: a sub-table.  dsSplitRun() starts up to threads - 1
** helpers (never more than there are items less one), and every thread,
** the caller's included, claims the next item not taken until none is
** left; so the work follows each thread's speed, and with threads 1, or
** where a helper cannot be started, the caller runs every item alone, in
** order.
**
** Stopping.  Items call dsSplitTick() as they go, with the weight of the
** work done (the units of dsTickerTick).  On the caller's thread that is
** the operator's ticker: its checks notice sqlite3_interrupt() and run
** the progress handler.  An error there, or an item's, stops the split:
** no item is claimed after it, and helpers, which look at the stop flag
** every DS_TICK_CHECK units, give up theirs.  The caller, out of items,
** waits for the helpers, checking for an interrupt every DS_SPLIT_WAIT_US
** meanwhile, and joins them before it returns: no helper outlives the
** call, and what the items wrote is the caller's to read when it returns
** (pthread_join orders their writes before).  The first error is the
** answer; items a stop cut short leave their memory half written, for
** the caller to free.
*/
struct DsSplitWork {
  DsSplit *pSplit;
  DsTicker *pTicker;      /* the caller's; NULL on a helper */
  u32 nTick;              /* a helper's units since it last looked */
};

#define DS_SPLIT_MAX_HELPERS 7
#define DS_SPLIT_WAIT_US 200

/* What the threads of a split share.  Without threads, plain ints. */
#ifndef DS_OMIT_THREADS
typedef atomic_int DsSplitInt;
# define DS_SPLIT_INIT(p, v)  atomic_init(p, v)
# define DS_SPLIT_GET(p)      atomic_load(p)
# define DS_SPLIT_SET(p, v)   atomic_store(p, v)
# define DS_SPLIT_NEXT(p)     atomic_fetch_add(p, 1)
#else
typedef int DsSplitInt;
# define DS_SPLIT_INIT(p, v)  (*(p) = (v))
# define DS_SPLIT_GET(p)      (*(p))
# define DS_SPLIT_SET(p, v)   (*(p) = (v))
# define DS_SPLIT_NEXT(p)     ((*(p))++)
#endif

struct DsSplit {
  int (*xItem)(void *, int, DsSplitWork *);
  void *pArg;
  int nItem;
  DsSplitInt iNext;       /* the next item to claim */
  DsSplitInt bStop;       /* an error or an interrupt: claim no more */
  DsSplitInt nHelperDone; /* helpers that have finished */
};

int dsSplitTick(DsSplitWork *pWork, u32 n){
  if( pWork->pTicker ){
    int rc = dsTickerTick(pWork->pTicker, n);
    if( rc!=SQLITE_OK ) DS_SPLIT_SET(&pWork->pSplit->bStop, 1);
    return rc;
  }
  pWork->nTick += n;
  if( pWork->nTick < DS_TICK_CHECK ) return SQLITE_OK;
  pWork->nTick = 0;
  return DS_SPLIT_GET(&pWork->pSplit->bStop) ? SQLITE_INTERRUPT : SQLITE_OK;
}

/* Claim and run items until none is left or the split stops. */
static int dsSplitClaim(DsSplitWork *pWork){
  DsSplit *p = pWork->pSplit;
  while( !DS_SPLIT_GET(&p->bStop) ){
    int i = DS_SPLIT_NEXT(&p->iNext);
    int rc;
    if( i>=p->nItem ) break;
    rc = p->xItem(p->pArg, i, pWork);
    if( rc!=SQLITE_OK ){
      DS_SPLIT_SET(&p->bStop, 1);
      return rc;
    }
  }
  return SQLITE_OK;
}

#ifndef DS_OMIT_THREADS
static void *dsSplitHelper(void *pArg){
  DsSplitWork work;
  work.pSplit = (DsSplit *)pArg;
  work.pTicker = 0;
  work.nTick = 0;
  /* A helper's item fails only when told to stop: the caller has the
  ** reason. */
  (void)dsSplitClaim(&work);
  DS_SPLIT_NEXT(&work.pSplit->nHelperDone);
  return 0;
}

#ifdef DS_TEST_HOOKS
/* Splits (and DsAsync helpers) that started every helper they wanted,
** and those that started fewer; from now on at most nAllow helpers per
** split, and none for a DsAsync if nAllow is 0 (-1: no limit; a start
** past it fails as if pthread_create() had: the test program's
** ds_split_helpers); -2 leaves the limit as it is. */
static atomic_int dsSplitFull, dsSplitShort;
static atomic_int dsSplitAllow = -1;
void dsSplitTest(int nAllow, int *pnFull, int *pnShort){
  if( nAllow>=-1 ) atomic_store(&dsSplitAllow, nAllow);
  *pnFull = atomic_load(&dsSplitFull);
  *pnShort = atomic_load(&dsSplitShort);
}
static int dsHelperCreate(pthread_t *pThread, void *(*x)(void *),
                          void *pArg, int iHelper){
  int nAllow = atomic_load(&dsSplitAllow);
  if( nAllow>=0 && iHelper>=nAllow ) return EAGAIN;
  return pthread_create(pThread, 0, x, pArg);
}
# define dsSplitCount(nStarted, nWant) \
  atomic_fetch_add((nStarted)<(nWant) ? &dsSplitShort : &dsSplitFull, 1)
#else
# define dsHelperCreate(pThread, x, pArg, i) pthread_create(pThread, 0, x, pArg)
# define dsSplitCount(nStarted, nWant)
#endif

/* Start up to nWant helpers on p; how many started.  A helper that cannot
** be started leaves its share to the threads that run. */
static int dsSplitStart(DsSplit *p, pthread_t *aThread, int nWant){
  int n = 0;
  while( n<nWant && dsHelperCreate(&aThread[n], dsSplitHelper, p, n)==0 ){
    n++;
  }
  dsSplitCount(n, nWant);
  return n;
}

/* Wait for the n helpers started, noticing an interrupt meanwhile, and
** join them.  SQLITE_OK, or the interrupt's error. */
static int dsSplitJoin(DsSplit *p, DsTicker *pTicker, pthread_t *aThread,
                       int n){
  int rc = SQLITE_OK;
  int i;
  while( DS_SPLIT_GET(&p->nHelperDone)<n ){
    struct timespec ts = { 0, DS_SPLIT_WAIT_US * 1000L };
    if( rc==SQLITE_OK && (rc = dsTickerCheck(pTicker))!=SQLITE_OK ){
      DS_SPLIT_SET(&p->bStop, 1);
    }
    nanosleep(&ts, 0);
  }
  for(i=0; i<n; i++) pthread_join(aThread[i], 0);
  return rc;
}
#endif

int dsSplitRun(DsConn *pConn, DsTicker *pTicker, int bParallel, int nItem,
               int (*xItem)(void *, int, DsSplitWork *), void *pArg,
               int *pnThread){
  DsSplit split;
  DsSplitWork work;
  int nHelper = 0;
  int rc;
#ifndef DS_OMIT_THREADS
  pthread_t aThread[DS_SPLIT_MAX_HELPERS];
  int nWant = bParallel ? pConn->nThread - 1 : 0;
  if( nWant > nItem - 1 ) nWant = nItem - 1;
  if( nWant > DS_SPLIT_MAX_HELPERS ) nWant = DS_SPLIT_MAX_HELPERS;
#else
  (void)pConn;
  (void)bParallel;
#endif
  split.xItem = xItem;
  split.pArg = pArg;
  split.nItem = nItem;
  DS_SPLIT_INIT(&split.iNext, 0);
  DS_SPLIT_INIT(&split.bStop, 0);
  DS_SPLIT_INIT(&split.nHelperDone, 0);
#ifndef DS_OMIT_THREADS
  if( nWant>0 ) nHelper = dsSplitStart(&split, aThread, nWant);
#endif
  work.pSplit = &split;
  work.pTicker = pTicker;
  work.nTick = 0;
  rc = dsSplitClaim(&work);
#ifndef DS_OMIT_THREADS
  if( nHelper>0 ){
    int rcWait = dsSplitJoin(&split, pTicker, aThread, nHelper);
    if( rc==SQLITE_OK ) rc = rcWait;
  }
#endif
  if( pnThread && 1 + nHelper > *pnThread ) *pnThread = 1 + nHelper;
  return rc;
}

/*
** Jobs run on one helper while the caller goes on (DsAsync).
**
** An operator whose input only the caller may read (an aggregate, which
** SQLite hands its rows one at a time) can still have the work on each
** batch of them done beside the reading: the caller fills a batch, posts
** it as a job (dsAsyncPost), and fills the next while the helper runs
** xJob on the first; before it posts the next, it waits for the job
** (dsAsyncWait).  So at most one job runs at a time, in the order posted,
** and between a wait and the next post the helper touches nothing: what
** the job wrote is then the caller's to read (the mutex orders the
** writes before).  A job must allocate only memory no other thread
** charges meanwhile, call no SQLite, and be short: the caller waits for
** it without looking for an interrupt.
**
** Where threads is 1, SQLite may not be used from other threads, or the
** helper cannot be started, dsAsyncStart() gives no DsAsync: the caller
** runs each job itself, at once.  dsAsyncEnd() waits for the last job,
** stops the helper and joins it.
*/
#ifndef DS_OMIT_THREADS
struct DsAsync {
  int (*xJob)(void *);
  pthread_t thread;
  pthread_mutex_t mutex;
  pthread_cond_t cPost;   /* a job was posted, or the helper must stop */
  pthread_cond_t cDone;   /* the job posted is done */
  void *pArg;             /* the job posted */
  int bBusy;              /* a job is posted and not done */
  int bStop;              /* the helper is to return */
  int rcJob;              /* what the last job returned */
};

static void *dsAsyncHelper(void *pArg){
  DsAsync *p = (DsAsync *)pArg;
  pthread_mutex_lock(&p->mutex);
  for(;;){
    int rc;
    while( !p->bBusy && !p->bStop ) pthread_cond_wait(&p->cPost, &p->mutex);
    if( !p->bBusy ) break;
    pthread_mutex_unlock(&p->mutex);
    rc = p->xJob(p->pArg);
    pthread_mutex_lock(&p->mutex);
    p->rcJob = rc;
    p->bBusy = 0;
    pthread_cond_signal(&p->cDone);
  }
  pthread_mutex_unlock(&p->mutex);
  return 0;
}

/* Start a helper that runs xJob on each job posted: *pp is NULL if none
** may run or it cannot start (the caller runs the jobs).  SQLITE_OK or
** SQLITE_NOMEM. */
int dsAsyncStart(DsConn *pConn, int (*xJob)(void *), DsAsync **pp){
  DsAsync *p;
  *pp = 0;
  if( dsThreadsRefused(pConn) ) return SQLITE_OK;
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->xJob = xJob;
  if( pthread_mutex_init(&p->mutex, 0) ){
    sqlite3_free(p);
    return SQLITE_OK;
  }
  if( pthread_cond_init(&p->cPost, 0)==0 ){
    if( pthread_cond_init(&p->cDone, 0)==0 ){
      int bStarted = dsHelperCreate(&p->thread, dsAsyncHelper, p, 0)==0;
      dsSplitCount(bStarted, 1);
      if( bStarted ){
        *pp = p;
        return SQLITE_OK;
      }
      pthread_cond_destroy(&p->cDone);
    }
    pthread_cond_destroy(&p->cPost);
  }
  pthread_mutex_destroy(&p->mutex);
  sqlite3_free(p);
  return SQLITE_OK;
}

/* Run xJob(pArg) on the helper; the job posted before must have been
** waited for. */
void dsAsyncPost(DsAsync *p, void *pArg){
  pthread_mutex_lock(&p->mutex);
  assert( !p->bBusy );
  p->pArg = pArg;
  p->bBusy = 1;
  pthread_cond_signal(&p->cPost);
  pthread_mutex_unlock(&p->mutex);
}

/* Wait for the job posted, if any: what it returned (SQLITE_OK if none
** was posted since the last wait). */
int dsAsyncWait(DsAsync *p){
  int rc;
  pthread_mutex_lock(&p->mutex);
  while( p->bBusy ) pthread_cond_wait(&p->cDone, &p->mutex);
  rc = p->rcJob;
  p->rcJob = SQLITE_OK;
  pthread_mutex_unlock(&p->mutex);
  return rc;
}

/* Wait for the last job, stop the helper, join it and free p (may be
** NULL). */
void dsAsyncEnd(DsAsync *p){
  if( p==0 ) return;
  (void)dsAsyncWait(p);
  pthread_mutex_lock(&p->mutex);
  p->bStop = 1;
  pthread_cond_signal(&p->cPost);
  pthread_mutex_unlock(&p->mutex);
  pthread_join(p->thread, 0);
  pthread_cond_destroy(&p->cDone);
  pthread_cond_destroy(&p->cPost);
  pthread_mutex_destroy(&p->mutex);
  sqlite3_free(p);
}

#else  /* DS_OMIT_THREADS */

int dsAsyncStart(DsConn *pConn, int (*xJob)(void *), DsAsync **pp){
  (void)pConn;
  (void)xJob;
  *pp = 0;
  return SQLITE_OK;
}
void dsAsyncPost(DsAsync *p, void *pArg){ (void)p; (void)pArg; }
int dsAsyncWait(DsAsync *p){ (void)p; return SQLITE_OK; }
void dsAsyncEnd(DsAsync *p){ (void)p; }

#endif /* DS_OMIT_THREADS */
