/*
** interrupt.c: does every step of every operator stop promptly when its
** statement is interrupted, and how promptly?
**
**   build/interrupt DIR [GLOB ...]
**
** For each case (an operator, a hint, a step of its work) and each of two
** ways of stopping it, the program runs the case's query on a database of
** its own in DIR and stops it in that step:
**
**   interrupt  a second thread calls sqlite3_interrupt();
**   progress   the connection's progress handler (called every 1000 VM
**              instructions) starts returning 1 (not for the step where
**              the readers are prepared: a prepare never calls it).
**
** The moment is chosen with the extension's test hook (built with
** -DDS_TEST_HOOKS: the SQL function ds_test_hook() takes a pointer to a
** DsTestHook, whose xStep is called on the operator's thread each time the
** operator starts a step of its work).  When the case's step starts for
** the n-th time, the interrupter thread waits a few milliseconds, so that
** the operator is well inside its loop, and then stops it; when a try
** misses the step (it had ended, or ended before the stop took effect),
** the next asks for the stop from the hook itself, as the step starts.  Measured:
** the time from the interrupt (or the moment the progress handler starts
** saying stop) to sqlite3_step() returning.  Checked, for each run:
**
**   - the step was the case's step when the stop was asked for, and still
**     when sqlite3_step() returned (the step stopped, not a later one);
**     if not (a short step on a busy machine), the run is tried again
**     with the stop asked for as the step starts, twice at most;
**   - sqlite3_step() returned SQLITE_INTERRUPT with "FUNC: interrupted";
**   - ds_last_stats() names the step ("stopped_in"), for the operators
**     that publish statistics (not the aggregate ds_key_stats);
**   - it took less than 2 s (a ceiling to catch hangs, not a speed test:
**     the latencies are printed, and docs/reliability.md reports them);
**   - no spill file was left in temp_dir, and no file descriptor is open
**     that was not before;
**   - the connection still works: a join gives the same rows as SQLite's
**     own JOIN ... ON +l.k = +r.k.
**
** It prints one line per run, `ok CASE MODE ...` or `FAILED CASE MODE:
** why`, and ends with `N passed, N failed` (exit status 1 on a failure).
** GLOB arguments pick cases by name.  The extension is loaded from $DS_EXT
** (default build/test/hooks/dataset).  It runs on whatever SQLite it is
** linked with: Debian's 3.40, where the extension checks for interrupts by
** stepping a statement, or a newer one (make interrupt-new), where it
** reads sqlite3_is_interrupted() too.
*/
#include <sqlite3.h>

#include <dirent.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The rows of the large tables: enough that each step lasts tens of
** milliseconds, few enough that the whole run takes under a minute. */
#define N_ROWS   400000
#define N_ONE    100000     /* rows of the one-key table */
#define N_FEW    1000       /* rows of the small table, 100 keys */

#define CEILING_MS 2000.0   /* a run slower than this has hung */
#define DELAY_MS   3.0      /* into the step before stopping it */

/* What the extension's test hook is given (ext/interrupt.c). */
typedef struct DsTestHook DsTestHook;
struct DsTestHook {
  void (*xStep)(void *pArg, const char *zStep);
  void *pArg;
};

typedef struct Case Case;
struct Case {
  const char *zName;
  const char *zFunc;      /* the function whose message says interrupted */
  const char *zSetup;     /* ds_config() settings, or NULL */
  const char *zSql;       /* the query to stop */
  const char *zStep;      /* the step to stop it in */
  int nOccur;             /* stop at the n-th start of that step (0: 1st;
                          ** -1: the last resize of ds_key_stats) */
  int eWho;               /* OURS, OUTPUT, AGG, OPENING or HANDOFF */
};

/* Resizes of ds_key_stats's directory over N_ROWS distinct keys: the
** first makes 16 slots, each next one doubles them, up to N_ROWS. */
static int keyStatsRehashes(void){
  int n = 1;
  long nSlot = 16;
  while( nSlot < N_ROWS ){ nSlot *= 2; n++; }
  return n;
}

