/*
** dsops.h: layer 6 of docs/ARCHITECTURE.md, the operators as the SQL faces
** call them: the equi-join and its strategies, coGroup, the cross product.
** Included by dataset_int.h alone, after dsexec.h.  The hash table and the
** plan of ds_join_plan() are private to their files: dshash.h, dsplan.h.
*/
#ifndef DSOPS_H
#define DSOPS_H

/*************************************************************************
** Equi-joins (join.c, hashtable.c, hashjoin.c, sort.c, mergejoin.c)
*/
typedef struct DsJoinSpec DsJoinSpec;
struct DsJoinSpec {
  const char *zFunc;      /* the SQL function or module, for messages */
  DsInput *apIn[2];       /* left and right inputs */
  int nKey;               /* key columns per side */
  int *aaiKey[2];         /* their column numbers in each input */
  int anPay[2];           /* other columns to carry, per side */
  int *aaiPay[2];         /* their column numbers in each input */
  int eHint;              /* DS_HINT_* */
  int eType;              /* DS_JOIN_* */
  int bWantOrder;         /* the query wants rows in key order */
  int bLimit;             /* the query stops early (a LIMIT): stream */
  i64 anRowHint[2];       /* rows of each input if known, else -1 */
};

/*
** A running join hands out pairs: ap[0] is the left row, ap[1] the right
** row; either is NULL for the missing side of an outer-join row.  The
** rows stay valid until the next call.
**
** A strategy may make more than one pair per call of xNext: it returns
** the first in ap[] and queues the others in apQueue, two row pointers
** per pair, which dsJoinNext() hands out before calling xNext again; the
** queued rows must stay valid until then.  A strategy that makes one
** pair per call leaves nQueue 0.  An error ends the join, and pairs still
** queued then are dropped with the statement.
*/
typedef struct DsPairIter DsPairIter;
struct DsPairIter {
  int (*xNext)(DsPairIter *, DsRow **ap);     /* SQLITE_ROW/DONE/err */
  void (*xClose)(DsPairIter *);
  DsRow **apQueue;        /* pairs made ahead */
  int nQueue;             /* pairs in apQueue */
  int iQueue;             /* pairs of them handed out */
};

typedef struct DsJoin DsJoin;
int dsJoinOpen(DsConn *pConn, const DsJoinSpec *pSpec, DsJoin **ppJoin,
               char **pzErr);
int dsJoinNext(DsJoin *p, DsRow **ap, char **pzErr);
void dsJoinClose(DsJoin *p);

/* OPTIMIZER_CHOOSES (plan.c) */
int dsChooseStrategy(DsOp *pOp, const DsJoinSpec *pSpec,
                     int *peStrategy, char **pzReason);



int dsHashJoinOpen(DsOp *pOp, int iBuild, int bRepartition,
                   DsPairIter **ppIter);
int dsMergeJoinOpen(DsOp *pOp, DsPairIter **ppIter);

/*************************************************************************
** coGroup (cogroup.c): every distinct key of either input with the group
** of rows each side has for it.  Groups come in DS_ORDER_GROUP order: the
** NULL-key group of the left side, then that of the right side (they
** never meet), then the other keys ascending.  Each side's group is
** counted, and made into a JSON array of row objects where asked for.
*/
typedef struct DsCoGroupSpec DsCoGroupSpec;
struct DsCoGroupSpec {
  const char *zFunc;      /* the SQL function or module, for messages */
  DsInput *apIn[2];       /* left and right inputs */
  int nKey;               /* key columns per side */
  int *aaiKey[2];         /* their column numbers in each input */
  int abJson[2];          /* make the JSON array of each side's group */
};

typedef struct DsCoGroup DsCoGroup;
int dsCoGroupOpen(DsConn *pConn, const DsCoGroupSpec *pSpec,
                  DsCoGroup **ppGroup, char **pzErr);
int dsCoGroupNext(DsCoGroup *p, char **pzErr);
const DsRow *dsCoGroupKey(const DsCoGroup *p);
i64 dsCoGroupCount(const DsCoGroup *p, int iSide);
DsText *dsCoGroupJson(DsCoGroup *p, int iSide);
void dsCoGroupClose(DsCoGroup *p);

/*************************************************************************
** Cross product (cross.c).  Hints name the side to buffer (Flink's
** crossWithHuge and crossWithTiny); the other side is streamed once.
*/
#define DS_CROSS_OPTIMIZER    0
#define DS_CROSS_FIRST_SMALL  1
#define DS_CROSS_SECOND_SMALL 2
#define DS_N_CROSS_HINT       3
extern const char *const dsCrossHintName[DS_N_CROSS_HINT];

int dsParseCrossHintText(const char *zFunc, const char *z, int *peHint,
                         char **pzErr);
int dsParseCrossHint(const char *zFunc, sqlite3_value *pVal, int *peHint,
                     char **pzErr);

typedef struct DsCrossSpec DsCrossSpec;
struct DsCrossSpec {
  const char *zFunc;      /* the SQL function or module, for messages */
  DsInput *apIn[2];       /* left and right inputs */
  int anCol[2];           /* columns to carry from each side */
  int *aaiCol[2];         /* their column numbers in each input */
  int eHint;              /* DS_CROSS_* */
};

typedef struct DsCross DsCross;
int dsCrossOpen(DsConn *pConn, const DsCrossSpec *pSpec, DsCross **ppCross,
                char **pzErr);
int dsCrossNext(DsCross *p, DsRow **ap, char **pzErr);
void dsCrossClose(DsCross *p);

#endif /* DSOPS_H */
