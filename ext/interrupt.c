/*
** interrupt.c: noticing sqlite3_interrupt() and progress handlers in the
** extension's own CPU-only loops.
**
** The statements an operator steps (the readers of its inputs) notice an
** interrupt by themselves and fail with SQLITE_INTERRUPT.  The loops of
** the extension's own (putting rows into a hash table, radix sort passes,
** merging sorted runs, writing and reading spill files, making JSON) step
** no statement, so they call dsTickerTick() as they go, with the weight of
** the work just done in units of about two nanoseconds (DS_TICK_ROW for a
** row handled, 1 for a pass over one sort entry or one directory slot).
** Every DS_TICK_CHECK units, some tenths of a millisecond of work, the
** ticker checks (dsTickerCheck):
**
**   1. sqlite3_is_interrupted(), when the running SQLite has it (3.41 and
**      later).  It is looked up at run time (dsFindIsInterrupted): the
**      extension is built against Debian's SQLite 3.40 header and loads on
**      any SQLite from 3.38 on.  It is a plain read of the connection's
**      flag, safe on any thread, so a sort's worker thread checks it too.
**
**   2. Then it steps a prepared statement, the ping.  On every SQLite that
**      step fails with SQLITE_INTERRUPT once sqlite3_interrupt() was called
**      (the only way to tell on 3.40), and its VM instructions count toward
**      the connection's progress handler: SQLite calls the handler once N
**      instructions have passed since the last call (at the latest when a
**      step ends), and fails the step with SQLITE_INTERRUPT if it returns
**      non-zero.  The ping is a count over 16 rows of VALUES, about 90
**      instructions in about a microsecond, rather than "SELECT 1" (5
**      instructions): the instructions stand in for the work done since
**      the last check, so that a handler registered for every N
**      instructions is called about once per N/90 checks while an operator
**      computes without reading anything (every few milliseconds for N =
**      1000), at a cost below 1% of that work.
**
** A ticker also holds what its operator is doing (dsTickerStep: "hash
** table", "radix sort", ...), for ds_last_stats() to name the step an
** operator failed in ("stopped_in"), for the phase of the progress line
** (progress.c, which each check also lets redraw), and, in test builds
** (-DDS_TEST_HOOKS), for a hook that the SQL function ds_test_hook()
** installs on a connection and that is called at each new step:
** tests/interrupt.c interrupts at chosen moments with it.
*/
#include "dataset_int.h"

#ifdef DS_TEST_HOOKS
/* What a test binds to ds_test_hook(?) with sqlite3_bind_pointer()
** (tests/interrupt.c declares the same). */
typedef struct DsTestHook DsTestHook;
struct DsTestHook {
  void (*xStep)(void *pArg, const char *zStep);
  void *pArg;
};
#endif

/* The ping: about 90 VM instructions, one result row. */
#define DS_PING_SQL "SELECT count(*) FROM (VALUES (0),(0),(0),(0),(0),(0)," \
                    "(0),(0),(0),(0),(0),(0),(0),(0),(0),(0))"

/*
** sqlite3_is_interrupted() of the running SQLite, or NULL when it is older
** than 3.41.  In a loadable extension it is a slot of the routines SQLite
** hands over (sqlite3_api), which only grows at its end, one routine at a
** time: in the 3.41 layout is_interrupted comes right after the last
** routine of 3.40, value_encoding.  Built against a 3.40 header, the slot
** is read through a struct of that layout; built against an older header,
** the position is unknown and the ping alone is used.
*/
#if !defined(SQLITE_CORE) && SQLITE_VERSION_NUMBER>=3040000 \
    && SQLITE_VERSION_NUMBER<3041000
typedef struct DsApi3041 DsApi3041;
struct DsApi3041 {
  sqlite3_api_routines base;            /* every routine up to 3.40 */
  int (*is_interrupted)(sqlite3 *);     /* the first routine of 3.41 */
};
#endif

int (*dsFindIsInterrupted(void))(sqlite3 *){
  if( sqlite3_libversion_number() < 3041000 ) return 0;
#if SQLITE_VERSION_NUMBER>=3041000
  return sqlite3_is_interrupted;
#elif !defined(SQLITE_CORE) && SQLITE_VERSION_NUMBER>=3040000
  return ((const DsApi3041 *)sqlite3_api)->is_interrupted;
#else
  return 0;
#endif
}

void dsTickerInit(DsTicker *p, DsConn *pConn){
  memset(p, 0, sizeof(*p));
  p->pConn = pConn;
}

/*
** SQLITE_INTERRUPT if sqlite3_interrupt() was called on the connection or
** its progress handler asked to stop; else SQLITE_OK (or SQLITE_NOMEM if
** the ping cannot be prepared).
*/
int dsTickerCheck(DsTicker *p){
  sqlite3 *db = p->pConn->db;
  int rc;
  p->nTick = 0;
  /* The progress line is looked at here, never per row (progress.c). */
  if( p->pConn->pProgress ) dsProgressCheck(p->pConn->pProgress);
  if( p->pConn->xIsInterrupted && p->pConn->xIsInterrupted(db) ){
    return SQLITE_INTERRUPT;
  }
  if( p->pPing==0 ){
    rc = sqlite3_prepare_v2(db, DS_PING_SQL, -1, &p->pPing, 0);
    if( rc!=SQLITE_OK ) return rc;
  }
  rc = sqlite3_step(p->pPing);
  sqlite3_reset(p->pPing);
  return (rc==SQLITE_ROW || rc==SQLITE_DONE) ? SQLITE_OK : rc;
}

/* The operator starts doing zStep (a static string). */
void dsTickerStep(DsTicker *p, const char *zStep){
  if( p->zStep==zStep ) return;
  p->zStep = zStep;
  if( p->pProg ) dsProgressStep(p->pProg, zStep);
#ifdef DS_TEST_HOOKS
  if( p->pConn->xTestStep ) p->pConn->xTestStep(p->pConn->pTestArg, zStep);
#endif
}

void dsTickerFinish(DsTicker *p){
  sqlite3_finalize(p->pPing);
  p->pPing = 0;
}

#ifdef DS_TEST_HOOKS
/*
** ds_test_hook(P): P is a pointer bound with sqlite3_bind_pointer(), of
** type "ds_test_hook", to a DsTestHook, or NULL to remove the hook.  Only
** in test builds: it lets a test program see each step of an operator as
** it starts, on the operator's own thread.  Returns 1 if the connection
** checks sqlite3_is_interrupted(), 0 if it only steps the ping.
*/
static void dsTestHookFunc(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  DsConn *pConn = (DsConn *)sqlite3_user_data(ctx);
  DsTestHook *pHook = sqlite3_value_pointer(argv[0], "ds_test_hook");
  (void)argc;
  pConn->xTestStep = pHook ? pHook->xStep : 0;
  pConn->pTestArg = pHook ? pHook->pArg : 0;
  sqlite3_result_int(ctx, pConn->xIsInterrupted!=0);
}

int dsRegisterTestHooks(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_function(db, "ds_test_hook", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, pConn,
                                 dsTestHookFunc, 0, 0);
}
#endif
