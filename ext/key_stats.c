/*
** key_stats.c: ds_key_stats(key), the skew check before a join.
**
** The result is one JSON object:
**
**   {"rows":R,"nulls":N,"distinct":D,"max_count":M,
**    "top":[[key,count],...],"exact":true}
**
** rows counts every row, nulls the rows whose key is NULL, distinct the
** other keys, max_count the rows of the most frequent key, and top holds
** up to 10 keys with their counts, the most frequent first, equal counts
** in SQLite's order of the keys.  Keys are equal as the extension's key
** equality says (1 and 1.0 are one key, '1' another): they are hashed with
** dsValueHash() and compared with dsValueCompare(), the core's hash and
** order, and a key seen as 1 and as 1.0 shows as the one seen first.
**
** Exact mode.  Every distinct key gets a counter (DsKeyCount: the key
** packed as in a row, its count), found through a chained directory that
** doubles as keys arrive.  The counters live in an arena (DsArena): they
** are never freed one by one, so millions of them cost a few large
** allocations and go at once.  All of it is charged to the connection's
** budget (DsMem).  Before a new counter or a bigger directory would take
** the connection past memory_limit, less the room the sketches below
** need, the function changes mode once and for all.
**
** Approximate mode ("exact":false).  Two fixed-size sketches replace the
** counters:
**
**   - distinct comes from a HyperLogLog of 2^p one-byte registers fed with
**     the same 64-bit key hash (the top p bits pick a register, the rank
**     of the first set bit of the rest goes in it), estimated with Ertl's
**     improved estimator ("New cardinality estimation algorithms for
**     HyperLogLog sketches", 2017), which needs no bias tables and no
**     switch to linear counting.  Relative standard error about
**     1.04/sqrt(2^p).  Every key counted so far is fed in at the change
**     of mode, and the estimate is never below the number of keys known
**     to be distinct then, nor above the non-NULL rows.
**
**   - top and max_count come from Space-Saving (Metwally et al., 2005)
**     with k counters: the k most frequent keys at the change of mode
**     keep their exact counts (copied out of the arena, which is then
**     freed with the other counters: from here on each counter is an
**     allocation of its own, resized when it takes over another key); after that a
**     key without a counter takes over the smallest counter m and counts
**     from m+1, remembering m as its possible error.  A count is then
**     never below the key's true count and at most its error above it
**     (the largest such error among the top keys is reported as
**     "count_error"), every error is at most the smallest counter, which
**     is at most (non-NULL rows)/k, and every key with more rows than that
**     is sure to hold a counter.  A min-heap on the counts finds the
**     smallest counter; the directory, now of fixed size, finds a key's.
**
** p and k follow memory_limit (dsSketchSize): p is the largest in 8..14
** with 2^p <= memory_limit/16, k is memory_limit/256 within 32..1024.  At
** the default 256 MiB that is p=14 (0.8% standard error) and k=1024.  The
** sketches take 2^p bytes, k pointers and k counters; a counter holds its
** key, so long keys make them larger (k keys are held at most); the
** smallest take about 3.3 KiB, more than a memory_limit below that.  rows
** and nulls stay exact in either mode.
**
** Batches.  Looking a key up costs cache misses that depend on each
** other: its slot of the directory, then the counters of the slot's
** chain.  Taken one row at a time, as SQLite hands them over, they were
** 80% of the function's time (6.4 s for the 10M keys of uni 1M x 10M,
** against 0.5 s for SQLite's count() of them).  So each key is first
** packed into a batch (DsKsBatch: its hash and its bytes), and a full
** batch is counted in order while the directory slot of the key
** DS_KS_AHEAD places on, the first counter of its slot for the key half
** as far on, and the second for the key a quarter as far on are fetched
** (dsKsCountBatch): 1.7 s.  Keys are counted in the order SQLite gave
** them, as before, only later.  The batch is charged to the budget, and
** counted before the result is made.
**
** Threads.  With threads above 1, once parallel_min_rows rows have come,
** the batches are counted on a helper thread (DsAsync, threads.c) while
** the caller, SQLite's thread, fills the next one: two batches in turn,
** the helper counting one while the caller fills the other.  The result
** is the same object for any threads, because the same batches are
** counted in the same order, against the same budget:
**
**   - The counting charges its memory to a view of the connection's
**     budget (DsKeyStats.conn), never to the connection itself, which the
**     caller's other operators change meanwhile.  At each full batch, with
**     no batch being counted, the view's charges go to the connection and
**     the view becomes the connection's again (dsKsSync); then the batch
**     is counted against that view, on the helper or, without one, on the
**     caller at once.  Either way each batch sees the connection as it
**     was when the batch was full.
**   - The moves that tick the interrupt check (the directory's growth,
**     the change of mode) run on the caller, which alone may step the
**     check's statement: the helper stops at a key that needs one, and
**     the caller counts the rest of that batch before it hands over the
**     next (dsKsWaitPosted).
**   - The batches' own memory is the caller's, charged to the connection
**     (DsKeyStats.memBatch), the same with a helper or without.
**
** The helper is joined in xFinal, which SQLite calls when the group ends
** and also when the statement is reset or finalized, or fails, before it
** has.
**
** Interrupts.  SQLite checks between rows; the function's own long loops
** (moving every counter to a bigger directory, the change of mode, the
** pass that finds the top keys) tick an interrupt check (interrupt.c).
** An interrupted loop keeps the directory it was emptying (aSlotOld) to
** be freed with the rest; the counters it had not reached are in the
** arena, which goes whole.
*/
#include "dataset_int.h"

