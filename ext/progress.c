/*
** progress.c: one progress line on standard error for a long operator.
**
** With ds_config('progress', 1) an operator that runs past a delay (about
** 2 s) draws one line on standard error, only when standard error is a
** terminal, and redraws it a few times a second:
**
**   ds_join_hint: probing [####......] 45% 5.0M/11.0M rows, 3.1s, 3.7s left, 12.0 MiB spilled
**
** (cut to the terminal's width).  The line is erased, with
** "\r\033[K", when the operator ends, fails or is interrupted, so that
** results and error messages start on a clean line.
**
** Nothing here is done per row.  The line reads counters the operator
** keeps anyway: the rows each reader has read (DsSource.nRow, input.c)
** and the bytes spilled (DsStats.nSpilled, spill.c).  It is looked at
** from two periodic points only: the interrupt check of the CPU-only
** loops (dsTickerCheck, every DS_TICK_CHECK units of work) and a batch of
** rows read (dsProgressAdvance, every few batches of DS_BATCH rows).  Only
** there is the monotonic clock read.  With progress off, those points
** cost a test of a NULL pointer, DsConn.pProgress.
**
** The interface:
**
**   dsProgressStart    from dsOpInit(): the first operator of a connection
**                      to start while none runs owns the line (an
**                      operator run inside another's input does not
**                      draw one of its own; its work shows in the line of
**                      the one that runs it)
**   dsProgressStep     from dsTickerStep(): the step names the phase
**   dsProgressAdvance  from a reader, per batch read
**   dsProgressCheck    from the ticker's periodic check
**   dsProgressKnowRows an input's row count became known (operator.c)
**   dsProgressWantsRows, dsProgressSetRows
**                      the rows sqlite_stat1 gives for an input whose
**                      count is not known (dsOpProgressInputs)
**   dsProgressEnd      the operator ended or failed: erase the line, give
**                      the connection's line up
**   dsProgressFinish   from dsOpFinish(): erase and free
**
** Rows expected are the sum of both inputs' counts where every one is
** known: a count the planner made, sqlite_stat1, or the caller's figure.
** Without them the line shows the rows done, and no bar or time left.
**
** DS_PROGRESS_DELAY_MS, read when progress is turned on, replaces the 2 s
** delay, for tests only: with 0 the line is drawn at once, at every
** periodic check and at every change of phase, so that a test sees every
** phase of a small operator without depending on how fast it runs.
*/
#include "dataset_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define DS_PROGRESS_INTERVAL_MS 250.0   /* redraw at most 4 times a second */
#define DS_PROGRESS_BATCHES     8       /* reader batches between checks */
#define DS_PROGRESS_BAR         10      /* characters of the bar */

struct DsProgress {
  DsOp *pOp;              /* the operator drawn */
  int nNesting;           /* DsConn.nNesting when it started */
  double tStart;          /* dsNowMs() then */
  double msDelay;         /* draw once it has run this long */
  double tNext;           /* no redraw before then */
  const char *zPhase;     /* the phase shown */
  int bPhaseNew;          /* the phase changed since the last draw */
  int bDrawn;             /* a line is on the terminal */
  int bEnded;             /* never draw again */
  int bPlanning;          /* its step is "plan": its counts are its own */
  int nBatch;             /* reader batches since the last check */
  int nBatchEvery;        /* check every this many */
  int nWidth;             /* columns of the terminal */
  i64 anTotal[2];         /* rows of each input, -1 when unknown */
};

/*
** The phase of a step of an operator (dsOpStep's names, in hashjoin.c,
** sort.c, mergejoin.c, cogroup.c, cross.c, plan.c, join.c): reading,
** partitioning, building, sorting, merging, probing, spilling, output.
*/
static const char *dsProgressPhase(const char *zStep){
  static const struct { const char *zStep, *zPhase; } aMap[] = {
    { "plan", "reading" },
    { "count", "reading" },
    { "build", "reading" },
    { "sort input", "reading" },
    { "buffer", "reading" },
    { "partition", "partitioning" },
    { "hash table", "building" },
    { "radix sort", "sorting" },
    { "radix sort (worker)", "sorting" },
    { "merge runs", "merging" },
    { "merge join", "merging" },
    { "cogroup", "merging" },
    { "probe", "probing" },
    { "block nested loop", "probing" },
    { "write run", "spilling" },
    { "drain", "output" },
    { "cross", "output" },
  };
  size_t i;
  for(i=0; i<sizeof(aMap)/sizeof(aMap[0]); i++){
    if( strcmp(zStep, aMap[i].zStep)==0 ) return aMap[i].zPhase;
  }
  return zStep;
}

