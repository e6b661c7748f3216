/*
** bench.c: the benchmark driver of the `dataset` extension (make bench).
**
**   dsbench run [OPTIONS]     generate what is missing, run every case,
**                             write one line per run to the results file
**                             (lines of cases not run this time are kept)
**   dsbench list [OPTIONS]    print the names of the cases
**   dsbench gen CASE|DATASET  generate one dataset (if not cached)
**   dsbench one CASE [OPTIONS] run one case once in this process and print
**                             its time (for valgrind --tool=callgrind);
**                             a case of the extension named without :tN
**                             runs with --threads N, default 1
**
** Options: --quick (the two smaller sizes, three hints, count and left
** outer on uni only), --reps N (runs per case),
** --filter GLOB[,GLOB...] (case names, fnmatch), --data DIR (datasets),
** --out FILE (results, TSV), --meta FILE (machine and build, TSV),
** --ext PATH (the extension, default build/dataset), --commit TEXT,
** --timeout SECONDS (per run, default 900), --threads N (`one` only).
**
** Data.  Each dataset is one SQLite file holding a build side
**
**     b(bk INTEGER, bi INTEGER, br REAL, bt TEXT)
**
** and a probe side p(pk INTEGER, pi INTEGER, pr REAL, pt TEXT), written by
** a small generator below with a fixed-seed random stream, in one
** transaction, under a name that holds every parameter (uni-1000000x
** 10000000-v1.db): a file that exists is reused, and a run that is
** stopped while generating leaves only a *.tmp behind.  No ANALYZE is
** run, as a user who just loaded the data would not have.
**
** Distributions (B rows in b, P rows in p):
**     uni    bk a permutation of 1..B; pk uniform on 1..B (every probe row
**            has exactly one partner: a foreign key)
**     zipf   bk as uni; pk Zipf-distributed on 1..B with s = 1 (key 1 is
**            the hottest: about 1/ln(B) of the probe rows)
**     m2m    B/10 distinct keys, 10 build rows each; pk uniform on them
**            (every probe row has 10 partners)
**     sel    bk as uni; 1% of pk uniform on 1..B, the rest outside it
**     one    every bk and every pk is 1 (B*P output rows; small sizes)
**
** Cases.  A case is one query on one dataset in one form, named
**
**     DATASET:JOIN:QUERY:FORM:HINT[:tN]  e.g. uni-1Mx10M:inner:sum:vt:BS:t2
**
** Every case of the extension (the forms tvf, vt and their variants) runs
** twice, with ds_config('threads', 1) and ('threads', 2), named :t1 and
** :t2, in the same group: parallel work shows in wall-clock time, and the
** two are set side by side.  SQLite's own cases (native, tuned, scan,
** read) do not depend on the setting and run once, with no suffix.
**
** JOIN is inner, left or full, or one of the two other operators:
** `cogroup` (ds_cogroup on the largest uni dataset, query `count`:
** count(*), sum(left_count), sum(right_count), which needs no JSON; its
** `native` is SQLite's GROUP BY over both tables' keys) and `cross`
** (ds_cross on `one`, 1K x 10K: ten million pairs, query `sum`; `native`
** is `FROM p, b`; hints OC FS SS: OPTIMIZER_CHOOSES, FIRST_IS_SMALL,
** SECOND_IS_SMALL).
**
** QUERY is `count` (count(*) over the join: only the keys are read),
** `sum` (count(*), sum(p.pi), sum(b.br): a payload column of each side),
** `all` (every column of every output row is fetched by this program),
** `sum.mem`/`sum.lim4` (the spill group: sum with the default memory
** limit, and with memory_limit set to a quarter of what the build side
** took in memory), and `sum.prog` (sum with ds_config('progress', 1), on
** the largest uni dataset, in the inner sum group so that it alternates
** with sum: the cost of the progress line, which is drawn only when
** standard error is a terminal, so run the benchmark from one, or under
** script(1), for it to measure anything but the off path).  FORM is
**
**     native  SQLite's own join, default settings, written as a user
**             would: probe table first, build table second (without
**             ANALYZE SQLite builds its automatic index on the second)
**     tuned   the same with PRAGMA temp_store=MEMORY, cache_size=64MB
**     scan    SQL that reads the columns the join reads, and nothing else
**             (sum() over each table)
**     read    this program stepping `SELECT <those columns>` on each table
**             and fetching every value, row by row (the extension's
**             readers take rows in batches through a function instead)
**     tvf     the table-valued form ds_join_hint('...', '...', ...),
**             payload through JSON (left->>'pi')
**     vt      the typed form: CREATE VIRTUAL TABLE ... USING ds_join_hint(
**             left=p, right=b, ...); `missing` when the extension has none
**     tvf.wide  `sum` in the table-valued form over the whole tables
**             ds_join_hint('p', 'b', ...) instead of queries of the two
**             columns used: what selecting only those columns saves
**     tvf.cte   `sum` in the table-valued form with the values taken out
**             of the JSON in a MATERIALIZED common table expression first
**             (docs/reference/ds_join_hint.md says which to write)
**
** The last two run on uni's inner `sum` with OPTIMIZER_CHOOSES only, in
** that group, so they alternate with the tvf and vt cases they are set
** against.
**
** HINT is one of OC BF BS RF RS SM (OPTIMIZER_CHOOSES, BROADCAST_HASH_FIRST
** ...), or `-`.  Left is always p, right is b: BS builds on b.
**
** SQLite 3.40's FULL JOIN gets no automatic index and is quadratic, so the
** native full outer join is written as LEFT JOIN UNION ALL the unmatched
** build rows, found by the anti-join `b LEFT JOIN p ... WHERE p.pk IS
** NULL` (which gets an automatic index on p; a correlated NOT EXISTS does
** not, and is quadratic too).
**
** Measuring.  Cases of one group (same dataset, join type and query) run
** in turn, repetition after repetition, each repetition starting one case
** later (rotating order), so drift over time hits every case alike.  Each
** run is a child process (fork): it opens the database, loads the
** extension, prepares, and times with CLOCK_MONOTONIC from prepare to
** finalize around the sqlite3_step() loop, and takes the CPU time of the
** same span from getrusage(RUSAGE_SELF) (user + system of every thread of
** the process, the extension's workers included); the parent reads the
** child's peak RSS from wait4().  Runs are sequential: one at a time.
*/
#define _GNU_SOURCE
#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;

#define GEN_VERSION 1

/*************************************************************************
** Datasets
*/
typedef struct Dataset Dataset;
struct Dataset {
  const char *zDist;      /* uni, zipf, m2m, sel, one */
  i64 nBuild;             /* rows of b */
  i64 nProbe;             /* rows of p */
  int bQuick;             /* part of --quick */
};

static const Dataset aDataset[] = {
  { "uni",  100000,  1000000, 1 },
  { "uni",  1000000, 1000000, 1 },
  { "uni",  1000000, 10000000, 0 },
  { "zipf", 100000,  1000000, 1 },
  { "zipf", 1000000, 1000000, 1 },
  { "zipf", 1000000, 10000000, 0 },
  { "m2m",  100000,  1000000, 1 },
  { "m2m",  1000000, 1000000, 1 },
  { "m2m",  1000000, 10000000, 0 },
  { "sel",  100000,  1000000, 1 },
  { "sel",  1000000, 1000000, 1 },
  { "sel",  1000000, 10000000, 0 },
  { "one",  1000,    10000, 1 },
};
#define N_DATASET (int)(sizeof(aDataset)/sizeof(aDataset[0]))

/* "1M", "100K", "10M", "1K": a row count as it appears in names. */
static void sizeLabel(char *zBuf, size_t n, i64 v){
  if( v>=1000000 && v%1000000==0 ){
    snprintf(zBuf, n, "%lldM", v/1000000);
  }else if( v>=1000 && v%1000==0 ){
    snprintf(zBuf, n, "%lldK", v/1000);
  }else{
    snprintf(zBuf, n, "%lld", v);
  }
}

/* "uni-1Mx10M" */
static void datasetName(const Dataset *pD, char *zBuf, size_t n){
  char zB[24], zP[24];
  sizeLabel(zB, sizeof(zB), pD->nBuild);
  sizeLabel(zP, sizeof(zP), pD->nProbe);
  snprintf(zBuf, n, "%s-%sx%s", pD->zDist, zB, zP);
}

/* DIR/uni-1000000x10000000-v1.db: every parameter in the name. */
static char *datasetPath(const char *zDir, const Dataset *pD){
  return sqlite3_mprintf("%s/%s-%lldx%lld-v%d.db", zDir, pD->zDist,
                         pD->nBuild, pD->nProbe, GEN_VERSION);
}

/*************************************************************************
** Cases
*/
#define JT_INNER 0
#define JT_LEFT  1
#define JT_FULL  2
#define JT_COGROUP 3      /* ds_cogroup, not a join */
#define JT_CROSS 4        /* ds_cross, not a join */
static const char *const azJtName[] = {
  "inner", "left", "full", "cogroup", "cross"
};
static const char *const azJtSql[] = {
  "INNER", "LEFT_OUTER", "FULL_OUTER", "", ""
};

