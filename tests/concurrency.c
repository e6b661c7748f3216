/*
** concurrency.c: the extension used from many threads at once, each with
** its own connection to one database file in WAL mode, while a writer
** commits changes to the very tables being read.
**
**   build/concurrency DBFILE [ROUNDS]
**
** The extension is linked in (the sources of ext/ built with -DSQLITE_CORE and
** registered with sqlite3_auto_extension()), so that `make tsan` can build
** this same program with ThreadSanitizer over the extension's code.
**
** Threads (8 readers and 1 writer by default):
**
**   writer   in a loop until the readers are done: BEGIN IMMEDIATE, a few
**            INSERTs, UPDATEs and DELETEs on l and r, COMMIT.
**
**   readers  ROUNDS rounds each.  A round picks a check by thread and
**            round number, sets the connection's memory_limit and threads
**            (some rounds spill, some sort on worker threads), and inside
**            one read transaction (BEGIN ... COMMIT, so that both see the
**            same snapshot) runs the operator and SQLite's own SQL for the
**            same result.  The two must be equal: the rows of both, each
**            written as text with its types, sorted, compared line by line.
**
** The checks: ds_join_hint under every hint and join type (the CREATE
** VIRTUAL TABLE form, typed values, against JOIN ... ON +l.k = +r.k of the
** same type), ds_cogroup (counts per key, against GROUP BY), ds_cross
** (against a plain cross join), ds_join_plan's output_rows, ds_key_stats
** (its keys counted on its helper thread: threads 2, parallel_min_rows 0),
** ds_min_by / ds_max_by (against correlated subqueries), and a sort-merge
** join of 40,000 generated rows with threads = 2 (the sorter's worker),
** one of 200,000 under 4 MB, whose sorted runs are merged on a worker,
** and a broadcast join probing those rows on a worker (stageahead.c).
**
** Then tables read in parallel (rangeread.c: worker threads, each on a
** read connection of its own): N_PAR_READER threads, each with its own
** connection to a second database file in rollback-journal mode, run
** joins (one of them OPTIMIZER_CHOOSES, whose tables are counted ahead on
** their readers' threads), a coGroup and a cross product with threads 3
** and parallel_min_rows 0, against SQLite's own SQL, and check that the
** inputs really were read in rowid ranges.
**
** Keys are untyped values: integers, integral reals (1.0 equals 1),
** text that looks like a number ('1' equals no number), and NULL, which
** matches nothing.
**
** It prints a line per mismatch or error and ends with `N passed, N
** failed` (each reader round is one); exit status 1 on any failure.
*/
#include <sqlite3.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataset.h"

#define N_READER 8
#define N_ROWS   600            /* rows of l and r at the start */

static const char *zDbFile;
static int nRound = 12;
static atomic_int nReadersLeft;
static atomic_int nCommits;
static atomic_int nPass, nFail;

/*************************************************************************
** Small helpers.
*/
static double nowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1.0e6;
}

static void fatal(const char *zFormat, ...){
  va_list ap;
  va_start(ap, zFormat);
  printf("FATAL: ");
  vprintf(zFormat, ap);
  printf("\n");
  va_end(ap);
  exit(2);
}