#include <math.h>

#define DS_KS_TOP        10     /* keys in "top" */
#define DS_KS_BATCH      1024   /* keys counted at once, at most (256 made
                                ** the helper's hand-overs cost more than
                                ** its work saved; 4096 slowed threads 1) */
#define DS_KS_BATCH_BYTES (64 * 1024)  /* ... or fewer, once they take this */
#define DS_KS_YIELD      (-1)   /* dsKsExactAdd() on the helper: the caller
                                ** must count this key */
#define DS_KS_AHEAD      16     /* keys between the one counted and the one
                                ** whose directory slot is fetched */
#define DS_KS_MIN_SLOTS  16     /* first directory size */
#define DS_HLL_MIN_BITS  8
#define DS_HLL_MAX_BITS  14
#define DS_SS_MIN        32
#define DS_SS_MAX        1024

typedef struct DsKeyCount DsKeyCount;
struct DsKeyCount {
  DsKeyCount *pNext;      /* next in the directory chain */
  u64 hash;               /* dsValueHash() of the key */
  i64 nCount;             /* rows with the key (approximate: an upper bound) */
  i64 nErr;               /* how far nCount may exceed the truth */
  i64 iHeap;              /* position in aHeap (approximate mode) */
  u32 nKey;               /* bytes of aKey */
  u8 aKey[];              /* the key, packed as a row holds a value */
};

#define DS_KC_SIZE(nKey) ((i64)offsetof(DsKeyCount, aKey) + (nKey))

/* Keys waiting to be counted: key i has hash aHash[i] and is packed at
** aKey + aOff[i]. */
typedef struct DsKsBatch DsKsBatch;
struct DsKsBatch {
  int n;                  /* keys held */
  int iDone;              /* keys counted, from the first */
  int nSlot;              /* room in aHash[] and aOff[] */
  i64 nByte;              /* bytes of aKey used */
  i64 nAlloc;             /* bytes of aKey allocated */
  u8 *aKey;
  u64 *aHash;
  i64 *aOff;
};

typedef struct DsKeyStats DsKeyStats;
struct DsKeyStats {
  /* The caller's, written at every row: apart from what the helper uses,
  ** so that the two cores do not take a cache line from each other. */
  i64 nRow;               /* rows seen */
  i64 nNull;              /* rows with a NULL key */
  DsKsBatch aBatch[2];    /* keys read but not counted yet */
  int iFill;              /* the batch the caller fills */
  DsKsBatch *pPosted;     /* the batch the helper counts, or NULL */
  DsAsync *pAsync;        /* the helper, or NULL */
  int bAsyncTried;        /* a helper was asked for */
  DsConn *pConn;          /* the connection */
  DsMem memBatch;         /* charges the batches to the connection */
  int bInit;              /* mem and arena are set up */
  int rcStop;             /* an interrupted loop: the result is an error */
  DsKeyCount **aSlotOld;  /* the directory that loop was emptying */
  u8 aPad[64];
  /* The counting's: the helper's while it counts a batch */
  DsConn conn;            /* the budget as the counting sees it (Threads) */
  i64 nConnBase;          /* conn.nMemUsed at the last dsKsSync() */
  DsMem mem;              /* charges everything below to conn */
  DsArena arena;          /* the counters of exact mode */
  i64 nMaxKey;            /* bytes of the longest key counted (packed) */
  int bApprox;            /* the sketches have replaced the counters */
  DsKeyCount **aSlot;     /* directory of counters, power-of-two size */
  u64 mask;               /* its size - 1 */
  i64 nKey;               /* counters held */
  /* Approximate mode only */
  int nBits;              /* HyperLogLog precision p */
  u8 *aReg;               /* its 2^p registers */
  DsKeyCount **aHeap;     /* the counters, a min-heap on nCount */
  i64 nHeapMax;           /* Space-Saving's k */
  i64 nKnown;             /* distinct keys counted exactly before */
};

/* Names of the steps of the function's own loops (dsTickerStep). */
#define DS_KS_STEP_REHASH "rehash"
#define DS_KS_STEP_SKETCH "sketch"
#define DS_KS_STEP_TOP    "top keys"
#define DS_KS_STEP_ROWS   "rows"      /* back to counting rows, SQLite's loop */

/* The end of one of the function's own loops (interrupted unless rc is
** SQLITE_OK: it is still in its step then). */
static void dsKsLoopEnd(DsTicker *pTick, int rc){
  if( rc==SQLITE_OK ) dsTickerStep(pTick, DS_KS_STEP_ROWS);
  dsTickerFinish(pTick);
}

/*************************************************************************
** Sizes
*/

