/*
** dsexec.h: layers 3 to 5 of docs/ARCHITECTURE.md, the executor every
** operator runs on: dataset inputs, their readers and sources (DsInput,
** DsSource), the operator context (DsOp: budget, interrupts, errors, side
** names, hints), spill files, row buffers and the block nested loop, the
** sorter and the merge of two sorted inputs.  Included by dataset_int.h
** alone, after dsrow.h.
*/
#ifndef DSEXEC_H
#define DSEXEC_H

/*************************************************************************
** Dataset inputs and keys (input.c)
*/
typedef struct DsInput DsInput;
struct DsInput {
  char *zText;            /* the argument as given, for messages */
  char *zBody;            /* one SELECT that yields the whole input */
  char *zSchema;          /* schema of a named table or view, or NULL */
  char *zName;            /* name of a table or view, NULL for a query */
  int bPlainScan;         /* zBody scans one table plainly: see input.c */
  int nCol;               /* columns of the input */
  char **azCol;           /* their names, made unique (id, id_2, ...) */
  char **azDecl;          /* their declared types; entries may be NULL */
  char **azColl;          /* their collations other than BINARY, where
                          ** known (see dsColumnCollation); or NULL */
};

int dsInputOpen(sqlite3 *db, const char *zFunc, const char *zSide,
                const char *zText, DsInput **ppIn, char **pzErr);
void dsInputFree(DsInput *pIn);
int dsInputKeys(const char *zFunc, const char *zArg, const DsInput *pIn,
                const char *zSide, const char *zKeys, int *pnKey,
                int **paiKey, char **pzErr);
char *dsInputColumnList(const DsInput *pIn);
int dsInputFromValue(sqlite3 *db, const char *zFunc, const char *zSide,
                     sqlite3_value *pVal, DsInput **ppIn, char **pzErr);
int dsKeysFromValue(const char *zFunc, const char *zArg, const DsInput *pIn,
                    const char *zSide, sqlite3_value *pVal, int *pnKey,
                    int **paiKey, char **pzErr);
int dsInputOpenPair(sqlite3 *db, const char *zFunc, sqlite3_value **apArg,
                    DsInput **apIn, int **aaiKey, int *pnKey, char **pzErr);
int dsCheckKeyCounts(const char *zFunc, const int *anKey, char **pzErr);
int dsIsNoMem(int rc);
char *dsPrepareError(sqlite3 *db, const char *zFunc, const char *zSide,
                     const char *zText, const char *zSql);


/*
** A source of rows: an input being read, a spill file, a row buffer.
** xNext hands out one row; xBatch, where a source has it, up to nMax at
** once (see dsSourceBatch), which for an input is far cheaper.
** xKeysFirst, where a source has it, is told before the first row is read
** that its rows will be read through a filter (dsSourceKeysFirst).
*/
typedef struct DsSource DsSource;
struct DsSource {
  int (*xNext)(DsSource *, DsArena *, DsRow **);   /* SQLITE_ROW/DONE/err */
  int (*xBatch)(DsSource *, DsArena *, DsRow **, int, i64, DsRowFilter *,
                int *);                             /* or NULL */
  int (*xKeysFirst)(DsSource *, DsRowFilter *, int *);  /* or NULL */
  void (*xClose)(DsSource *);
  void (*xStop)(DsSource *);  /* or NULL: stop work in progress (workers)
                              ** before what it was given dies: a filter */
  int (*xStaged)(DsSource *, const DsRowStage *, DsStaged **, int *);
                              /* or NULL: see dsSourceStaged */
  i64 nRow;               /* rows read so far (a filter's rejects too) */
  char *zErr;             /* message of the last error, or NULL */
  char *zRead;            /* how it is read, for ds_last_stats(), or NULL;
                          ** freed by xClose */
  int nWorker;            /* threads reading it besides the caller's */
  int nStager;            /* threads besides the caller's that ran an
                          ** operator's stage on its rows, reading none */
};

void dsStatsSource(DsStats *p, int iSide, const DsSource *pSrc);  /* stats.c */
int dsSourceNextOfBatch(DsSource *pSrc, DsArena *pArena, DsRow **ppRow);
int dsSourceBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow, int nMax,
                  i64 nMaxByte, DsRowFilter *pFilter, int *pnRow);
int dsSourceKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                      int *pbKeysFirst);
int dsSourceStaged(DsSource *pSrc, const DsRowStage *pStage,
                   DsStaged **paOut, int *pnOut);
int dsRegisterReader(sqlite3 *db);

/*
** Batches of rows staged on a worker, ahead of the caller (stageahead.c).
** A DsStageFill reads up to nMax rows into pArena (reset) and aRow[], and
** stops once they take nMaxByte bytes: SQLITE_OK with at least one row,
** SQLITE_DONE if no row follows them (perhaps none), or an error.
*/
typedef struct DsStageAhead DsStageAhead;
typedef int (*DsStageFill)(void *pArg, DsArena *pArena, DsRow **aRow,
                           int nMax, i64 nMaxByte, int *pnRow);
int dsStageAheadOpen(DsConn *pConn, const DsRowStage *pStage,
                     DsStageFill xFill, void *pFillArg, int bWorkerFills,
                     i64 nSlotByte, int (*xCheck)(void *), void *pCheckArg,
                     DsStageAhead **ppAhead);
i64 dsStageAheadBytes(const DsConn *pConn, i64 nSlotByte, i64 nWidest);
int dsStageAheadNext(DsStageAhead *a, DsStaged **paOut, int *pnOut,
                     int *pnRow);
int dsStageAheadHasWorker(const DsStageAhead *a);
void dsStageAheadStop(DsStageAhead *a);
void dsStageAheadFree(DsStageAhead *a);
#ifdef DS_TEST_HOOKS
void dsStageAheadTest(int bNoThread, int *pnWorker, int *pnCaller);
#endif
void dsReaderStageAhead(DsSource *pSrc);                   /* reader.c */

int dsReaderOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                 int nKey, const int *aiKey, int nPay, const int *aiPay,
                 DsSource **ppSrc, char **pzErr);          /* rangeread.c */
int dsReaderCountsAhead(const DsSource *pSrc);             /* rangeread.c */
int dsReaderCountAhead(DsSource *pSrc, i64 nCap);
int dsReaderCountWait(DsSource *pSrc, i64 *pnRow, int *pbAtLeast);
int dsSerialReaderOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                       int nKey, const int *aiKey, int nPay,
                       const int *aiPay, DsSource **ppSrc, char **pzErr);
int dsReaderSetRange(DsSource *pSrc, i64 iFirst, i64 iLast);
const char *dsReaderSqlOf(DsSource *pSrc);
void dsReaderCountRows(DsSource *pSrc, i64 *aRowAt);
int dsInputEstimateRows(DsConn *pConn, const DsInput *pIn, i64 nCap,
                        int bCapPlain, i64 *pnRow, int *pbAtLeast);
int dsInputQuickRows(DsConn *pConn, const DsInput *pIn, i64 *pnRow);
int dsInputSpanRows(DsConn *pConn, const DsInput *pIn, i64 *pnRow);
int dsInputSampleRowBytes(DsConn *pConn, const DsInput *pIn, int nKey,
                          const int *aiKey, int nPay, const int *aiPay,
                          i64 *pnBytes);
i64 dsInputStat1Count(sqlite3 *db, const DsInput *pIn);
int dsInputPlanColumns(const DsInput *pIn, int nKey, const int *aiKey,
                       int bAll, const u8 *aWant, int **paiSlot,
                       int **paiPay, int *pnPay);

/* JSON of keys and rows (json.c) */
void dsJsonArray(DsText *pOut, const DsValue *aVal, int n);
void dsJsonKey(DsText *pOut, const DsValue *aVal, int nKey);
void dsKeyResult(sqlite3_context *ctx, const DsValue *aVal, int nKey,
                 DsText *pText, const char *zFunc);
void dsJsonObject(DsText *pOut, const DsInput *pIn, const int *aiSlot,
                  const DsValue *aVal);

