/*
** dataset_int.h: declarations shared by the sources of the `dataset`
** extension.  Nothing here is exported from the shared library except
** sqlite3_dataset_init(), declared in dataset.h.
**
** As sqliteInt.h leaves layers to vdbe.h, btree.h and pager.h, this file
** holds the connection-level declarations (layer 1 of ARCHITECTURE.md:
** per-connection state, errors, interrupts, progress, memory, statistics)
** and the registration of modules, and includes one header per layer
** above, in order.  Every .c file includes this file; a type only two
** files share is in a private header those two include after it.
**
** The headers:
**
**   dataset.h     the public entry point
**   dataset_int.h this file: the connection layer, then the four below
**   dsrow.h       values and text: the row format, its hot inlines, keys,
**                 DsText, JSON, SQL text helpers
**   dsexec.h      the executor: inputs and readers, the operator context
**                 DsOp, spill files, row buffers, the sorter
**   dsops.h       the operators: equi-join, coGroup, cross product
**   dsvtab.h      the virtual-table skeleton and its CREATE forms
**   dshash.h      the hash table and Bloom filter (hashtable.c, hashjoin.c)
**   dsdecode.h    DsRowDecoder (join_vtab.c, cross_vtab.c)
**   dsplan.h      DsJoinPlan (plan.c, plan_vtab.c)
**
** The sources, one file each:
**
**   dataset.c     entry point, per-connection state, ds_version()
**   threads.c     whether workers may run; the caller's timed wait
**   errors.c      failures of the extension's own resources: the code and
**                 message a statement ends with (dsStatementError)
**   config.c      ds_config(): memory_limit, temp_dir, threads, strict_hints
**   memory.c      the per-connection memory budget and the row arena
**   row.c         the one row format, key hashing, key equality and order
**   text.c        the text buffer DsText; text results within limits
**   json.c        JSON text of values, keys and rows
**   sqltext.c     SQL text helpers (lexing) and checks of text arguments
**   input.c       dataset arguments (tables, views, queries), keys
**   reader.c      reading an input's rows (DsReader, ds_input_row, the
**                 wide path, keys first); the size of an input
**   rangeread.c   dsReaderOpen(): a table read in rowid ranges by worker
**                 threads on read connections of their own, or the reader
**   stageahead.c  an operator's stage run on a worker, batches ahead of
**                 the caller (a spill file's, a view's rows)
**   operator.c    the operator layer: DsOp, errors, the interrupt and
**                 budget checks of operators, side names, hints and join
**                 types, the choice of the side to build on
**   spill.c       spill files: rows written once, read back in order
**   rowbuf.c      row buffers (memory, then a spill file); block nested loop
**   hashtable.c   the hash table (directory over slot-sorted rows) and the
**                 Bloom filter used by every hash strategy
**   hashjoin.c    BROADCAST_HASH_x and REPARTITION_HASH_x
**   sort.c        sorting rows on their keys
**   groupmerge.c  the merge of two sorted inputs, a key group at a time
**   mergejoin.c   REPARTITION_SORT_MERGE
**   join.c        the join driver: strict hints, readers, the strategy run
**   plan.c        OPTIMIZER_CHOOSES's choice of strategy; ds_join_plan()
**   stats.c       ds_last_stats() and the statistics of a run
**   vtab_args.c   what the CREATE VIRTUAL TABLE forms share: name=value
**                 arguments, typed two-input columns, placeholders
**   vtab.c        the one virtual-table skeleton serving every module
**   join_vtab.c   the ds_join_hint module's descriptor and callbacks
**   plan_vtab.c   the ds_join_plan module's
**   aggregates.c  ds_first(), ds_min_by(), ds_max_by(); registers them all
**   key_stats.c   ds_key_stats(): exact key counts, then sketches
**   cogroup.c     coGroup: both sides sorted, merged into groups
**   cogroup_vtab.c the ds_cogroup module's descriptor and callbacks
**   cross.c       cross product: a buffered side, a streamed side
**   cross_vtab.c  the ds_cross module's descriptor and callbacks
**   interrupt.c   interrupt checks of CPU-only loops, operator steps
**   progress.c    the progress line of a long operator on standard error
*/
#ifndef DATASET_INT_H
#define DATASET_INT_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

/*
** The function of a per-row loop, with every call inside it inlined where
** the compiler can (GCC, Clang), as link-time optimization does anyway
** for a function called from one place only: the row maker, called by
** two readers, would otherwise stay a call on the path of every row.
*/
#if defined(__GNUC__)
# define DS_FLATTEN __attribute__((flatten))
#else
# define DS_FLATTEN
#endif