/* HyperLogLog precision and Space-Saving counters for a memory limit. */
static void dsSketchSize(i64 nLimit, int *pnBits, i64 *pnCounter){
  int p = DS_HLL_MIN_BITS;
  i64 k = nLimit / 256;
  while( p < DS_HLL_MAX_BITS && ((i64)2 << p) <= nLimit / 16 ) p++;
  if( k < DS_SS_MIN ) k = DS_SS_MIN;
  if( k > DS_SS_MAX ) k = DS_SS_MAX;
  *pnBits = p;
  *pnCounter = k;
}

/*
** Room kept free in exact mode for what the change of mode allocates: the
** registers, the heap, and the copies of the k counters it keeps, which
** exist beside the arena of all counters until that is freed.  A copy is
** reckoned at the longest key counted so far (nMaxKey bytes packed), but
** all copies at no more than a quarter of the limit, so that long keys do
** not end exact counting at once (approximate mode holds k counters
** anyway, whatever their keys).
*/
static i64 dsSketchReserve(i64 nLimit, i64 nMaxKey){
  int p;
  i64 k;
  i64 nCopies;
  dsSketchSize(nLimit, &p, &k);
  nCopies = k * (DS_KC_SIZE(nMaxKey) + 16);
  if( nCopies > nLimit/4 ) nCopies = nLimit/4;
  return ((i64)1 << p) + k * (i64)sizeof(DsKeyCount *) + nCopies + 256;
}

/* Exact mode may take nMore bytes more (besides a counter of nKey bytes
** of key, which costs a new arena chunk when the current one is full). */
static int dsKsFits(const DsKeyStats *p, i64 nKey, i64 nMore){
  const DsConn *pConn = p->mem.pConn;
  i64 nMaxKey = nKey > p->nMaxKey ? nKey : p->nMaxKey;
  nMore += dsArenaWouldAlloc(&p->arena, DS_KC_SIZE(nKey));
  return pConn->nMemUsed + nMore
         + dsSketchReserve(pConn->nMemLimit, nMaxKey) <= pConn->nMemLimit;
}

/*************************************************************************
** Counters and their directory
*/
static DsKeyCount *dsKsFind(const DsKeyStats *p, u64 h, const DsValue *pKey){
  DsKeyCount *e;
  for(e=p->aSlot[h & p->mask]; e; e=e->pNext){
    if( e->hash==h ){
      DsValue v;
      dsValueDecode(e->aKey, &v);
      if( dsValueCompare(&v, pKey)==0 ) return e;
    }
  }
  return 0;
}

static void dsKsLink(DsKeyStats *p, DsKeyCount *e){
  DsKeyCount **pp = &p->aSlot[e->hash & p->mask];
  e->pNext = *pp;
  *pp = e;
}

static void dsKsUnlink(DsKeyStats *p, DsKeyCount *e){
  DsKeyCount **pp = &p->aSlot[e->hash & p->mask];
  while( *pp!=e ) pp = &(*pp)->pNext;
  *pp = e->pNext;
}

/* Keep directory aOld, which an interrupted loop was emptying, for
** dsKeyStatsFree(), and fail from now on. */
static int dsKsStopped(DsKeyStats *p, DsKeyCount **aOld, int rc){
  p->aSlotOld = aOld;
  p->rcStop = rc;
  return rc;
}

/* Give the directory nSlot slots (a power of two), moving the counters. */
static int dsKsResize(DsKeyStats *p, i64 nSlot){
  DsKeyCount **aOld = p->aSlot;
  i64 nOld = aOld ? (i64)p->mask + 1 : 0;
  i64 i;
  DsTicker tick;
  int rc = SQLITE_OK;
  DsKeyCount **aNew = dsMalloc(&p->mem, nSlot * (i64)sizeof(DsKeyCount *));
  if( aNew==0 ) return SQLITE_NOMEM;
  memset(aNew, 0, (size_t)nSlot * sizeof(DsKeyCount *));
  p->aSlot = aNew;
  p->mask = (u64)nSlot - 1;
  dsTickerInit(&tick, p->mem.pConn);
  dsTickerStep(&tick, DS_KS_STEP_REHASH);
  for(i=0; i<nOld && rc==SQLITE_OK; i++){
    DsKeyCount *e = aOld[i];
    while( e ){
      DsKeyCount *pNext = e->pNext;
      dsKsLink(p, e);
      e = pNext;
      rc = dsTickerTick(&tick, DS_TICK_ROW/2);
    }
  }
  dsKsLoopEnd(&tick, rc);
  if( rc!=SQLITE_OK ) return dsKsStopped(p, aOld, rc);
  dsFree(&p->mem, aOld);
  return SQLITE_OK;
}

/* Write key pKey of nKey packed bytes and hash h into e. */
static void dsKsSetKey(DsKeyCount *e, u64 h, const DsValue *pKey, i64 nKey){
  e->hash = h;
  e->nKey = (u32)nKey;
  dsValuePut(e->aKey, pKey);
}

/* A new counter of count 1: in the arena in exact mode, an allocation of
** its own in approximate mode. */
static DsKeyCount *dsKsNew(DsKeyStats *p, u64 h, const DsValue *pKey,
                           i64 nKey){
  DsKeyCount *e = p->bApprox ? dsMalloc(&p->mem, DS_KC_SIZE(nKey))
                             : dsArenaAlloc(&p->arena, DS_KC_SIZE(nKey));
  if( e ){
    dsKsSetKey(e, h, pKey, nKey);
    e->nCount = 1;
    e->nErr = 0;
    e->iHeap = -1;
  }
  return e;
}