#define Q_COUNT   0
#define Q_SUM     1
#define Q_ALL     2
#define Q_SUM_MEM 3       /* spill group: default memory_limit */
#define Q_SUM_LIM 4       /* spill group: memory_limit = in-memory peak / 4 */
#define Q_SUM_PROG 5      /* sum with ds_config('progress', 1) */
static const char *const azQueryName[] = {
  "count", "sum", "all", "sum.mem", "sum.lim4", "sum.prog"
};

#define F_NATIVE 0
#define F_TUNED  1
#define F_SCAN   2
#define F_READ   3
#define F_TVF    4
#define F_VT     5
#define F_TVF_WIDE 6      /* tvf over the whole tables */
#define F_TVF_CTE  7      /* tvf, values extracted in a MATERIALIZED CTE */
static const char *const azFormName[] = {
  "native", "tuned", "scan", "read", "tvf", "vt", "tvf.wide", "tvf.cte"
};

#define N_HINT 6
static const char *const azHintShort[N_HINT] = {
  "OC", "BF", "BS", "RF", "RS", "SM"
};
static const char *const azHintSql[N_HINT] = {
  "OPTIMIZER_CHOOSES", "BROADCAST_HASH_FIRST", "BROADCAST_HASH_SECOND",
  "REPARTITION_HASH_FIRST", "REPARTITION_HASH_SECOND",
  "REPARTITION_SORT_MERGE"
};
#define H_NONE (-1)
#define H_BS   2

/* ds_cross's hints, in the same slots: OC, FIRST_IS_SMALL, SECOND_IS_SMALL */
#define N_CROSS_HINT 3
static const char *const azCrossHintShort[N_CROSS_HINT] = { "OC", "FS", "SS" };
static const char *const azCrossHintSql[N_CROSS_HINT] = {
  "OPTIMIZER_CHOOSES", "FIRST_IS_SMALL", "SECOND_IS_SMALL"
};

/*
** The `threads` settings every case of the extension's operators runs
** with (ds_config('threads', N), named :tN): 1, and 2, the cores of the
** machine the targets are set on.  SQLite's own cases (native, tuned,
** scan, read) do not depend on it and run once, without a suffix.
*/
static const int aThreads[] = { 1, 2 };
#define N_THREADS (int)(sizeof(aThreads)/sizeof(aThreads[0]))

typedef struct Case Case;
struct Case {
  const Dataset *pData;
  int eJt;
  int eQuery;
  int eForm;
  int eHint;              /* 0..N_HINT-1, or H_NONE */
  int nThread;            /* ds_config('threads'), or 0: not the extension */
  int iGroup;             /* cases of one group alternate */
  char zName[128];
};

typedef struct Options Options;
struct Options {
  int bQuick;
  int nRep;
  const char *zFilter;
  const char *zDataDir;
  const char *zOut;
  const char *zMeta;
  const char *zExt;
  const char *zCommit;
  int nTimeout;
};

/* The short and the SQL name of a case's hint ("-" and NULL for none). */
static const char *hintShort(const Case *pC){
  if( pC->eHint==H_NONE ) return "-";
  return pC->eJt==JT_CROSS ? azCrossHintShort[pC->eHint]
                           : azHintShort[pC->eHint];
}
static const char *hintSql(const Case *pC){
  if( pC->eHint==H_NONE ) return 0;
  return pC->eJt==JT_CROSS ? azCrossHintSql[pC->eHint]
                           : azHintSql[pC->eHint];
}

static void caseName(Case *pC){
  char zData[64];
  char zThread[16] = "";
  datasetName(pC->pData, zData, sizeof(zData));
  if( pC->nThread>0 ) snprintf(zThread, sizeof(zThread), ":t%d", pC->nThread);
  snprintf(pC->zName, sizeof(pC->zName), "%s:%s:%s:%s:%s%s", zData,
           azJtName[pC->eJt], azQueryName[pC->eQuery], azFormName[pC->eForm],
           hintShort(pC), zThread);
}

static int matchFilter(const char *zFilter, const char *zName){
  char *zCopy, *z, *zSave = 0;
  int bMatch = 0;
  if( zFilter==0 || zFilter[0]==0 ) return 1;
  zCopy = strdup(zFilter);
  if( zCopy==0 ) return 1;
  for(z=strtok_r(zCopy, ",", &zSave); z && !bMatch;
      z=strtok_r(0, ",", &zSave)){
    bMatch = fnmatch(z, zName, 0)==0;
  }
  free(zCopy);
  return bMatch;
}

typedef struct CaseList CaseList;
struct CaseList {
  Case *a;
  int n, nAlloc;
  int nGroup;
};

/* A case of the extension's operators is added once for each setting
** of aThreads[], in the same group, so that they alternate. */
static void addCase(CaseList *pL, const Options *pOpt, const Dataset *pD,
                    int eJt, int eQuery, int eForm, int eHint){
  int t;
  for(t=0; t<(eForm>=F_TVF ? N_THREADS : 1); t++){
    Case c;
    memset(&c, 0, sizeof(c));
    c.pData = pD;
    c.eJt = eJt;
    c.eQuery = eQuery;
    c.eForm = eForm;
    c.eHint = eHint;
    c.nThread = eForm>=F_TVF ? aThreads[t] : 0;
    c.iGroup = pL->nGroup;
    caseName(&c);
    if( !matchFilter(pOpt->zFilter, c.zName) ){
      /* A pattern written before the :tN suffix, or without it
      ** (...:vt:BS), selects the case with every threads setting. */
      char zBase[128];
      memcpy(zBase, c.zName, sizeof(zBase));
      if( c.nThread>0 ) *strrchr(zBase, ':') = 0;
      if( c.nThread==0 || !matchFilter(pOpt->zFilter, zBase) ) continue;
    }
    if( pL->n==pL->nAlloc ){
      pL->nAlloc = pL->nAlloc ? 2*pL->nAlloc : 256;
      pL->a = realloc(pL->a, sizeof(Case) * (size_t)pL->nAlloc);
      if( pL->a==0 ){ fprintf(stderr, "out of memory\n"); exit(1); }
    }
    pL->a[pL->n++] = c;
  }
}

/* The hints a group runs: all six, or with --quick OPTIMIZER_CHOOSES,
** BROADCAST_HASH_SECOND and REPARTITION_SORT_MERGE (the default, the
** fastest in memory, and the one with a target of its own). */
static int hintWanted(const Options *pOpt, int eHint){
  if( !pOpt->bQuick ) return 1;
  return eHint==0 || eHint==2 || eHint==5;
}

/* One group: the baselines and every wanted hint in both forms. */
static void addGroup(CaseList *pL, const Options *pOpt, const Dataset *pD,
                     int eJt, int eQuery){
  int h;
  addCase(pL, pOpt, pD, eJt, eQuery, F_NATIVE, H_NONE);
  addCase(pL, pOpt, pD, eJt, eQuery, F_TUNED, H_NONE);
  addCase(pL, pOpt, pD, eJt, eQuery, F_SCAN, H_NONE);
  addCase(pL, pOpt, pD, eJt, eQuery, F_READ, H_NONE);
  for(h=0; h<N_HINT; h++){
    if( !hintWanted(pOpt, h) ) continue;
    addCase(pL, pOpt, pD, eJt, eQuery, F_TVF, h);
    addCase(pL, pOpt, pD, eJt, eQuery, F_VT, h);
  }
  /* The ways out within the table-valued form, beside the default hint's
  ** tvf and vt cases (the page that quotes them: ds_join_hint.md). */
  if( strcmp(pD->zDist, "uni")==0 && eJt==JT_INNER && eQuery==Q_SUM ){
    addCase(pL, pOpt, pD, eJt, eQuery, F_TVF_WIDE, 0);
    addCase(pL, pOpt, pD, eJt, eQuery, F_TVF_CTE, 0);
  }
  pL->nGroup++;
}

/* The spill group: the in-memory run and every hash and sort strategy
** with a quarter of the memory the build side needs. */
static void addSpillGroup(CaseList *pL, const Options *pOpt,
                          const Dataset *pD){
  static const int aHint[] = { 0, 2, 4, 5 };
  int f, i;
  for(f=F_TVF; f<=F_VT; f++){
    addCase(pL, pOpt, pD, JT_INNER, Q_SUM_MEM, f, H_BS);
    for(i=0; i<(int)(sizeof(aHint)/sizeof(aHint[0])); i++){
      addCase(pL, pOpt, pD, JT_INNER, Q_SUM_LIM, f, aHint[i]);
    }
  }
  pL->nGroup++;
}