/*
** A function whose only effect is __builtin_prefetch().  GCC counts a
** prefetch as no side effect, so it finds such a function "const" before
** it inlines it, and then deletes every call as dead code: the hash
** join's directory prefetch was compiled out that way.  Inlined first,
** the prefetch stays.
*/
#if defined(__GNUC__)
# define DS_PREFETCHER static inline __attribute__((always_inline))
#else
# define DS_PREFETCHER static inline
#endif

/* Rows are read from inputs and handed on in batches of this many. */
#define DS_BATCH 1024

/*************************************************************************
** Per-connection state (dataset.c, config.c)
*/
typedef struct DsConn DsConn;
typedef struct DsProgress DsProgress;
struct DsConn {
  sqlite3 *db;
  i64 nMemLimit;          /* memory_limit: bytes all operators may hold */
  char *zTempDir;         /* temp_dir as set, or NULL for the default */
  int nThread;            /* threads */
  i64 nParallelMinRows;  /* parallel_min_rows */
  int bStrictHints;       /* strict_hints */
  int bProgress;          /* progress */
  int msProgressDelay;    /* draw the line after this long (progress.c) */
  DsProgress *pProgress;  /* the line of the operator running, or NULL */
  i64 nMemUsed;           /* bytes held now by operators of this connection */
  char *zLastStats;       /* JSON for ds_last_stats(), or NULL */
  int (*xIsInterrupted)(sqlite3 *);  /* sqlite3_is_interrupted, or NULL */
  int nNesting;           /* inputs being stepped one inside another */
  int bNestingHit;        /* their bound was reached (input.c) */
  void (*xTestStep)(void *, const char *);  /* test builds: ds_test_hook() */
  void *pTestArg;
  int rcSqlite;           /* SQLite's own error from an input step, until
                          ** reported (dsStatementError) */
  int rcSpill;            /* the failure of a spill file, until reported */
  i64 nNoMemBytes;        /* size of the last allocation of an operator's
                          ** memory (DsMem) that failed, until reported */
  int bThreadModeKnown;   /* zNoThreads below was found out (rangeread.c):
                          ** SQLite's threading mode cannot change while a
                          ** connection is open */
  const char *zNoThreads; /* why SQLite may not be used from other threads,
                          ** or NULL */
};

/* Failures of the extension's own resources (errors.c) */
int dsSqliteError(DsConn *pConn, int rc);
int dsStatementError(DsConn *pConn, const char *zFunc, int rc,
                     char **pzErr);
void dsResultNoMem(sqlite3_context *ctx, const char *zFunc);

int dsRegisterConfig(sqlite3 *db, DsConn *pConn);
const char *dsTempDir(DsConn *pConn);

/*************************************************************************
** Whether workers may run, and the caller's timed wait (threads.c)
*/
const char *dsThreadsRefused(DsConn *pConn);
#ifndef DS_OMIT_THREADS
const char *dsThreadModeRefused(DsConn *pConn);
#endif
int dsCondInitTimed(pthread_cond_t *pCond);
void dsCondWaitMs(pthread_cond_t *pCond, pthread_mutex_t *pMutex, int nMs);

/*************************************************************************
** Interrupt checks (interrupt.c)
**
** CPU-only loops call dsTickerTick() with the weight of the work just
** done, in units of about two nanoseconds; every DS_TICK_CHECK units the
** ticker checks for sqlite3_interrupt() and lets the progress handler run.
*/
#define DS_TICK_CHECK 65536     /* units of work between two checks */
#define DS_TICK_ROW   64        /* a row handled: hashed, copied, compared */

typedef struct DsTicker DsTicker;
struct DsTicker {
  DsConn *pConn;
  sqlite3_stmt *pPing;    /* stepping it notices an interrupt */
  u32 nTick;              /* units of work since the last check */
  const char *zStep;      /* what the operator is doing, or NULL */
  DsProgress *pProg;      /* the progress line its operator owns, or NULL */
};

int (*dsFindIsInterrupted(void))(sqlite3 *);
void dsTickerInit(DsTicker *p, DsConn *pConn);
int dsTickerCheck(DsTicker *p);
void dsTickerStep(DsTicker *p, const char *zStep);
void dsTickerFinish(DsTicker *p);

static inline int dsTickerTick(DsTicker *p, u32 n){
  p->nTick += n;
  if( p->nTick < DS_TICK_CHECK ) return SQLITE_OK;
  return dsTickerCheck(p);
}

/* Work split into items run by the caller and helper threads at once
** (threads.c).  An item allocates nothing and calls no SQLite; it calls
** dsSplitTick() as it goes and stops when that fails.  *pnThread becomes
** at least the threads that ran items, the caller's included. */
typedef struct DsSplit DsSplit;
typedef struct DsSplitWork DsSplitWork;
int dsSplitRun(DsConn *pConn, DsTicker *pTicker, int bParallel, int nItem,
               int (*xItem)(void *, int, DsSplitWork *), void *pArg,
               int *pnThread);