/*************************************************************************
** The min-heap of counters (approximate mode): aHeap[0..nKey)
*/
static void dsHeapSet(DsKeyStats *p, i64 i, DsKeyCount *e){
  p->aHeap[i] = e;
  e->iHeap = i;
}

/* The counter at i may have grown: move it down to its place. */
static void dsHeapDown(DsKeyStats *p, i64 i){
  DsKeyCount *e = p->aHeap[i];
  for(;;){
    i64 c = 2*i + 1;
    if( c >= p->nKey ) break;
    if( c+1 < p->nKey && p->aHeap[c+1]->nCount < p->aHeap[c]->nCount ) c++;
    if( p->aHeap[c]->nCount >= e->nCount ) break;
    dsHeapSet(p, i, p->aHeap[c]);
    i = c;
  }
  dsHeapSet(p, i, e);
}

/* The counter at i is new: move it up to its place. */
static void dsHeapUp(DsKeyStats *p, i64 i){
  DsKeyCount *e = p->aHeap[i];
  while( i>0 ){
    i64 iParent = (i - 1) / 2;
    if( p->aHeap[iParent]->nCount <= e->nCount ) break;
    dsHeapSet(p, i, p->aHeap[iParent]);
    i = iParent;
  }
  dsHeapSet(p, i, e);
}

/*************************************************************************
** HyperLogLog
*/
static int dsClz64(u64 w){
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_clzll(w);
#else
  int n = 0;
  while( (w & ((u64)1 << 63))==0 ){ n++; w <<= 1; }
  return n;
#endif
}

static void dsHllAdd(DsKeyStats *p, u64 h){
  int q = 64 - p->nBits;
  u64 w = h << p->nBits;
  int nRank = w ? dsClz64(w) + 1 : q + 1;
  u8 *pReg = &p->aReg[h >> q];
  if( *pReg < nRank ) *pReg = (u8)nRank;
}

static double dsHllSigma(double x){
  double y = 1.0;
  double z = x;
  double zPrev;
  if( x==1.0 ) return INFINITY;
  do{
    x *= x;
    zPrev = z;
    z += x * y;
    y += y;
  }while( z!=zPrev );
  return z;
}

static double dsHllTau(double x){
  double y = 1.0;
  double z;
  double zPrev;
  if( x==0.0 || x==1.0 ) return 0.0;
  z = 1.0 - x;
  do{
    x = sqrt(x);
    zPrev = z;
    y *= 0.5;
    z -= (1.0 - x) * (1.0 - x) * y;
  }while( z!=zPrev );
  return z / 3.0;
}

/* Ertl's improved estimator over the histogram of register values. */
static double dsHllEstimate(const u8 *aReg, int nBits){
  int q = 64 - nBits;
  double m = (double)((i64)1 << nBits);
  i64 aCount[66];
  i64 i;
  double z;
  int k;
  memset(aCount, 0, sizeof(aCount));
  for(i=0; i<((i64)1 << nBits); i++) aCount[aReg[i]]++;
  if( (double)aCount[0]==m ) return 0.0;
  z = m * dsHllTau(1.0 - (double)aCount[q+1] / m);
  for(k=q; k>=1; k--) z = 0.5 * (z + (double)aCount[k]);
  z += m * dsHllSigma((double)aCount[0] / m);
  return m * m / z / (2.0 * 0.6931471805599453);
}

/*************************************************************************
** Counting
*/

/* An allocation of its own holding a copy of counter e. */
static DsKeyCount *dsKsCopy(DsKeyStats *p, const DsKeyCount *e){
  DsKeyCount *c = dsMalloc(&p->mem, DS_KC_SIZE(e->nKey));
  if( c ) memcpy(c, e, (size_t)DS_KC_SIZE(e->nKey));
  return c;
}

