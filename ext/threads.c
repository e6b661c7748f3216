/*
** threads.c: what every worker thread of the extension needs to know
** before it starts, and the timed wait of a caller for one.
**
** Workers (rangeread.c's range readers, stageahead.c's stages, sort.c's
** run writers) run only where threads is above 1 and SQLite may be used
** from another thread than the caller's: a worker allocates with
** sqlite3_malloc(), and a range reader opens connections of its own.
** The caller waiting for a worker wakes every few milliseconds to check
** for an interrupt, on the monotonic clock.
*/
#include "dataset_int.h"

#include <time.h>

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