/* coGroup: the key counts of each group (no JSON), against SQLite's
** GROUP BY over both tables and the scan of the keys. */
static void addCogroupGroup(CaseList *pL, const Options *pOpt,
                            const Dataset *pD){
  addCase(pL, pOpt, pD, JT_COGROUP, Q_COUNT, F_NATIVE, H_NONE);
  addCase(pL, pOpt, pD, JT_COGROUP, Q_COUNT, F_SCAN, H_NONE);
  addCase(pL, pOpt, pD, JT_COGROUP, Q_COUNT, F_TVF, H_NONE);
  addCase(pL, pOpt, pD, JT_COGROUP, Q_COUNT, F_VT, H_NONE);
  pL->nGroup++;
}

/* cross: every pair with a payload sum, in the typed form with each of
** its hints and in the table-valued form with the default one. */
static void addCrossGroup(CaseList *pL, const Options *pOpt,
                          const Dataset *pD){
  int h;
  addCase(pL, pOpt, pD, JT_CROSS, Q_SUM, F_NATIVE, H_NONE);
  addCase(pL, pOpt, pD, JT_CROSS, Q_SUM, F_SCAN, H_NONE);
  addCase(pL, pOpt, pD, JT_CROSS, Q_SUM, F_TVF, 0);
  for(h=0; h<N_CROSS_HINT; h++){
    addCase(pL, pOpt, pD, JT_CROSS, Q_SUM, F_VT, h);
  }
  pL->nGroup++;
}

static int isLargest(const Options *pOpt, const Dataset *pD){
  return pD->nBuild==1000000
      && pD->nProbe==(pOpt->bQuick ? 1000000 : 10000000);
}

static void buildCaseList(CaseList *pL, const Options *pOpt){
  int d;
  memset(pL, 0, sizeof(*pL));
  for(d=0; d<N_DATASET; d++){
    const Dataset *pD = &aDataset[d];
    int bAll = !pOpt->bQuick || strcmp(pD->zDist, "uni")==0;
    if( pOpt->bQuick && !pD->bQuick ) continue;
    /* --quick runs count and left outer on uni only. */
    if( bAll ) addGroup(pL, pOpt, pD, JT_INNER, Q_COUNT);
    addGroup(pL, pOpt, pD, JT_INNER, Q_SUM);
    if( strcmp(pD->zDist, "uni")==0 && isLargest(pOpt, pD) ){
      /* The progress line's cost, in the sum group just added: both
      ** forms with the hint the in-memory cases use. */
      pL->nGroup--;
      addCase(pL, pOpt, pD, JT_INNER, Q_SUM_PROG, F_TVF, H_BS);
      addCase(pL, pOpt, pD, JT_INNER, Q_SUM_PROG, F_VT, H_BS);
      pL->nGroup++;
    }
    if( bAll ) addGroup(pL, pOpt, pD, JT_LEFT, Q_SUM);
    addGroup(pL, pOpt, pD, JT_FULL, Q_SUM);
    if( strcmp(pD->zDist, "uni")==0 && pD->nBuild==1000000
     && pD->nProbe==1000000 ){
      /* The one case that hands every output row to the application. */
      addCase(pL, pOpt, pD, JT_INNER, Q_ALL, F_NATIVE, H_NONE);
      addCase(pL, pOpt, pD, JT_INNER, Q_ALL, F_TUNED, H_NONE);
      addCase(pL, pOpt, pD, JT_INNER, Q_ALL, F_READ, H_NONE);
      addCase(pL, pOpt, pD, JT_INNER, Q_ALL, F_TVF, H_BS);
      addCase(pL, pOpt, pD, JT_INNER, Q_ALL, F_VT, H_BS);
      pL->nGroup++;
    }
    if( strcmp(pD->zDist, "uni")==0 && isLargest(pOpt, pD) ){
      addSpillGroup(pL, pOpt, pD);
      addCogroupGroup(pL, pOpt, pD);
    }
    if( strcmp(pD->zDist, "one")==0 ){
      /* 1K x 10K: ten million pairs. */
      addCrossGroup(pL, pOpt, pD);
    }
  }
}

/* The case named zName, in the full list (quick or not). */
static int findCase(const char *zName, Options *pOpt, Case *pOut){
  Options o = *pOpt;
  CaseList L;
  int i, q;
  for(q=0; q<2; q++){
    o.bQuick = q;
    o.zFilter = 0;
    buildCaseList(&L, &o);
    for(i=0; i<L.n; i++){
      if( strcmp(L.a[i].zName, zName)==0 ){
        *pOut = L.a[i];
        free(L.a);
        return 1;
      }
    }
    free(L.a);
  }
  return 0;
}

/*************************************************************************
** Data generation
*/
static u64 rngNext(u64 *pState){
  u64 z = (*pState += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform on 0..n-1 (n far below 2^64: the bias is negligible). */
static i64 rngBelow(u64 *pState, i64 n){
  return (i64)(rngNext(pState) % (u64)n);
}

static double rngUnit(u64 *pState){
  return (double)(rngNext(pState) >> 11) * (1.0 / 9007199254740992.0);
}

/* The keys 1..n in random order. */
static i64 *shuffledKeys(u64 *pRng, i64 n){
  i64 *a = malloc(sizeof(i64) * (size_t)n);
  i64 i;
  if( a==0 ) return 0;
  for(i=0; i<n; i++) a[i] = i + 1;
  for(i=n-1; i>0; i--){
    i64 j = rngBelow(pRng, i + 1);
    i64 t = a[i]; a[i] = a[j]; a[j] = t;
  }
  return a;
}

/* Zipf (s = 1) on 1..n by inversion of the cumulative distribution. */
typedef struct Zipf Zipf;
struct Zipf { double *aCdf; i64 n; };

static int zipfInit(Zipf *pZ, i64 n){
  double sum = 0.0;
  i64 i;
  pZ->n = n;
  pZ->aCdf = malloc(sizeof(double) * (size_t)n);
  if( pZ->aCdf==0 ) return 0;
  for(i=0; i<n; i++){
    sum += 1.0 / (double)(i + 1);
    pZ->aCdf[i] = sum;
  }
  for(i=0; i<n; i++) pZ->aCdf[i] /= sum;
  return 1;
}

static i64 zipfNext(Zipf *pZ, u64 *pRng){
  double u = rngUnit(pRng);
  i64 lo = 0, hi = pZ->n - 1;
  while( lo<hi ){
    i64 mid = lo + (hi - lo)/2;
    if( pZ->aCdf[mid] < u ) lo = mid + 1; else hi = mid;
  }
  return lo + 1;
}

static int execSql(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  int rc = sqlite3_exec(db, zSql, 0, 0, &zErr);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "dsbench: %s\n  in: %s\n", zErr ? zErr : "?", zSql);
    sqlite3_free(zErr);
  }
  return rc;
}

/* Insert one row (key, int, real, 16-character text). */
static int insertRow(sqlite3_stmt *pIns, u64 *pRng, i64 key){
  char zText[24];
  snprintf(zText, sizeof(zText), "%016llx", (unsigned long long)rngNext(pRng));
  sqlite3_bind_int64(pIns, 1, key);
  sqlite3_bind_int64(pIns, 2, rngBelow(pRng, 1000000));
  sqlite3_bind_double(pIns, 3, rngUnit(pRng) * 1000.0);
  sqlite3_bind_text(pIns, 4, zText, 16, SQLITE_TRANSIENT);
  if( sqlite3_step(pIns)!=SQLITE_DONE ) return SQLITE_ERROR;
  return sqlite3_reset(pIns);
}

static int genBuild(sqlite3 *db, const Dataset *pD, u64 *pRng){
  sqlite3_stmt *pIns = 0;
  i64 *aKey;
  i64 i, nKey = pD->nBuild;
  int rc;
  if( strcmp(pD->zDist, "m2m")==0 ) nKey = pD->nBuild / 10;
  aKey = shuffledKeys(pRng, pD->nBuild);
  if( aKey==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, "INSERT INTO b VALUES(?1,?2,?3,?4)", -1,
                          &pIns, 0);
  for(i=0; i<pD->nBuild && rc==SQLITE_OK; i++){
    i64 key;
    if( strcmp(pD->zDist, "one")==0 ){
      key = 1;
    }else{
      key = (aKey[i] - 1) % nKey + 1;
    }
    rc = insertRow(pIns, pRng, key);
  }
  sqlite3_finalize(pIns);
  free(aKey);
  return rc;
}

static int genProbe(sqlite3 *db, const Dataset *pD, u64 *pRng){
  sqlite3_stmt *pIns = 0;
  Zipf zipf = { 0, 0 };
  i64 i, nB = pD->nBuild;
  int rc;
  if( strcmp(pD->zDist, "zipf")==0 && !zipfInit(&zipf, nB) ){
    return SQLITE_NOMEM;
  }
  rc = sqlite3_prepare_v2(db, "INSERT INTO p VALUES(?1,?2,?3,?4)", -1,
                          &pIns, 0);
  for(i=0; i<pD->nProbe && rc==SQLITE_OK; i++){
    i64 key;
    if( strcmp(pD->zDist, "uni")==0 ){
      key = 1 + rngBelow(pRng, nB);
    }else if( strcmp(pD->zDist, "zipf")==0 ){
      key = zipfNext(&zipf, pRng);
    }else if( strcmp(pD->zDist, "m2m")==0 ){
      key = 1 + rngBelow(pRng, nB/10);
    }else if( strcmp(pD->zDist, "sel")==0 ){
      key = rngBelow(pRng, 100)==0 ? 1 + rngBelow(pRng, nB)
                                   : nB + 1 + rngBelow(pRng, 99*nB);
    }else{
      key = 1;
    }
    rc = insertRow(pIns, pRng, key);
  }
  sqlite3_finalize(pIns);
  free(zipf.aCdf);
  return rc;
}