int dsSplitTick(DsSplitWork *pWork, u32 n);

/* Jobs run on one helper while the caller goes on (threads.c). */
typedef struct DsAsync DsAsync;
int dsAsyncStart(DsConn *pConn, int (*xJob)(void *), DsAsync **pp);
void dsAsyncPost(DsAsync *p, void *pArg);
int dsAsyncWait(DsAsync *p);
void dsAsyncEnd(DsAsync *p);
#if defined(DS_TEST_HOOKS) && !defined(DS_OMIT_THREADS)
void dsSplitTest(int nAllow, int *pnFull, int *pnShort);
#endif

/*
** The progress line (progress.c).  The periodic points that look at it
** (the ticker's check, a reader's batch) test DsConn.pProgress first:
** with progress off that is all they cost.
*/
typedef struct DsOp DsOp;
int dsProgressDelayMs(void);
void dsProgressStart(DsOp *pOp);
void dsProgressStep(DsProgress *p, const char *zStep);
void dsProgressAdvance(DsProgress *p);
void dsProgressCheck(DsProgress *p);
void dsProgressKnowRows(DsConn *pConn, int iSide, i64 nRow);
void dsProgressEnd(DsProgress *p);
int dsProgressWantsRows(const DsProgress *p, int iSide);
void dsProgressSetRows(DsProgress *p, int iSide, i64 nRow);
void dsProgressFinish(DsOp *pOp);

#ifdef DS_TEST_HOOKS
int dsRegisterTestHooks(sqlite3 *db, DsConn *pConn);
#endif

/*************************************************************************
** Memory (memory.c)
**
** Every buffer an operator holds is charged to a DsMem, which charges the
** connection.  The arena hands out row storage in chunks that grow
** geometrically, so a small input costs little and a large one few calls.
*/
typedef struct DsMem DsMem;
typedef struct DsChunk DsChunk;
typedef struct DsChunkPool DsChunkPool;
struct DsMem {
  DsConn *pConn;
  i64 nUsed;              /* bytes this operator holds */
  i64 nPeak;              /* most it ever held */
  i64 nRoomLimit;         /* dsRowRoom(): the memory_limit for which */
  i64 nRoomChunk;         /* an arena's chunks stop growing at this size */
  DsChunkPool *pPool;     /* the chunks of arenas made by dsArenaInitPool(),
                          ** or NULL: it holds none */
};

void dsMemInit(DsMem *pMem, DsConn *pConn);
void *dsMalloc(DsMem *pMem, i64 n);
void *dsMallocToFill(DsMem *pMem, i64 n);
void dsMakePages(void *p, i64 n);
void *dsRealloc(DsMem *pMem, void *p, i64 n);
void dsFree(DsMem *pMem, void *p);
void dsMemReserve(DsMem *pMem, i64 n);
int dsMemOverBudget(const DsMem *pMem);

/* Chunks of arenas cut from slabs on huge pages (memory.c). */
#define DS_POOL_CLASSES 5   /* free lists: chunks of 64 KiB to 1 MiB */
typedef struct DsSlab DsSlab;
struct DsChunkPool {
  i64 nSlabMax;           /* the largest slab; 0: every chunk allocated */
  DsSlab *pSlab;          /* the newest slab, linked to the older ones */
  i64 iCut;               /* its bytes cut into chunks so far */
  i64 nTaken;             /* bytes of the chunks taken, not given back */
  DsChunk *apFree[DS_POOL_CLASSES];  /* chunks given back, by size */
};
void dsPoolStart(DsChunkPool *p, DsMem *pMem);
void dsPoolEnd(DsChunkPool *p, DsMem *pMem);

typedef struct DsArena DsArena;
struct DsArena {
  DsMem *pMem;
  DsChunk *pChunk;        /* newest chunk, linked to the older ones */
  u8 *pFree;              /* next free byte of pChunk */
  u8 *pEnd;               /* end of pChunk */
  u32 nNext;              /* size of the next chunk to allocate */
  int bPool;              /* its chunks come from pMem->pPool */
  i64 nByte;              /* bytes held by all chunks */
};

void dsArenaInit(DsArena *p, DsMem *pMem);
void dsArenaInitPool(DsArena *p, DsMem *pMem);
void *dsArenaGrow(DsArena *p, i64 n);
int dsArenaReserve(DsArena *p, i64 n);
i64 dsArenaWouldAlloc(const DsArena *p, i64 n);
int dsArenaWouldExceed(const DsArena *p, i64 n, i64 nReserve);
void dsArenaUndo(DsArena *p, void *pLast);