#define J(h) "SELECT count(*) FROM ds_join_hint('a', 'b', 'k', 'k', '" h "')"
#define JT(h, t) "SELECT count(*) FROM ds_join_hint('a', 'b', 'k', 'k', '" \
                 h "', '" t "')"
#define JC(h) "SELECT count(*) FROM ds_join_hint('a', 'c', 'k', 'k', '" h "')"
#define SMALL "SELECT ds_config('memory_limit', '4MB')"
#define TINY  "SELECT ds_config('memory_limit', '1MB')"

/* Who may stop a case: OURS, the extension's own check (the message is
** "FUNC: interrupted" and ds_last_stats() says where); OUTPUT, a step that
** hands rows to SQLite, whose own check between rows may come first (the
** message is then SQLite's "interrupted"); AGG, the aggregate ds_key_stats,
** whose loops are its own but which keeps no ds_last_stats(). */
#define OURS   0
#define OUTPUT 1
#define AGG    2
/* OPENING: a step before the operator's statements run, whose prepares
** see sqlite3_interrupt() but never call the progress handler: stopped
** by the interrupt alone. */
#define OPENING 3
/* HANDOFF: the caller taking back what a worker did (a sort run it
** wrote), when the worker may be done already: the one check made there
** sees sqlite3_interrupt() at once, but a progress handler is called only
** every N VM instructions of checks, so that the next step answers it:
** stopped by the interrupt alone. */
#define HANDOFF 4