/*************************************************************************
** The operator layer (operator.c): the context every operator runs in,
** the names of the sides, hints and join types, and the choice of the
** side to build on.  Every operator and every lower layer (sort.c,
** spill.c, rowbuf.c, hashtable.c) uses it; it calls none of them.
*/
/* The name of side i (0 or 1) in messages and statistics.  Inline: every
** layer names sides, the lowest too. */
static inline const char *dsSideName(int i){
  assert( i==0 || i==1 );
  return i ? "right" : "left";
}

#define DS_HINT_OPTIMIZER         0
#define DS_HINT_BROADCAST_FIRST   1
#define DS_HINT_BROADCAST_SECOND  2
#define DS_HINT_REPARTITION_FIRST 3
#define DS_HINT_REPARTITION_SECOND 4
#define DS_HINT_SORT_MERGE        5
#define DS_N_HINT                 6

/* A join type is which sides keep their unmatched rows. */
#define DS_KEEP_LEFT   0x01
#define DS_KEEP_RIGHT  0x02
#define DS_JOIN_INNER  0
#define DS_JOIN_LEFT   DS_KEEP_LEFT
#define DS_JOIN_RIGHT  DS_KEEP_RIGHT
#define DS_JOIN_FULL   (DS_KEEP_LEFT | DS_KEEP_RIGHT)

extern const char *const dsHintName[DS_N_HINT];
extern const char *const dsJoinTypeName[4];

int dsParseHint(const char *zFunc, sqlite3_value *pVal, int *peHint,
                char **pzErr);
int dsParseJoinType(const char *zFunc, sqlite3_value *pVal, int *peType,
                    char **pzErr);
int dsParseHintText(const char *zFunc, const char *z, int *peHint,
                    char **pzErr);
int dsParseJoinTypeText(const char *zFunc, const char *z, int *peType,
                        char **pzErr);
int dsCheckStrictHint(DsConn *pConn, const char *zFunc, int eHint,
                      int eType, char **pzErr);

/* The shape of a join hint's strategy (dsHintShape[eHint]): the side its
** hash table is built on, -1 for none, and whether it partitions both
** sides.  dsHashHint() is the hint of a hash strategy of that shape. */
typedef struct DsHintShape DsHintShape;
struct DsHintShape {
  signed char iBuild;     /* 0 left, 1 right, -1 none */
  signed char bRepartition;
};
extern const DsHintShape dsHintShape[DS_N_HINT];
static inline int dsHashHint(int iBuild, int bRepartition){
  assert( (iBuild==0 || iBuild==1) && (bRepartition==0 || bRepartition==1) );
  return DS_HINT_BROADCAST_FIRST + iBuild + 2*bRepartition;
}

/*
** A running operator: its connection, its share of the memory budget,
** its statistics, its two inputs.  Strategies, sorts and spills take it.
*/
typedef struct DsOp DsOp;
struct DsOp {
  DsConn *pConn;
  const char *zFunc;      /* for messages */
  DsMem mem;
  DsStats stats;
  DsSource *apSrc[2];     /* left and right rows */
  int eType;              /* DS_JOIN_* */
  DsTicker tick;          /* interrupt checks; the step it is in */
  char *zErr;             /* message of the operator's own last error */
  int nSpillBuf;          /* I/O buffer per spill file; 0: the default */
  int nFreeFd;            /* spill files kept for reuse; -1: keep none */
  int nFreeFdAlloc;       /* room in aFreeFd */
  int *aFreeFd;           /* their descriptors, emptied (spill.c) */
  int bDone;              /* the operator has handed out its last row */
};

int dsOpInit(DsOp *pOp, DsConn *pConn, const char *zFunc,
             const char *zOperator);
void dsOpFinish(DsOp *pOp);
void dsOpStopSources(DsOp *pOp);
int dsOpCheckInterrupt(DsOp *pOp);
int dsOpError(DsOp *pOp, int rc, const char *zFormat, ...);
char *dsOpErrMsg(DsOp *pOp, int rc);
void dsOpEnded(DsOp *pOp);
void dsOpProgressInputs(DsOp *pOp, DsInput *const apIn[2]);