/* Write dataset pD to zPath (through zPath.tmp) unless it exists. */
static int genDataset(const Dataset *pD, const char *zPath){
  char *zTmp;
  sqlite3 *db = 0;
  u64 rng = 0x5eed0000ULL + (u64)pD->nBuild * 31 + (u64)pD->nProbe;
  char zName[64];
  struct stat st;
  double t0;
  struct timespec ts;
  int rc;
  int i;
  if( stat(zPath, &st)==0 ) return SQLITE_OK;
  for(i=0; pD->zDist[i]; i++) rng = rng*131 + (u64)pD->zDist[i];
  datasetName(pD, zName, sizeof(zName));
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = (double)ts.tv_sec + (double)ts.tv_nsec/1e9;
  printf("generating %s into %s ...\n", zName, zPath);
  fflush(stdout);
  zTmp = sqlite3_mprintf("%s.tmp", zPath);
  unlink(zTmp);
  rc = sqlite3_open(zTmp, &db);
  if( rc==SQLITE_OK ){
    rc = execSql(db,
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
        "PRAGMA cache_size=-262144;"
        "CREATE TABLE b(bk INTEGER, bi INTEGER, br REAL, bt TEXT);"
        "CREATE TABLE p(pk INTEGER, pi INTEGER, pr REAL, pt TEXT);"
        "BEGIN;");
  }
  if( rc==SQLITE_OK ) rc = genBuild(db, pD, &rng);
  if( rc==SQLITE_OK ) rc = genProbe(db, pD, &rng);
  if( rc==SQLITE_OK ) rc = execSql(db, "COMMIT");
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "dsbench: generating %s failed: %s\n", zName,
            db ? sqlite3_errmsg(db) : "cannot open");
  }
  sqlite3_close(db);
  if( rc==SQLITE_OK && rename(zTmp, zPath)!=0 ){
    fprintf(stderr, "dsbench: rename %s: %s\n", zTmp, strerror(errno));
    rc = SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ) unlink(zTmp);
  sqlite3_free(zTmp);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if( rc==SQLITE_OK ){
    printf("generated %s in %.1f s\n", zName,
           (double)ts.tv_sec + (double)ts.tv_nsec/1e9 - t0);
  }
  return rc;
}

/* Generate in a child process, so that this one stays small. */
static int genInChild(const Dataset *pD, const char *zPath){
  struct stat st;
  pid_t pid;
  int status = 0;
  if( stat(zPath, &st)==0 ) return SQLITE_OK;
  fflush(stdout);
  pid = fork();
  if( pid<0 ) return SQLITE_ERROR;
  if( pid==0 ) _exit(genDataset(pD, zPath)==SQLITE_OK ? 0 : 1);
  if( waitpid(pid, &status, 0)<0 ) return SQLITE_ERROR;
  return (WIFEXITED(status) && WEXITSTATUS(status)==0) ? SQLITE_OK
                                                        : SQLITE_ERROR;
}

/* Read the file once so that every case finds it in the OS cache. */
static void warmFile(const char *zPath){
  static char aBuf[1<<20];
  int fd = open(zPath, O_RDONLY);
  if( fd<0 ) return;
  while( read(fd, aBuf, sizeof(aBuf))>0 ){}
  close(fd);
}

/*************************************************************************
** The SQL of a case
*/

/* The columns a query reads from p and from b, as select lists. */
static const char *probeCols(int eQuery){
  switch( eQuery ){
    case Q_COUNT: return "pk";
    case Q_ALL:   return "pk, pi, pr, pt";
    default:      return "pk, pi";
  }
}
static const char *buildCols(int eQuery){
  switch( eQuery ){
    case Q_COUNT: return "bk";
    case Q_ALL:   return "bk, bi, br, bt";
    default:      return "bk, br";
  }
}

/* The statement the case times (sqlite3_malloc'd).  For F_READ the
** statement of side iSide. */
static char *caseSql(const Case *pC, int iSide){
  int bAgg = pC->eQuery!=Q_ALL;
  int bSum = pC->eQuery!=Q_COUNT && bAgg;
  const char *zJt = pC->eJt==JT_LEFT ? "LEFT JOIN" : "JOIN";
  if( pC->eJt==JT_COGROUP ){
    /* The number of keys and the rows of each side, as coGroup's
    ** left_count and right_count give them (no NULL keys in the data). */
    switch( pC->eForm ){
      case F_NATIVE:
        return sqlite3_mprintf(
            "SELECT count(*), sum(lc), sum(rc) FROM ("
            "SELECT sum(l) AS lc, sum(r) AS rc FROM ("
            "SELECT pk AS k, 1 AS l, 0 AS r FROM p "
            "UNION ALL SELECT bk, 0, 1 FROM b) GROUP BY k)");
      case F_TVF:
        return sqlite3_mprintf("SELECT count(*), sum(left_count), "
                               "sum(right_count) FROM ds_cogroup("
                               "'p', 'b', 'pk', 'bk')");
      case F_VT:
        return sqlite3_mprintf("SELECT count(*), sum(left_count), "
                               "sum(right_count) FROM temp.j");
      default:
        break;    /* the scan of the keys, below */
    }
  }
  if( pC->eJt==JT_CROSS ){
    switch( pC->eForm ){
      case F_NATIVE:
        return sqlite3_mprintf("SELECT count(*), sum(p.pi), sum(b.br) "
                               "FROM p, b");
      case F_TVF:
        return sqlite3_mprintf("SELECT count(*), sum(left->>'pi'), "
                               "sum(right->>'br') FROM ds_cross("
                               "'SELECT pk, pi FROM p', "
                               "'SELECT bk, br FROM b', '%s')",
                               hintSql(pC));
      default:
        break;    /* scan, and the typed form's query, below */
    }
  }
  switch( pC->eForm ){
    case F_NATIVE:
    case F_TUNED:
      if( !bAgg ){
        return sqlite3_mprintf("SELECT p.pk, p.pi, p.pr, p.pt, b.bk, b.bi, "
                               "b.br, b.bt FROM p JOIN b ON b.bk = p.pk");
      }
      if( pC->eJt==JT_FULL ){
        return sqlite3_mprintf(
            "SELECT count(*)%s FROM ("
            "SELECT p.pi AS pi, b.br AS br FROM p LEFT JOIN b ON b.bk = p.pk "
            "UNION ALL "
            "SELECT NULL, b.br FROM b LEFT JOIN p ON p.pk = b.bk "
            "WHERE p.pk IS NULL)",
            bSum ? ", sum(pi), sum(br)" : "");
      }
      return sqlite3_mprintf("SELECT count(*)%s FROM p %s b ON b.bk = p.pk",
                             bSum ? ", sum(p.pi), sum(b.br)" : "", zJt);
    case F_SCAN:
      if( !bAgg ){
        return sqlite3_mprintf("SELECT pk, pi, pr, pt FROM p "
                               "UNION ALL SELECT bk, bi, br, bt FROM b");
      }
      if( !bSum ){
        return sqlite3_mprintf("SELECT (SELECT sum(pk) FROM p), "
                               "(SELECT sum(bk) FROM b)");
      }
      return sqlite3_mprintf("SELECT (SELECT sum(pk) + sum(pi) FROM p), "
                             "(SELECT sum(bk) + sum(br) FROM b)");
    case F_READ:
      return sqlite3_mprintf("SELECT %s FROM %s",
                             iSide ? buildCols(pC->eQuery)
                                   : probeCols(pC->eQuery),
                             iSide ? "b" : "p");
    case F_TVF:
      if( !bAgg ){
        return sqlite3_mprintf("SELECT key, left, right FROM ds_join_hint("
                               "'p', 'b', 'pk', 'bk', '%s', '%s')",
                               hintSql(pC), azJtSql[pC->eJt]);
      }
      if( !bSum ){
        return sqlite3_mprintf("SELECT count(*) FROM ds_join_hint("
                               "'p', 'b', 'pk', 'bk', '%s', '%s')",
                               hintSql(pC), azJtSql[pC->eJt]);
      }
      return sqlite3_mprintf("SELECT count(*), sum(left->>'pi'), "
                             "sum(right->>'br') FROM ds_join_hint("
                             "'SELECT pk, pi FROM p', 'SELECT bk, br FROM b', "
                             "'pk', 'bk', '%s', '%s')",
                             hintSql(pC), azJtSql[pC->eJt]);
    case F_TVF_WIDE:
      return sqlite3_mprintf("SELECT count(*), sum(left->>'pi'), "
                             "sum(right->>'br') FROM ds_join_hint("
                             "'p', 'b', 'pk', 'bk', '%s', '%s')",
                             hintSql(pC), azJtSql[pC->eJt]);
    case F_TVF_CTE:
      return sqlite3_mprintf("WITH v AS MATERIALIZED ("
                             "SELECT left->>'pi' AS pi, "
                             "right->>'br' AS br FROM ds_join_hint("
                             "'SELECT pk, pi FROM p', 'SELECT bk, br FROM b', "
                             "'pk', 'bk', '%s', '%s')) "
                             "SELECT count(*), sum(pi), sum(br) FROM v",
                             hintSql(pC), azJtSql[pC->eJt]);
    default: /* F_VT */
      if( !bAgg ) return sqlite3_mprintf("SELECT * FROM temp.j");
      return sqlite3_mprintf("SELECT count(*)%s FROM temp.j",
                             bSum ? ", sum(pi), sum(br)" : "");
  }
}

