/*
** sort.c: sorting rows on their keys, in SQLite's order of values.
**
** Comparing packed keys row by row is slow, so each row gets a 64-bit
** prefix that orders like its first key column: two bits of type class
** (NULL key, number, text, blob) and 62 bits of value (a number as an
** order-preserving image of its double, text and blobs by their first
** seven bytes).  The prefix never orders two keys against their true
** order; it may only tie keys that differ.  The entries (prefix, row) are
** sorted by a least-significant-digit radix sort over only the bits in
** which the prefixes differ, and each run of equal prefixes is then put
** in true key order with the full comparison.
*/
#include "dataset_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

typedef struct DsSortEntry DsSortEntry;
struct DsSortEntry {
  u64 prefix;
  DsRow *pRow;
};

/* The first seven bytes of z, big-endian, in the low 56 bits. */
static u64 dsBytesPrefix(const u8 *z, int n){
  u64 v = 0;
  int i;
  for(i=0; i<7; i++) v = (v << 8) | (i<n ? z[i] : 0);
  return v;
}

/* The order-preserving prefix of a finite double. */
static u64 dsRealPrefix(double r){
  u64 b;
  memcpy(&b, &r, 8);
  b = (b >> 63) ? ~b : (b | 0x8000000000000000ULL);
  return (1ULL << 62) | (b >> 2);
}

/*
** The prefix of pRow's key, and in *pbExact whether that prefix ties the
** row only with rows of an equal key: so for a key of one INTEGER of
** magnitude below 2^50, whose double holds it exactly with the last two
** bits of the mantissa zero, which are all the prefix drops.  Among such
** rows the radix sort alone gives key order.  One read of the key serves
** both: the gather loop and the merge ask for both for every row.
*/
static u64 dsSortPrefix(const DsRow *pRow, int eOrder, int *pbExact){
  DsValue v = {0};      /* set: GCC at -O1 cannot tell decoding sets it */
  i64 i;
  if( dsRowKeyInt(pRow, &i) ){
    *pbExact = i > -((i64)1 << 50) && i < ((i64)1 << 50);
    return dsRealPrefix((double)i);
  }
  *pbExact = 0;
  if( eOrder==DS_ORDER_GROUP && (pRow->flags & DS_ROW_NULLKEY) ) return 0;
  dsValueDecode(pRow->aData, &v);
  switch( v.eType ){
    case DS_INT:
      return dsRealPrefix((double)v.i);
    case DS_REAL:
      return dsRealPrefix(v.r==0.0 ? 0.0 : v.r);   /* -0.0 sorts as 0.0 */
    case DS_TEXT:
      return (2ULL << 62) | (dsBytesPrefix(v.z, v.n) << 6);
    case DS_BLOB:
      return (3ULL << 62) | (dsBytesPrefix(v.z, v.n) << 6);
    default:
      return 0;
  }
}

/*
** The radix sort's digits are at most 11 bits wide, so fewer passes move
** the entries, but then it needs 96 KiB of counts (six digits of 2048):
** worth it only for large sorts, and only under a budget to which that is
** little.  Else 8 bits, 16 KiB.  The counts are charged to the budget.
*/
#define DS_RADIX_WIDE_ROWS  65536
#define DS_RADIX_WIDE_LIMIT (8*1024*1024)
#define DS_RADIX_COUNTS(w)  (((64 + (w) - 1) / (w)) << (w))

/*
** A sort of an entry array: the work of sorting rows in memory, which
** runs either on the caller's thread or, with ds_config('threads') above
** 1, on a worker thread while the caller reads the next input.  It
** touches nothing but its arrays (no allocation, no SQLite call but
** sqlite3_is_interrupted()), so it is safe on any thread.  It stops early
** when bAbort is set; every 16K entries xCheck (the interrupt check) may
** set it: on the caller's thread the operator's full check, on a worker
** sqlite3_is_interrupted() where SQLite has it, else nothing (the caller,
** waiting for the worker, checks then).
*/
typedef struct DsSortJob DsSortJob;
struct DsSortJob {
  DsSortEntry *a;         /* the entries */
  DsSortEntry *aTmp;      /* as many again, for the radix passes */
  i64 n;
  int eOrder;
  int bTies;              /* equal prefixes may hide unequal keys */
  DsSortEntry *aResult;   /* a or aTmp: where the sorted entries are */
  int (*xCheck)(DsSortJob *);  /* checks for an interrupt, or NULL */
  DsOp *pOp;              /* for xCheck */
  atomic_int bAbort;      /* stop as soon as possible */
  int rc;                 /* SQLITE_OK, or why the job stopped */
  int rcStop;             /* the error of xCheck that stopped it, or 0 */
  int nMaxWidth;          /* bits per radix digit, at most */
  i64 *aCount;            /* the radix sort's counts (DS_RADIX_COUNTS) */
};

/* Every 16K steps (some tens of microseconds): should the job stop? */
static int dsSortJobStop(DsSortJob *pJob, i64 i){
  int rc;
  if( (i & 0x3fff)!=0 ) return 0;
  if( pJob->xCheck && (rc = pJob->xCheck(pJob))!=SQLITE_OK ){
    pJob->rcStop = rc;
    atomic_store(&pJob->bAbort, 1);
  }
  return atomic_load(&pJob->bAbort);
}

/* The interrupt check of a job run on the caller's thread. */
static int dsSortJobCheckOp(DsSortJob *pJob){
  return dsOpCheckInterrupt(pJob->pOp);
}

/* The interrupt check of a job on a worker thread: the connection's flag,
** read without touching anything else of the connection. */
static int dsSortJobCheckFlag(DsSortJob *pJob){
  DsConn *pConn = pJob->pOp->pConn;
  return pConn->xIsInterrupted(pConn->db) ? SQLITE_INTERRUPT : SQLITE_OK;
}

/*
** Sort by prefix, least significant digit first, over only the bits in
** which the prefixes differ, in digits of at most nMaxWidth bits.
** Prefixes of integer keys below a million differ in about 30 of their
** 64 bits (the double's exponent and the top of its mantissa): three
** passes of 10 bits, where passes over whole bytes took five, each of
** them reading and writing the whole array.  One pass finds the bits
** that differ, one more counts every digit, then one pass per digit
** moves the entries.  Sets aResult; 0 if stopped.
*/
static int dsRadixSort(DsSortJob *pJob){
  DsSortEntry *a = pJob->a, *aTmp = pJob->aTmp;
  i64 n = pJob->n;
  i64 *aCount = pJob->aCount;
  u64 diff = 0;
  i64 i;
  int lo, nBit, nDigit, nWidth, iDigit;
  u64 mask;
  for(i=0; i<n; i++) diff |= a[i].prefix ^ a[0].prefix;
  if( diff==0 ){
    pJob->aResult = a;
    return 1;
  }
  lo = __builtin_ctzll(diff);
  nBit = 64 - __builtin_clzll(diff) - lo;
  nDigit = (nBit + pJob->nMaxWidth - 1) / pJob->nMaxWidth;
  nWidth = (nBit + nDigit - 1) / nDigit;
  mask = ((u64)1 << nWidth) - 1;
  memset(aCount, 0, sizeof(i64) * ((size_t)nDigit << nWidth));
  for(i=0; i<n; i++){
    u64 v = a[i].prefix >> lo;
    for(iDigit=0; iDigit<nDigit; iDigit++){
      aCount[((i64)iDigit << nWidth) + (i64)((v >> (iDigit*nWidth)) & mask)]++;
    }
    if( dsSortJobStop(pJob, i) ) return 0;
  }
  for(iDigit=0; iDigit<nDigit; iDigit++){
    i64 *aPos = &aCount[(i64)iDigit << nWidth];
    int shift = lo + iDigit*nWidth;
    i64 sum = 0;
    i64 b;
    DsSortEntry *pSwap;
    if( aPos[(a[0].prefix >> shift) & mask]==n ) continue;
    for(b=0; b<=(i64)mask; b++){
      i64 c = aPos[b];
      aPos[b] = sum;
      sum += c;
    }
    for(i=0; i<n; i++){
      aTmp[aPos[(a[i].prefix >> shift) & mask]++] = a[i];
      if( dsSortJobStop(pJob, i) ) return 0;
    }
    pSwap = a;
    a = aTmp;
    aTmp = pSwap;
  }
  pJob->aResult = a;
  return 1;
}