/*
** Leave exact mode: feed every key to a new HyperLogLog, keep copies of
** the nHeapMax most frequent counters as Space-Saving's, free the arena
** of counters.
*/
static int dsKsToApprox(DsKeyStats *p){
  DsConn *pConn = p->mem.pConn;
  DsKeyCount **aOld = p->aSlot;
  i64 nOld = aOld ? (i64)p->mask + 1 : 0;
  i64 nSlot = 16;
  i64 i;
  DsTicker tick;
  int rc = SQLITE_OK;
  dsSketchSize(pConn->nMemLimit, &p->nBits, &p->nHeapMax);
  p->aReg = dsMalloc(&p->mem, (i64)1 << p->nBits);
  p->aHeap = dsMalloc(&p->mem, p->nHeapMax * (i64)sizeof(DsKeyCount *));
  if( p->aReg==0 || p->aHeap==0 ) return SQLITE_NOMEM;
  memset(p->aReg, 0, (size_t)1 << p->nBits);

  /* From here on the counters are in the heap only, until relinked. */
  p->bApprox = 1;
  p->nKnown = p->nKey;
  p->nKey = 0;
  p->aSlot = 0;
  dsTickerInit(&tick, pConn);
  dsTickerStep(&tick, DS_KS_STEP_SKETCH);
  for(i=0; i<nOld && rc==SQLITE_OK; i++){
    DsKeyCount *e = aOld[i];
    while( e ){
      DsKeyCount *pNext = e->pNext;
      dsHllAdd(p, e->hash);
      if( p->nKey < p->nHeapMax || e->nCount > p->aHeap[0]->nCount ){
        DsKeyCount *c = dsKsCopy(p, e);
        if( c==0 ){
          rc = SQLITE_NOMEM;
          break;
        }
        if( p->nKey < p->nHeapMax ){
          p->aHeap[p->nKey++] = c;
          dsHeapUp(p, p->nKey - 1);
        }else{
          dsFree(&p->mem, p->aHeap[0]);
          dsHeapSet(p, 0, c);
          dsHeapDown(p, 0);
        }
      }
      e = pNext;
      rc = dsTickerTick(&tick, DS_TICK_ROW/4);
    }
  }
  dsKsLoopEnd(&tick, rc);
  if( rc!=SQLITE_OK ) return dsKsStopped(p, aOld, rc);
  dsFree(&p->mem, aOld);
  dsArenaClear(&p->arena);

  while( nSlot < 2*p->nHeapMax ) nSlot *= 2;
  p->aSlot = dsMalloc(&p->mem, nSlot * (i64)sizeof(DsKeyCount *));
  if( p->aSlot==0 ) return SQLITE_NOMEM;
  memset(p->aSlot, 0, (size_t)nSlot * sizeof(DsKeyCount *));
  p->mask = (u64)nSlot - 1;
  for(i=0; i<p->nKey; i++) dsKsLink(p, p->aHeap[i]);
  return SQLITE_OK;
}

/* Count one row of non-NULL key pKey, hash h, in approximate mode. */
static int dsKsApproxAdd(DsKeyStats *p, u64 h, const DsValue *pKey){
  DsKeyCount *e;
  i64 nKey, m;
  if( p->aSlot==0 ) return SQLITE_NOMEM;   /* the change of mode failed */
  dsHllAdd(p, h);
  e = dsKsFind(p, h, pKey);
  if( e ){
    e->nCount++;
    dsHeapDown(p, e->iHeap);
    return SQLITE_OK;
  }
  nKey = dsValueSize(pKey);
  if( p->nKey < p->nHeapMax ){
    /* Nothing was ever evicted, so this key is new: its count is exact. */
    e = dsKsNew(p, h, pKey, nKey);
    if( e==0 ) return SQLITE_NOMEM;
    dsKsLink(p, e);
    p->aHeap[p->nKey++] = e;
    dsHeapUp(p, p->nKey - 1);
    return SQLITE_OK;
  }
  /* Space-Saving: take over the smallest counter. */
  e = p->aHeap[0];
  m = e->nCount;
  dsKsUnlink(p, e);
  if( (i64)e->nKey!=nKey ){
    DsKeyCount *eNew = dsRealloc(&p->mem, e, DS_KC_SIZE(nKey));
    if( eNew==0 ){
      dsKsLink(p, e);
      return SQLITE_NOMEM;
    }
    e = eNew;
  }
  dsKsSetKey(e, h, pKey, nKey);
  e->nCount = m + 1;
  e->nErr = m;
  dsKsLink(p, e);
  dsHeapSet(p, 0, e);
  dsHeapDown(p, 0);
  return SQLITE_OK;
}

/* Count one row of non-NULL key pKey, hash h, exactly if it fits.  On
** the helper (bHelper), DS_KS_YIELD rather than grow the directory or
** change mode. */
static int dsKsExactAdd(DsKeyStats *p, u64 h, const DsValue *pKey,
                        int bHelper){
  DsKeyCount *e = p->aSlot ? dsKsFind(p, h, pKey) : 0;
  i64 nKey, nSlot = 0, nGrow = 0;
  int rc;
  if( e ){
    e->nCount++;
    return SQLITE_OK;
  }
  nKey = dsValueSize(pKey);
  if( p->aSlot==0 ){
    nSlot = DS_KS_MIN_SLOTS;
  }else if( p->nKey > (i64)p->mask ){
    nSlot = 2 * ((i64)p->mask + 1);
  }
  nGrow = nSlot * (i64)sizeof(DsKeyCount *);
  if( bHelper && (nSlot || !dsKsFits(p, nKey, nGrow)) ) return DS_KS_YIELD;
  if( !dsKsFits(p, nKey, nGrow) ){
    rc = dsKsToApprox(p);
    return rc ? rc : dsKsApproxAdd(p, h, pKey);
  }
  if( nSlot && (rc = dsKsResize(p, nSlot))!=SQLITE_OK ) return rc;
  e = dsKsNew(p, h, pKey, nKey);
  if( e==0 ) return SQLITE_NOMEM;
  dsKsLink(p, e);
  p->nKey++;
  if( nKey > p->nMaxKey ) p->nMaxKey = nKey;
  return SQLITE_OK;
}

/*************************************************************************
** Batches of keys (see the header comment)
*/

/* Fetch the directory slot of hash h, where there is a directory. */
static void dsKsPrefetchSlot(const DsKeyStats *p, u64 h){
  if( p->aSlot ) __builtin_prefetch(&p->aSlot[h & p->mask]);
}

