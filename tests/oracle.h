/*
** oracle.h: differential checking of the extension's operators against
** SQLite's own SQL, shared by the soak driver (tests/soak.c) and the fuzz
** target (tests/fuzz/fuzz_ops.c).
**
** A case (OrCase) is one operator run: ds_join_hint, ds_cogroup, ds_cross
** or ds_join_plan, in its table-valued or its CREATE VIRTUAL TABLE form,
** over two inputs with keys, a hint, a join type and a memory budget.
** orCheck() runs it, runs the same question in plain SQL over copies of
** the inputs, and compares the two as multisets of rows.  See oracle.c.
*/
#ifndef DS_TEST_ORACLE_H
#define DS_TEST_ORACLE_H

#include <sqlite3.h>
#include <stdio.h>

#define OR_MAX_KEY 4

/* Operators */
#define OR_JOIN     0
#define OR_COGROUP  1
#define OR_CROSS    2
#define OR_PLAN     3

/* Join types, as the sides whose unmatched rows are kept */
#define OR_INNER 0
#define OR_LEFT  1
#define OR_RIGHT 2
#define OR_FULL  3

/* One input of a case. */
typedef struct OrSide OrSide;
struct OrSide {
  const char *zArg;       /* the dataset text handed to the extension */
  const char *zVtabArg;   /* the same as a CREATE argument value, or NULL
                          ** to quote zArg in single quotes */
  const char *zSql;       /* a plain SELECT giving the same rows, for the
                          ** oracle (any column names) */
  const char *zKeyArg;    /* the key argument as text, or NULL: iKeyArg */
  int iKeyArg;            /* the key as an integer position (zKeyArg==0) */
  int nKey;               /* key columns ... */
  int aiKey[OR_MAX_KEY];  /* ... as 0-based positions in the input */
};

typedef struct OrCase OrCase;
struct OrCase {
  int eOp;                /* OR_JOIN .. OR_PLAN */
  int bVtab;              /* the CREATE VIRTUAL TABLE form */
  int bLiteral;           /* table-valued arguments as SQL literals, not
                          ** bound parameters */
  const char *zHint;      /* the hint as given; NULL: none */
  int bHintNull;          /* give the hint as SQL NULL (table-valued) */
  int eJoin;              /* OR_INNER .. OR_FULL */
  const char *zJoinArg;   /* the join type as given; NULL: none */
  OrSide a[2];            /* left, right */
  unsigned long long mProj;  /* CREATE form: the output columns selected
                          ** (bit i: column i; 0: all of them) */
  int nOrder;             /* CREATE form: ORDER BY terms ... */
  int aiOrder[OR_MAX_KEY];   /* ... output column positions */
  unsigned char aOrderFlag[OR_MAX_KEY];  /* OR_DESC, OR_NULLS_LAST */
  int bGroupBy;           /* CREATE form of a join: GROUP BY the ORDER BY
                          ** columns, with count(*) */
  int bCount;             /* table-valued form: only count(*) */
  sqlite3_int64 nMemLimit;   /* ds_config('memory_limit'); 0: leave it */
};
#define OR_DESC       0x01
#define OR_NULLS_LAST 0x02

/* What orCheck() found. */
#define OR_OK        0    /* same rows */
#define OR_MISMATCH  1    /* different rows, or a broken promise */
#define OR_FAILED    2    /* the extension refused or failed a valid case */
#define OR_ORACLE    3    /* the oracle itself failed: a harness bug */

typedef struct OrCtx OrCtx;

int orOpen(sqlite3 *db, OrCtx **pp);
void orClose(OrCtx *p);
int orCheck(OrCtx *p, const OrCase *pCase);
const char *orMessage(OrCtx *p);
sqlite3_int64 orRows(OrCtx *p);
sqlite3_int64 orOwnChanges(OrCtx *p);
void orReport(OrCtx *p, const OrCase *pCase, FILE *out);
char *orCaseSql(OrCtx *p, const OrCase *pCase);
char *orOracleSql(OrCtx *p, const OrCase *pCase);
char *orSqlLiteral(sqlite3_value *pVal);
void orDumpTable(sqlite3 *db, const char *zName, FILE *out);
char *orJsonValueSql(const char *zExpr);
int orTestThreads(sqlite3 *db);

#endif