/*
** Sort a[0..n) with the full comparison xCmp, stably, using aTmp[0..n)
** as scratch: a bottom-up merge sort (qsort could not be stopped, and one
** run of equal prefixes may hold every row).  Ends with the result in a.
** 0 if stopped.
*/
static int dsMergeSortEntries(DsSortJob *pJob, DsSortEntry *a,
                              DsSortEntry *aTmp, i64 n,
                              int (*xCmp)(const DsRow *, const DsRow *)){
  DsSortEntry *pFrom = a, *pTo = aTmp;
  i64 nWidth;
  i64 nStep = 0;
  for(nWidth=1; nWidth<n; nWidth*=2){
    i64 iLo;
    DsSortEntry *pSwap;
    for(iLo=0; iLo<n; iLo+=2*nWidth){
      i64 iMid = iLo + nWidth < n ? iLo + nWidth : n;
      i64 iHi = iLo + 2*nWidth < n ? iLo + 2*nWidth : n;
      i64 i = iLo, j = iMid, k = iLo;
      while( i<iMid && j<iHi ){
        /* Equal entries keep their order: the left one goes first.  The
        ** prefixes, equal in a run of ties unless dsRefinePrefixes() set
        ** them afresh, decide before the rows are touched. */
        if( pFrom[j].prefix!=pFrom[i].prefix
            ? pFrom[j].prefix<pFrom[i].prefix
            : xCmp(pFrom[j].pRow, pFrom[i].pRow)<0 ){
          pTo[k++] = pFrom[j++];
        }else{
          pTo[k++] = pFrom[i++];
        }
        if( dsSortJobStop(pJob, ++nStep) ) return 0;
      }
      while( i<iMid ) pTo[k++] = pFrom[i++];
      while( j<iHi ) pTo[k++] = pFrom[j++];
    }
    pSwap = pFrom;
    pFrom = pTo;
    pTo = pSwap;
  }
  if( pFrom!=a ) memcpy(a, pFrom, sizeof(DsSortEntry) * (size_t)n);
  return 1;
}

/* Runs of tied text or blob keys shorter than this are merged as they
** are: finding their common bytes would cost more than it saves. */
#define DS_REFINE_MIN 16

/*
** A run of n entries whose keys' first column is text (or all blobs) and
** whose prefixes tie: keys that share a long start (URLs, paths, codes
** of one scheme) tie on their first seven bytes, and merging them
** compared whole keys of scattered rows at every step, which grew worse
** than n log n as the rows outgrew the caches.  So find the bytes all of
** them share (one pass over each key), and give each entry the prefix of
** the eight bytes after those, big-endian, zero after the key's end: it
** orders like the key among keys that share that start, and ties only
** keys that the full comparison must then tell apart.  Returns 0 if the
** prefixes were left as they were (the keys of another type).
*/
static int dsRefinePrefixes(DsSortEntry *a, i64 n){
  DsValue v0 = {0}, v = {0};  /* set, as in dsSortPrefix */
  i64 i, nCommon;
  dsValueDecode(a[0].pRow->aData, &v0);
  if( v0.eType!=DS_TEXT && v0.eType!=DS_BLOB ) return 0;
  nCommon = v0.n;
  for(i=1; i<n && nCommon>0; i++){
    i64 k = 0;
    dsValueDecode(a[i].pRow->aData, &v);
    if( v.eType!=v0.eType ) return 0;
    if( v.n<nCommon ) nCommon = v.n;
    while( k<nCommon && v.z[k]==v0.z[k] ) k++;
    nCommon = k;
  }
  for(i=0; i<n; i++){
    u64 x = 0;
    int k;
    dsValueDecode(a[i].pRow->aData, &v);
    for(k=0; k<8; k++){
      x = (x << 8) | (nCommon + k < v.n ? v.z[nCommon + k] : 0);
    }
    a[i].prefix = x;
  }
  return 1;
}

/* Put each run of equal prefixes in true order; 0 if stopped.  The
** array the radix sort did not end in is free for scratch. */
static int dsSortTies(DsSortJob *pJob){
  int (*xCmp)(const DsRow *, const DsRow *) =
      pJob->eOrder==DS_ORDER_GROUP ? dsRowGroupCompare : dsRowKeyCompare;
  DsSortEntry *a = pJob->aResult;
  DsSortEntry *aScratch = a==pJob->a ? pJob->aTmp : pJob->a;
  i64 n = pJob->n;
  i64 i = 0;
  i64 nStep = 0;
  while( i<n ){
    i64 j = i + 1;
    i64 k;
    int bSorted = 1;
    while( j<n && a[j].prefix==a[i].prefix ) j++;
    for(k=i+1; k<j && bSorted; k++){
      bSorted = xCmp(a[k-1].pRow, a[k].pRow)<=0;
      if( dsSortJobStop(pJob, ++nStep) ) return 0;
    }
    if( !bSorted ){
      if( j - i>=DS_REFINE_MIN && pJob->eOrder==DS_ORDER_KEY
       && (a[i].prefix >> 62)>=2 ){
        dsRefinePrefixes(&a[i], j - i);
        nStep += j - i;
      }
      if( !dsMergeSortEntries(pJob, &a[i], &aScratch[i], j - i, xCmp) ){
        return 0;
      }
    }
    if( dsSortJobStop(pJob, ++nStep) ) return 0;
    i = j;
  }
  return 1;
}

static void dsSortJobRun(DsSortJob *pJob){
  pJob->aResult = pJob->a;
  if( pJob->n>1
   && (!dsRadixSort(pJob) || (pJob->bTies && !dsSortTies(pJob))) ){
    /* The check's own error (an out-of-memory, say) if it had one; else
    ** the caller set bAbort for an interrupt. */
    pJob->rc = pJob->rcStop ? pJob->rcStop : SQLITE_INTERRUPT;
  }
}