static Case aCase[] = {
  /* Planning: the readers are prepared then, and a prepare that sees
  ** the interrupt fails with SQLite's own SQLITE_INTERRUPT. */
  { "join.bhf.plan", "ds_join_hint", 0, J("BROADCAST_HASH_FIRST"), "plan", 0, OPENING },
  /* The hash strategies, in memory.  a and b have the same keys, a and c
  ** none in common: probing then produces nothing, and only the join's
  ** own check can stop it. */
  { "join.bhf.build", "ds_join_hint", 0, J("BROADCAST_HASH_FIRST"), "build", 0, OURS },
  { "join.bhf.table", "ds_join_hint", 0, J("BROADCAST_HASH_FIRST"), "hash table", 0, OURS },
  { "join.bhf.probe", "ds_join_hint", 0, J("BROADCAST_HASH_FIRST"), "probe", 0, OUTPUT },
  { "join.bhf.probe.nomatch", "ds_join_hint", 0, JC("BROADCAST_HASH_FIRST"), "probe", 0, OURS },
  { "join.bhf.drain", "ds_join_hint", 0, JT("BROADCAST_HASH_FIRST", "LEFT_OUTER"), "drain", 0, OURS },
  { "join.bhs.build", "ds_join_hint", 0, J("BROADCAST_HASH_SECOND"), "build", 0, OURS },
  { "join.bhs.table", "ds_join_hint", 0, J("BROADCAST_HASH_SECOND"), "hash table", 0, OURS },
  { "join.bhs.probe", "ds_join_hint", 0, J("BROADCAST_HASH_SECOND"), "probe", 0, OUTPUT },
  { "join.bhs.probe.nomatch", "ds_join_hint", 0, JC("BROADCAST_HASH_SECOND"), "probe", 0, OURS },
  { "join.bhs.drain", "ds_join_hint", 0, JT("BROADCAST_HASH_SECOND", "FULL_OUTER"), "drain", 0, OURS },
  /* OPTIMIZER_CHOOSES broadcasts b, whose table fits (plan.c).  Both
  ** sides repartitioned in memory: without matches the Bloom filters drop
  ** every probe row as it is partitioned. */
  { "join.opt.probe", "ds_join_hint", 0, J("OPTIMIZER_CHOOSES"), "probe", 0, OUTPUT },
  { "join.rhs.partition.nomatch", "ds_join_hint", 0, JC("REPARTITION_HASH_SECOND"), "partition", 0, OURS },
  /* The hash strategies, spilling: partitions written while the sides
  ** are read, then the partitions joined one by one. */
  { "join.rhf.build", "ds_join_hint", SMALL, J("REPARTITION_HASH_FIRST"), "build", 0, OURS },
  { "join.rhf.partition", "ds_join_hint", SMALL, J("REPARTITION_HASH_FIRST"), "partition", 0, OURS },
  { "join.rhf.probe", "ds_join_hint", SMALL, J("REPARTITION_HASH_FIRST"), "probe", 0, OUTPUT },
  /* Without a key in common, every probe row is dropped by the Bloom
  ** filters as it is read, in the partitioning: no partition is left to
  ** probe, and the reading is the step to stop. */
  { "join.rhf.partition.nomatch", "ds_join_hint", SMALL, JC("REPARTITION_HASH_FIRST"), "partition", 0, OURS },
  { "join.rhs.build", "ds_join_hint", SMALL, J("REPARTITION_HASH_SECOND"), "build", 0, OURS },
  { "join.rhs.partition", "ds_join_hint", SMALL, J("REPARTITION_HASH_SECOND"), "partition", 0, OURS },
  { "join.rhs.probe", "ds_join_hint", SMALL, JT("REPARTITION_HASH_SECOND", "FULL_OUTER"), "probe", 0, OUTPUT },
  { "join.bhs.spilled.probe.nomatch", "ds_join_hint", SMALL, JC("BROADCAST_HASH_SECOND"), "probe", 0, OURS },
  /* With threads, a task's probe file is read ahead and probed by a
  ** worker (spill.c): the 21st start of the probe, past the partitions
  ** that stayed in memory, is a task's. */
  { "join.rhs.task.worker", "ds_join_hint",
    "SELECT ds_config('threads', 2), ds_config('memory_limit', '4MB')",
    JT("REPARTITION_HASH_SECOND", "FULL_OUTER"), "probe", 20, OUTPUT },
  /* With threads, a query's rows (read by the caller) are probed by a
  ** worker as the caller reads on (stageahead.c). */
  { "join.bhs.query.worker", "ds_join_hint", "SELECT ds_config('threads', 2)",
    "SELECT count(*) FROM ds_join_hint('SELECT k FROM a', 'b', 'k', 'k', "
    "'BROADCAST_HASH_SECOND')", "probe", 0, OUTPUT },
  /* One key larger than memory: the block nested loop. */
  { "join.rhf.bnl", "ds_join_hint", TINY,
    "SELECT count(*) FROM ds_join_hint('one', 'few', 'k', 'k', "
    "'REPARTITION_HASH_FIRST')", "block nested loop", 0, OUTPUT },
  /* Sort-merge: in memory, with sorted runs, with merge passes, with a
  ** worker thread, and one run of equal sort prefixes sorted in full. */
  { "join.sm.input", "ds_join_hint", 0, J("REPARTITION_SORT_MERGE"), "sort input", 0, OURS },
  { "join.sm.radix", "ds_join_hint", 0, J("REPARTITION_SORT_MERGE"), "radix sort", 0, OURS },
  { "join.sm.merge", "ds_join_hint", 0, J("REPARTITION_SORT_MERGE"), "merge join", 0, OUTPUT },
  { "join.sm.merge.nomatch", "ds_join_hint", 0, JC("REPARTITION_SORT_MERGE"), "merge join", 0, OURS },
  { "join.sm.run", "ds_join_hint", SMALL, J("REPARTITION_SORT_MERGE"), "write run", 0, OURS },
  /* With threads, runs are written by a worker while the next is read:
  ** the caller takes each back when the next is full. */
  { "join.sm.run.worker", "ds_join_hint",
    "SELECT ds_config('memory_limit', '4MB'), ds_config('threads', 2)",
    J("REPARTITION_SORT_MERGE"), "write run (worker)", 0, HANDOFF },
  { "join.sm.passes", "ds_join_hint", TINY, J("REPARTITION_SORT_MERGE"), "merge runs", 0, OURS },
  { "join.sm.external", "ds_join_hint", SMALL, J("REPARTITION_SORT_MERGE"), "merge join", 0, OUTPUT },
  { "join.sm.external.nomatch", "ds_join_hint", SMALL, JC("REPARTITION_SORT_MERGE"), "merge join", 0, OURS },
  { "join.sm.ties", "ds_join_hint", 0,
    "SELECT count(*) FROM ds_join_hint('s', 'SELECT k FROM s LIMIT 10', "
    "'k', 'k', 'REPARTITION_SORT_MERGE')", "radix sort", 0, OURS },
  { "join.sm.worker", "ds_join_hint", "SELECT ds_config('threads', 2)",
    "SELECT count(*) FROM ds_join_hint('s', 'SELECT k FROM s LIMIT 10', "
    "'k', 'k', 'REPARTITION_SORT_MERGE')", "radix sort (worker)", 0, OURS },
  /* coGroup: sorting, groups, and the JSON of one huge group. */
  { "cogroup.radix", "ds_cogroup", 0,
    "SELECT count(*) FROM ds_cogroup('a', 'b', 'k', 'k')", "radix sort", 0, OURS },
  { "cogroup.groups", "ds_cogroup", 0,
    "SELECT sum(length(left)) FROM ds_cogroup('a', 'b', 'k', 'k')", "cogroup", 0, OUTPUT },
  /* The huge group (key 1) must be the first: a group before it would be
  ** handed to SQLite at once, whose own check between rows would then
  ** answer a stop asked for as the step starts, with its own message.
  ** With few's key 0 in the input, a try that missed the huge group (a
  ** delayed stop that came late, on a busy machine) failed every retry. */
  { "cogroup.hugegroup", "ds_cogroup", 0,
    "SELECT length(left) FROM ds_cogroup('one', "
    "'SELECT * FROM few WHERE k >= 1', 'k', 'k')", "cogroup", 0, OURS },
  /* cross: buffering the small side, and a large product. */
  { "cross.buffer", "ds_cross", 0,
    "SELECT count(*) FROM ds_cross('a', 'b', 'FIRST_IS_SMALL')", "buffer", 0, OURS },
  { "cross.product", "ds_cross", 0,
    "SELECT count(*) FROM ds_cross('a', 'b', 'FIRST_IS_SMALL')", "cross", 0, OUTPUT },
  { "cross.spilled", "ds_cross", SMALL,
    "SELECT count(*) FROM ds_cross('a', 'b', 'FIRST_IS_SMALL')", "cross", 0, OUTPUT },
  /* ds_join_plan counts the output from both sides' sorted keys. */
  { "plan.radix", "ds_join_plan", 0,
    "SELECT output_rows FROM ds_join_plan('a', 'b', 'k', 'k')", "radix sort", 0, OURS },
  { "plan.count", "ds_join_plan", 0,
    "SELECT output_rows FROM ds_join_plan('a', 'b', 'k', 'k')", "count", 0, OURS },
  /* ds_key_stats: its own loops between rows. */
  { "keystats.rehash", "ds_key_stats", 0,
    "SELECT ds_key_stats(k) FROM a", "rehash", -1, AGG },
  { "keystats.top", "ds_key_stats", 0,
    "SELECT ds_key_stats(k) FROM a", "top keys", 0, AGG },
  { "keystats.sketch", "ds_key_stats", SMALL,
    "SELECT ds_key_stats(k) FROM a", "sketch", 0, AGG },
};