static char *vtCreateSql(const Case *pC){
  if( pC->eJt==JT_COGROUP ){
    return sqlite3_mprintf(
        "CREATE VIRTUAL TABLE temp.j USING ds_cogroup(left=p, right=b, "
        "left_key=pk, right_key=bk)");
  }
  if( pC->eJt==JT_CROSS ){
    return sqlite3_mprintf(
        "CREATE VIRTUAL TABLE temp.j USING ds_cross(left=p, right=b, "
        "hint=%s)", hintSql(pC));
  }
  return sqlite3_mprintf(
      "CREATE VIRTUAL TABLE temp.j USING ds_join_hint(left=p, right=b, "
      "left_key=pk, right_key=bk, hint=%s, join_type=%s)",
      hintSql(pC), azJtSql[pC->eJt]);
}

/*************************************************************************
** Running a case
*/
typedef struct Outcome Outcome;
struct Outcome {
  char zStatus[16];       /* ok, missing, error, timeout */
  double sec;             /* wall-clock seconds of the timed part */
  double cpu;             /* CPU seconds (user + system) of the same */
  i64 nRow;               /* rows stepped */
  char zResult[256];      /* the aggregate row, or rows=N for `all` */
  char *zStats;           /* ds_last_stats(), or NULL */
  char *zMsg;             /* error message */
  long nMaxRssKb;
};

static double clockSec(clockid_t id){
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static double nowSec(void){ return clockSec(CLOCK_MONOTONIC); }

/* User + system CPU seconds of this process: every thread of it (the
** extension's workers included), no child. */
static double cpuSec(void){
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
       + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void setError(Outcome *pO, const char *zStatus, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  snprintf(pO->zStatus, sizeof(pO->zStatus), "%s", zStatus);
  sqlite3_free(pO->zMsg);
  pO->zMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
}

/* Append the value of column i to zBuf, as the result text. */
static void appendValue(char *zBuf, size_t n, sqlite3_stmt *pStmt, int i){
  size_t len = strlen(zBuf);
  const char *zSep = i ? "," : "";
  switch( sqlite3_column_type(pStmt, i) ){
    case SQLITE_INTEGER:
      snprintf(zBuf+len, n-len, "%s%lld", zSep,
               sqlite3_column_int64(pStmt, i));
      break;
    case SQLITE_FLOAT:
      snprintf(zBuf+len, n-len, "%s%.17g", zSep,
               sqlite3_column_double(pStmt, i));
      break;
    case SQLITE_NULL:
      snprintf(zBuf+len, n-len, "%sNULL", zSep);
      break;
    default:
      snprintf(zBuf+len, n-len, "%s%s", zSep,
               (const char *)sqlite3_column_text(pStmt, i));
  }
}

/*
** Step pStmt to the end, fetching every value of every row as a client
** would (text as text), and fold them into a checksum so that the
** compiler keeps the work.
*/
static int stepAll(sqlite3_stmt *pStmt, i64 *pnRow, u64 *pSum){
  int rc;
  int nCol = sqlite3_column_count(pStmt);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    int i;
    for(i=0; i<nCol; i++){
      switch( sqlite3_column_type(pStmt, i) ){
        case SQLITE_INTEGER:
          *pSum += (u64)sqlite3_column_int64(pStmt, i);
          break;
        case SQLITE_FLOAT: {
          double r = sqlite3_column_double(pStmt, i);
          u64 u;
          memcpy(&u, &r, 8);
          *pSum ^= u;
          break;
        }
        case SQLITE_NULL:
          *pSum += 1;
          break;
        default: {
          const unsigned char *z = sqlite3_column_text(pStmt, i);
          int nByte = sqlite3_column_bytes(pStmt, i);
          *pSum += (u64)nByte + (nByte ? z[0] : 0);
        }
      }
    }
    (*pnRow)++;
  }
  return rc;
}

/*
** The timed part: prepare, step to the end, finalize.  Kept out of line
** so that callgrind can collect just this (--toggle-collect=runTimed, and
** start_thread for the workers the statement starts: mk/bench.mk).
*/
__attribute__((noinline))
int runTimed(sqlite3 *db, const Case *pC, Outcome *pO, char **pzErr){
  int nSide = pC->eForm==F_READ ? 2 : 1;
  u64 sum = 0;
  int iSide, rc = SQLITE_OK;
  for(iSide=0; iSide<nSide && rc==SQLITE_OK; iSide++){
    sqlite3_stmt *pStmt = 0;
    char *zSql = caseSql(pC, iSide);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
      return rc;
    }
    if( pC->eQuery==Q_ALL || pC->eForm==F_READ ){
      rc = stepAll(pStmt, &pO->nRow, &sum);
      snprintf(pO->zResult, sizeof(pO->zResult), "rows=%lld", pO->nRow);
    }else{
      pO->zResult[0] = 0;
      while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
        int i;
        for(i=0; i<sqlite3_column_count(pStmt); i++){
          appendValue(pO->zResult, sizeof(pO->zResult), pStmt, i);
        }
        pO->nRow++;
      }
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    if( rc!=SQLITE_OK ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    sqlite3_finalize(pStmt);
  }
  if( sum==42 ) pO->nRow += 0;   /* keep the checksum alive */
  return rc;
}

/* A one-value query, as text (sqlite3_malloc'd), or NULL. */
static char *queryText(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  char *z = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW
   && sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
    z = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  return z;
}

static int openWithExtension(const char *zPath, const char *zExt,
                             sqlite3 **pDb, char **pzErr){
  sqlite3 *db = 0;
  int rc = sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE, 0);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("cannot open %s: %s", zPath,
                             db ? sqlite3_errmsg(db) : "?");
    sqlite3_close(db);
    return rc;
  }
  sqlite3_enable_load_extension(db, 1);
  rc = sqlite3_load_extension(db, zExt, 0, pzErr);
  if( rc!=SQLITE_OK ){
    sqlite3_close(db);
    return rc;
  }
  *pDb = db;
  return SQLITE_OK;
}

/*
** Run case pC once in this process.  nMemLimit > 0 sets memory_limit.
*/
static void runCase(const Options *pOpt, const Case *pC, i64 nMemLimit,
                    Outcome *pO){
  char *zPath = datasetPath(pOpt->zDataDir, pC->pData);
  sqlite3 *db = 0;
  char *zErr = 0;
  double t0, c0;
  int rc;
  memset(pO, 0, sizeof(*pO));
  strcpy(pO->zStatus, "ok");
  rc = openWithExtension(zPath, pOpt->zExt, &db, &zErr);
  sqlite3_free(zPath);
  if( rc!=SQLITE_OK ){
    setError(pO, "error", "%s", zErr ? zErr : "cannot open");
    sqlite3_free(zErr);
    return;
  }
  if( pC->eForm==F_TUNED ){
    execSql(db, "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;");
  }
  if( pC->eQuery==Q_SUM_PROG ){
    execSql(db, "SELECT ds_config('progress', 1)");
  }
  if( pC->nThread>0 ){
    char *zSql = sqlite3_mprintf("SELECT ds_config('threads', %d)",
                                 pC->nThread);
    rc = execSql(db, zSql);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ){
      setError(pO, "error", "cannot set threads to %d", pC->nThread);
      sqlite3_close(db);
      return;
    }
  }
  if( nMemLimit>0 ){
    char *zSql = sqlite3_mprintf("SELECT ds_config('memory_limit', %lld)",
                                 nMemLimit);
    execSql(db, zSql);
    sqlite3_free(zSql);
  }
  if( pC->eForm==F_VT ){
    char *zSql = vtCreateSql(pC);
    rc = sqlite3_exec(db, zSql, 0, 0, &zErr);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ){
      int bMissing = zErr && strstr(zErr, "no such module")!=0;
      setError(pO, bMissing ? "missing" : "error", "%s", zErr ? zErr : "?");
      sqlite3_free(zErr);
      sqlite3_close(db);
      return;
    }
  }
  c0 = cpuSec();
  t0 = nowSec();
  rc = runTimed(db, pC, pO, &zErr);
  pO->sec = nowSec() - t0;
  pO->cpu = cpuSec() - c0;
  if( rc!=SQLITE_OK ){
    setError(pO, "error", "%s", zErr ? zErr : sqlite3_errstr(rc));
  }
  sqlite3_free(zErr);
  if( pC->eForm>=F_TVF ){
    pO->zStats = queryText(db, "SELECT ds_last_stats()");
  }
  sqlite3_close(db);
}