/* The delay before a line is drawn: DS_PROGRESS_DELAY_MS (tests), else
** 2 s.  Called when the setting is turned on. */
int dsProgressDelayMs(void){
  const char *z = getenv("DS_PROGRESS_DELAY_MS");
  char *zEnd = 0;
  long n;
  if( z==0 || z[0]==0 ) return 2000;
  n = strtol(z, &zEnd, 10);
  if( *zEnd || n<0 || n>3600000 ) return 2000;
  return (int)n;
}

void dsProgressStart(DsOp *pOp){
  DsConn *pConn = pOp->pConn;
  DsProgress *p;
  struct winsize ws;
  if( !pConn->bProgress || pConn->pProgress || !isatty(2) ) return;
  /* Without memory there is no line: the operator runs all the same. */
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return;
  memset(p, 0, sizeof(*p));
  p->pOp = pOp;
  p->nNesting = pConn->nNesting;
  p->tStart = dsNowMs();
  p->msDelay = pConn->msProgressDelay;
  p->tNext = p->tStart + p->msDelay;
  p->nBatchEvery = p->msDelay==0 ? 1 : DS_PROGRESS_BATCHES;
  p->nWidth = 80;
  if( ioctl(2, TIOCGWINSZ, &ws)==0 && ws.ws_col>=20 ) p->nWidth = ws.ws_col;
  p->anTotal[0] = p->anTotal[1] = -1;
  p->bPlanning = 1;
  pConn->pProgress = p;
  pOp->tick.pProg = p;
}

/* A count of rows, short: 99999, then 123.4K, 12.3M, 1.2G. */
static void dsProgressCount(char *z, size_t nz, i64 n){
  if( n<100000 ){
    snprintf(z, nz, "%lld", (long long)n);
  }else if( n<999950 ){
    snprintf(z, nz, "%.1fK", (double)n/1e3);
  }else if( n<999950000 ){
    snprintf(z, nz, "%.1fM", (double)n/1e6);
  }else{
    snprintf(z, nz, "%.1fG", (double)n/1e9);
  }
}

/* Bytes as "512 B", "12.0 KiB", "3.5 MiB", "1.2 GiB". */
static void dsProgressBytes(char *z, size_t nz, i64 n){
  static const char *const azUnit[] = { "KiB", "MiB", "GiB", "TiB" };
  double r = (double)n;
  int i = -1;
  if( n<1024 ){
    snprintf(z, nz, "%lld B", (long long)n);
    return;
  }
  while( r>=1024.0 && i<3 ){ r /= 1024.0; i++; }
  snprintf(z, nz, "%.1f %s", r, azUnit[i]);
}

/* Write z[n] on standard error, unbuffered. */
static void dsProgressWrite(const char *z, size_t n){
  while( n>0 ){
    ssize_t m = write(2, z, n);
    if( m<=0 ) return;      /* a line is not worth an error */
    z += m;
    n -= (size_t)m;
  }
}