/* The ways of stopping case pCase: both, or the interrupt alone. */
static int nModes(const Case *pCase){
  return pCase->eWho==OPENING || pCase->eWho==HANDOFF ? 1 : 2;
}

/* The runs of every case, in each of its ways (all cases, GLOBs aside). */
static int nModeRuns(void){
  int n = 0;
  size_t i;
  for(i=0; i<sizeof(aCase)/sizeof(aCase[0]); i++) n += nModes(&aCase[i]);
  return n;
}

/*************************************************************************
** Time, messages, small helpers.
*/
static double nowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1.0e6;
}

static void sleepMs(double ms){
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1.0e6);
  nanosleep(&ts, 0);
}

static void fatal(const char *zFormat, ...){
  va_list ap;
  va_start(ap, zFormat);
  fprintf(stdout, "FATAL: ");
  vfprintf(stdout, zFormat, ap);
  fprintf(stdout, "\n");
  va_end(ap);
  exit(2);
}

static void execOrDie(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fatal("%s: %s", zSql, zErr ? zErr : sqlite3_errmsg(db));
  }
}

/* The text of the first column of the first row of zSql, malloc'd, or
** NULL (SQL NULL or an error). */
static char *queryText(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt;
  char *z = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ) return 0;
  if( sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_text(pStmt, 0) ){
    z = strdup((const char *)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  return z;
}

static int countOpenFds(void){
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int n = 0;
  if( d==0 ) return -1;
  while( (e = readdir(d))!=0 ) if( e->d_name[0]!='.' ) n++;
  closedir(d);
  return n;
}

static int dirIsEmpty(const char *zDir){
  DIR *d = opendir(zDir);
  struct dirent *e;
  int bEmpty = 1;
  if( d==0 ) return 0;
  while( (e = readdir(d))!=0 ){
    if( strcmp(e->d_name, ".") && strcmp(e->d_name, "..") ) bEmpty = 0;
  }
  closedir(d);
  return bEmpty;
}

/*************************************************************************
** The database.
*/
static const char *zExt = "build/test/hooks/dataset";

static sqlite3 *openDb(const char *zFile){
  sqlite3 *db;
  char *zErr = 0;
  if( sqlite3_open(zFile, &db)!=SQLITE_OK ) fatal("cannot open %s", zFile);
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
    fatal("cannot load %s: %s", zExt, zErr ? zErr : "?");
  }
  return db;
}