/* Tabs and newlines would break the TSV line. */
static void flatten(char *z){
  for(; z && *z; z++){
    if( *z=='\t' || *z=='\n' || *z=='\r' ) *z = ' ';
  }
}

/*
** Run case pC in a child process; fill pO from what it reports through a
** pipe and from its resource usage.
*/
static void runInChild(const Options *pOpt, const Case *pC, i64 nMemLimit,
                       Outcome *pO){
  int aFd[2];
  pid_t pid;
  int status = 0;
  struct rusage ru;
  char *zBuf = 0;
  size_t nBuf = 0;
  FILE *in;
  memset(pO, 0, sizeof(*pO));
  fflush(stdout);
  if( pipe(aFd)!=0 ){
    setError(pO, "error", "pipe: %s", strerror(errno));
    return;
  }
  pid = fork();
  if( pid<0 ){
    setError(pO, "error", "fork: %s", strerror(errno));
    close(aFd[0]);
    close(aFd[1]);
    return;
  }
  if( pid==0 ){
    Outcome o;
    FILE *out;
    close(aFd[0]);
    alarm((unsigned)pOpt->nTimeout);
    runCase(pOpt, pC, nMemLimit, &o);
    flatten(o.zMsg);
    flatten(o.zStats);
    out = fdopen(aFd[1], "w");
    fprintf(out, "%s\t%.6f\t%.6f\t%lld\t%s\t%s\t%s\n", o.zStatus, o.sec,
            o.cpu, o.nRow,
            o.zResult[0] ? o.zResult : "-", o.zStats ? o.zStats : "-",
            o.zMsg ? o.zMsg : "-");
    fclose(out);
    _exit(0);
  }
  close(aFd[1]);
  in = fdopen(aFd[0], "r");
  if( in && getline(&zBuf, &nBuf, in)>0 ){
    char *zSave = 0;
    char *zStatus = strtok_r(zBuf, "\t\n", &zSave);
    char *zSec = strtok_r(0, "\t\n", &zSave);
    char *zCpu = strtok_r(0, "\t\n", &zSave);
    char *zRows = strtok_r(0, "\t\n", &zSave);
    char *zResult = strtok_r(0, "\t\n", &zSave);
    char *zStats = strtok_r(0, "\t\n", &zSave);
    char *zMsg = strtok_r(0, "\t\n", &zSave);
    snprintf(pO->zStatus, sizeof(pO->zStatus), "%s", zStatus ? zStatus : "?");
    pO->sec = zSec ? atof(zSec) : 0.0;
    pO->cpu = zCpu ? atof(zCpu) : 0.0;
    pO->nRow = zRows ? atoll(zRows) : 0;
    snprintf(pO->zResult, sizeof(pO->zResult), "%s", zResult ? zResult : "-");
    if( zStats && strcmp(zStats, "-")!=0 ){
      pO->zStats = sqlite3_mprintf("%s", zStats);
    }
    if( zMsg && strcmp(zMsg, "-")!=0 ) pO->zMsg = sqlite3_mprintf("%s", zMsg);
  }
  if( in ) fclose(in); else close(aFd[0]);
  free(zBuf);
  memset(&ru, 0, sizeof(ru));
  while( wait4(pid, &status, 0, &ru)<0 && errno==EINTR ){}
  pO->nMaxRssKb = ru.ru_maxrss;
  if( WIFSIGNALED(status) ){
    if( WTERMSIG(status)==SIGALRM ){
      setError(pO, "timeout", "over %d s", pOpt->nTimeout);
    }else{
      setError(pO, "error", "killed by signal %d", WTERMSIG(status));
    }
  }else if( pO->zStatus[0]==0 ){
    setError(pO, "error", "the child reported nothing");
  }
}

/*************************************************************************
** Comparing results: every form of a group must give the same answer.
*/
static int sameResult(const char *zA, const char *zB){
  char *a = strdup(zA), *b = strdup(zB);
  char *sa = 0, *sb = 0, *x, *y;
  int bSame = 1;
  if( a==0 || b==0 ){ free(a); free(b); return 1; }
  x = strtok_r(a, ",", &sa);
  y = strtok_r(b, ",", &sb);
  while( bSame && (x || y) ){
    if( x==0 || y==0 ){
      bSame = 0;
    }else if( strcmp(x, y)!=0 ){
      double u = atof(x), v = atof(y);
      bSame = (strchr(x, '.') || strchr(y, '.') || strchr(x, 'e'))
           && fabs(u - v) <= 1e-9 * fmax(fabs(u), fabs(v));
    }
    x = strtok_r(0, ",", &sa);
    y = strtok_r(0, ",", &sb);
  }
  free(a);
  free(b);
  return bSame;
}

/*************************************************************************
** The machine and the build
*/
static void cpuModel(char *zBuf, size_t n){
  FILE *f = fopen("/proc/cpuinfo", "r");
  char aLine[512];
  snprintf(zBuf, n, "unknown");
  if( f==0 ) return;
  while( fgets(aLine, sizeof(aLine), f) ){
    if( strncmp(aLine, "model name", 10)==0 ){
      char *z = strchr(aLine, ':');
      if( z ){
        z++;
        while( *z==' ' ) z++;
        z[strcspn(z, "\n")] = 0;
        snprintf(zBuf, n, "%s", z);
      }
      break;
    }
  }
  fclose(f);
}

/* "2025-01-31 12:34 UTC" */
static void utcNow(char *zBuf, size_t n){
  time_t now = time(0);
  strftime(zBuf, n, "%Y-%m-%d %H:%M UTC", gmtime(&now));
}

/* The 1-minute load average: other work on a shared machine. */
static double loadAverage(void){
  double r[1] = { -1.0 };
  return getloadavg(r, 1)==1 ? r[0] : -1.0;
}

static i64 memTotalKb(void){
  FILE *f = fopen("/proc/meminfo", "r");
  char aLine[256];
  i64 n = 0;
  if( f==0 ) return 0;
  while( fgets(aLine, sizeof(aLine), f) ){
    if( sscanf(aLine, "MemTotal: %lld kB", &n)==1 ) break;
  }
  fclose(f);
  return n;
}