static void dsProgressDraw(DsProgress *p, double tNow){
  const DsOp *pOp = p->pOp;
  const char *zPhase = p->zPhase ? p->zPhase : "starting";
  char zLine[512];
  char zDone[32], zTotal[32], zSpill[32], zLeft[32];
  i64 nDone = 0, nTotal = 0;
  double msRun = tNow - p->tStart;
  int i, n;
  for(i=0; i<2; i++){
    if( pOp->apSrc[i] ) nDone += pOp->apSrc[i]->nRow;
    if( nTotal>=0 ) nTotal = p->anTotal[i]<0 ? -1 : nTotal + p->anTotal[i];
  }
  /* A count gone stale (sqlite_stat1) may be below what was read: the
  ** total is then at least that. */
  if( nTotal>=0 && nDone>nTotal ) nTotal = nDone;
  dsProgressCount(zDone, sizeof(zDone), nDone);
  dsProgressBytes(zSpill, sizeof(zSpill), pOp->stats.nSpilled);
  /* The fields that matter most come first: a narrow terminal cuts the
  ** line's end. */
  if( nTotal>0 ){
    char zBar[DS_PROGRESS_BAR+1];
    double r = (double)nDone / (double)nTotal;
    int nFill = (int)(r * DS_PROGRESS_BAR);
    memset(zBar, '#', (size_t)nFill);
    memset(zBar + nFill, '.', (size_t)(DS_PROGRESS_BAR - nFill));
    zBar[DS_PROGRESS_BAR] = 0;
    dsProgressCount(zTotal, sizeof(zTotal), nTotal);
    zLeft[0] = 0;
    if( nDone>0 && nDone<nTotal ){
      double msLeft = msRun * (double)(nTotal - nDone) / (double)nDone;
      snprintf(zLeft, sizeof(zLeft), ", %.1fs left", msLeft/1000.0);
    }
    n = snprintf(zLine, sizeof(zLine),
                 "\r%s: %s [%s] %d%% %s/%s rows, %.1fs%s, %s spilled",
                 pOp->zFunc, zPhase, zBar, (int)(r * 100), zDone, zTotal,
                 msRun/1000.0, zLeft, zSpill);
  }else{
    n = snprintf(zLine, sizeof(zLine), "\r%s: %s %s rows, %.1fs, %s spilled",
                 pOp->zFunc, zPhase, zDone, msRun/1000.0, zSpill);
  }
  /* Cut to the terminal's width less one column (the carriage return
  ** takes none): a line that wrapped could not be erased. */
  if( n>p->nWidth ) n = p->nWidth;
  if( n>(int)sizeof(zLine)-4 ) n = (int)sizeof(zLine)-4;
  memcpy(zLine+n, "\033[K", 3);
  dsProgressWrite(zLine, (size_t)n + 3);
  p->bDrawn = 1;
  p->bPhaseNew = 0;
}

/* The periodic check: draw if the operator has run past the delay and
** the last draw is old enough (or, with no delay, always), or a line
** shows and the phase changed since. */
void dsProgressCheck(DsProgress *p){
  double tNow;
  if( p->bEnded ) return;
  tNow = dsNowMs();
  if( tNow < p->tNext && !(p->bPhaseNew && p->bDrawn) ) return;
  p->tNext = tNow + (p->msDelay==0 ? 0 : DS_PROGRESS_INTERVAL_MS);
  dsProgressDraw(p, tNow);
}

/* A reader read a batch: check every few batches. */
void dsProgressAdvance(DsProgress *p){
  if( ++p->nBatch < p->nBatchEvery ) return;
  p->nBatch = 0;
  dsProgressCheck(p);
}

void dsProgressStep(DsProgress *p, const char *zStep){
  const char *zPhase = dsProgressPhase(zStep);
  p->bPlanning = strcmp(zStep, "plan")==0;
  if( zPhase==p->zPhase ) return;
  p->zPhase = zPhase;
  p->bPhaseNew = 1;
  /* Without a delay (tests) every phase is drawn as it starts; else the
  ** next periodic check shows it. */
  if( p->msDelay==0 && !p->bEnded ) dsProgressDraw(p, dsNowMs());
}

/*
** Input iSide of the operator planning has nRow rows (plan.c).  Taken
** only while the operator that owns the line plans: not from one run
** inside its input (deeper nesting), nor from another operator of the
** same statement that plans later (the owner is past its plan by then).
*/
void dsProgressKnowRows(DsConn *pConn, int iSide, i64 nRow){
  DsProgress *p = pConn->pProgress;
  if( p==0 || !p->bPlanning || p->nNesting!=pConn->nNesting ) return;
  if( iSide<0 || iSide>1 ) return;
  p->anTotal[iSide] = nRow;
}

/* Does the line still want the rows of input iSide (no count gave them)?
** Then dsOpProgressInputs() (operator.c) gives them from sqlite_stat1. */
int dsProgressWantsRows(const DsProgress *p, int iSide){
  return p->anTotal[iSide]<0;
}
void dsProgressSetRows(DsProgress *p, int iSide, i64 nRow){
  p->anTotal[iSide] = nRow;
}

/*
** The operator handed out its last row or failed: erase the line, and
** give the connection's line up, so that another operator of the same
** statement, run while this one's cursor stays open, can draw its own.
*/
void dsProgressEnd(DsProgress *p){
  DsConn *pConn = p->pOp->pConn;
  if( p->bDrawn ) dsProgressWrite("\r\033[K", 4);
  p->bDrawn = 0;
  p->bEnded = 1;
  if( pConn->pProgress==p ) pConn->pProgress = 0;
}

void dsProgressFinish(DsOp *pOp){
  DsProgress *p = pOp->tick.pProg;
  if( p==0 ) return;
  dsProgressEnd(p);
  pOp->tick.pProg = 0;
  sqlite3_free(p);
}