/* a and b: N_ROWS distinct integer keys each, in scrambled orders, the
** same keys (so every probe row matches); c: b's keys moved past a's (so
** none matches); one: N_ONE rows of key 1; few:
** N_FEW rows on 100 keys (1 among them); s: N_ROWS text keys whose first
** eight bytes agree, so that the sort's 7-byte prefixes all tie. */
static void makeData(sqlite3 *db){
  char zSql[2000];
  snprintf(zSql, sizeof(zSql),
    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
    "BEGIN;"
    "CREATE TABLE a(k INTEGER, v TEXT);"
    "CREATE TABLE b(k INTEGER, v TEXT);"
    "CREATE TABLE one(k INTEGER, v TEXT);"
    "CREATE TABLE few(k INTEGER, v TEXT);"
    "CREATE TABLE s(k TEXT);"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
    "  WHERE i<%d-1)"
    "INSERT INTO a SELECT (i*7919)%%%d, 'a' || i FROM c;"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
    "  WHERE i<%d-1)"
    "INSERT INTO b SELECT (i*104729)%%%d, 'b' || i FROM c;"
    "CREATE TABLE c(k INTEGER, v TEXT);"
    "INSERT INTO c SELECT k + %d, 'c' || k FROM b;"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
    "  WHERE i<%d-1)"
    "INSERT INTO one SELECT 1, 'one' || i FROM c;"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
    "  WHERE i<%d-1)"
    "INSERT INTO few SELECT i %% 100, 'few' || i FROM c;"
    "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
    "  WHERE i<%d-1)"
    "INSERT INTO s SELECT 'prefix:' || ((i*7919)%%%d) FROM c;"
    "COMMIT;",
    N_ROWS, N_ROWS, N_ROWS, N_ROWS, N_ROWS, N_ONE, N_FEW, N_ROWS, N_ROWS);
  execOrDie(db, zSql);
}

/* After a stopped run: does a join still give SQLite's own answer? */
static int connectionWorks(sqlite3 *db, char *zWhy, size_t nWhy){
  char *zJoin = queryText(db,
      "SELECT count(*) || ',' || total(json_extract(left, '$.k')) "
      "FROM ds_join_hint('few', 'SELECT * FROM few WHERE k < 50', 'k', 'k')");
  char *zOracle = queryText(db,
      "SELECT count(*) || ',' || total(l.k) FROM few AS l "
      "JOIN (SELECT * FROM few WHERE k < 50) AS r ON +l.k = +r.k");
  int bOk = zJoin && zOracle && strcmp(zJoin, zOracle)==0;
  if( !bOk ){
    snprintf(zWhy, nWhy, "the connection no longer joins right: %s, "
             "SQLite says %s (%s)", zJoin ? zJoin : "(error)",
             zOracle ? zOracle : "(error)", sqlite3_errmsg(db));
  }
  free(zJoin);
  free(zOracle);
  return bOk;
}