/* Call in CPU-only loops, once per row handled (dsOpTick) or with the
** weight of the work done (dsOpTickN; see interrupt.c). */
static inline int dsOpTick(DsOp *pOp){
  return dsTickerTick(&pOp->tick, DS_TICK_ROW);
}
static inline int dsOpTickN(DsOp *pOp, u32 n){
  return dsTickerTick(&pOp->tick, n);
}
/* The operator starts a step of its work (a static string). */
static inline void dsOpStep(DsOp *pOp, const char *zStep){
  dsTickerStep(&pOp->tick, zStep);
}

/*
** The tails of an operator's open and next: the message of a failed
** open (unless a reader already gave one); a row produced counted, or the
** operator ended with SQLITE_DONE (complete, its progress line erased)
** or an error, its message in *pzErr.
*/
static inline int dsOpOpenFailed(DsOp *pOp, int rc, char **pzErr){
  if( *pzErr==0 ) *pzErr = dsOpErrMsg(pOp, rc);
  return rc;
}
static inline int dsOpNextTail(DsOp *pOp, int rc, char **pzErr){
  assert( rc!=SQLITE_OK && !pOp->bDone );
  if( rc==SQLITE_ROW ){
    pOp->stats.nOut++;
    return rc;
  }
  pOp->bDone = 1;
  /* One call on either path (dsOpErrMsg erases the progress line too):
  ** the per-row path of the caller saves no more registers for it. */
  if( rc!=SQLITE_DONE ){
    *pzErr = dsOpErrMsg(pOp, rc);
  }else{
    pOp->stats.bComplete = 1;
    dsOpEnded(pOp);
  }
  return rc;
}

/* A table whose hash table (or a cross product's buffer) is no larger
** than this, and fits in half the budget, is built on beside a view or
** query without counting that (dsSmallBesideQuery, operator.c): the
** size of a CPU's cache, small enough that the other side, had it been
** the smaller, could have saved little. */
#define DS_CACHE_BYTES ((i64)16 << 20)

i64 dsRowCostEstimate(int nKey, int nPay, i64 nKeyBytes);
/*
** What the choice of the side to build on (a join's hash table, a cross
** product's buffer) knows of the two inputs.  The caller fills pOp,
** apIn[], anRowHint[], nKey, anPay[] and anCap[]; dsCountSides() finds
** anRow[] and abAtLeast[], counting only what the choice needs: a view or
** query by reading it ahead through pOp->apSrc[] (operator.c), which then
** hands the rows read to the operator, so that it runs once.
*/
typedef struct DsSides DsSides;
struct DsSides {
  DsOp *pOp;              /* the operator, its readers open; or NULL */
  DsInput *apIn[2];       /* left and right inputs */
  i64 anRowHint[2];       /* rows of each if known beforehand, else -1 */
  int nKey;               /* key columns carried per row (0: none) */
  int anPay[2];           /* other columns carried per row, per side */
  const int *aaiKey[2];   /* the key columns of each input */
  const int *aaiPay[2];   /* the other columns carried, of each input */
  i64 anCap[2];           /* count a view or query up to this many rows */
  i64 anRow[2];           /* rows found, -1 when unknown */
  int abAtLeast[2];       /* anRow[s] is only as far as the count went */
  i64 anRowBytes[2];      /* bytes a row costs, as measured; 0: unknown */
};
int dsCountSides(DsConn *pConn, DsSides *p);
int dsSmallBesideQuery(DsConn *pConn, const DsSides *p, i64 *pnBytes);
char *dsSmallBesideQueryText(DsConn *pConn, const DsSides *p, int s,
                             i64 nBytes, const char *zWhat);
int dsSmallerSide(const i64 *anRow, const int *abAtLeast);
char *dsSmallerSideText(const i64 *anRow, const int *abAtLeast, int iSmall);