/*
** Probe the extension in a child: its version, the default memory_limit,
** and whether the typed form (CREATE VIRTUAL TABLE ... USING
** ds_join_hint) exists.  Writes the meta file.
*/
static int writeMeta(const Options *pOpt, int *pbTyped){
  int aFd[2];
  pid_t pid;
  int status = 0;
  char aLine[2048];
  FILE *in, *out;
  char zCpu[256];
  char zDate[64];
  *pbTyped = 0;
  if( pipe(aFd)!=0 ) return 1;
  fflush(stdout);
  pid = fork();
  if( pid==0 ){
    sqlite3 *db = 0;
    char *zErr = 0;
    char *zV, *zLim, *zThr;
    int rc;
    close(aFd[0]);
    out = fdopen(aFd[1], "w");
    rc = openWithExtension(":memory:", pOpt->zExt, &db, &zErr);
    if( rc!=SQLITE_OK ){
      fprintf(out, "error\t%s\n", zErr ? zErr : "?");
      fclose(out);
      _exit(1);
    }
    zV = queryText(db, "SELECT ds_version()");
    zLim = queryText(db, "SELECT ds_config('memory_limit')");
    zThr = queryText(db, "SELECT ds_config('threads')");
    fprintf(out, "extension_version\t%s\n", zV ? zV : "?");
    fprintf(out, "memory_limit_default\t%s\n", zLim ? zLim : "?");
    fprintf(out, "threads_default\t%s\n", zThr ? zThr : "?");
    execSql(db, "CREATE TABLE p(pk INTEGER, pi INTEGER, pr REAL, pt TEXT);"
                "CREATE TABLE b(bk INTEGER, bi INTEGER, br REAL, bt TEXT);"
                "INSERT INTO p VALUES(1,1,1.0,'x');"
                "INSERT INTO b VALUES(1,2,2.0,'y');");
    rc = sqlite3_exec(db,
        "CREATE VIRTUAL TABLE temp.j USING ds_join_hint(left=p, right=b, "
        "left_key=pk, right_key=bk, hint=BROADCAST_HASH_SECOND, "
        "join_type=INNER); SELECT count(*), sum(pi), sum(br) FROM temp.j;",
        0, 0, &zErr);
    if( rc==SQLITE_OK ){
      fprintf(out, "typed_form\tyes\n");
    }else{
      flatten(zErr);
      fprintf(out, "typed_form\tmissing: %s\n", zErr ? zErr : "?");
    }
    fclose(out);
    sqlite3_close(db);
    _exit(0);
  }
  close(aFd[1]);
  out = fopen(pOpt->zMeta, "w");
  if( out==0 ){
    fprintf(stderr, "dsbench: cannot write %s\n", pOpt->zMeta);
    close(aFd[0]);
    waitpid(pid, &status, 0);
    return 1;
  }
  utcNow(zDate, sizeof(zDate));
  cpuModel(zCpu, sizeof(zCpu));
  fprintf(out, "date\t%s\n", zDate);
  fprintf(out, "commit\t%s\n", pOpt->zCommit ? pOpt->zCommit : "unknown");
  fprintf(out, "mode\t%s\n", pOpt->bQuick ? "quick" : "full");
  fprintf(out, "reps\t%d\n", pOpt->nRep);
  fprintf(out, "filter\t%s\n", pOpt->zFilter ? pOpt->zFilter : "");
  fprintf(out, "nproc\t%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
  fprintf(out, "cpu\t%s\n", zCpu);
  fprintf(out, "mem_total_kb\t%lld\n", memTotalKb());
  fprintf(out, "sqlite_version\t%s\n", sqlite3_libversion());
  fprintf(out, "loadavg_start\t%.2f\n", loadAverage());
  in = fdopen(aFd[0], "r");
  while( in && fgets(aLine, sizeof(aLine), in) ){
    fputs(aLine, out);
    if( strcmp(aLine, "typed_form\tyes\n")==0 ) *pbTyped = 1;
    if( strncmp(aLine, "error\t", 6)==0 ){
      fprintf(stderr, "dsbench: cannot load %s: %s", pOpt->zExt, aLine+6);
    }
  }
  if( in ) fclose(in);
  fclose(out);
  waitpid(pid, &status, 0);
  return !(WIFEXITED(status) && WEXITSTATUS(status)==0);
}

/*************************************************************************
** The run
*/
static void writeResult(FILE *out, const Options *pOpt, const Case *pC,
                        int iRep, i64 nMemLimit, const Outcome *pO){
  char zData[64];
  char zDate[64];
  datasetName(pC->pData, zData, sizeof(zData));
  utcNow(zDate, sizeof(zDate));
  fprintf(out, "%s\t%s\t%s\t%lld\t%lld\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%.6f"
               "\t%.6f\t%ld\t%lld\t%s\t%lld\t%s\t%s\t%s\t%s\n",
          pC->zName, zData, pC->pData->zDist, pC->pData->nBuild,
          pC->pData->nProbe, azJtName[pC->eJt], azQueryName[pC->eQuery],
          azFormName[pC->eForm],
          hintShort(pC), pC->nThread, iRep,
          pO->zStatus, pO->sec, pO->cpu, pO->nMaxRssKb, pO->nRow,
          pO->zResult[0] ? pO->zResult : "-", nMemLimit,
          pO->zStats ? pO->zStats : "-", pO->zMsg ? pO->zMsg : "-",
          pOpt->zCommit ? pOpt->zCommit : "unknown", zDate);
  fflush(out);
}

static const char zResultHeader[] =
  "case\tdataset\tdist\tnbuild\tnprobe\tjoin\tquery\tform\thint\tthreads\trep"
  "\tstatus\tseconds\tcpu_seconds\tmaxrss_kb\trows\tresult\tmemory_limit"
  "\tstats\tmessage\tcommit\tdate\n";

/* peak_memory_bytes from a ds_last_stats() object, or 0. */
static i64 statsPeak(const char *zStats){
  const char *z = zStats ? strstr(zStats, "\"peak_memory_bytes\":") : 0;
  return z ? atoll(z + 20) : 0;
}

/* Run group g: every case, nRep times, in rotating order. */
static int runGroup(const Options *pOpt, FILE *out, Case *aCase, int nCase,
                    int bTyped, int *piRun, int nRunTotal){
  int iRep, i;
  i64 nMemLimit = 0;
  char **azFirst = calloc((size_t)nCase, sizeof(char *));
  int nBad = 0;
  if( azFirst==0 ) return 1;

  /* The spill group: measure the build side's memory in memory first. */
  if( aCase[0].eQuery==Q_SUM_MEM || aCase[0].eQuery==Q_SUM_LIM ){
    Case probe = aCase[0];
    Outcome o;
    probe.eForm = F_TVF;
    probe.eQuery = Q_SUM_MEM;
    probe.eHint = H_BS;
    probe.nThread = 1;    /* the same figure for every threads setting */
    runInChild(pOpt, &probe, 0, &o);
    nMemLimit = statsPeak(o.zStats) / 4;
    printf("spill group: in-memory peak %lld bytes, memory_limit %lld\n",
           statsPeak(o.zStats), nMemLimit);
    sqlite3_free(o.zStats);
    sqlite3_free(o.zMsg);
    if( nMemLimit<=0 ){
      printf("  cannot measure the build side: spill cases not run\n");
      free(azFirst);
      return 0;
    }
  }

  for(iRep=0; iRep<pOpt->nRep; iRep++){
    for(i=0; i<nCase; i++){
      Case *pC = &aCase[(i + iRep) % nCase];
      i64 nLim = pC->eQuery==Q_SUM_LIM ? nMemLimit : 0;
      Outcome o;
      (*piRun)++;
      if( pC->eForm==F_VT && !bTyped ){
        if( iRep==0 ){
          memset(&o, 0, sizeof(o));
          strcpy(o.zStatus, "missing");
          o.zMsg = sqlite3_mprintf("the typed virtual-table form is not "
                                   "in this build");
          writeResult(out, pOpt, pC, iRep, nLim, &o);
          sqlite3_free(o.zMsg);
        }
        continue;
      }
      runInChild(pOpt, pC, nLim, &o);
      printf("[%d/%d] %-40s %-7s %8.3f s %8.3f cpu %7.1f MB  %s\n", *piRun,
             nRunTotal, pC->zName, o.zStatus, o.sec, o.cpu,
             o.nMaxRssKb / 1024.0,
             strcmp(o.zStatus, "ok")==0 ? o.zResult : (o.zMsg ? o.zMsg : ""));
      writeResult(out, pOpt, pC, iRep, nLim, &o);
      if( strcmp(o.zStatus, "ok")==0 && azFirst[pC - aCase]==0 ){
        azFirst[pC - aCase] = strdup(o.zResult);
      }
      sqlite3_free(o.zStats);
      sqlite3_free(o.zMsg);
    }
  }

  /* Every join form must agree with the first one that gave an answer. */
  {
    const char *zRef = 0;
    const char *zRefName = 0;
    for(i=0; i<nCase; i++){
      const Case *pC = &aCase[i];
      if( pC->eForm==F_SCAN || pC->eForm==F_READ || azFirst[i]==0 ) continue;
      if( zRef==0 ){
        zRef = azFirst[i];
        zRefName = pC->zName;
      }else if( !sameResult(zRef, azFirst[i]) ){
        printf("WARNING: %s gave %s but %s gave %s\n", pC->zName, azFirst[i],
               zRefName, zRef);
        nBad++;
      }
    }
  }
  for(i=0; i<nCase; i++) free(azFirst[i]);
  free(azFirst);
  return nBad;
}

static int caseListHas(const CaseList *pL, const char *zName){
  int i;
  for(i=0; i<pL->n; i++){
    if( strcmp(pL->a[i].zName, zName)==0 ) return 1;
  }
  return 0;
}

/*
** Open the results file for this run.  Results accumulate: the lines of
** an earlier run are kept for every case this run does not run (each
** line names its commit and date), so `--filter` re-measures some cases
** and keeps the rest.  A file with another header is started afresh.
*/
static FILE *openResults(const Options *pOpt, const CaseList *pL){
  char *zTmp = sqlite3_mprintf("%s.tmp", pOpt->zOut);
  FILE *in = fopen(pOpt->zOut, "r");
  FILE *out = fopen(zTmp, "w");
  char *zLine = 0;
  size_t nLine = 0;
  int nKept = 0;
  if( out==0 ){
    fprintf(stderr, "dsbench: cannot write %s\n", zTmp);
    sqlite3_free(zTmp);
    if( in ) fclose(in);
    return 0;
  }
  fputs(zResultHeader, out);
  if( in && getline(&zLine, &nLine, in)>0
   && strcmp(zLine, zResultHeader)!=0 ){
    /* Another format (before the threads column, say): set it aside
    ** rather than lose it, and start afresh. */
    char *zOld = sqlite3_mprintf("%s.old", pOpt->zOut);
    fclose(in);
    in = 0;
    if( zOld && rename(pOpt->zOut, zOld)==0 ){
      printf("%s has another format: moved to %s\n", pOpt->zOut, zOld);
    }
    sqlite3_free(zOld);
  }else if( in ){
    while( getline(&zLine, &nLine, in)>0 ){
      size_t n = strcspn(zLine, "\t");
      char c = zLine[n];
      zLine[n] = 0;
      if( !caseListHas(pL, zLine) ){
        zLine[n] = c;
        fputs(zLine, out);
        nKept++;
      }
    }
  }
  if( in ) fclose(in);
  free(zLine);
  fflush(out);
  if( rename(zTmp, pOpt->zOut)!=0 ){
    fprintf(stderr, "dsbench: rename %s: %s\n", zTmp, strerror(errno));
    fclose(out);
    out = 0;
  }else if( nKept ){
    printf("kept %d result lines of cases this run does not run\n", nKept);
  }
  sqlite3_free(zTmp);
  return out;
}

static int cmdRun(Options *pOpt){
  CaseList L;
  FILE *out;
  int bTyped = 0;
  int i, iRun = 0, nRunTotal, nBad = 0;
  const Dataset *pWarm = 0;

  buildCaseList(&L, pOpt);
  if( L.n==0 ){
    fprintf(stderr, "dsbench: no case matches the filter\n");
    return 1;
  }
  if( writeMeta(pOpt, &bTyped) ) return 1;
  printf("typed virtual-table form: %s\n", bTyped ? "yes" : "missing");

  /* Generate every dataset needed first, once. */
  for(i=0; i<L.n; i++){
    if( i==0 || L.a[i].pData!=L.a[i-1].pData ){
      char *zPath = datasetPath(pOpt->zDataDir, L.a[i].pData);
      int rc = genInChild(L.a[i].pData, zPath);
      sqlite3_free(zPath);
      if( rc!=SQLITE_OK ) return 1;
    }
  }

  out = openResults(pOpt, &L);
  if( out==0 ) return 1;
  nRunTotal = L.n * pOpt->nRep;
  for(i=0; i<L.n; ){
    int j = i;
    while( j<L.n && L.a[j].iGroup==L.a[i].iGroup ) j++;
    if( L.a[i].pData!=pWarm ){
      char *zPath = datasetPath(pOpt->zDataDir, L.a[i].pData);
      warmFile(zPath);
      sqlite3_free(zPath);
      pWarm = L.a[i].pData;
    }
    nBad += runGroup(pOpt, out, &L.a[i], j - i, bTyped, &iRun, nRunTotal);
    i = j;
  }
  fclose(out);
  free(L.a);
  out = fopen(pOpt->zMeta, "a");
  if( out ){
    fprintf(out, "loadavg_end\t%.2f\n", loadAverage());
    fprintf(out, "disagreements\t%d\n", nBad);
    fclose(out);
  }
  if( nBad ) printf("%d results disagree: see the warnings above\n", nBad);
  printf("results in %s\n", pOpt->zOut);
  return 0;
}

static int cmdList(Options *pOpt){
  CaseList L;
  int i;
  buildCaseList(&L, pOpt);
  for(i=0; i<L.n; i++) printf("%s\n", L.a[i].zName);
  free(L.a);
  return 0;
}

/* The dataset of a case name or of a dataset name (uni-1Mx1M). */
static const Dataset *findDataset(const char *zName){
  int d;
  for(d=0; d<N_DATASET; d++){
    char zData[64];
    size_t n;
    datasetName(&aDataset[d], zData, sizeof(zData));
    n = strlen(zData);
    if( strncmp(zName, zData, n)==0 && (zName[n]==0 || zName[n]==':') ){
      return &aDataset[d];
    }
  }
  return 0;
}

static int cmdGen(Options *pOpt, const char *zName){
  const Dataset *pD = findDataset(zName);
  char *zPath;
  int rc;
  if( pD==0 ){
    fprintf(stderr, "dsbench: no dataset named like %s\n", zName);
    return 1;
  }
  zPath = datasetPath(pOpt->zDataDir, pD);
  rc = genDataset(pD, zPath);
  sqlite3_free(zPath);
  return rc!=SQLITE_OK;
}

/*
** One case, once, in this process: for profilers.  A sum.lim4 case needs
** --memory-limit (bytes), since there is no in-memory run to measure.
** A case of the extension may be named without its :tN suffix; it then
** runs with nThread (--threads), default 1, which also overrides a
** suffix given.
*/
static int cmdOne(Options *pOpt, const char *zName, i64 nMemLimit,
                  int nThread){
  Case c;
  Outcome o;
  struct rusage ru;
  char *zPath;
  struct stat st;
  int bFound = findCase(zName, pOpt, &c);
  if( !bFound ){
    char zFull[160];
    snprintf(zFull, sizeof(zFull), "%s:t%d", zName, aThreads[0]);
    bFound = findCase(zFull, pOpt, &c);
  }
  if( bFound && c.nThread>0 && nThread>0 ){
    c.nThread = nThread;
    caseName(&c);
  }
  if( !bFound ){
    fprintf(stderr, "dsbench: no case named %s (see `dsbench list`)\n",
            zName);
    return 1;
  }
  zPath = datasetPath(pOpt->zDataDir, c.pData);
  if( stat(zPath, &st)!=0 ){
    fprintf(stderr, "dsbench: %s is missing: run `dsbench gen %s` first\n",
            zPath, zName);
    sqlite3_free(zPath);
    return 1;
  }
  sqlite3_free(zPath);
  printf("running %s\n", c.zName);
  fflush(stdout);
  runCase(pOpt, &c, nMemLimit, &o);
  getrusage(RUSAGE_SELF, &ru);
  printf("%s\t%s\t%.6f s\t%.6f s cpu\t%.1f MB\t%s\n", c.zName, o.zStatus,
         o.sec, o.cpu, ru.ru_maxrss / 1024.0, strcmp(o.zStatus, "ok")==0 ? o.zResult
                                                          : o.zMsg);
  if( o.zStats ) printf("%s\n", o.zStats);
  return strcmp(o.zStatus, "ok")!=0;
}

static void usage(void){
  fprintf(stderr,
    "usage: dsbench run|list [--quick] [--reps N] [--filter GLOB,...]\n"
    "                [--data DIR] [--out FILE] [--meta FILE] [--ext PATH]\n"
    "                [--commit TEXT] [--timeout SEC]\n"
    "       dsbench gen DATASET|CASE [--data DIR]\n"
    "       dsbench one CASE [--data DIR] [--ext PATH] [--memory-limit N]\n"
    "                [--threads N]\n");
  exit(2);
}

int main(int argc, char **argv){
  Options opt;
  const char *zCmd, *zArg = 0;
  i64 nMemLimit = 0;
  int nThread = 0;
  int i;
  memset(&opt, 0, sizeof(opt));
  opt.nRep = 5;
  opt.zDataDir = "build/bench/data";
  opt.zOut = "build/bench/results.tsv";
  opt.zMeta = "build/bench/meta.tsv";
  opt.zExt = "build/dataset";
  opt.nTimeout = 900;
  if( argc<2 ) usage();
  zCmd = argv[1];
  for(i=2; i<argc; i++){
    const char *z = argv[i];
    const char *zVal = i+1<argc ? argv[i+1] : 0;
    if( strcmp(z, "--quick")==0 ){ opt.bQuick = 1; continue; }
    if( z[0]!='-' ){
      if( zArg ) usage();
      zArg = z;
      continue;
    }
    if( zVal==0 ) usage();
    i++;
    if( strcmp(z, "--reps")==0 ) opt.nRep = atoi(zVal);
    else if( strcmp(z, "--filter")==0 ) opt.zFilter = zVal;
    else if( strcmp(z, "--data")==0 ) opt.zDataDir = zVal;
    else if( strcmp(z, "--out")==0 ) opt.zOut = zVal;
    else if( strcmp(z, "--meta")==0 ) opt.zMeta = zVal;
    else if( strcmp(z, "--ext")==0 ) opt.zExt = zVal;
    else if( strcmp(z, "--commit")==0 ) opt.zCommit = zVal;
    else if( strcmp(z, "--timeout")==0 ) opt.nTimeout = atoi(zVal);
    else if( strcmp(z, "--memory-limit")==0 ) nMemLimit = atoll(zVal);
    else if( strcmp(z, "--threads")==0 ) nThread = atoi(zVal);
    else usage();
  }
  if( opt.nRep<1 || opt.nTimeout<1 || nThread<0 ) usage();
  mkdir("build", 0777);
  mkdir("build/bench", 0777);
  mkdir(opt.zDataDir, 0777);
  if( strcmp(zCmd, "run")==0 && zArg==0 ) return cmdRun(&opt);
  if( strcmp(zCmd, "list")==0 && zArg==0 ) return cmdList(&opt);
  if( strcmp(zCmd, "gen")==0 && zArg ) return cmdGen(&opt, zArg);
  if( strcmp(zCmd, "one")==0 && zArg ){
    return cmdOne(&opt, zArg, nMemLimit, nThread);
  }
  usage();
  return 2;
}