/*************************************************************************
** One run: the query, the hook, the interrupter.
*/
typedef struct Run Run;
struct Run {
  sqlite3 *db;
  const Case *pCase;
  int bProgress;          /* stop through the progress handler */
  double msDelay;         /* into the step before stopping */
  int nTarget;            /* the step's start to stop at (0: 1st) */
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  const char *zStep;      /* the operator's step now */
  int nSeen;              /* starts of the case's step so far */
  int bArmed;             /* the step has started for the n-th time */
  int bFinished;          /* sqlite3_step() has returned */
  atomic_int bStop;       /* the progress handler says stop */
  double tStop;           /* when the stop was asked for */
  const char *zStepAtStop;
};

static int progressHandler(void *pArg){
  return atomic_load(&((Run *)pArg)->bStop);
}

/* Ask for the stop (the mutex held). */
static void askStop(Run *p){
  p->zStepAtStop = p->zStep;
  p->tStop = nowMs();
  if( p->bProgress ){
    atomic_store(&p->bStop, 1);
  }else{
    sqlite3_interrupt(p->db);
  }
}

/* The extension's test hook: the operator starts step zStep.  With no
** delay the stop is asked for here, on the operator's thread, as the step
** starts: the only sure way into a step of a millisecond. */
static void hookStep(void *pArg, const char *zStep){
  Run *p = (Run *)pArg;
  pthread_mutex_lock(&p->mutex);
  p->zStep = zStep;
  if( strcmp(zStep, p->pCase->zStep)==0 && p->nSeen++==p->nTarget ){
    p->bArmed = 1;
    if( p->msDelay<=0 ) askStop(p);
    pthread_cond_signal(&p->cond);
  }
  pthread_mutex_unlock(&p->mutex);
}

static void *interrupter(void *pArg){
  Run *p = (Run *)pArg;
  pthread_mutex_lock(&p->mutex);
  while( !p->bArmed && !p->bFinished ) pthread_cond_wait(&p->cond, &p->mutex);
  pthread_mutex_unlock(&p->mutex);
  if( p->bFinished || p->msDelay<=0 ) return 0;
  sleepMs(p->msDelay);
  pthread_mutex_lock(&p->mutex);
  /* Too late once finished: an interrupt now would hit the next
  ** statement. */
  if( !p->bFinished ) askStop(p);
  pthread_mutex_unlock(&p->mutex);
  return 0;
}