/*
** Spill files (spill.c): a temporary file of rows in the row format,
** written in one pass, then read back in the order written, as often as
** needed.  Writes and reads go through large buffers.  The file is
** unlinked as soon as it is created, so it vanishes with its descriptor
** on every path (success, error, interrupt, crash).
*/
typedef struct DsSpill DsSpill;
int dsSpillOpen(DsOp *pOp, DsSpill **ppSpill);
int dsSpillWrite(DsSpill *p, const DsRow *pRow);
int dsSpillRewind(DsSpill *p);
int dsSpillRead(DsSpill *p, DsArena *pArena, DsRow **ppRow);
void dsSpillClose(DsSpill *p);
/* Written from a worker thread: detached first, attached again after. */
int dsSpillDetach(DsSpill *p);
int dsSpillWriteDetached(DsSpill *p, const DsRow *pRow);
int dsSpillFlushDetached(DsSpill *p);
int dsSpillAttach(DsSpill *p, int rc);
void dsSpillForget(DsSpill *p);
/* Read from a worker thread in the caller's place: the same. */
void dsSpillKeepBuffer(DsSpill *p);
void dsSpillDetachRead(DsSpill *p);
int dsSpillAttachRead(DsSpill *p);
i64 dsSpillBufferBytes(const DsOp *pOp);
#ifdef DS_TEST_HOOKS
/* Test-only fault hooks (spill.c, tests/testfixture.c). */
void dsSpillTestFault(int bWrite, int nCountdown, int eKind);
void dsSpillTestCalls(int bWrite, int *pnCall, int *pnFault);
#endif

/*
** Row buffers (rowbuf.c): copies of rows in the order appended, in memory
** while the budget allows and in a spill file after that; read back from
** the start as often as needed, through the embedded DsSource.
*/
typedef struct DsRowBuf DsRowBuf;
struct DsRowBuf {
  DsSource base;          /* reading it (xClose is not set: not owned) */
  DsOp *pOp;
  DsArena arena;          /* rows held in memory */
  DsRow *pHead, *pTail;   /* them, linked in order */
  i64 nMem;               /* rows in memory */
  DsSpill *pFile;         /* rows appended once memory ran out */
  i64 nMemMax;            /* bytes of rows to hold in memory at most;
                          ** 0: as many as the budget allows */
  i64 nReserve;           /* bytes of the budget a row kept in memory
                          ** must leave free */
  int bHoldFirst;         /* keep the first row in memory regardless */
  i64 nFileWidest;        /* the widest row in pFile (dsRowRoom()) */
  i64 nRow;               /* all rows */
  DsRow *pCur;            /* next row in memory to read */
  int bReadFile;
};
void dsRowBufInit(DsRowBuf *p, DsOp *pOp);
int dsRowBufAppend(DsRowBuf *p, const DsRow *pRow);
int dsRowBufRewind(DsRowBuf *p);
int dsRowBufNext(DsRowBuf *p, DsArena *pArena, DsRow **ppRow);
void dsRowBufClear(DsRowBuf *p);
void dsRowBufFree(DsRowBuf *p);

/* The cross product of a stream of rows, read once in blocks, and a row
** buffer, read once per block (rowbuf.c). */
typedef struct DsBlockCross DsBlockCross;
struct DsBlockCross {
  DsOp *pOp;
  DsSource *pOuter;       /* read once */
  DsRowBuf *pInner;       /* read once per block of pOuter */
  DsArena blockArena;     /* the rows of the current block */
  DsRow **aBlock;
  int nBlock, nAlloc, iBlock;
  u32 nBlockWidest;       /* nData of the widest row of the block */
  int bOuterDone;
  DsArena innerArena;     /* the current inner row, when read from a file */
  DsRow *pInnerRow;
  i64 nLoaded;            /* blocks loaded so far */
};
void dsBlockCrossInit(DsBlockCross *p, DsOp *pOp, DsSource *pOuter,
                      DsRowBuf *pInner);
int dsBlockCrossNext(DsBlockCross *p, DsRow **ppOuter, DsRow **ppInner);
void dsBlockCrossFree(DsBlockCross *p);