static sqlite3 *openDb(void){
  sqlite3 *db;
  if( sqlite3_open_v2(zDbFile, &db, SQLITE_OPEN_READWRITE
                      | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, 0) ){
    fatal("cannot open %s", zDbFile);
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

static int execSql(sqlite3 *db, const char *zSql, char **pzErr){
  char *zErr = 0;
  int rc = sqlite3_exec(db, zSql, 0, 0, &zErr);
  if( rc!=SQLITE_OK ){
    if( pzErr ){
      *pzErr = sqlite3_mprintf("%s: %s", zSql, zErr ? zErr : "?");
    }
  }
  sqlite3_free(zErr);
  return rc;
}

static void execOrDie(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( execSql(db, zSql, &zErr)!=SQLITE_OK ) fatal("%s", zErr);
}

/* A result: every row as one line of text, sorted. */
typedef struct Rows Rows;
struct Rows {
  char **az;
  int n, nAlloc;
};

static void rowsFree(Rows *p){
  int i;
  for(i=0; i<p->n; i++) sqlite3_free(p->az[i]);
  free(p->az);
  memset(p, 0, sizeof(*p));
}

static int cmpLine(const void *a, const void *b){
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A value as text that keeps its type: i:1, r:1.0000000000000000e+00,
** t:'1', n. */
static void valueText(sqlite3_str *pOut, sqlite3_stmt *pStmt, int i){
  switch( sqlite3_column_type(pStmt, i) ){
    case SQLITE_INTEGER:
      sqlite3_str_appendf(pOut, "i:%lld", sqlite3_column_int64(pStmt, i));
      break;
    case SQLITE_FLOAT:
      sqlite3_str_appendf(pOut, "r:%!.17g", sqlite3_column_double(pStmt, i));
      break;
    case SQLITE_TEXT:
      sqlite3_str_appendf(pOut, "t:%Q", sqlite3_column_text(pStmt, i));
      break;
    case SQLITE_BLOB:
      sqlite3_str_appendf(pOut, "b:%d", sqlite3_column_bytes(pStmt, i));
      break;
    default:
      sqlite3_str_appendall(pOut, "n");
      break;
  }
}

/* Run zSql, collecting its rows into *pRows (sorted).  SQLITE_OK, or an
** error with *pzErr set. */
static int queryRows(sqlite3 *db, const char *zSql, Rows *pRows, char **pzErr){
  sqlite3_stmt *pStmt;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  memset(pRows, 0, sizeof(*pRows));
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("%s: %s", zSql, sqlite3_errmsg(db));
    return rc;
  }
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    sqlite3_str *pLine = sqlite3_str_new(db);
    int i;
    for(i=0; i<sqlite3_column_count(pStmt); i++){
      if( i ) sqlite3_str_appendchar(pLine, 1, '|');
      valueText(pLine, pStmt, i);
    }
    if( pRows->n==pRows->nAlloc ){
      pRows->nAlloc = pRows->nAlloc ? 2*pRows->nAlloc : 256;
      pRows->az = realloc(pRows->az, sizeof(char *) * (size_t)pRows->nAlloc);
      if( pRows->az==0 ) fatal("out of memory");
    }
    pRows->az[pRows->n++] = sqlite3_str_finish(pLine);
  }
  if( rc!=SQLITE_DONE ){
    *pzErr = sqlite3_mprintf("%s: %s", zSql, sqlite3_errmsg(db));
    sqlite3_finalize(pStmt);
    return rc;
  }
  sqlite3_finalize(pStmt);
  qsort(pRows->az, (size_t)pRows->n, sizeof(char *), cmpLine);
  return SQLITE_OK;
}

/* The first difference of two results, or NULL if they are equal. */
static char *rowsDiff(const Rows *pGot, const Rows *pWant){
  int i;
  for(i=0; i<pGot->n && i<pWant->n; i++){
    if( strcmp(pGot->az[i], pWant->az[i]) ){
      return sqlite3_mprintf("row %d of %d: got [%s], SQLite says [%s]",
                             i, pWant->n, pGot->az[i], pWant->az[i]);
    }
  }
  if( pGot->n!=pWant->n ){
    return sqlite3_mprintf("%d rows, SQLite says %d", pGot->n, pWant->n);
  }
  return 0;
}

/*************************************************************************
** The data.  l(k, v) and r(k, w), keys untyped so that no affinity
** changes them: integers 0..49, the same as integral reals, text that
** looks like a number, NULL.
*/
#define KEY_SQL(x) \
  "CASE abs(" x ") % 10 WHEN 0 THEN NULL " \
  "WHEN 1 THEN CAST(abs(" x ") % 50 AS REAL) " \
  "WHEN 2 THEN CAST(abs(" x ") % 50 AS TEXT) " \
  "ELSE abs(" x ") % 50 END"
#define STR_(x) #x
#define STR(x) STR_(x)

/* A key as one value per group: an integral real as the integer it equals
** (which value of 1 and 1.0 a group shows is not fixed), other values as
** they are. */
#define NORM(x) \
  "(CASE WHEN typeof(" x ") = 'real' AND " x " = CAST(" x " AS INTEGER) " \
  "THEN CAST(" x " AS INTEGER) ELSE " x " END)"

static void makeData(void){
  sqlite3 *db = openDb();
  execOrDie(db, "PRAGMA journal_mode=WAL");
  execOrDie(db,
      "DROP TABLE IF EXISTS l; DROP TABLE IF EXISTS r;"
      "CREATE TABLE l(k, v);"
      "CREATE TABLE r(k, w);"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c "
      "  WHERE i<" STR(N_ROWS) ")"
      "INSERT INTO l SELECT " KEY_SQL("i*7") ", 'l' || i FROM c;"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c "
      "  WHERE i<" STR(N_ROWS) ")"
      "INSERT INTO r SELECT " KEY_SQL("i*13") ", 'r' || i FROM c;");
  sqlite3_close(db);
}

/*************************************************************************
** The writer.
*/
/* A transaction of the writer: a row inserted into each table, a key
** changed, a row of each table deleted (so that their sizes stay about
** N_ROWS); ?1 picks the values and rows. */
#define SOME_ROW(t, x) \
  "(SELECT rowid FROM " t " LIMIT 1 OFFSET (" x ") % " STR(N_ROWS) ")"
static const char *const azWrite[] = {
  "INSERT INTO l VALUES(" KEY_SQL("?1") ", 'lw' || ?1)",
  "INSERT INTO r VALUES(" KEY_SQL("?1 / 7") ", 'rw' || ?1)",
  "UPDATE l SET k = " KEY_SQL("?1 / 3") " WHERE rowid = "
      SOME_ROW("l", "?1 / 5"),
  "DELETE FROM l WHERE rowid = " SOME_ROW("l", "?1 / 11"),
  "DELETE FROM r WHERE rowid = " SOME_ROW("r", "?1 / 13"),
};
#define N_WRITE (int)(sizeof(azWrite)/sizeof(azWrite[0]))

static void *writerMain(void *pArg){
  sqlite3 *db = openDb();
  sqlite3_stmt *apStmt[N_WRITE];
  unsigned int seed = 12345;
  int i;
  (void)pArg;
  for(i=0; i<N_WRITE; i++){
    if( sqlite3_prepare_v2(db, azWrite[i], -1, &apStmt[i], 0) ){
      fatal("%s: %s", azWrite[i], sqlite3_errmsg(db));
    }
  }
  while( atomic_load(&nReadersLeft)>0 ){
    char *zErr = 0;
    int x = (int)(rand_r(&seed) % 100000);
    int rc = execSql(db, "BEGIN IMMEDIATE", &zErr);
    for(i=0; i<N_WRITE && rc==SQLITE_OK; i++){
      sqlite3_bind_int(apStmt[i], 1, x);
      rc = sqlite3_step(apStmt[i]);
      rc = sqlite3_reset(apStmt[i]);
      if( rc!=SQLITE_OK ){
        zErr = sqlite3_mprintf("%s: %s", azWrite[i], sqlite3_errmsg(db));
      }
    }
    if( rc==SQLITE_OK ) rc = execSql(db, "COMMIT", &zErr);
    if( rc!=SQLITE_OK ){
      printf("FAILED writer: %s\n", zErr);
      sqlite3_free(zErr);
      execSql(db, "ROLLBACK", 0);
      atomic_fetch_add(&nFail, 1);
      break;
    }
    atomic_fetch_add(&nCommits, 1);
    {
      /* Some tens of commits a second: every reader round sees changes,
      ** and the WAL, which cannot be reset while some reader is always
      ** inside a transaction, stays small. */
      struct timespec ts = { 0, 20000000 };    /* 20 ms */
      nanosleep(&ts, 0);
    }
  }
  for(i=0; i<N_WRITE; i++) sqlite3_finalize(apStmt[i]);
  sqlite3_close(db);
  return 0;
}

/*************************************************************************
** The readers' checks: pairs of an operator's query and SQLite's own.
*/
static const char *const azHint[] = {
  "OPTIMIZER_CHOOSES", "BROADCAST_HASH_FIRST", "BROADCAST_HASH_SECOND",
  "REPARTITION_HASH_FIRST", "REPARTITION_HASH_SECOND",
  "REPARTITION_SORT_MERGE"
};
static const char *const azType[] = {
  "INNER", "LEFT_OUTER", "RIGHT_OUTER", "FULL_OUTER"
};
static const char *const azSqlJoin[] = {
  "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"
};

/* Make the thread's temp.j_H_T tables: one per hint and join type. */
static void makeJoinTables(sqlite3 *db){
  int h, t;
  for(h=0; h<6; h++){
    for(t=0; t<4; t++){
      char *z = sqlite3_mprintf(
          "CREATE VIRTUAL TABLE temp.j_%d_%d USING ds_join_hint(left=l, "
          "right=r, left_key=k, right_key=k, hint=%s, join_type=%s)",
          h, t, azHint[h], azType[t]);
      execOrDie(db, z);
      sqlite3_free(z);
    }
  }
  execOrDie(db, "CREATE VIRTUAL TABLE temp.x USING ds_cross("
                "left='SELECT * FROM l WHERE rowid % 8 = 0', right=r)");
}

/* The operator's SQL and SQLite's for check i (of N_CHECK). */
#define N_CHECK (24 + 9)
#define N_CHECK_WORKER (24 + 5)
static void checkSql(int i, char **pzOp, char **pzOracle){
  if( i<24 ){
    int h = i / 4, t = i % 4;
    *pzOp = sqlite3_mprintf("SELECT left_k, v, right_k, w FROM temp.j_%d_%d",
                            h, t);
    *pzOracle = sqlite3_mprintf("SELECT l.k, l.v, r.k, r.w FROM l %s r "
                                "ON +l.k = +r.k", azSqlJoin[t]);
    return;
  }
  switch( i - 24 ){
    case 0:     /* coGroup: NULL keys form a group per side */
      *pzOp = sqlite3_mprintf(
          "SELECT " NORM("key") ", left_count, right_count, "
          "json_array_length(left), json_array_length(right) "
          "FROM ds_cogroup('l', 'r', 'k', 'k')");
      *pzOracle = sqlite3_mprintf(
          "SELECT " NORM("k") ", sum(s = 0), sum(s = 1), sum(s = 0), "
          "sum(s = 1) "
          "FROM (SELECT k, 0 AS s FROM l UNION ALL SELECT k, 1 FROM r) "
          "WHERE k IS NOT NULL GROUP BY k "
          "UNION ALL SELECT NULL, count(*), 0, count(*), 0 FROM l "
          "WHERE k IS NULL HAVING count(*) > 0 "
          "UNION ALL SELECT NULL, 0, count(*), 0, count(*) FROM r "
          "WHERE k IS NULL HAVING count(*) > 0");
      return;
    case 1:     /* cross */
      *pzOp = sqlite3_mprintf("SELECT left_k, v, right_k, w FROM temp.x");
      *pzOracle = sqlite3_mprintf(
          "SELECT a.k, a.v, b.k, b.w FROM "
          "(SELECT * FROM l WHERE rowid %% 8 = 0) AS a, r AS b");
      return;
    case 2:     /* ds_join_plan counts the output exactly */
      *pzOp = sqlite3_mprintf(
          "SELECT output_rows FROM ds_join_plan('l', 'r', 'k', 'k', NULL, "
          "'FULL_OUTER')");
      *pzOracle = sqlite3_mprintf(
          "SELECT count(*) FROM l FULL JOIN r ON +l.k = +r.k");
      return;
    case 3:     /* ds_key_stats */
      *pzOp = sqlite3_mprintf(
          "SELECT json_extract(s, '$.rows'), json_extract(s, '$.nulls'), "
          "json_extract(s, '$.distinct'), json_extract(s, '$.max_count') "
          "FROM (SELECT ds_key_stats(k) AS s FROM l)");
      *pzOracle = sqlite3_mprintf(
          "SELECT count(*), count(*) - count(k), count(DISTINCT k), "
          "(SELECT max(c) FROM (SELECT count(*) AS c FROM l "
          "WHERE k IS NOT NULL GROUP BY k)) FROM l");
      return;
    case 4:     /* ds_min_by, ds_max_by: rowids are unique, so no ties */
      *pzOp = sqlite3_mprintf(
          "SELECT " NORM("k") ", ds_min_by(v, rowid), ds_max_by(v, rowid) "
          "FROM l "
          "WHERE k IS NOT NULL GROUP BY k");
      *pzOracle = sqlite3_mprintf(
          "SELECT " NORM("k") ", (SELECT v FROM l AS m WHERE +m.k = +l.k "
          "ORDER BY rowid LIMIT 1), (SELECT v FROM l AS m WHERE +m.k = +l.k "
          "ORDER BY rowid DESC LIMIT 1) FROM l WHERE k IS NOT NULL "
          "GROUP BY k");
      return;
    case 5:     /* a sort-merge join large enough for the worker thread */
      *pzOp = sqlite3_mprintf(
          "SELECT count(*), total(length(json_extract(right, '$.w'))) "
          "FROM ds_join_hint('WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL "
          "SELECT i+1 FROM c WHERE i<39999) SELECT i %% 60 AS k FROM c', "
          "'r', 'k', 'k', 'REPARTITION_SORT_MERGE')");
      /* Each row of r meets the n generated rows of its key: SQLite's
      ** nested loop over 40,000 x |r| rows would take seconds. */
      *pzOracle = sqlite3_mprintf(
          "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
          "WHERE i<39999), g(k, n) AS (SELECT i %% 60, count(*) FROM c "
          "GROUP BY 1) SELECT sum(g.n), total(g.n * length(r.w)) "
          "FROM g JOIN r ON +g.k = +r.k");
      return;
    case 6:     /* a query probed on a worker while the caller reads on */
      *pzOp = sqlite3_mprintf(
          "SELECT count(*), total(length(json_extract(right, '$.w'))) "
          "FROM ds_join_hint('WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL "
          "SELECT i+1 FROM c WHERE i<39999) SELECT i %% 60 AS k FROM c', "
          "'r', 'k', 'k', 'BROADCAST_HASH_SECOND')");
      *pzOracle = sqlite3_mprintf(
          "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
          "WHERE i<39999), g(k, n) AS (SELECT i %% 60, count(*) FROM c "
          "GROUP BY 1) SELECT sum(g.n), total(g.n * length(r.w)) "
          "FROM g JOIN r ON +g.k = +r.k");
      return;
    case 7:     /* a sort-merge join whose left side spills runs, merged
                ** on a worker (readerRound: 4 MB, threads 2) */
      *pzOp = sqlite3_mprintf(
          "SELECT count(*), total(length(json_extract(right, '$.w'))) "
          "FROM ds_join_hint('WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL "
          "SELECT i+1 FROM c WHERE i<199999) SELECT i %% 6000 AS k FROM c', "
          "'r', 'k', 'k', 'REPARTITION_SORT_MERGE')");
      *pzOracle = sqlite3_mprintf(
          "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c "
          "WHERE i<199999), g(k, n) AS (SELECT i %% 6000, count(*) FROM c "
          "GROUP BY 1) SELECT sum(g.n), total(g.n * length(r.w)) "
          "FROM g JOIN r ON +g.k = +r.k");
      return;
    default:    /* the same join as a table-valued function, hashed */
      *pzOp = sqlite3_mprintf(
          "SELECT json_extract(left, '$.v'), json_extract(right, '$.w') "
          "FROM ds_join_hint('l', 'r', 'k', 'k', 'REPARTITION_HASH_SECOND', "
          "'FULL_OUTER')");
      *pzOracle = sqlite3_mprintf(
          "SELECT l.v, r.w FROM l FULL JOIN r ON +l.k = +r.k");
      return;
  }
}

typedef struct Reader Reader;
struct Reader {
  int iThread;
};

/* One round of a reader: check iCheck under the given settings.  1 if
** the results agree, else 0 with the reason printed. */
static int readerRound(sqlite3 *db, int iThread, int iRound, int iCheck){
  static const char *const azLimit[] = { "256MB", "64K", "16K" };
  const char *zLimit = azLimit[(iThread + iRound) % 3];
  int nThread = 1 + (iRound % 2);
  int nMinRows = 16384;         /* parallel_min_rows, the default */
  if( iCheck==N_CHECK_WORKER || iCheck==N_CHECK_WORKER + 1 ){
    /* In memory, and on a worker: what this check is for. */
    zLimit = azLimit[0];
    nThread = 2;
  }
  if( iCheck==24 + 7 ){
    /* Sorted runs merged on a worker: past 2 MB a sort spills, from 4 MB
    ** its final merge runs ahead (sort.c). */
    zLimit = "4MB";
    nThread = 2;
  }
  if( iCheck==24 + 3 ){
    /* ds_key_stats's keys counted on its helper thread, batch by batch
    ** (a batch is a 1024th of memory_limit: 16 keys at 16K). */
    nThread = 2;
    nMinRows = 0;
  }
  char *zOp = 0, *zOracle = 0, *zErr = 0, *zDiff = 0;
  Rows got, want;
  int rc, bOk = 0;
  double t0 = nowMs();
  char *zSet = sqlite3_mprintf("SELECT ds_config('memory_limit', '%s'), "
                               "ds_config('threads', %d), "
                               "ds_config('parallel_min_rows', %d)",
                               zLimit, nThread, nMinRows);
  execOrDie(db, zSet);
  sqlite3_free(zSet);
  checkSql(iCheck, &zOp, &zOracle);
  memset(&got, 0, sizeof(got));
  memset(&want, 0, sizeof(want));
  rc = execSql(db, "BEGIN", &zErr);
  if( rc==SQLITE_OK ) rc = queryRows(db, zOp, &got, &zErr);
  if( rc==SQLITE_OK ) rc = queryRows(db, zOracle, &want, &zErr);
  execSql(db, rc==SQLITE_OK ? "COMMIT" : "ROLLBACK", 0);
  if( rc==SQLITE_OK ){
    zDiff = rowsDiff(&got, &want);
    bOk = zDiff==0;
  }
  if( getenv("DS_CONC_VERBOSE") ){
    printf("thread %d round %d check %d: %.0f ms\n", iThread, iRound, iCheck,
           nowMs() - t0);
  }
  if( !bOk ){
    printf("FAILED thread %d round %d (memory_limit %s, threads %d): %s\n"
           "  query: %s\n", iThread, iRound, zLimit, nThread,
           zErr ? zErr : zDiff, zOp);
  }
  rowsFree(&got);
  rowsFree(&want);
  sqlite3_free(zOp);
  sqlite3_free(zOracle);
  sqlite3_free(zErr);
  sqlite3_free(zDiff);
  return bOk;
}

static void *readerMain(void *pArg){
  Reader *p = (Reader *)pArg;
  sqlite3 *db = openDb();
  int i;
  makeJoinTables(db);
  for(i=0; i<nRound; i++){
    /* Every check comes up, in a different order in each thread. */
    int iCheck = (p->iThread * 5 + i * 7) % N_CHECK;
    if( readerRound(db, p->iThread, i, iCheck) ){
      atomic_fetch_add(&nPass, 1);
    }else{
      atomic_fetch_add(&nFail, 1);
    }
  }
  sqlite3_close(db);
  atomic_fetch_sub(&nReadersLeft, 1);
  return 0;
}

/*************************************************************************
** Parallel reads (see the top).
*/
#define N_PAR_READER 3
static char *zParFile;

static sqlite3 *openPar(void){
  sqlite3 *db;
  if( sqlite3_open_v2(zParFile, &db, SQLITE_OPEN_READWRITE
                      | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, 0) ){
    fatal("cannot open %s", zParFile);
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

/* Keys of the parallel reads' tables: up to 20,011 distinct ones, so that
** a join of 12,000 and 8,000 rows stays near 12,000 pairs; of the same
** types as KEY_SQL's.  (The oracles join on pl.k = pr.k: the columns
** have no affinity, so that compares as +pl.k = +pr.k does, and SQLite
** can index it.) */
#define PAR_KEY_SQL(x) \
  "CASE abs(" x ") % 10 WHEN 0 THEN NULL " \
  "WHEN 1 THEN CAST(abs(" x ") % 20011 AS REAL) " \
  "WHEN 2 THEN CAST(abs(" x ") % 20011 AS TEXT) " \
  "ELSE abs(" x ") % 20011 END"

static void makeParData(void){
  sqlite3 *db = openPar();
  execOrDie(db, "PRAGMA journal_mode=DELETE;"
      "DROP TABLE IF EXISTS pl; DROP TABLE IF EXISTS pr;"
      "CREATE TABLE pl(k, v); CREATE TABLE pr(k, w);"
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c "
      "  WHERE i<12000)"
      "INSERT INTO pl SELECT " PAR_KEY_SQL("i*7") ", 'l' || i FROM c;"
      "INSERT INTO pr SELECT " PAR_KEY_SQL("rowid*13") ", rowid % 97 "
      "  FROM pl WHERE rowid <= 8000;");
  sqlite3_close(db);
}

static const char *const azParCheck[] = {
  "SELECT json_extract(left, '$.v'), json_extract(right, '$.w') "
  "FROM ds_join_hint('pl', 'pr', 'k', 'k', 'BROADCAST_HASH_SECOND')",
  "SELECT pl.v, pr.w FROM pl JOIN pr ON pl.k = pr.k",
  "SELECT json_extract(left, '$.v'), json_extract(right, '$.w') "
  "FROM ds_join_hint('pl', 'pr', 'k', 'k', 'REPARTITION_SORT_MERGE', "
  "'FULL_OUTER')",
  "SELECT pl.v, pr.w FROM pl FULL JOIN pr ON pl.k = pr.k",
  "SELECT count(*), sum(left_count), sum(right_count) "
  "FROM ds_cogroup('pl', 'pr', 'k', 'k') WHERE key IS NOT NULL",
  "SELECT (SELECT count(*) FROM (SELECT k FROM pl WHERE k IS NOT NULL "
  "UNION SELECT k FROM pr WHERE k IS NOT NULL)), "
  "(SELECT count(k) FROM pl), (SELECT count(k) FROM pr)",
  "SELECT count(*) FROM ds_cross('pr', 'SELECT 1 AS x UNION ALL SELECT 2')",
  "SELECT count(*) * 2 FROM pr",
  /* OPTIMIZER_CHOOSES: both tables counted ahead, each on its reader's
  ** thread and connection (rangeread.c). */
  "SELECT json_extract(left, '$.v'), json_extract(right, '$.w') "
  "FROM ds_join_hint('pl', 'pr', 'k', 'k', NULL, 'LEFT_OUTER')",
  "SELECT pl.v, pr.w FROM pl LEFT JOIN pr ON pl.k = pr.k",
};

static void *parReaderMain(void *pArg){
  int iThread = *(int *)pArg;
  sqlite3 *db = openPar();
  size_t i;
  execOrDie(db, "SELECT ds_config('threads', 3), "
                "ds_config('parallel_min_rows', 0)");
  for(i=0; i<sizeof(azParCheck)/sizeof(azParCheck[0]); i+=2){
    size_t iCheck = (i + 2*(size_t)iThread) % (sizeof(azParCheck)/sizeof(char*));
    Rows got, want;
    char *zErr = 0, *zDiff = 0;
    int rc;
    memset(&got, 0, sizeof(got));
    memset(&want, 0, sizeof(want));
    rc = queryRows(db, azParCheck[iCheck], &got, &zErr);
    if( rc==SQLITE_OK ){
      Rows conns;
      memset(&conns, 0, sizeof(conns));
      rc = queryRows(db, "SELECT ds_last_stats()->>'read_connections' > 0",
                     &conns, &zErr);
      if( rc==SQLITE_OK && (conns.n!=1 || strcmp(conns.az[0], "i:1")) ){
        zDiff = sqlite3_mprintf("not read in parallel");
      }
      rowsFree(&conns);
    }
    if( rc==SQLITE_OK ) rc = queryRows(db, azParCheck[iCheck+1], &want, &zErr);
    if( rc==SQLITE_OK && zDiff==0 ) zDiff = rowsDiff(&got, &want);
    if( rc!=SQLITE_OK || zDiff ){
      printf("FAILED parallel read, thread %d: %s\n  query: %s\n", iThread,
             zErr ? zErr : zDiff, azParCheck[iCheck]);
      atomic_fetch_add(&nFail, 1);
    }else{
      atomic_fetch_add(&nPass, 1);
    }
    rowsFree(&got);
    rowsFree(&want);
    sqlite3_free(zErr);
    sqlite3_free(zDiff);
  }
  sqlite3_close(db);
  return 0;
}

static void runParReaders(void){
  pthread_t a[N_PAR_READER];
  int aArg[N_PAR_READER];
  int i;
  zParFile = sqlite3_mprintf("%s-par", zDbFile);
  if( zParFile==0 ) fatal("out of memory");
  makeParData();
  for(i=0; i<N_PAR_READER; i++){
    aArg[i] = i;
    pthread_create(&a[i], 0, parReaderMain, &aArg[i]);
  }
  for(i=0; i<N_PAR_READER; i++) pthread_join(a[i], 0);
  remove(zParFile);
  sqlite3_free(zParFile);
}

int main(int argc, char **argv){
  pthread_t aReader[N_READER], writer;
  Reader aArg[N_READER];
  int i;
  if( argc<2 ){
    fprintf(stderr, "usage: %s DBFILE [ROUNDS]\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, 0, _IOLBF, 0);
  zDbFile = argv[1];
  if( argc>2 ) nRound = atoi(argv[2]);
  if( !sqlite3_threadsafe() ) fatal("SQLite is built without threads");
  sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init);
  makeData();
  atomic_init(&nReadersLeft, N_READER);
  atomic_init(&nCommits, 0);
  atomic_init(&nPass, 0);
  atomic_init(&nFail, 0);
  pthread_create(&writer, 0, writerMain, 0);
  for(i=0; i<N_READER; i++){
    aArg[i].iThread = i;
    pthread_create(&aReader[i], 0, readerMain, &aArg[i]);
  }
  for(i=0; i<N_READER; i++) pthread_join(aReader[i], 0);
  pthread_join(writer, 0);
  printf("%d readers, %d rounds each, %d commits meanwhile\n", N_READER,
         nRound, atomic_load(&nCommits));
  if( atomic_load(&nCommits)==0 ){
    printf("FAILED the writer committed nothing while the readers ran\n");
    atomic_fetch_add(&nFail, 1);
  }
  runParReaders();
  printf("%d passed, %d failed\n", atomic_load(&nPass), atomic_load(&nFail));
  return atomic_load(&nFail) ? 1 : 0;
}