/* Run the case once; 0 and zWhy set on a failure, 1 if it passed, -1 if
** the step ended before the stop came or took effect (try again). */
static int runOnce(sqlite3 *db, const Case *pCase, int bProgress,
                   double msDelay, const char *zTmp, double *pmsLatency,
                   char *zWhy, size_t nWhy){
  Run run;
  DsTestHook hook;
  sqlite3_stmt *pStmt, *pHook;
  pthread_t thread;
  double tEnd;
  int rc, nFd;
  char zMsg[200];
  const char *zStepAtEnd;
  char *zStats;
  int bOurs;

  memset(&run, 0, sizeof(run));
  run.db = db;
  run.pCase = pCase;
  run.bProgress = bProgress;
  run.msDelay = msDelay;
  run.nTarget = pCase->nOccur>=0 ? pCase->nOccur : keyStatsRehashes() - 1;
  pthread_mutex_init(&run.mutex, 0);
  pthread_cond_init(&run.cond, 0);
  atomic_init(&run.bStop, 0);

  execOrDie(db, "SELECT ds_config('memory_limit', '256MB'), "
                "ds_config('threads', 1)");
  if( pCase->zSetup ) execOrDie(db, pCase->zSetup);
  {
    char *z = sqlite3_mprintf("SELECT ds_config('temp_dir', %Q)", zTmp);
    execOrDie(db, z);
    sqlite3_free(z);
  }
  hook.xStep = hookStep;
  hook.pArg = &run;
  if( sqlite3_prepare_v2(db, "SELECT ds_test_hook(?)", -1, &pHook, 0) ){
    fatal("no ds_test_hook(): is %s built with -DDS_TEST_HOOKS?", zExt);
  }
  sqlite3_bind_pointer(pHook, 1, &hook, "ds_test_hook", 0);
  if( sqlite3_step(pHook)!=SQLITE_ROW ) fatal("ds_test_hook: %s", sqlite3_errmsg(db));
  sqlite3_reset(pHook);
  if( bProgress ) sqlite3_progress_handler(db, 1000, progressHandler, &run);

  nFd = countOpenFds();
  if( sqlite3_prepare_v2(db, pCase->zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    fatal("%s: %s", pCase->zSql, sqlite3_errmsg(db));
  }
  pthread_create(&thread, 0, interrupter, &run);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){}
  tEnd = nowMs();
  pthread_mutex_lock(&run.mutex);
  run.bFinished = 1;
  zStepAtEnd = run.zStep;
  pthread_cond_signal(&run.cond);
  pthread_mutex_unlock(&run.mutex);
  pthread_join(thread, 0);
  snprintf(zMsg, sizeof(zMsg), "%s", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  sqlite3_progress_handler(db, 0, 0, 0);
  sqlite3_bind_null(pHook, 1);
  sqlite3_step(pHook);
  sqlite3_finalize(pHook);
  pthread_mutex_destroy(&run.mutex);
  pthread_cond_destroy(&run.cond);

  *pmsLatency = tEnd - run.tStop;
  if( run.tStop==0 && run.bArmed && msDelay>0 ){
    /* The step started, and the whole query ended before the delayed
    ** stop came: try again with the stop asked for as the step starts. */
    snprintf(zWhy, nWhy, "the query ended (rc=%d) within %.0f ms of its "
             "step '%s' starting", rc, msDelay, pCase->zStep);
    return -1;
  }
  if( run.tStop==0 ){
    snprintf(zWhy, nWhy, "the query ended (rc=%d) before its step '%s' "
             "started %d time(s)", rc, pCase->zStep, run.nTarget + 1);
    return 0;
  }
  if( run.zStepAtStop==0 || strcmp(run.zStepAtStop, pCase->zStep)!=0 ){
    snprintf(zWhy, nWhy, "the step had ended when the stop came: it was "
             "'%s'", run.zStepAtStop ? run.zStepAtStop : "(none)");
    return -1;
  }
  if( rc!=SQLITE_INTERRUPT ){
    snprintf(zWhy, nWhy, "sqlite3_step() gave %d (%s), not SQLITE_INTERRUPT",
             rc, zMsg);
    /* The last step of a run (a drain) may end a moment after it
    ** starts, before a delayed stop comes: try again with the stop asked
    ** for as it starts, which its loop must notice. */
    return msDelay>0 ? -1 : 0;
  }
  if( zStepAtEnd==0 || strcmp(zStepAtEnd, pCase->zStep)!=0 ){
    /* A short step may end before a check comes, above all when the
    ** progress handler is called only every few checks: try again, the
    ** next time with the stop asked for as the step starts.  A loop that
    ** never checks fails every time. */
    snprintf(zWhy, nWhy, "it stopped in step '%s', not in '%s'",
             zStepAtEnd ? zStepAtEnd : "(none)", pCase->zStep);
    return -1;
  }
  {
    char zWant[100];
    snprintf(zWant, sizeof(zWant), "%s: interrupted", pCase->zFunc);
    /* SQLite's own message where its check may come first: between rows
    ** handed to it, and, with a progress handler that goes on saying stop,
    ** when the statement ends (SQLite asks the handler again then and
    ** puts its own message over the operator's). */
    bOurs = strcmp(zMsg, zWant)==0;
    if( !bOurs && ((pCase->eWho!=OUTPUT && !bProgress)
                   || strcmp(zMsg, "interrupted")!=0) ){
      snprintf(zWhy, nWhy, "the message is '%s', not '%s'", zMsg, zWant);
      /* As above: SQLite's own check after a step that had ended. */
      return msDelay>0 ? -1 : 0;
    }
  }
  if( *pmsLatency > CEILING_MS ){
    snprintf(zWhy, nWhy, "it took %.1f ms to stop", *pmsLatency);
    return 0;
  }
  if( bOurs && pCase->eWho!=AGG ){
    zStats = queryText(db, "SELECT json_extract(ds_last_stats(), "
                           "'$.error') || '/' || json_extract(ds_last_stats(), "
                           "'$.stopped_in')");
    if( zStats==0 || strncmp(zStats, "interrupted/", 12)!=0
     || strcmp(zStats + 12, pCase->zStep)!=0 ){
      snprintf(zWhy, nWhy, "ds_last_stats() says error/stopped_in = %s",
               zStats ? zStats : "NULL");
      free(zStats);
      return 0;
    }
    free(zStats);
  }
  if( !dirIsEmpty(zTmp) ){
    snprintf(zWhy, nWhy, "temp_dir %s is not empty", zTmp);
    return 0;
  }
  if( countOpenFds()!=nFd ){
    snprintf(zWhy, nWhy, "%d file descriptors open, %d before",
             countOpenFds(), nFd);
    return 0;
  }
  return connectionWorks(db, zWhy, nWhy);
}

/*************************************************************************
** Main.
*/
static int wanted(const char *zName, int argc, char **argv){
  int i;
  if( argc<=2 ) return 1;
  for(i=2; i<argc; i++) if( fnmatch(argv[i], zName, 0)==0 ) return 1;
  return 0;
}

int main(int argc, char **argv){
  static const char *const azMode[] = { "interrupt", "progress" };
  char zFile[3000], zTmp[3000];
  sqlite3 *db;
  int nPass = 0, nFail = 0;
  size_t i;
  int m;
  if( argc<2 ){
    fprintf(stderr, "usage: %s DIR [GLOB ...]\n", argv[0]);
    return 2;
  }
  if( getenv("DS_EXT") && getenv("DS_EXT")[0] ) zExt = getenv("DS_EXT");
  setvbuf(stdout, 0, _IOLBF, 0);
  snprintf(zFile, sizeof(zFile), "%s/interrupt.db", argv[1]);
  snprintf(zTmp, sizeof(zTmp), "%s/spill", argv[1]);
  mkdir(zTmp, 0700);
  db = openDb(zFile);
  {
    char *zHave = queryText(db, "SELECT count(*) FROM sqlite_schema");
    if( zHave==0 || strcmp(zHave, "6")!=0 ) makeData(db);
    free(zHave);
  }
  printf("SQLite %s, extension %s\n", sqlite3_libversion(), zExt);
  printf("cases: %d\n", (int)(sizeof(aCase)/sizeof(aCase[0])));
  printf("runs: %d\n", nModeRuns());
  {
    /* The extension uses sqlite3_is_interrupted() exactly where the
    ** running SQLite has it (3.41 and later). */
    char *zUses = queryText(db, "SELECT ds_test_hook(NULL)");
    int bWant = sqlite3_libversion_number() >= 3041000;
    if( zUses && atoi(zUses)==bWant ){
      nPass++;
      printf("ok is_interrupted uses=%s\n", zUses);
    }else{
      nFail++;
      printf("FAILED is_interrupted: ds_test_hook() says %s, SQLite %s %s it\n",
             zUses ? zUses : "NULL", sqlite3_libversion(),
             bWant ? "has" : "lacks");
    }
    free(zUses);
  }
  for(i=0; i<sizeof(aCase)/sizeof(aCase[0]); i++){
    const Case *pCase = &aCase[i];
    if( !wanted(pCase->zName, argc, argv) ) continue;
    for(m=0; m<nModes(pCase); m++){
      char zWhy[3500];
      double ms = 0;
      double msDelay = DELAY_MS;
      int nTry, r = 0;
      zWhy[0] = 0;
      for(nTry=0; nTry<3; nTry++){
        r = runOnce(db, pCase, m, msDelay, zTmp, &ms, zWhy, sizeof(zWhy));
        if( r>=0 ) break;
        msDelay = 0;
      }
      if( r==1 ){
        nPass++;
        printf("ok %s %s step='%s' latency_ms=%.3f delay_ms=%.0f\n",
               pCase->zName, azMode[m], pCase->zStep, ms, msDelay);
      }else{
        nFail++;
        printf("FAILED %s %s: %s\n", pCase->zName, azMode[m], zWhy);
      }
    }
  }
  sqlite3_close(db);
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