/* n bytes aligned to 8, valid until the arena is reset or cleared; NULL
** on OOM.  Inline: every row read is allocated here. */
static inline void *dsArenaAlloc(DsArena *p, i64 n){
  u8 *pRet;
  assert( n>=0 );
  n = (n + 7) & ~(i64)7;
  if( p->pEnd - p->pFree < n ) return dsArenaGrow(p, n);
  pRet = p->pFree;
  p->pFree += n;
  return pRet;
}
/*
** For a caller that knows only an upper bound of what it will allocate
** until it has written it: dsArenaPeek() returns the free space of the
** current chunk if n bytes fit there (else NULL, and the caller takes
** another path), and dsArenaCommit() then takes the m <= n bytes written,
** as dsArenaAlloc(p, m) would have.
*/
static inline void *dsArenaPeek(DsArena *p, i64 n){
  n = (n + 7) & ~(i64)7;
  return p->pEnd - p->pFree >= n ? p->pFree : 0;
}
static inline void dsArenaCommit(DsArena *p, i64 m){
  assert( m>=0 && p->pEnd - p->pFree >= ((m + 7) & ~(i64)7) );
  p->pFree += (m + 7) & ~(i64)7;
}
void dsArenaReset(DsArena *p);
void dsArenaClear(DsArena *p);

/* Bytes handed out since the arena was last reset: what a batch of rows
** holds.  Not nByte, which counts the chunk a reset keeps, however large
** it grew: a batch measured by that would hold one row once its arena's
** kept chunk outgrew the batch's size. */
static inline i64 dsArenaUsed(const DsArena *p){
  return p->nByte - (p->pEnd - p->pFree);
}


/*************************************************************************
** The statistics of a run (stats.c)
*/
/* Timing phases reported in ds_last_stats().ms */
#define DS_PHASE_PLAN   0
#define DS_PHASE_BUILD  1
#define DS_PHASE_PROBE  2
#define DS_PHASE_SORT   3
#define DS_PHASE_MERGE  4
#define DS_N_PHASE      5

typedef struct DsStats DsStats;
struct DsStats {
  const char *zOperator;  /* "join", "cogroup", "cross" */
  const char *zHint;      /* the hint as given (canonical name) */
  const char *zJoinType;  /* INNER, LEFT_OUTER, ... or NULL */
  const char *zStrategy;  /* the strategy really used */
  int iBuild;             /* 0 left, 1 right, -1 none */
  i64 anRow[2];           /* rows read from left and right */
  i64 nOut;               /* rows produced */
  i64 nPartition;
  i64 nSpilled;           /* bytes written to spill files */
  i64 nPeakMem;
  char *zReason;          /* why this strategy (sqlite3_malloc'd) */
  int bLost;              /* memory ran out while writing them */
  double aMs[DS_N_PHASE];
  int bComplete;          /* the run reached its end (its last row) */
  int rcStop;             /* the error the operator failed with, or 0 */
  const char *zStoppedIn; /* the step it was in then */
  char *zMessage;         /* the statement's message then (sqlite3_malloc'd) */
  int nThread;            /* threads that worked, the caller's included */
  i64 nReadConn;          /* extra connections that read inputs */
  char *azRead[2];        /* how each input was read, or NULL (malloc'd) */
};

void dsStatsInit(DsStats *p, const char *zOperator);
void dsStatsPhase(DsStats *p, int ePhase, double *ptPrev);
double dsNowMs(void);
void dsStatsPublish(DsConn *pConn, DsStats *p);
void dsStatsClear(DsStats *p);
int dsRegisterStats(sqlite3 *db, DsConn *pConn);

/* The layers above the connection, each on those before it. */
#include "dsrow.h"
#include "dsexec.h"
#include "dsops.h"
#include "dsvtab.h"

/*************************************************************************
** Modules and functions
*/
int dsRegisterJoinVtab(sqlite3 *db, DsConn *pConn,
                       void (*xFreeConn)(void *));
int dsRegisterPlan(sqlite3 *db, DsConn *pConn);
int dsRegisterAggregates(sqlite3 *db, DsConn *pConn);

int dsRegisterKeyStats(sqlite3 *db, DsConn *pConn);   /* key_stats.c */

/* Flags newer SQLite headers define; older SQLite ignores unknown bits. */
#ifndef SQLITE_RESULT_SUBTYPE
# define SQLITE_RESULT_SUBTYPE 0x001000000
#endif
int dsRegisterCoGroupVtab(sqlite3 *db, DsConn *pConn);
int dsRegisterCrossVtab(sqlite3 *db, DsConn *pConn);

#endif /* DATASET_INT_H */