/* Set up a job over the n entries of a (room for nAlloc): allocates the
** second array, on the caller's thread, where the budget is kept. */
static int dsSortJobInit(DsSortJob *pJob, DsOp *pOp, DsSortEntry *a, i64 n,
                         i64 nAlloc, int eOrder, int bTies){
  memset(pJob, 0, sizeof(*pJob));
  pJob->a = a;
  pJob->n = n;
  pJob->eOrder = eOrder;
  pJob->bTies = bTies;
  pJob->pOp = pOp;
  pJob->xCheck = dsSortJobCheckOp;
  atomic_init(&pJob->bAbort, 0);
  if( n<2 ) return SQLITE_OK;
  pJob->nMaxWidth = n>=DS_RADIX_WIDE_ROWS
                    && pOp->pConn->nMemLimit>=DS_RADIX_WIDE_LIMIT ? 11 : 8;
  pJob->aTmp = dsMalloc(&pOp->mem, nAlloc * (i64)sizeof(DsSortEntry));
  pJob->aCount = dsMalloc(&pOp->mem,
                   (i64)sizeof(i64) * DS_RADIX_COUNTS(pJob->nMaxWidth));
  if( pJob->aTmp==0 || pJob->aCount==0 ){
    dsFree(&pOp->mem, pJob->aTmp);
    dsFree(&pOp->mem, pJob->aCount);
    pJob->aTmp = 0;
    pJob->aCount = 0;
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* After the job: *paOut gets the sorted array, the other one is freed. */
static int dsSortJobFinish(DsSortJob *pJob, DsOp *pOp, DsSortEntry **paOut){
  dsFree(&pOp->mem, pJob->aCount);
  pJob->aCount = 0;
  if( pJob->aTmp ){
    if( pJob->aResult==pJob->aTmp ){
      dsFree(&pOp->mem, pJob->a);
      *paOut = pJob->aTmp;
    }else{
      dsFree(&pOp->mem, pJob->aTmp);
      *paOut = pJob->a;
    }
    pJob->aTmp = 0;
  }
  return pJob->rc;
}

/*************************************************************************
** The sorter.
**
** Rows are gathered in an arena with an array of (prefix, row) entries,
** a buffer (DsRunBuf); a sorter has two.  The first quarter of the budget
** is held in one while the second is gathered in the other: if the input
** ends within half the budget, both are sorted (each on a worker thread
** when threads allow, DsRunTask) and handed out merged.  Past half, both
** become sorted runs in spill files, and from then on each quarter
** gathered is sorted and written by a worker while the caller gathers
** the next in the other buffer: the caller takes the run back when that
** one is full.  At the end, the runs are merged with a binary heap, in
** intermediate passes first if there are more runs than the budget has
** read buffers for.  Without threads the same tasks run on the caller at
** the same points, and what they hold is given back at the same points:
** runs, spills and the peak of memory do not depend on threads.
**
** The final merge of runs lasts as long as the operator's output, on the
** calling thread that also hands the output to SQLite.  With threads it
** runs on a worker instead, a few batches ahead (DsStageAhead,
** stageahead.c, where the worker fills): the worker reads the runs, keeps
** the heap and copies each row it takes into a batch, and the caller
** takes the rows from the batches.  The worker must neither allocate nor
** charge: each run's reader gets at the start a chunk that holds the
** run's widest row (dsArenaReserve), and each run keeps its read buffer
** to the end (dsSpillKeepBuffer), with threads or not.  The batches are
** charged to the budget when the final merge starts, with threads or not
** (dsSorterAheadBytes), and the merge reads fewer runs at once to make
** room for them: spills and peaks stay those of a serial run.
*/

/* Entries ahead of the one being read whose row is fetched into the
** cache: read in key order, rows are far apart in memory. */
#define DS_SORT_AHEAD 16

/* Rows below which a worker thread is not worth starting. */
#define DS_THREAD_MIN_ROWS 32768

/* One run being merged: its file and its current row. */
typedef struct DsRunReader DsRunReader;
struct DsRunReader {
  DsSpill *pRun;
  DsArena arena;          /* holds pRow */
  DsRow *pRow;            /* current row, NULL when the run is done */
};

/* An entry of the merge heap: a run and its current row's sort prefix,
** kept in the heap itself, so that comparing two entries reads nothing
** else unless their prefixes tie inexactly. */
typedef struct DsHeapItem DsHeapItem;
struct DsHeapItem {
  u64 prefix;
  int bExact;             /* the prefix holds the key (dsSortPrefix) */
  int iRd;                /* index into DsMerger.aRd */
};

/* A k-way merge of runs. */
typedef struct DsMerger DsMerger;
struct DsMerger {
  void *pBlock;           /* the allocation aRd and aHeap lie in */
  DsRunReader *aRd;
  int nRd;
  DsHeapItem *aHeap;      /* smallest row on top */
  int nHeap;
  int bTaken;             /* the top's row was handed out */
};

/* What the merge policy knows of a run. */
typedef struct DsRunInfo DsRunInfo;
struct DsRunInfo {
  i64 nWidest;            /* its widest row (dsRowRoom()) */
  int iLevel;             /* merges behind it (0: written by a flush) */
};

/* Rows gathered for one run: their arena and their entries. */
typedef struct DsRunBuf DsRunBuf;
struct DsRunBuf {
  DsArena arena;          /* the rows */
  i64 nWidest;            /* the widest of them (dsRowRoom()) */
  DsSortEntry *aEntry;    /* their entries (sorted once gathering ends) */
  i64 nEntry;
  i64 nAlloc;
  int bTies;              /* a row has an inexact prefix */
};

/*
** The work on one buffer of rows: its entries sorted (the job) and, when
** pRun is set, its rows written to pRun in that order: on a worker thread
** while the caller goes on, or on the caller's thread.  Like the job it
** allocates and frees nothing and calls SQLite only through the job's
** check, so it is safe on any thread; what it leaves (the spare entry
** array, the file's bytes and failure) is taken back on the caller's
** thread by dsRunTaskCollect(), where the budget and the statistics are
** kept, at the same point whether a thread ran it or not.
*/
typedef struct DsRunTask DsRunTask;
struct DsRunTask {
  DsSortJob job;
  DsSpill *pRun;          /* the file to write, detached; or NULL */
  int rcWrite;            /* how the writing ended */
  atomic_int bDone;       /* the task has finished */
  pthread_t thread;
  int bThread;            /* it runs on a worker, not yet joined */
  int bActive;            /* started, not yet collected */
};

/* What DsSorter.h holds. */
#define DS_HELD_NONE    0   /* nothing: it is empty */
#define DS_HELD_WAITING 1   /* rows gathered before any run was written */
#define DS_HELD_WRITING 2   /* a run, being written by aTask[1] */

struct DsSorter {
  DsOp *pOp;
  int eOrder;
  DsRunBuf g;             /* the rows being gathered */
  DsRunBuf h;             /* rows gathered before them (eHeld) */
  int eHeld;              /* DS_HELD_*: what h is */
  DsSpill *pHeldRun;      /* h's run (DS_HELD_WRITING) */
  i64 nWidest;            /* the widest row of all */
  i64 aiNext[2];          /* next entry of g and of h to hand out (in
                          ** memory: both are merged if h has rows) */
  DsSpill **apRun;        /* sorted runs on disk, oldest first */
  DsRunInfo *aRunInfo;    /* what the merge policy knows of each */
  int nRun;
  int nRunAlloc;
  u8 aPadBefore[64];      /* see below */
  DsMerger merge;         /* merging the runs (on-disk case); with a line
                          ** of room on each side, as it may run on a
                          ** worker that writes it at every row, while the
                          ** caller reads the fields around it */
  u8 aPadAfter[64];
  DsRunTask aTask[2];     /* sorting g; sorting (and writing) h */
  i64 nAheadBytes;        /* charged for the merge's batches (0: none) */
  DsStageAhead *pAhead;   /* the final merge run on a worker, or NULL */
  DsStaged *aOut;         /* its current batch */
  int nOut;               /* rows in aOut */
  int iOut;               /* the next of them to hand out */
  int bAheadJoined;       /* its worker was stopped, the runs taken back */
};

/* Does heap entry a come after b? */
static int dsMergeAfter(const DsSorter *p, const DsMerger *m,
                        const DsHeapItem *a, const DsHeapItem *b){
  const DsRow *x, *y;
  if( a->prefix!=b->prefix ) return a->prefix > b->prefix;
  if( a->bExact && b->bExact ) return 0;
  x = m->aRd[a->iRd].pRow;
  y = m->aRd[b->iRd].pRow;
  return (p->eOrder==DS_ORDER_GROUP ? dsRowGroupCompare(x, y)
                                    : dsRowKeyCompare(x, y)) > 0;
}

/* Move the entry at i down to its place: it stops above a child that is
** no smaller, so rows of equal keys leave in no promised order. */
static void dsHeapSiftDown(const DsSorter *p, DsMerger *m, int i){
  DsHeapItem *aHeap = m->aHeap;
  DsHeapItem x = aHeap[i];
  int n = m->nHeap;
  for(;;){
    int c = 2*i + 1;
    if( c>=n ) break;
    if( c+1<n && dsMergeAfter(p, m, &aHeap[c], &aHeap[c+1]) ) c++;
    if( !dsMergeAfter(p, m, &x, &aHeap[c]) ) break;
    aHeap[i] = aHeap[c];
    i = c;
  }
  aHeap[i] = x;
}

/* Read the next row of the run of heap entry pItem, and set its prefix;
** the reader's pRow becomes NULL at the run's end. */
static int dsRunAdvance(DsSorter *p, DsMerger *m, DsHeapItem *pItem){
  DsRunReader *pRd = &m->aRd[pItem->iRd];
  int rc;
  dsArenaReset(&pRd->arena);
  rc = dsSpillRead(pRd->pRun, &pRd->arena, &pRd->pRow);
  if( rc==SQLITE_ROW ){
    pItem->prefix = dsSortPrefix(pRd->pRow, p->eOrder, &pItem->bExact);
    return SQLITE_OK;
  }
  pRd->pRow = 0;
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

static void dsMergerFree(DsSorter *p, DsMerger *m){
  int i;
  for(i=0; i<m->nRd; i++) dsArenaClear(&m->aRd[i].arena);
  dsFree(&p->pOp->mem, m->pBlock);
  memset(m, 0, sizeof(*m));
}

/*
** Allocate m's arrays for n runs, in one block, each on lines of its own
** with a line of room before and after: a worker that runs the merge
** writes them all the time (sort.c's top), and a neighbour's bytes on
** one of their lines, written by the caller, would make the line bounce
** between the two cores at every write.
*/
#define DS_LINE ((i64)64)
#define DS_LINES(n) (((i64)(n) + DS_LINE - 1) & ~(DS_LINE - 1))
static int dsMergerAlloc(DsSorter *p, DsMerger *m, int n){
  i64 nRd = DS_LINES(sizeof(DsRunReader) * (size_t)n);
  i64 nHeap = DS_LINES(sizeof(DsHeapItem) * (size_t)n);
  u8 *z;
  /* A line to align to, a line before, the arrays, a line after. */
  m->pBlock = dsMalloc(&p->pOp->mem, 3*DS_LINE + nRd + nHeap);
  if( m->pBlock==0 ) return SQLITE_NOMEM;
  z = (u8 *)(((uintptr_t)m->pBlock + 2*DS_LINE) & ~(uintptr_t)(DS_LINE - 1));
  m->aRd = (DsRunReader *)z;
  m->aHeap = (DsHeapItem *)(z + nRd);
  return SQLITE_OK;
}

/* Start merging the n runs apRun[], whose widest rows aInfo[] gives:
** read the first row of each, into an arena that holds its widest. */
static int dsMergerInit(DsSorter *p, DsMerger *m, DsSpill **apRun,
                        const DsRunInfo *aInfo, int n){
  int i, rc;
  memset(m, 0, sizeof(*m));
  if( dsMergerAlloc(p, m, n)!=SQLITE_OK ) return SQLITE_NOMEM;
  memset(m->aRd, 0, sizeof(DsRunReader) * (size_t)n);
  m->nRd = n;
  for(i=0; i<n; i++){
    DsHeapItem *pItem = &m->aHeap[m->nHeap];
    m->aRd[i].pRun = apRun[i];
    dsArenaInit(&m->aRd[i].arena, &p->pOp->mem);
    pItem->iRd = i;
    rc = dsArenaReserve(&m->aRd[i].arena, aInfo[i].nWidest);
    if( rc==SQLITE_OK ) rc = dsSpillRewind(apRun[i]);
    if( rc==SQLITE_OK ) rc = dsRunAdvance(p, m, pItem);
    if( rc!=SQLITE_OK ) return rc;
    if( m->aRd[i].pRow ) m->nHeap++;
  }
  for(i=m->nHeap/2 - 1; i>=0; i--) dsHeapSiftDown(p, m, i);
  return SQLITE_OK;
}

/* The next row of the merge: SQLITE_ROW or SQLITE_DONE.  The row stays
** valid until the next call. */
static int dsMergerNext(DsSorter *p, DsMerger *m, DsRow **ppRow){
  if( m->bTaken ){
    DsHeapItem *pTop = &m->aHeap[0];
    u64 prefix = pTop->prefix;
    int bExact = pTop->bExact;
    int rc = dsRunAdvance(p, m, pTop);
    if( rc!=SQLITE_OK ) return rc;
    if( m->aRd[pTop->iRd].pRow==0 ){
      *pTop = m->aHeap[--m->nHeap];
      dsHeapSiftDown(p, m, 0);
    }else if( !(bExact && pTop->bExact && pTop->prefix==prefix) ){
      dsHeapSiftDown(p, m, 0);
    }
    /* Else the run's next row has the key of the row it replaces, the
    ** smallest in the heap, so it stays on top: with several rows to a
    ** key in each run, that is most rows, and no comparison at all. */
    m->bTaken = 0;
  }
  if( m->nHeap==0 ) return SQLITE_DONE;
  m->bTaken = 1;
  *ppRow = m->aRd[m->aHeap[0].iRd].pRow;
  return SQLITE_ROW;
}

/* What a run reader's arena takes for narrow rows: a chunk, 8 KiB at
** most. */
#define DS_READER_CHUNK 8192

/*
** Bytes one run reader holds while merging: its spill file's read buffer
** and its arena, which holds the run's current row: a small chunk, or
** the room of a wider row (nRow, dsRowRoom()).  So a reader of 200 KB
** rows holds 200 KB whatever its buffer.
*/
static i64 dsRunReaderBytes(const DsSorter *p, i64 nRow){
  i64 nBuf = p->pOp->pConn->nMemLimit / 64;
  if( nBuf < 4096 ) nBuf = 4096;
  if( nBuf > 256*1024 ) nBuf = 256*1024;
  return nBuf + (nRow > DS_READER_CHUNK ? nRow : DS_READER_CHUNK);
}

/*
** The room a sorter leaves beside its merge, out of its half of the
** budget, for what its operator holds meanwhile: a merge join's rows of
** one key, as many as fit, and at least two rows of its side (the right
** side's first row of a key, kept to pair, and one read back from the
** key's spill file, with the file's buffer, while crossing; mergejoin.c).
** An eighth of the budget, or that, if more.
*/
static i64 dsSorterRoom(const DsSorter *p, i64 nWidest){
  i64 nMemLimit = p->pOp->pConn->nMemLimit;
  i64 nRoom = 2*nWidest + dsSpillBufferBytes(p->pOp);
  return nRoom > nMemLimit/8 ? nRoom : nMemLimit/8;
}

/*
** How many runs one merge can read at once, counting back from the run
** before iEnd: a reader for each (dsRunReaderBytes()) and the room beside
** them (dsSorterRoom()) within half the budget, so that the two sorters
** of a merge join, merging at once, leave room for the rest; and 128 at
** most, far below the usual limit of 1024 open files.  Runs not written
** yet count as wide as the widest row so far: the merge policy waits for
** that many.  For narrow rows that is what three eighths of the budget
** have read buffers for; 0 or 1 when rows are wide, though a merge pass
** still reads two (dsMergeFanIn()).  nReserve bytes of the half are
** taken already: the final merge's batches (dsSorterAheadBytes()).
*/
static int dsRunsThatFit(const DsSorter *p, int iEnd, i64 nReserve){
  i64 nHalf = p->pOp->pConn->nMemLimit / 2;
  i64 nUsed = nReserve, nWidest = 0;
  int n = 0;
  while( n<128 ){
    i64 nRow = n<iEnd ? p->aRunInfo[iEnd-1-n].nWidest : p->nWidest;
    i64 nReader = dsRunReaderBytes(p, nRow);
    if( nRow > nWidest ) nWidest = nRow;
    if( nUsed + nReader + dsSorterRoom(p, nWidest) > nHalf ) break;
    nUsed += nReader;
    n++;
  }
  return n;
}

/* Runs a merge pass reads: those that fit, but two at least. */
static int dsMergeFanIn(const DsSorter *p, int iEnd){
  int nFan = dsRunsThatFit(p, iEnd, 0);
  return nFan < 2 ? 2 : nFan;
}

/*
** Runs the final merge reads (it lasts as long as the operator's output):
** those that fit.  When not even two fit, the rows decide: narrow rows
** take a reader no more than a small chunk, and at the smallest budgets
** two readers' buffers are within what the budget allows over, so two;
** wide rows are held whole, so the runs are merged into one first (two
** runs of 200 KB rows under 1 MiB, a reader for each, left a merge join
** no room to cross one key's rows).
*/
static i64 dsSorterAheadBytes(const DsSorter *p);
static int dsFinalFanIn(const DsSorter *p){
  int nFan = dsRunsThatFit(p, p->nRun, dsSorterAheadBytes(p));
  if( nFan<2 && p->nWidest <= DS_READER_CHUNK ) nFan = 2;
  return nFan < 1 ? 1 : nFan;
}

static int dsSorterAddRun(DsSorter *p, DsSpill *pRun, int iLevel,
                          i64 nWidest){
  if( p->nRun==p->nRunAlloc ){
    int nNew = p->nRunAlloc ? p->nRunAlloc*2 : 16;
    DsSpill **aNew = dsRealloc(&p->pOp->mem, p->apRun,
                               (i64)nNew * (i64)sizeof(DsSpill *));
    DsRunInfo *aNewInfo;
    if( aNew ) p->apRun = aNew;
    aNewInfo = aNew ? dsRealloc(&p->pOp->mem, p->aRunInfo,
                                (i64)nNew * (i64)sizeof(DsRunInfo)) : 0;
    if( aNewInfo==0 ){
      dsSpillClose(pRun);
      return SQLITE_NOMEM;
    }
    p->aRunInfo = aNewInfo;
    p->nRunAlloc = nNew;
  }
  p->aRunInfo[p->nRun].iLevel = iLevel;
  p->aRunInfo[p->nRun].nWidest = nWidest;
  p->apRun[p->nRun++] = pRun;
  return SQLITE_OK;
}

static int dsSorterMergePass(DsSorter *p, int iFirst, int n);

/* Empty buffer b, keeping its entry array and a chunk for the next rows. */
static void dsRunBufReset(DsRunBuf *b){
  b->nEntry = 0;
  b->bTies = 0;
  b->nWidest = 0;
  dsArenaReset(&b->arena);
}

/* Empty buffer b and give back all it holds. */
static void dsRunBufClear(DsSorter *p, DsRunBuf *b){
  dsRunBufReset(b);
  dsFree(&p->pOp->mem, b->aEntry);
  b->aEntry = 0;
  b->nAlloc = 0;
  dsArenaClear(&b->arena);
}

/*
** The bytes buffer b holds or will hold: its rows, its entry array, and,
** once it has rows, the second array sorting them needs.
*/
static i64 dsRunBufOwn(const DsRunBuf *b){
  i64 nArray = b->nAlloc * (i64)sizeof(DsSortEntry);
  return b->arena.nByte + (b->nEntry>0 ? 2*nArray : nArray);
}

/* Is a merge pass due now (dsSorterMergeLevels)? */
static int dsSorterMergeDue(const DsSorter *p){
  int nFan, nCap, iFirst;
  if( p->nRun<2 ) return 0;
  nFan = dsMergeFanIn(p, p->nRun);
  nCap = nFan*2 > 64 ? nFan*2 : 64;
  iFirst = p->nRun - nFan;
  if( iFirst<0 ) return 0;
  return p->aRunInfo[iFirst].iLevel==p->aRunInfo[p->nRun-1].iLevel
      || p->nRun>=nCap;
}

/*
** Merge runs while gathering, as a counter in base nFan: the newest nFan
** runs are merged into one as soon as they are all of one level (have
** been through as many merges), and the result is a level up.  So each
** row is written about log_nFan(runs) times, and at most (nFan - 1) runs
** of each level stay open.  Merging the oldest runs whenever there are
** too many instead merges each new run into one ever larger run: rows x
** runs / nFan bytes written, quadratic in the input.  A cap on the runs
** kept open (far above what the levels reach for any input that fits on
** a disk) still keeps the files open below the usual limit of 1024.
** Called with no rows gathered or held: the merge's read buffers take
** the room they had, which is given back first.
*/
static int dsSorterMergeLevels(DsSorter *p){
  int rc = SQLITE_OK;
  assert( p->g.nEntry==0 && p->eHeld==DS_HELD_NONE );
  while( rc==SQLITE_OK && dsSorterMergeDue(p) ){
    int nFan = dsMergeFanIn(p, p->nRun);
    dsRunBufClear(p, &p->g);
    dsRunBufClear(p, &p->h);
    rc = dsSorterMergePass(p, p->nRun - nFan, nFan);
  }
  return rc;
}

/* May this sorter's tasks run on worker threads? */
static int dsSorterThreads(const DsSorter *p){
  return p->pOp->pConn->nThread>1;
}

/* Write the sorted entries of t's job to its file, in order. */
static int dsRunTaskWrite(DsRunTask *t){
  DsSortJob *pJob = &t->job;
  const DsSortEntry *a = pJob->aResult;
  i64 i;
  for(i=0; i<pJob->n; i++){
    int rc;
    /* In key order the rows are all over the arena: fetch ahead. */
    if( i + DS_SORT_AHEAD < pJob->n ){
      dsRowPrefetch(a[i + DS_SORT_AHEAD].pRow);
    }
    if( dsSortJobStop(pJob, i) ){
      return pJob->rcStop ? pJob->rcStop : SQLITE_INTERRUPT;
    }
    rc = dsSpillWriteDetached(t->pRun, a[i].pRow);
    if( rc!=SQLITE_OK ) return rc;
  }
  return dsSpillFlushDetached(t->pRun);
}

static void dsRunTaskRun(DsRunTask *t){
  dsSortJobRun(&t->job);
  if( t->job.rc==SQLITE_OK && t->pRun ) t->rcWrite = dsRunTaskWrite(t);
  atomic_store(&t->bDone, 1);
}

static void *dsRunTaskThread(void *pArg){
  dsRunTaskRun((DsRunTask *)pArg);
  return 0;
}

static int dsRunTaskCollect(DsSorter *p, DsRunTask *t, DsRunBuf *b,
                            const char *zStep);

/*
** Start task t on buffer b: sort its entries and, if pRun is not NULL,
** write its rows to pRun.  On a worker thread if bThread (and one can be
** started), else here and now; either way what the budget sees is the
** same: the second entry array and the file's buffer are allocated here,
** and given back when t is collected.  On an error, that of starting or
** of the task run here, nothing is left to collect.
*/
static int dsRunTaskStart(DsSorter *p, DsRunTask *t, DsRunBuf *b,
                          DsSpill *pRun, int bThread){
  DsOp *pOp = p->pOp;
  int rc = dsSortJobInit(&t->job, pOp, b->aEntry, b->nEntry, b->nAlloc,
                         p->eOrder, b->bTies);
  if( rc==SQLITE_OK && pRun ){
    rc = dsSpillDetach(pRun);
    if( rc!=SQLITE_OK ) dsSortJobFinish(&t->job, pOp, &b->aEntry);
  }
  if( rc!=SQLITE_OK ) return rc;
  t->pRun = pRun;
  t->rcWrite = SQLITE_OK;
  atomic_init(&t->bDone, 0);
  t->bActive = 1;
  t->bThread = 0;
  if( bThread ){
    /* The worker must not step statements of the connection: it reads
    ** the interrupt flag where SQLite has sqlite3_is_interrupted(). */
    t->job.xCheck = pOp->pConn->xIsInterrupted ? dsSortJobCheckFlag : 0;
    if( pthread_create(&t->thread, 0, dsRunTaskThread, t)==0 ){
      t->bThread = 1;
      return SQLITE_OK;
    }
    t->job.xCheck = dsSortJobCheckOp;
  }
  dsRunTaskRun(t);
  /* Stopped here: the error is the answer now, and nothing is left. */
  if( t->job.rc!=SQLITE_OK || t->rcWrite!=SQLITE_OK ){
    return dsRunTaskCollect(p, t, b, 0);
  }
  return SQLITE_OK;
}

/*
** Finish task t, started on buffer b: wait for its worker, if it has one
** (the operator's step is then zStep), noticing meanwhile an interrupt
** of the connection or a progress handler that says stop, and stopping
** the worker then; take back the spare entry array (b->aEntry gets the
** sorted one) and the file.  The task's error, or the interrupt's.
*/
static int dsRunTaskCollect(DsSorter *p, DsRunTask *t, DsRunBuf *b,
                            const char *zStep){
  DsOp *pOp = p->pOp;
  int rcCheck = SQLITE_OK;
  int rc;
  if( !t->bActive ) return SQLITE_OK;
  if( t->bThread ){
    /* Checked at least once, were the worker done already: a stop asked
    ** for while it worked is answered here, in its step. */
    dsOpStep(pOp, zStep);
    for(;;){
      if( rcCheck==SQLITE_OK
       && (rcCheck = dsOpCheckInterrupt(pOp))!=SQLITE_OK ){
        atomic_store(&t->job.bAbort, 1);
      }
      if( atomic_load(&t->bDone) ) break;
      {
        struct timespec ts = { 0, 200000 };   /* 0.2 ms */
        nanosleep(&ts, 0);
      }
    }
    pthread_join(t->thread, 0);
    t->bThread = 0;
  }
  t->bActive = 0;
  rc = dsSortJobFinish(&t->job, pOp, &b->aEntry);
  if( t->pRun ){
    int rcWrite = dsSpillAttach(t->pRun, t->rcWrite);
    if( rc==SQLITE_OK ) rc = rcWrite;
  }
  /* A check that failed is the answer, even if the worker was done
  ** before it saw bAbort. */
  return rcCheck!=SQLITE_OK ? rcCheck : rc;
}

/* Stop task t, started on buffer b, and forget its result (closing). */
static void dsRunTaskAbandon(DsSorter *p, DsRunTask *t, DsRunBuf *b){
  if( t->bThread ){
    atomic_store(&t->job.bAbort, 1);
    pthread_join(t->thread, 0);
    t->bThread = 0;
  }
  if( t->bActive ){
    t->bActive = 0;
    dsSortJobFinish(&t->job, p->pOp, &b->aEntry);
    dsSpillForget(t->pRun);
  }
}

/* pRun, written (rc says how), becomes a run of level 0 whose widest row
** is nWidest; or is closed, on an error. */
static int dsSorterSealRun(DsSorter *p, DsSpill *pRun, int rc, i64 nWidest){
  /* Sealed: a run waiting to be merged holds no write buffer (with a
  ** buffer each, the waiting runs alone could pass the budget). */
  if( rc==SQLITE_OK ) rc = dsSpillRewind(pRun);
  if( rc==SQLITE_OK ) return dsSorterAddRun(p, pRun, 0, nWidest);
  dsSpillClose(pRun);
  return rc;
}

/*
** Sort the rows gathered in g and write them out, here, as a run; empty
** g.  The run is added to the others after bMergeFirst merge passes that
** are due (dsSorterMergeLevels()): they merge the newest runs, which it
** must not be one of, being a level below them.
*/
static int dsSorterWriteNow(DsSorter *p, int bMergeFirst){
  DsSpill *pRun = 0;
  i64 nWidest = p->g.nWidest;
  int rc;
  dsOpStep(p->pOp, "write run");
  rc = dsSpillOpen(p->pOp, &pRun);
  if( rc==SQLITE_OK ) rc = dsRunTaskStart(p, &p->aTask[0], &p->g, pRun, 0);
  if( rc==SQLITE_OK ) rc = dsRunTaskCollect(p, &p->aTask[0], &p->g, 0);
  if( rc==SQLITE_OK ) rc = dsSpillRewind(pRun);    /* sealed */
  dsRunBufReset(&p->g);
  if( rc==SQLITE_OK && bMergeFirst ) rc = dsSorterMergeLevels(p);
  if( rc!=SQLITE_OK ){
    dsSpillClose(pRun);
    return rc;
  }
  return dsSorterAddRun(p, pRun, 0, nWidest);
}

/* Swap g and h: the rows gathered are held, and gathering goes on in the
** emptied buffer (its entry array and a chunk kept from its last use). */
static void dsSorterHold(DsSorter *p){
  DsRunBuf tmp = p->h;
  assert( p->eHeld==DS_HELD_NONE && p->h.nEntry==0 );
  p->h = p->g;
  p->g = tmp;
  p->eHeld = DS_HELD_WAITING;
}

/* Start writing the rows held in h as a run, on a worker (here, without
** threads).  On an error h stays as it was. */
static int dsSorterWriteHeld(DsSorter *p){
  int bThread = dsSorterThreads(p);
  int rc = dsSpillOpen(p->pOp, &p->pHeldRun);
  assert( p->eHeld==DS_HELD_WAITING );
  if( rc==SQLITE_OK ){
    if( !bThread ) dsOpStep(p->pOp, "write run");
    rc = dsRunTaskStart(p, &p->aTask[1], &p->h, p->pHeldRun, bThread);
  }
  if( rc!=SQLITE_OK ){
    dsSpillClose(p->pHeldRun);
    p->pHeldRun = 0;
    return rc;
  }
  p->eHeld = DS_HELD_WRITING;
  return SQLITE_OK;
}

/* Finish the run being written from h, if one is, and empty h. */
static int dsSorterCollectHeld(DsSorter *p){
  int rc;
  if( p->eHeld!=DS_HELD_WRITING ) return SQLITE_OK;
  rc = dsRunTaskCollect(p, &p->aTask[1], &p->h, "write run (worker)");
  rc = dsSorterSealRun(p, p->pHeldRun, rc, p->h.nWidest);
  p->pHeldRun = 0;
  p->eHeld = DS_HELD_NONE;
  dsRunBufReset(&p->h);
  return rc;
}

/*
** The rows held and those gathered since do not fit in memory together:
** both become runs, h written by a worker (here, without threads) while
** g is written here.
*/
static int dsSorterSpillBoth(DsSorter *p){
  int rc = dsSorterWriteHeld(p);
  int rc2;
  if( rc==SQLITE_OK && p->g.nEntry>0 ) rc = dsSorterWriteNow(p, 0);
  rc2 = dsSorterCollectHeld(p);
  if( rc==SQLITE_OK ) rc = rc2;
  if( rc==SQLITE_OK ) rc = dsSorterMergeLevels(p);
  return rc;
}
/*
** Merge the n runs from apRun[iFirst] on into one, which takes their
** place, a level above the highest of them.  The order of the runs
** matters to nothing but the merge policy: rows of equal keys come in no
** promised order.
*/
static int dsSorterMergePass(DsSorter *p, int iFirst, int n){
  DsMerger m;
  DsSpill *pOut = 0;
  int rc;
  int i, iLevel = 0;
  i64 nWidest = 0;
  dsOpStep(p->pOp, "merge runs");
  rc = dsMergerInit(p, &m, &p->apRun[iFirst], &p->aRunInfo[iFirst], n);
  if( rc==SQLITE_OK ) rc = dsSpillOpen(p->pOp, &pOut);
  while( rc==SQLITE_OK ){
    DsRow *pRow = 0;
    rc = dsMergerNext(p, &m, &pRow);
    if( rc==SQLITE_ROW ) rc = dsSpillWrite(pOut, pRow);
  }
  dsMergerFree(p, &m);
  if( rc==SQLITE_DONE ) rc = dsSpillRewind(pOut);   /* sealed, as a run */
  if( rc!=SQLITE_OK ){
    dsSpillClose(pOut);
    return rc;
  }
  for(i=iFirst; i<iFirst+n; i++){
    const DsRunInfo *pInfo = &p->aRunInfo[i];
    if( pInfo->iLevel>iLevel ) iLevel = pInfo->iLevel;
    if( pInfo->nWidest>nWidest ) nWidest = pInfo->nWidest;
    dsSpillClose(p->apRun[i]);
  }
  memmove(&p->apRun[iFirst+1], &p->apRun[iFirst+n],
          sizeof(DsSpill *) * (size_t)(p->nRun - iFirst - n));
  memmove(&p->aRunInfo[iFirst+1], &p->aRunInfo[iFirst+n],
          sizeof(DsRunInfo) * (size_t)(p->nRun - iFirst - n));
  p->nRun -= n - 1;
  p->apRun[iFirst] = pOut;
  p->aRunInfo[iFirst].iLevel = iLevel + 1;
  p->aRunInfo[iFirst].nWidest = nWidest;
  return SQLITE_OK;
}

/*
** Is it time to stop gathering into g?  A sorter holds at most half the
** budget (an operator may run two at once: a merge join sorts both
** sides, and the first keeps its rows while the second reads), counting
** the second entry array that sorting needs, and its two buffers share
** that half:
**
**   - before any run is written, the first quarter is held (h) and a
**     second gathered (g): if the input ends within the half, both stay
**     in memory; if not, both become runs;
**   - after, each buffer is a quarter, and one is written by a worker
**     while the other gathers.
**
** So runs are a quarter of the budget, and with threads the writing of
** one overlaps the reading of the next.  Without threads the runs and
** the memory they hold at every moment are the same (the rows of the
** run just written are kept until the next is full), so that the
** statistics are the same for every value of threads.  Less when the
** connection as a whole is over its limit, but never so little that runs
** become tiny: a run is never cut below DS_MIN_RUN bytes, or a budget of
** a few hundred bytes would make a spill file of every row (a spill
** file's buffer alone takes 512 bytes, so a smaller run saves nothing).
*/
#define DS_MIN_RUN 4096

static int dsSorterFull(const DsSorter *p){
  const DsConn *pConn = p->pOp->pConn;
  i64 nSort = p->g.nAlloc * (i64)sizeof(DsSortEntry); /* what sorting adds */
  i64 nOwn = p->g.arena.nByte + p->g.nAlloc * (i64)sizeof(DsSortEntry) + nSort;
  if( nOwn <= DS_MIN_RUN ) return 0;
  if( nOwn + dsRunBufOwn(&p->h) > pConn->nMemLimit/2 ) return 1;
  if( p->eHeld!=DS_HELD_WAITING && nOwn > pConn->nMemLimit/4 ) return 1;
  return pConn->nMemUsed + nSort > pConn->nMemLimit
      && nOwn > pConn->nMemLimit/16;
}

/*
** Would growing the entry array to nNew entries pass the budget?  The
** array grows by doubling, and sorting needs a second one as large: a
** sorter whose array doubles just before it is full would go past the
** limit by a quarter of what it holds (seen with two sorters of a merge
** join, one merging while the other gathers).  Never while the rows
** gathered are fewer than DS_MIN_RUN bytes' worth.
*/
static int dsSorterGrowthWouldExceed(const DsSorter *p, i64 nNew){
  const DsConn *pConn = p->pOp->pConn;
  i64 nMore = (nNew - p->g.nAlloc) * 2 * (i64)sizeof(DsSortEntry);
  if( p->g.nEntry==0 || p->g.arena.nByte<=DS_MIN_RUN ) return 0;
  return pConn->nMemUsed + p->g.nAlloc*(i64)sizeof(DsSortEntry) + nMore
           > pConn->nMemLimit;
}

/*
** Entries in the first entry array: 1024, or fewer under a small budget.
** The array and the second one sorting needs must take a small part of
** the sorter's half of the budget: were they to fill it alone, every row
** would become a run of its own.
*/
static i64 dsSorterFirstAlloc(const DsOp *pOp){
  i64 n = pOp->pConn->nMemLimit / (16 * 2 * (i64)sizeof(DsSortEntry));
  if( n > 1024 ) n = 1024;
  if( n < 16 ) n = 16;
  return n;
}

/* Note the width of a row gathered. */
static void dsSorterCountWidth(DsSorter *p, const DsRow *pRow){
  i64 n = dsRowRoom(&p->pOp->mem, pRow->nData);
  if( n > p->g.nWidest ) p->g.nWidest = n;
  if( n > p->nWidest ) p->nWidest = n;
}

/*
** Gathering into g must stop (dsSorterFull): hold the rows if no run
** was written yet; else finish the run being written, and hand these to
** a worker to write, or, when a merge pass is due, which needs the room
** the rows take, write them here and merge.
*/
static int dsSorterRunFull(DsSorter *p){
  int rc;
  if( p->eHeld==DS_HELD_WAITING ) return dsSorterSpillBoth(p);
  if( p->nRun==0 && p->eHeld==DS_HELD_NONE ){
    dsSorterHold(p);
    return SQLITE_OK;
  }
  rc = dsSorterCollectHeld(p);
  if( rc!=SQLITE_OK ) return rc;
  if( dsSorterMergeDue(p) ){
    rc = dsSorterWriteNow(p, 1);
    if( rc==SQLITE_OK ) rc = dsSorterMergeLevels(p);
    return rc;
  }
  dsSorterHold(p);
  return dsSorterWriteHeld(p);
}

/* Gather every row of pSrc, spilling sorted runs past the budget. */
static int dsSorterGather(DsSorter *p, DsSource *pSrc){
  DsRow *aRow[DS_BATCH];
  dsOpStep(p->pOp, "sort input");
  for(;;){
    DsRunBuf *g = &p->g;
    int i, n;
    /* A batch at a time: no more than the room left in the entry array,
    ** nor than 1/256 of the budget, so that a sorter goes little past
    ** being full before it notices. */
    int nMax = DS_BATCH;
    int rc;
    if( g->nEntry==g->nAlloc ){
      i64 nNew = g->nAlloc ? g->nAlloc*2 : dsSorterFirstAlloc(p->pOp);
      DsSortEntry *aNew;
      if( dsSorterGrowthWouldExceed(p, nNew) ){
        /* Doubling the array now would take the connection past its
        ** limit in one step, before any check: stop gathering here. */
        rc = dsSorterRunFull(p);
        if( rc!=SQLITE_OK ) return rc;
        dsOpStep(p->pOp, "sort input");
        continue;
      }
      aNew = dsRealloc(&p->pOp->mem, g->aEntry,
                       nNew * (i64)sizeof(DsSortEntry));
      if( aNew==0 ) return SQLITE_NOMEM;
      g->aEntry = aNew;
      g->nAlloc = nNew;
    }
    if( nMax > g->nAlloc - g->nEntry ) nMax = (int)(g->nAlloc - g->nEntry);
    rc = dsSourceBatch(pSrc, &g->arena, aRow, nMax,
                       g->arena.nByte + p->pOp->pConn->nMemLimit/256, 0, &n);
    if( rc!=SQLITE_OK ) return rc;
    if( n==0 ) return SQLITE_OK;
    for(i=0; i<n; i++){
      int bExact;
      g->aEntry[g->nEntry].prefix = dsSortPrefix(aRow[i], p->eOrder, &bExact);
      g->aEntry[g->nEntry].pRow = aRow[i];
      g->nEntry++;
      dsSorterCountWidth(p, aRow[i]);
      if( !bExact ) g->bTies = 1;
    }
    if( dsSorterFull(p) ){
      rc = dsSorterRunFull(p);
      if( rc!=SQLITE_OK ) return rc;
      dsOpStep(p->pOp, "sort input");
    }
  }
}

/*
** Sort the rows in memory: those gathered and those held, each buffer on
** a worker thread if the connection allows threads and it has enough
** rows to be worth it; else here.
**
** Either way the tasks are finished, and the arrays the sorted entries
** did not end in freed, only at the first dsSorterNext(): a worker sorts
** while the caller goes on (to read the other side of a merge join), and
** the array it sorts into is held meanwhile.  Held just as long without
** the worker, the budget's account is the same whether a thread sorted
** or not, and so are the spills it decides and the peak
** ds_last_stats() reports, for every value of threads.
*/
static int dsSorterSortMemory(DsSorter *p){
  int i, rc = SQLITE_OK;
  dsOpStep(p->pOp, "radix sort");
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    DsRunBuf *b = i ? &p->h : &p->g;
    if( b->nEntry==0 ) continue;
    rc = dsRunTaskStart(p, &p->aTask[i], b, 0,
                        dsSorterThreads(p) && b->nEntry>=DS_THREAD_MIN_ROWS);
  }
  return rc;
}

/*
** Can the rows gathered and held, all of them, stay in memory for the
** operator's whole output?  Gathering stops at about half the budget;
** what stays must leave two of its widest rows of room beside it, as a
** merge does (dsSorterRoom()).  If not, the rows become runs of their
** own, read back a row at a time: two 200 KB rows a side held under 1
** MiB left a merge join no room to cross them.
*/
static int dsSorterLeavesRoom(const DsSorter *p){
  i64 nOwn = p->g.arena.nByte + 2 * p->g.nAlloc * (i64)sizeof(DsSortEntry)
           + dsRunBufOwn(&p->h);
  i64 nWidest = p->g.nWidest > p->h.nWidest ? p->g.nWidest : p->h.nWidest;
  return nOwn + 2*nWidest <= p->pOp->pConn->nMemLimit/2;
}

/*
** Merge down to the runs the final merge reads (dsFinalFanIn()): the
** newest (the smallest) first, just enough of them in the first pass
** that every later pass merges a full fan-in.  rc is passed through.
*/
static int dsSorterMergeDown(DsSorter *p, int rc){
  while( rc==SQLITE_OK ){
    int nFinal = dsFinalFanIn(p);
    int nFan = dsMergeFanIn(p, p->nRun);
    int n;
    if( p->nRun<=nFinal ) break;
    n = (p->nRun - nFinal) % (nFan - 1) + 1;
    if( n==1 ) n = nFan;
    rc = dsSorterMergePass(p, p->nRun - n, n);
  }
  return rc;
}

/*************************************************************************
** The final merge run ahead on a worker (see the top of the sorter).
*/

/* Bytes of rows in one batch of the merge run ahead: 1/512 of the
** budget, so that the batches take some 1/32 of it. */
static i64 dsSorterSlotBytes(const DsSorter *p){
  return p->pOp->pConn->nMemLimit / 512;
}

/*
** What the final merge's batches are charged, with threads or not: the
** most they can hold (dsStageAheadBytes()) where that is at most 1/16 of
** the budget; else 0, and the merge never runs ahead: under a budget of
** a few MiB, whose batches would hold a few rows each, or for rows so
** wide that a batch holds one.  The budget and the rows decide, never
** threads, so that spills and peaks do not depend on threads.
*/
static i64 dsSorterAheadBytes(const DsSorter *p){
  i64 nSlot = dsSorterSlotBytes(p);
  i64 n;
  if( nSlot<4096 || p->nWidest>nSlot ) return 0;
  n = dsStageAheadBytes(p->pOp->pConn, nSlot, p->nWidest);
  return n <= p->pOp->pConn->nMemLimit/16 ? n : 0;
}

/* The stage of the merge's batches: none, every row is handed out.  On
** the worker, after the batch was filled: its entries, as its rows, go
** around the caches, and then the fence (dsRowCopyStreaming()). */
static int dsSorterPassBatch(const DsRowStage *pStage, DsRow **aRow,
                             int nRow, DsStaged *aOut){
  int i;
  (void)pStage;
  for(i=0; i<nRow; i++){
    dsStreamPointer(&aOut[i].pRow, aRow[i]);
    dsStreamPointer(&aOut[i].pFrom, 0);
    dsStreamPointer(&aOut[i].pTo, 0);
  }
  DS_STREAM_FENCE();
  return nRow;
}
static const DsRowStage dsSorterPass = { dsSorterPassBatch, 0, 0 };

/*
** DsStageFill of the merge run ahead, on the worker: the next rows of the
** merge copied into pArena (around the caches: the caller reads them on
** another core, and the ring's slots are written again and again), as
** long as they take no more than nMaxByte (one row at least).  A row
** that would pass it is left on top of the heap, not taken, for the next
** batch.
*/
static int dsSorterFillAhead(void *pArg, DsArena *pArena, DsRow **aRow,
                             int nMax, i64 nMaxByte, int *pnRow){
  DsSorter *p = (DsSorter *)pArg;
  i64 nByte = 0;
  int n = 0;
  int rc = SQLITE_OK;
  while( n<nMax ){
    DsRow *pRow = 0;
    i64 nRow;
    rc = dsMergerNext(p, &p->merge, &pRow);
    if( rc!=SQLITE_ROW ) break;
    rc = SQLITE_OK;
    nRow = DS_ROW_STRIDE(pRow);
    if( n>0 && nByte + nRow > nMaxByte ){
      p->merge.bTaken = 0;
      break;
    }
    aRow[n] = dsRowCopyStreaming(pArena, pRow);
    if( aRow[n]==0 ){
      rc = SQLITE_NOMEM;
      break;
    }
    nByte += nRow;
    n++;
  }
  *pnRow = n;
  return rc;
}

/* The interrupt check of the caller's waits for the merge's worker. */
static int dsSorterAheadCheck(void *pArg){
  return dsOpCheckInterrupt((DsOp *)pArg);
}

/*
** Run the final merge, its first rows read, on a worker, where threads
** allow, one starts and its batches were charged for; else it runs on
** the caller, at dsSorterNext().  SQLITE_OK or SQLITE_NOMEM.
*/
static int dsSorterAheadStart(DsSorter *p){
  DsMerger *m = &p->merge;
  int i, rc;
  if( p->nAheadBytes==0 || !dsSorterThreads(p) ) return SQLITE_OK;
  for(i=0; i<m->nRd; i++) dsSpillDetachRead(m->aRd[i].pRun);
  rc = dsStageAheadOpen(p->pOp->pConn, &dsSorterPass, dsSorterFillAhead, p,
                        1, dsSorterSlotBytes(p), dsSorterAheadCheck, p->pOp,
                        &p->pAhead);
  if( rc==SQLITE_OK && !dsStageAheadHasWorker(p->pAhead) ){
    dsStageAheadFree(p->pAhead);
    p->pAhead = 0;
  }
  if( p->pAhead==0 ){
    /* Nothing was read detached: nothing can have failed. */
    for(i=0; i<m->nRd; i++) dsSpillAttachRead(m->aRd[i].pRun);
  }
  return rc;
}

/* Stop the merge's worker, if it was not stopped yet, and take the runs
** back: the first failure of its reads, as the caller's own would have
** reported it, or SQLITE_OK. */
static int dsSorterAheadJoin(DsSorter *p){
  DsMerger *m = &p->merge;
  int i, rc = SQLITE_OK;
  if( p->pAhead==0 || p->bAheadJoined ) return SQLITE_OK;
  dsStageAheadStop(p->pAhead);
  p->bAheadJoined = 1;
  for(i=0; i<m->nRd; i++){
    int rc2 = dsSpillAttachRead(m->aRd[i].pRun);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  return rc;
}

/* The next row of the merge run ahead: SQLITE_ROW, SQLITE_DONE or an
** error.  Each row ticks the interrupt check, as its read would have. */
static int dsSorterNextAhead(DsSorter *p, DsRow **ppRow){
  int rc;
  if( p->iOut>=p->nOut ){
    int nRow = 0;
    rc = dsStageAheadNext(p->pAhead, &p->aOut, &p->nOut, &nRow);
    p->iOut = 0;
    if( rc!=SQLITE_OK ){
      p->nOut = 0;
      if( rc!=SQLITE_DONE ){
        int rcRead = dsSorterAheadJoin(p);
        if( rcRead!=SQLITE_OK ) rc = rcRead;
      }
      return rc;
    }
  }
  rc = dsOpTick(p->pOp);
  if( rc!=SQLITE_OK ) return rc;
  /* The worker wrote the rows on another core: fetch ahead. */
  if( p->iOut + DS_SORT_AHEAD < p->nOut ){
    dsRowPrefetch(p->aOut[p->iOut + DS_SORT_AHEAD].pRow);
  }
  *ppRow = p->aOut[p->iOut++].pRow;
  return SQLITE_ROW;
}

/*
** The input is over and its rows will not stay in memory: every row
** still in memory goes to a run (those gathered here while a worker
** finishes the run before them), and the runs are merged down to those
** the final merge reads at once.
*/
static int dsSorterEndRuns(DsSorter *p){
  int i, rc, rc2;
  if( p->eHeld==DS_HELD_WAITING ){
    rc = dsSorterSpillBoth(p);
  }else{
    rc = p->g.nEntry>0 ? dsSorterWriteNow(p, 0) : SQLITE_OK;
    rc2 = dsSorterCollectHeld(p);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  dsRunBufClear(p, &p->g);
  dsRunBufClear(p, &p->h);
  rc = dsSorterMergeDown(p, rc);
  if( rc!=SQLITE_OK ) return rc;
  p->nAheadBytes = dsSorterAheadBytes(p);
  dsMemReserve(&p->pOp->mem, p->nAheadBytes);
  for(i=0; i<p->nRun; i++) dsSpillKeepBuffer(p->apRun[i]);
  rc = dsMergerInit(p, &p->merge, p->apRun, p->aRunInfo, p->nRun);
  if( rc==SQLITE_OK ) rc = dsSorterAheadStart(p);
  return rc;
}

/*
** Sort every row of pSrc.  When the rows fit in the budget they are
** sorted in memory (on worker threads if ds_config('threads') allows,
** while the caller goes on, say, to read the other side of a join); else
** they end up in sorted runs, merged down to as many as can be read at
** once.
*/
int dsSorterOpen(DsOp *pOp, DsSource *pSrc, int eOrder, DsSorter **ppSorter){
  DsSorter *p = sqlite3_malloc64(sizeof(DsSorter));
  int rc;
  assert( eOrder==DS_ORDER_KEY || eOrder==DS_ORDER_GROUP );
  *ppSorter = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->pOp = pOp;
  p->eOrder = eOrder;
  dsArenaInit(&p->g.arena, &pOp->mem);
  dsArenaInit(&p->h.arena, &pOp->mem);
  rc = dsSorterGather(p, pSrc);
  if( rc==SQLITE_OK && p->nRun==0 && p->eHeld!=DS_HELD_WRITING
   && dsSorterLeavesRoom(p) ){
    rc = dsSorterSortMemory(p);
  }else if( rc==SQLITE_OK ){
    rc = dsSorterEndRuns(p);
  }
  if( rc!=SQLITE_OK ){
    dsSorterClose(p);
    return rc;
  }
  *ppSorter = p;
  return SQLITE_OK;
}

/*
** Sorted in memory in two buffers, g and h: is the next entry of h to go
** before that of g?  Their prefixes may have been refined within a run
** of ties (dsRefinePrefixes), so they are compared afresh from the rows.
*/
static int dsSorterHeldFirst(const DsSorter *p, const DsRow *pG,
                             const DsRow *pH){
  int bExactG, bExactH;
  u64 g = dsSortPrefix(pG, p->eOrder, &bExactG);
  u64 h = dsSortPrefix(pH, p->eOrder, &bExactH);
  if( g!=h ) return h < g;
  if( bExactG && bExactH ) return 0;
  return (p->eOrder==DS_ORDER_GROUP ? dsRowGroupCompare(pH, pG)
                                    : dsRowKeyCompare(pH, pG)) < 0;
}

/* The next entry of buffer i (0: g, 1: h) sorted in memory, or NULL. */
static DsRow *dsSorterPeek(DsSorter *p, int i){
  const DsRunBuf *b = i ? &p->h : &p->g;
  i64 k = p->aiNext[i];
  if( k>=b->nEntry ) return 0;
  if( k + DS_SORT_AHEAD < b->nEntry ){
    dsRowPrefetch(b->aEntry[k + DS_SORT_AHEAD].pRow);
  }
  return b->aEntry[k].pRow;
}

/* The next row in order: SQLITE_ROW or SQLITE_DONE (or an error). */
int dsSorterNext(DsSorter *p, DsRow **ppRow){
  DsRow *pG, *pH;
  if( p->pAhead ) return dsSorterNextAhead(p, ppRow);
  if( p->nRun ) return dsMergerNext(p, &p->merge, ppRow);
  if( p->aTask[0].bActive || p->aTask[1].bActive ){
    int rc = dsRunTaskCollect(p, &p->aTask[0], &p->g, "radix sort (worker)");
    int rc2 = dsRunTaskCollect(p, &p->aTask[1], &p->h, "radix sort (worker)");
    if( rc==SQLITE_OK ) rc = rc2;
    if( rc!=SQLITE_OK ) return rc;
  }
  pG = dsSorterPeek(p, 0);
  pH = p->h.nEntry ? dsSorterPeek(p, 1) : 0;
  if( pH && (pG==0 || dsSorterHeldFirst(p, pG, pH)) ){
    p->aiNext[1]++;
    *ppRow = pH;
  }else if( pG ){
    p->aiNext[0]++;
    *ppRow = pG;
  }else{
    return SQLITE_DONE;
  }
  return SQLITE_ROW;
}

/* The widest row sorted (dsRowRoom()): what its user makes room for. */
i64 dsSorterWidest(const DsSorter *p){
  return p->nWidest;
}

void dsSorterClose(DsSorter *p){
  if( p ){
    int i;
    dsRunTaskAbandon(p, &p->aTask[0], &p->g);
    dsRunTaskAbandon(p, &p->aTask[1], &p->h);
    dsSpillClose(p->pHeldRun);
    dsSorterAheadJoin(p);
    dsStageAheadFree(p->pAhead);
    dsMemReserve(&p->pOp->mem, -p->nAheadBytes);
    dsMergerFree(p, &p->merge);
    for(i=0; i<p->nRun; i++) dsSpillClose(p->apRun[i]);
    dsFree(&p->pOp->mem, p->apRun);
    dsFree(&p->pOp->mem, p->aRunInfo);
    dsRunBufClear(p, &p->g);
    dsRunBufClear(p, &p->h);
    sqlite3_free(p);
  }
}