/* Fetch the hash of the first counter in the slot of h: the slot itself
** was fetched DS_KS_AHEAD/2 keys ago. */
static void dsKsPrefetchCounter(const DsKeyStats *p, u64 h){
  if( p->aSlot ){
    const DsKeyCount *e = p->aSlot[h & p->mask];
    if( e ) __builtin_prefetch(&e->hash);
  }
}

/* Fetch the second counter of the slot of h, where the first (fetched
** DS_KS_AHEAD/4 keys ago) is not the key's. */
static void dsKsPrefetchNext(const DsKeyStats *p, u64 h){
  if( p->aSlot ){
    const DsKeyCount *e = p->aSlot[h & p->mask];
    if( e && e->hash!=h && e->pNext ) __builtin_prefetch(&e->pNext->hash);
  }
}

/* Count one key of hash h, in the mode the function is in (DS_KS_YIELD
** on the helper: see dsKsExactAdd). */
static int dsKsAdd(DsKeyStats *p, u64 h, const DsValue *pKey, int bHelper){
  if( p->bApprox ) return dsKsApproxAdd(p, h, pKey);
  return dsKsExactAdd(p, h, pKey, bHelper);
}

/*
** Count the keys of batch b from b->iDone on, in order; on the helper
** (bHelper), only up to a key that needs the caller (b->iDone says where
** it stopped).  The directory may grow, or give way to the sketches, in
** the middle: what was fetched ahead is then wasted, never wrong.
*/
static int dsKsCountBatch(DsKeyStats *p, DsKsBatch *b, int bHelper){
  /* Read once: the caller fills the other batch, next to this one. */
  const int n = b->n;
  const u64 *aHash = b->aHash;
  const i64 *aOff = b->aOff;
  const u8 *aKey = b->aKey;
  int i, rc = SQLITE_OK;
  for(i=b->iDone; i<n && i<b->iDone+DS_KS_AHEAD; i++){
    dsKsPrefetchSlot(p, aHash[i]);
  }
  for(i=b->iDone; i<n; i++){
    DsValue v;
    if( i+DS_KS_AHEAD < n ) dsKsPrefetchSlot(p, aHash[i+DS_KS_AHEAD]);
    if( i+DS_KS_AHEAD/2 < n ) dsKsPrefetchCounter(p, aHash[i+DS_KS_AHEAD/2]);
    if( i+DS_KS_AHEAD/4 < n ) dsKsPrefetchNext(p, aHash[i+DS_KS_AHEAD/4]);
    dsValueDecode(aKey + aOff[i], &v);
    rc = dsKsAdd(p, aHash[i], &v, bHelper);
    if( rc!=SQLITE_OK ) break;
  }
  b->iDone = i;
  return rc==DS_KS_YIELD ? SQLITE_OK : rc;
}

/* The helper's job: count the batch posted. */
static int dsKsJob(void *pArg){
  DsKeyStats *p = (DsKeyStats *)pArg;
  return dsKsCountBatch(p, p->pPosted, 1);
}

/*
** What the counting charged to its view of the budget since the last
** call goes to the connection, and the view becomes the connection's
** again: other operators may have taken or given back memory meanwhile.
** Only while no batch is being counted.
*/
static void dsKsSync(DsKeyStats *p){
  assert( p->pPosted==0 );
  p->pConn->nMemUsed += p->conn.nMemUsed - p->nConnBase;
  if( p->conn.nNoMemBytes ) p->pConn->nNoMemBytes = p->conn.nNoMemBytes;
  p->conn = *p->pConn;
  p->nConnBase = p->conn.nMemUsed;
}

/* Wait for the batch posted to the helper, if any, and count what it left
** (from a key that needs the caller on); the batch is then empty. */
static int dsKsWaitPosted(DsKeyStats *p){
  DsKsBatch *b = p->pPosted;
  int rc;
  if( b==0 ) return SQLITE_OK;
  rc = dsAsyncWait(p->pAsync);
  p->pPosted = 0;
  if( rc==SQLITE_OK && b->iDone<b->n ) rc = dsKsCountBatch(p, b, 0);
  b->n = b->iDone = 0;
  b->nByte = 0;
  return rc;
}