/*
** Sorting (sort.c): every row of a source, handed back in key order:
** DS_ORDER_KEY is SQLite's ORDER BY order of the key columns
** (dsRowKeyCompare), DS_ORDER_GROUP puts all NULL keys first as one group
** (dsRowGroupCompare).  dsSorterOpen() reads the whole source, sorting in
** memory and writing sorted runs to spill files past the budget;
** dsSorterNext() then merges.  A row stays valid until the next
** dsSorterNext() call on the same sorter.
*/
#define DS_ORDER_KEY   0
#define DS_ORDER_GROUP 1
typedef struct DsSorter DsSorter;
int dsSorterOpen(DsOp *pOp, DsSource *pSrc, int eOrder, DsSorter **ppSorter);
int dsSorterNext(DsSorter *p, DsRow **ppRow);
i64 dsSorterWidest(const DsSorter *p);
void dsSorterClose(DsSorter *p);

/*
** The merge of two sorted inputs by key (groupmerge.c), shared by the
** sort-merge join, coGroup and ds_join_plan's counting: both sides of an
** operator sorted in one order, read a key group at a time.  apHead[s] is
** the next row of side s (NULL at its end), valid until the next
** dsGroupMergeFetch(p, s).
*/
#define DS_MERGE_LEFT  0x01   /* dsGroupMergeSides(): the left side, */
#define DS_MERGE_RIGHT 0x02   /* the right side, or both have the key */
typedef struct DsGroupMerge DsGroupMerge;
struct DsGroupMerge {
  DsOp *pOp;
  int eOrder;             /* DS_ORDER_KEY or DS_ORDER_GROUP */
  DsSorter *apSorter[2];  /* both sides, in that order */
  DsRow *apHead[2];       /* the next row of each side; NULL at its end */
};
void dsGroupMergeInit(DsGroupMerge *p, DsOp *pOp, int eOrder);
int dsGroupMergeSort(DsGroupMerge *p, int s);
void dsGroupMergeClose(DsGroupMerge *p);

/* Make apHead[s] the next row of side s, NULL at its end.  Inline, as the
** tests below: each runs once or more per row merged. */
static inline int dsGroupMergeFetch(DsGroupMerge *p, int s){
  int rc;
  assert( p->apSorter[s]!=0 );
  rc = dsSorterNext(p->apSorter[s], &p->apHead[s]);
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  p->apHead[s] = 0;
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* The merge's order of the keys of two rows.  Keys of one INTEGER, the
** commonest, are in the same order either way (they are never NULL):
** they are compared inline before the order is looked at. */
static inline int dsGroupMergeCompare(const DsGroupMerge *p,
                                      const DsRow *a, const DsRow *b){
  i64 x, y;
  if( dsRowKeyInt(a, &x) && dsRowKeyInt(b, &y) ) return (x > y) - (x < y);
  if( p->eOrder==DS_ORDER_GROUP ) return dsRowGroupCompare(a, b);
  return dsRowKeyCompareAll(a, b);
}

/*
** Which sides have the next key group, the smallest key of the two heads:
** DS_MERGE_LEFT, DS_MERGE_RIGHT, both, or 0 when both sides are done.
** Equal keys with a NULL part never form one group: the left one first.
*/
static inline int dsGroupMergeSides(const DsGroupMerge *p){
  const DsRow *pL = p->apHead[0];
  const DsRow *pR = p->apHead[1];
  int c;
  if( pR==0 ) return pL ? DS_MERGE_LEFT : 0;
  if( pL==0 ) return DS_MERGE_RIGHT;
  c = dsGroupMergeCompare(p, pL, pR);
  if( c==0 && (pL->flags & DS_ROW_NULLKEY) ) return DS_MERGE_LEFT;
  return c<0 ? DS_MERGE_LEFT : c>0 ? DS_MERGE_RIGHT
             : DS_MERGE_LEFT|DS_MERGE_RIGHT;
}

/* Whether the head of side s belongs to the group of pKey, a row of that
** group (in key order, of a key without a NULL part): it is not at its
** end and its key is equal. */
static inline int dsGroupMergeInGroup(const DsGroupMerge *p, int s,
                                      const DsRow *pKey){
  assert( p->eOrder==DS_ORDER_GROUP || !(pKey->flags & DS_ROW_NULLKEY) );
  return p->apHead[s]!=0 && dsGroupMergeCompare(p, p->apHead[s], pKey)==0;
}

#endif /* DSEXEC_H */