/* Batch b is full, or the last: count it, against the budget as it is
** now, on the helper where there is one (and one is asked for here once
** parallel_min_rows rows have come), else at once. */
static int dsKsCountFull(DsKeyStats *p, DsKsBatch *b, int bLast){
  int rc = dsKsWaitPosted(p);
  if( rc!=SQLITE_OK ) return rc;
  dsKsSync(p);
  if( !bLast && !p->bAsyncTried && p->nRow>=p->pConn->nParallelMinRows ){
    p->bAsyncTried = 1;
    rc = dsAsyncStart(p->pConn, dsKsJob, &p->pAsync);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( p->pAsync && !bLast ){
    p->pPosted = b;
    dsAsyncPost(p->pAsync, p);
    return SQLITE_OK;
  }
  rc = dsKsCountBatch(p, b, 0);
  b->n = b->iDone = 0;
  b->nByte = 0;
  return rc;
}

/* Keys a batch holds before it is counted, and bytes of them: a 64th of
** the budget at most between the two, so that a small memory_limit is
** not spent on them (keys are then counted one by one, as they come). */
static int dsKsBatchKeys(const DsKeyStats *p){
  i64 n = p->pConn->nMemLimit / 1024;
  return n<1 ? 1 : n<DS_KS_BATCH ? (int)n : DS_KS_BATCH;
}
static i64 dsKsBatchBytes(const DsKeyStats *p){
  i64 n = p->pConn->nMemLimit / 128;
  return n < DS_KS_BATCH_BYTES ? n : DS_KS_BATCH_BYTES;
}

/* Room in batch b for one more key of nKey bytes packed. */
static int dsKsBatchRoom(DsKeyStats *p, DsKsBatch *b, i64 nKey){
  if( b->n==b->nSlot ){
    int nNew = b->nSlot ? 2*b->nSlot : 16;
    u64 *aHash = dsRealloc(&p->memBatch, b->aHash, nNew * (i64)sizeof(u64));
    i64 *aOff;
    if( aHash==0 ) return SQLITE_NOMEM;
    b->aHash = aHash;
    aOff = dsRealloc(&p->memBatch, b->aOff, nNew * (i64)sizeof(i64));
    if( aOff==0 ) return SQLITE_NOMEM;
    b->aOff = aOff;
    b->nSlot = nNew;
  }
  if( b->nByte + nKey > b->nAlloc ){
    i64 nNew = b->nAlloc ? 2*b->nAlloc : 64;
    u8 *aNew;
    while( nNew < b->nByte + nKey ) nNew *= 2;
    aNew = dsRealloc(&p->memBatch, b->aKey, nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    b->aKey = aNew;
    b->nAlloc = nNew;
  }
  return SQLITE_OK;
}

/* Add key pKey, not NULL, to the batch being filled, and count that once
** full (the other batch is filled next). */
static int dsKsBatchAdd(DsKeyStats *p, const DsValue *pKey){
  DsKsBatch *b = &p->aBatch[p->iFill];
  i64 nKey = dsValueSize(pKey);
  int rc = dsKsBatchRoom(p, b, nKey);
  if( rc!=SQLITE_OK ) return rc;
  b->aHash[b->n] = dsValueHash(pKey, 0);
  b->aOff[b->n] = b->nByte;
  dsValuePut(b->aKey + b->nByte, pKey);
  b->nByte += nKey;
  b->n++;
  if( b->n>=dsKsBatchKeys(p) || b->nByte>=dsKsBatchBytes(p) ){
    p->iFill = !p->iFill;
    return dsKsCountFull(p, b, 0);
  }
  return SQLITE_OK;
}

/* Count every key read: the batch on the helper, then the one being
** filled; the helper is stopped.  Then the counters are the caller's. */
static int dsKsCountAll(DsKeyStats *p){
  int rc = dsKsCountFull(p, &p->aBatch[p->iFill], 1);
  dsAsyncEnd(p->pAsync);
  p->pAsync = 0;
  return rc;
}

/* Fail the statement with error rc. */
static void dsKsResultError(sqlite3_context *ctx, int rc){
  if( rc==SQLITE_NOMEM ){
    dsResultNoMem(ctx, "ds_key_stats");
  }else{
    sqlite3_result_error(ctx, rc==SQLITE_INTERRUPT ? "ds_key_stats: interrupted"
                                                   : sqlite3_errstr(rc), -1);
    sqlite3_result_error_code(ctx, rc);
  }
}

static void dsKeyStatsStep(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  DsKeyStats *p = sqlite3_aggregate_context(ctx, (int)sizeof(*p));
  DsValue v;
  int rc;
  (void)argc;
  if( p==0 || dsValueFromSql(argv[0], &v)!=SQLITE_OK ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( !p->bInit ){
    p->pConn = (DsConn *)sqlite3_user_data(ctx);
    p->conn = *p->pConn;
    p->nConnBase = p->conn.nMemUsed;
    dsMemInit(&p->mem, &p->conn);
    dsMemInit(&p->memBatch, p->pConn);
    dsArenaInit(&p->arena, &p->mem);
    p->bInit = 1;
  }
  p->nRow++;
  if( v.eType==DS_NULL ){
    p->nNull++;
    return;
  }
  rc = p->rcStop ? p->rcStop : dsKsBatchAdd(p, &v);
  if( rc!=SQLITE_OK ) dsKsResultError(ctx, rc);
}

/*************************************************************************
** The result
*/

/* a goes before b in "top": more rows, or as many and a smaller key. */
static int dsTopBefore(const DsKeyCount *a, const DsKeyCount *b){
  DsValue va, vb;
  if( a->nCount!=b->nCount ) return a->nCount > b->nCount;
  dsValueDecode(a->aKey, &va);
  dsValueDecode(b->aKey, &vb);
  return dsValueCompare(&va, &vb) < 0;
}

/* Put e into aTop[0..*pnTop), kept sorted, if it is among the first. */
static void dsTopOffer(DsKeyCount **aTop, int *pnTop, DsKeyCount *e){
  int i = *pnTop;
  if( i==DS_KS_TOP ){
    if( !dsTopBefore(e, aTop[DS_KS_TOP-1]) ) return;
    i--;
  }else{
    (*pnTop)++;
  }
  while( i>0 && dsTopBefore(e, aTop[i-1]) ){
    aTop[i] = aTop[i-1];
    i--;
  }
  aTop[i] = e;
}

static i64 dsKsDistinct(const DsKeyStats *p){
  i64 n;
  if( !p->bApprox ) return p->nKey;
  n = (i64)(dsHllEstimate(p->aReg, p->nBits) + 0.5);
  if( n < p->nKnown ) n = p->nKnown;
  if( n < p->nKey ) n = p->nKey;
  if( n > p->nRow - p->nNull ) n = p->nRow - p->nNull;
  return n;
}

static void dsKeyStatsResult(sqlite3_context *ctx, DsKeyStats *p){
  DsText out;
  DsKeyCount *aTop[DS_KS_TOP];
  int nTop = 0;
  i64 nErr = 0;
  int i;
  int rc = p ? p->rcStop : SQLITE_OK;
  if( rc==SQLITE_OK && p && p->bInit ) rc = dsKsCountAll(p);
  if( rc==SQLITE_OK && p && p->aSlot ){
    DsTicker tick;
    u64 j;
    dsTickerInit(&tick, p->mem.pConn);
    dsTickerStep(&tick, DS_KS_STEP_TOP);
    for(j=0; j<=p->mask && rc==SQLITE_OK; j++){
      DsKeyCount *e;
      for(e=p->aSlot[j]; e; e=e->pNext){
        dsTopOffer(aTop, &nTop, e);
        rc = dsTickerTick(&tick, DS_TICK_ROW/4);
      }
      if( rc==SQLITE_OK ) rc = dsTickerTick(&tick, 1);
    }
    dsKsLoopEnd(&tick, rc);
  }
  if( rc!=SQLITE_OK ){
    dsKsResultError(ctx, rc);
    return;
  }
  dsTextInit(&out);
  dsTextAppendf(&out,
      "{\"rows\":%lld,\"nulls\":%lld,\"distinct\":%lld,\"max_count\":%lld,"
      "\"top\":[",
      p ? p->nRow : 0, p ? p->nNull : 0, p ? dsKsDistinct(p) : 0,
      nTop ? aTop[0]->nCount : 0);
  for(i=0; i<nTop; i++){
    DsValue v;
    dsValueDecode(aTop[i]->aKey, &v);
    dsTextAppendAll(&out, i ? ",[" : "[");
    dsJsonValue(&out, &v);
    dsTextAppendf(&out, ",%lld]", aTop[i]->nCount);
    if( aTop[i]->nErr > nErr ) nErr = aTop[i]->nErr;
  }
  if( p && p->bApprox ){
    dsTextAppendf(&out, "],\"exact\":false,\"count_error\":%lld}", nErr);
  }else{
    dsTextAppendAll(&out, "],\"exact\":true}");
  }
  dsTextResult(ctx, &out, 1, "ds_key_stats",
               "the JSON object of the statistics");
  dsTextFree(&out);
}

static void dsKsBatchFree(DsKeyStats *p, DsKsBatch *b){
  dsFree(&p->memBatch, b->aKey);
  dsFree(&p->memBatch, b->aHash);
  dsFree(&p->memBatch, b->aOff);
  memset(b, 0, sizeof(*b));
}

static void dsKeyStatsFree(DsKeyStats *p){
  if( !p->bInit ) return;
  /* The helper first: it may still be counting a batch after an error. */
  dsAsyncEnd(p->pAsync);
  p->pAsync = 0;
  p->pPosted = 0;
  dsKsBatchFree(p, &p->aBatch[0]);
  dsKsBatchFree(p, &p->aBatch[1]);
  if( p->bApprox ){
    i64 i;
    for(i=0; i<p->nKey; i++) dsFree(&p->mem, p->aHeap[i]);
  }
  dsArenaClear(&p->arena);
  dsFree(&p->mem, p->aSlotOld);
  dsFree(&p->mem, p->aSlot);
  dsFree(&p->mem, p->aHeap);
  dsFree(&p->mem, p->aReg);
  p->aSlot = 0;
  p->aSlotOld = 0;
  p->aHeap = 0;
  p->aReg = 0;
  p->nKey = 0;
  /* What the counters gave back goes back to the connection. */
  dsKsSync(p);
}

static void dsKeyStatsFinal(sqlite3_context *ctx){
  DsKeyStats *p = sqlite3_aggregate_context(ctx, 0);
  dsKeyStatsResult(ctx, p);
  if( p ) dsKeyStatsFree(p);
}

/*
** Registration.  Not SQLITE_INNOCUOUS (see dataset.c), nor
** SQLITE_DETERMINISTIC: whether its result is exact depends on
** memory_limit and on the memory other operators hold.  It is no window
** function: its approximate mode cannot forget a row, and its result
** costs a pass over every distinct key, too much to pay once per row.
*/
int dsRegisterKeyStats(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_function(db, "ds_key_stats", 1,
      SQLITE_UTF8 | SQLITE_RESULT_SUBTYPE, pConn,
      0, dsKeyStatsStep, dsKeyStatsFinal);
}
