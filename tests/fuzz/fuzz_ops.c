/*
** fuzz_ops.c: a libFuzzer target that runs every operator of the
** extension on tables and arguments decoded from its input, and checks
** the results that can be checked against SQLite itself.
**
**     make fuzz                      build with clang -fsanitize=fuzzer,
**                                    address,undefined and run for
**                                    FUZZ_SECONDS over tests/fuzz/corpus
**     build/fuzz_replay FILE|DIR...  the same code without libFuzzer: run
**                                    each input once (make test does, on
**                                    the corpus)
**
** One input is one fresh in-memory database.  The input is read front to
** back as a stream of bytes (FzIn); once it runs out every further read
** gives 0, so every input decodes to something.  It holds, in order:
**
**   tables   1 to 3 tables: each a name, 1 to 4 columns (name and
**            declared type), 0 to 9 rows of values (integers, integral and
**            fractional reals, -0.0, infinities, numeric-looking text,
**            other text, blobs, NULLs, or raw bytes from the input)
**   ops      up to 16 operations, each an opcode byte and its arguments:
**            ds_join_hint, ds_cogroup, ds_cross (each in its table-valued
**            and CREATE VIRTUAL TABLE forms), ds_join_plan, a CREATE
**            VIRTUAL TABLE with an argument list of pieces or raw text,
**            ds_first / ds_min_by / ds_max_by / ds_key_stats, ds_config,
**            ds_last_stats, and changes to the tables (rows, columns,
**            DROP) between them
**
** Texts in the input end at a 0 byte (or its end), so an input reads
** almost like the SQL it makes.  Each argument starts with a mode byte:
** most modes make a valid argument (a table of the input named in one of
** the ways SQLite names things, a query over it, keys by name or
** position, a hint or join type as documented), the others a bad one
** (writing statements, more than one statement, garbage, names of
** nothing, wrong types, raw text from the input).  See docs/fuzzing.md.
**
** What is checked:
**   - nothing crashes, leaks or trips ASan/UBSan (the sanitizers);
**   - when every argument of an operator is valid, its result equals
**     SQLite's own (tests/oracle.c: joins of every hint and type, coGroup,
**     cross, join plans; and the aggregates here), and the run succeeds:
**     a mismatch or a refusal of a valid case abort()s, with a report;
**   - an error from an operator starts with the function's name (SPEC:
**     every message starts with it), except SQLite's own messages
**     for a statement that does not compile, out of memory and interrupts;
**   - no operator writes: total_changes() moves only for the input's own
**     changes to the tables, whatever the dataset texts say;
**   - after every operation the connection is usable, has no open
**     transaction and no statement left running, and the process has
**     no more file descriptors open than before (spill files closed).
**
** A progress handler interrupts any statement after FZ_MAX_STEPS virtual
** machine steps, so that a recursive query given as a dataset cannot
** hang the fuzzer; an interrupt is then an accepted outcome.
*/
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include "dataset.h"
#include "oracle.h"

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;

#define FZ_MAX_TABLE   3
#define FZ_MAX_COL     4
#define FZ_MAX_ROW     10
#define FZ_MAX_OP      16
#define FZ_MAX_TEXT    200
#define FZ_MAX_STEPS   2000000   /* VM steps per statement (progress ticks) */
#define FZ_TICK        1000      /* steps per progress-handler call */

/*************************************************************************
** Reading the input
*/
typedef struct FzIn FzIn;
struct FzIn {
  const unsigned char *a;
  size_t n;
  size_t i;
};

static unsigned fzByte(FzIn *p){ return p->i < p->n ? p->a[p->i++] : 0; }
static unsigned fzPick(FzIn *p, unsigned n){ return n ? fzByte(p) % n : 0; }
static int fzMore(FzIn *p){ return p->i < p->n; }

/* Bytes up to the next 0 byte (or the end), at most FZ_MAX_TEXT. */
static int fzText(FzIn *p, char *zOut){
  int n = 0;
  while( p->i < p->n && p->a[p->i]!=0 ){
    if( n<FZ_MAX_TEXT ) zOut[n++] = (char)p->a[p->i];
    p->i++;
  }
  if( p->i < p->n ) p->i++;   /* the terminator */
  zOut[n] = 0;
  return n;
}

static u64 fzU64(FzIn *p){
  u64 v = 0;
  int i;
  for(i=0; i<8; i++) v = (v << 8) | fzByte(p);
  return v;
}

/*************************************************************************
** The state of one input
*/
typedef struct FzTable FzTable;
struct FzTable {
  char zName[FZ_MAX_TEXT+1];
  int nCol;
  int bLive;              /* not dropped */
};

typedef struct Fz Fz;
struct Fz {
  sqlite3 *db;
  OrCtx *pOr;
  FzIn in;
  FzTable aTab[FZ_MAX_TABLE];
  int nTab;
  int bView;              /* view v0 exists */
  int nStep;              /* progress ticks of the running statement */
  char zUri[64];          /* the database, for a second connection */
  i64 nChange;            /* total_changes after the input's own writes */
  char azText[8][FZ_MAX_TEXT*4+64];   /* argument texts of one operation */
};

static void fzFail(Fz *p, const char *zFmt, ...){
  va_list ap;
  (void)p;
  va_start(ap, zFmt);
  fprintf(stderr, "fuzz_ops: ");
  vfprintf(stderr, zFmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  abort();
}

/* FUZZ_TRACE=1 in the environment: say what each operation did. */
static int fzTracing(void){
  static int bTrace = -1;
  if( bTrace<0 ) bTrace = getenv("FUZZ_TRACE")!=0 && getenv("FUZZ_TRACE")[0]!='0';
  return bTrace;
}

static void fzTrace(const char *zFmt, ...){
  va_list ap;
  if( !fzTracing() ) return;
  va_start(ap, zFmt);
  vfprintf(stdout, zFmt, ap);
  va_end(ap);
  fflush(stdout);
}

static int fzProgress(void *pArg){
  Fz *p = (Fz*)pArg;
  return ++p->nStep > FZ_MAX_STEPS/FZ_TICK;
}

/* Run SQL that belongs to the harness; its failures do not matter. */
static int fzExec(Fz *p, const char *zSql){
  p->nStep = 0;
  return sqlite3_exec(p->db, zSql, 0, 0, 0);
}

/* A change to the tables made by the input itself. */
static void fzWrite(Fz *p, const char *zSql){
  fzExec(p, zSql);
  p->nChange = sqlite3_total_changes64(p->db);
}

/*************************************************************************
** Values
*/
static const i64 aIntPool[] = {
  0, 1, -1, 2, 3, 42, 9007199254740992LL, 9007199254740993LL,
  INT64_MIN, INT64_MAX
};
static const double aRealPool[] = {
  0.0, -0.0, 1.0, 2.0, 0.5, 2.5, -1.5, 1e300, INFINITY, -INFINITY,
  9007199254740992.0, 9223372036854775808.0, -9223372036854775808.0, 0.1,
  42.0, 3.0
};
static const char *const azTextPool[] = {
  "", "a", "A", "1", "2.0", "a ", "\xc3\xa9", "x\"y", "\\", "line\nbreak",
  "[1]", "{}", "null", "42", "b", "\x01"
};
static const char *const azBlobPool[] = { "", "\x00", "a", "\x00\x01" };
static const int anBlobPool[] = { 0, 1, 1, 2 };

#define NPOOL(a) ((int)(sizeof(a)/sizeof((a)[0])))

/* Bind parameter i of pStmt to a value decoded from the input. */
static void fzBindValue(Fz *p, sqlite3_stmt *pStmt, int i){
  char zBuf[FZ_MAX_TEXT+1];
  unsigned k = fzByte(&p->in);
  switch( k % 8 ){
    case 0: case 1:
      sqlite3_bind_int64(pStmt, i, aIntPool[(k/8) % NPOOL(aIntPool)]);
      break;
    case 2:
      sqlite3_bind_double(pStmt, i, aRealPool[(k/8) % NPOOL(aRealPool)]);
      break;
    case 3:
      sqlite3_bind_text(pStmt, i, azTextPool[(k/8) % NPOOL(azTextPool)], -1,
                        SQLITE_TRANSIENT);
      break;
    case 4: {
      int j = (int)((k/8) % NPOOL(azBlobPool));
      sqlite3_bind_blob(pStmt, i, azBlobPool[j], anBlobPool[j], SQLITE_TRANSIENT);
      break;
    }
    case 5:
      sqlite3_bind_null(pStmt, i);
      break;
    case 6:
      if( k & 0x80 ){
        int n = fzText(&p->in, zBuf);
        sqlite3_bind_blob(pStmt, i, zBuf, n, SQLITE_TRANSIENT);
      }else{
        fzText(&p->in, zBuf);
        sqlite3_bind_text(pStmt, i, zBuf, -1, SQLITE_TRANSIENT);
      }
      break;
    default: {
      u64 b = fzU64(&p->in);
      if( k & 0x80 ){
        double r;
        memcpy(&r, &b, 8);
        sqlite3_bind_double(pStmt, i, r);   /* NaN becomes NULL */
      }else{
        sqlite3_bind_int64(pStmt, i, (i64)b);
      }
      break;
    }
  }
}

/*************************************************************************
** Tables
*/
static const char *const azTableName[] = {
  "t0", "t1", "t2", "odd name", "x\"y", "T0", "select", "ds:input", "[b]",
  "\xc3\xa9", "main", "temp"
};
static const char *const azColName[] = {
  "a", "b", "k", "A", "id", "left", "right", "key", "odd name", "x\"y", "0",
  "1", "left_a", "c0", "", "rowid", "a b, c", "hidden", "left_count", "B"
};
static const char *const azColType[] = {
  "", "", "", "INTEGER", "TEXT", "REAL", "BLOB", "NUMERIC", "ANY",
  "INTEGER HIDDEN", "VARCHAR(3)", "hidden", "COLLATE NOCASE", "INT"
};

static void fzMakeTable(Fz *p, int iTab){
  FzTable *pT = &p->aTab[iTab];
  char azCol[FZ_MAX_COL][FZ_MAX_TEXT+1];
  char *zCreate, *zInsert;
  sqlite3_stmt *pStmt = 0;
  unsigned k = fzByte(&p->in);
  int c, r, nRow;
  if( k==255 ) fzText(&p->in, pT->zName);
  else if( k < 160 ) snprintf(pT->zName, sizeof(pT->zName), "t%d", iTab);
  else snprintf(pT->zName, sizeof(pT->zName), "%s",
                azTableName[k % NPOOL(azTableName)]);
  pT->nCol = 1 + (int)fzPick(&p->in, FZ_MAX_COL);
  zCreate = sqlite3_mprintf("CREATE TABLE \"%w\"(", pT->zName);
  for(c=0; c<pT->nCol; c++){
    unsigned kn = fzByte(&p->in), kt = fzByte(&p->in);
    if( kn==255 ) fzText(&p->in, azCol[c]);
    else if( kn < 128 ) snprintf(azCol[c], sizeof(azCol[c]), "%c", 'a' + c);
    else snprintf(azCol[c], sizeof(azCol[c]), "%s", azColName[kn % NPOOL(azColName)]);
    zCreate = sqlite3_mprintf("%z%s\"%w\" %s", zCreate, c ? ", " : "", azCol[c],
                              azColType[kt % NPOOL(azColType)]);
  }
  zCreate = sqlite3_mprintf("%z)", zCreate);
  fzWrite(p, zCreate);
  sqlite3_free(zCreate);
  pT->bLive = 1;
  zInsert = sqlite3_mprintf("INSERT INTO \"%w\" VALUES(?1%s%s%s)", pT->zName,
                            pT->nCol>1 ? ",?2" : "", pT->nCol>2 ? ",?3" : "",
                            pT->nCol>3 ? ",?4" : "");
  if( sqlite3_prepare_v2(p->db, zInsert, -1, &pStmt, 0)!=SQLITE_OK ){
    /* Say, two columns of one name: the table was not made. */
    pT->bLive = 0;
  }
  sqlite3_free(zInsert);
  nRow = pStmt ? (int)fzPick(&p->in, FZ_MAX_ROW) : 0;
  for(r=0; r<nRow; r++){
    for(c=0; c<pT->nCol; c++) fzBindValue(p, pStmt, c+1);
    sqlite3_step(pStmt);
    sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  p->nChange = sqlite3_total_changes64(p->db);
}

/*************************************************************************
** Arguments
*/

/* One input of an operator, as the fuzzer made it. */
typedef struct FzData FzData;
struct FzData {
  const char *zArg;       /* the dataset text (NULL: not text, see pVal) */
  const char *zSql;       /* a plain query of the same rows, if valid */
  int eType;              /* SQLITE_TEXT, or the type of a bad argument */
  int nCol;               /* columns, if valid */
  char **azName;          /* their names, made unique as the SPEC says */
};

static const char *const azBadData[] = {
  "DELETE FROM t0", "DROP TABLE t0", "INSERT INTO t0 VALUES(1)",
  "WITH x AS (SELECT 1) DELETE FROM t0", "SELECT 1; SELECT 2",
  "SELECT 1; DELETE FROM t0", "(SELECT 1); DELETE FROM t0",
  "PRAGMA table_info(t0)", "nosuch", "", "   ", "main.", ".t0",
  "\"unterminated", "SELECT", "(SELECT 1", "t0; DROP TABLE t0",
  "temp.nosuch", "ATTACH ':memory:' AS x", "VACUUM", "SELECT * FROM t0 WHERE",
  "EXPLAIN SELECT 1", "(", ")", "--", "/*", "nosuch.t0", "main.nosuch",
  "SELECT * FROM ds_join_hint('t0', 't0', 0, 0)",
  "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT i FROM c",
  "SELECT ds_config('memory_limit', 1)", "VALUES", "WITH", "SELECT 1 -- x",
  "CREATE TABLE z(a)", "BEGIN", "SELECT * FROM \"ds:input\"",
  "SELECT 1 UNION SELECT 'a' UNION SELECT x'00'", "REPLACE INTO t0 VALUES(1)",
  "SELECT * FROM sqlite_schema", "SELECT zeroblob(10)", "SELECT 1 AS \"\""
};

/* The name of table iTab quoted in one of SQLite's ways. */
static int fzPlainName(const char *z);
static void fzQuoteName(char *zOut, size_t nOut, const char *zName, unsigned k){
  char *z = 0;
  int bPlain = fzPlainName(zName);
  switch( k % 5 ){
    case 0: if( bPlain ){ z = sqlite3_mprintf("%s", zName); break; }
            /* fall through */
    case 1: z = sqlite3_mprintf("\"%w\"", zName); break;
    case 2: z = sqlite3_mprintf("main.\"%w\"", zName); break;
    case 3: if( strchr(zName, ']')==0 ){ z = sqlite3_mprintf("[%s]", zName); break; }
            z = sqlite3_mprintf("\"%w\"", zName); break;
    default: z = sqlite3_mprintf("MAIN . \"%w\"", zName); break;
  }
  snprintf(zOut, nOut, "%s", z ? z : "");
  sqlite3_free(z);
}

/* Copy text z into zOut of nOut bytes, cut short if need be. */
static void fzCopy(char *zOut, size_t nOut, const char *z){
  size_t n = strlen(z);
  if( n>=nOut ) n = nOut - 1;
  memmove(zOut, z, n);
  zOut[n] = 0;
}

static void fzFreeNames(FzData *pD){
  int i;
  for(i=0; i<pD->nCol; i++) sqlite3_free(pD->azName[i]);
  sqlite3_free(pD->azName);
  pD->azName = 0;
  pD->nCol = 0;
}

/* Columns of a valid input: compile its plain query. 0 if it does not. */
static int fzColumns(Fz *p, FzData *pD){
  sqlite3_stmt *pStmt = 0;
  int i, j;
  if( sqlite3_prepare_v2(p->db, pD->zSql, -1, &pStmt, 0)!=SQLITE_OK
   || sqlite3_column_count(pStmt)==0 ){
    sqlite3_finalize(pStmt);
    return 0;
  }
  pD->nCol = sqlite3_column_count(pStmt);
  pD->azName = sqlite3_malloc64(sizeof(char*) * (size_t)pD->nCol);
  if( pD->azName==0 ) fzFail(p, "out of memory");
  for(i=0; i<pD->nCol; i++){
    const char *zName = sqlite3_column_name(pStmt, i);
    char *zU = sqlite3_mprintf("%s", zName);
    int iSuffix = 1;
    for(j=0; j<i; j++){
      if( sqlite3_stricmp(zU, pD->azName[j])==0 ){
        sqlite3_free(zU);
        zU = sqlite3_mprintf("%s_%d", zName, ++iSuffix);
        j = -1;
      }
    }
    pD->azName[i] = zU;
  }
  sqlite3_finalize(pStmt);
  return 1;
}

/*
** A dataset argument, in text slot iSlot (and iSlot+1 for its plain
** query).  Valid ones name a live table of the input or query it.
*/
static void fzDataset(Fz *p, int iSlot, FzData *pD){
  char *zArg = p->azText[iSlot];
  char *zSql = p->azText[iSlot+1];
  size_t nArg = sizeof(p->azText[0]);
  unsigned k = fzByte(&p->in);
  unsigned kForm = fzByte(&p->in);
  FzTable *pT = &p->aTab[fzPick(&p->in, (unsigned)p->nTab)];
  char zQ[FZ_MAX_TEXT*2+16];
  char *zS = 0, *zA = 0;     /* the plain query, the argument if other */
  memset(pD, 0, sizeof(*pD));
  pD->eType = SQLITE_TEXT;
  pD->zArg = zArg;
  if( k>=200 ){
    /* A bad argument. */
    pD->zSql = 0;
    switch( k % 8 ){
      case 0: fzText(&p->in, zArg); break;
      case 1: pD->eType = SQLITE_NULL; break;
      case 2: pD->eType = SQLITE_INTEGER; break;
      case 3: pD->eType = SQLITE_BLOB; break;
      case 4: pD->eType = SQLITE_FLOAT; break;
      default:
        fzCopy(zArg, nArg, azBadData[fzPick(&p->in, NPOOL(azBadData))]);
        break;
    }
    return;
  }
  if( !pT->bLive ){
    fzCopy(zArg, nArg, pT->zName);
    return;
  }
  fzQuoteName(zQ, sizeof(zQ), pT->zName, kForm);
  switch( k % 16 ){
    case 0: case 1: case 2:
      zS = sqlite3_mprintf("SELECT * FROM main.\"%w\"", pT->zName);
      zA = sqlite3_mprintf("%s", zQ);
      break;
    case 3:
      zS = sqlite3_mprintf("SELECT * FROM %s", zQ);
      break;
    case 4:
      zS = sqlite3_mprintf("SELECT * FROM %s WHERE rowid %% %u <> 0", zQ,
                           2 + kForm % 3);
      break;
    case 5:
      /* A column more, or every column twice: names then need suffixes. */
      if( kForm & 0x80 ){
        zS = sqlite3_mprintf("SELECT q.*, q.* FROM %s AS q", zQ);
      }else{
        zS = sqlite3_mprintf("SELECT *, %u AS %s FROM (SELECT * FROM %s) AS q",
                             kForm % 7, (kForm & 0x40) ? "\"B\"" : "dup", zQ);
      }
      break;
    case 6:
      zS = sqlite3_mprintf("SELECT * FROM %s", zQ);
      zA = sqlite3_mprintf("(%s); -- all of it", zS);
      break;
    case 7:
      zS = sqlite3_mprintf("WITH w AS (SELECT * FROM %s) SELECT * FROM w", zQ);
      break;
    case 8: {
      /* VALUES rows: literals of values decoded now. */
      sqlite3_stmt *pStmt = 0;
      int r, nRow = 1 + (int)fzPick(&p->in, 4), nC = 1 + (int)(kForm % 3), c;
      zS = sqlite3_mprintf("VALUES ");
      sqlite3_prepare_v2(p->db, "SELECT ?1", -1, &pStmt, 0);
      for(r=0; r<nRow && pStmt; r++){
        zS = sqlite3_mprintf("%z%s(", zS, r ? ", " : "");
        for(c=0; c<nC; c++){
          char *zV;
          fzBindValue(p, pStmt, 1);
          sqlite3_step(pStmt);
          zV = orSqlLiteral(sqlite3_column_value(pStmt, 0));
          zS = sqlite3_mprintf("%z%s%s", zS, c ? ", " : "", zV);
          sqlite3_free(zV);
          sqlite3_reset(pStmt);
        }
        zS = sqlite3_mprintf("%z)", zS);
      }
      sqlite3_finalize(pStmt);
      break;
    }
    case 9:
      zS = sqlite3_mprintf("SELECT * FROM %s ORDER BY 1 DESC", zQ);
      break;
    case 10:
      zS = sqlite3_mprintf("SELECT *, rowid AS r FROM %s", zQ);
      break;
    case 11:
      if( p->bView ){
        zS = sqlite3_mprintf("SELECT * FROM v0");
        zA = sqlite3_mprintf("%s", (kForm & 1) ? "v0" : "main.V0");
      }else{
        zS = sqlite3_mprintf("SELECT * FROM %s", zQ);
        zA = sqlite3_mprintf("%s", zQ);
      }
      break;
    case 12:
      zS = sqlite3_mprintf("SELECT * FROM %s", zQ);
      zA = sqlite3_mprintf("%s -- a comment at the end", zS);
      break;
    case 13:
      zS = sqlite3_mprintf("SELECT * FROM %s LIMIT %u", zQ, kForm % 5);
      break;
    case 14:
      zS = sqlite3_mprintf("SELECT x.*, y.* FROM %s AS x, %s AS y", zQ, zQ);
      break;
    default:
      zS = sqlite3_mprintf("SELECT * FROM %s", zQ);
      zA = sqlite3_mprintf(" %s ;;", zS);
      break;
  }
  fzCopy(zSql, nArg, zS ? zS : "");
  fzCopy(zArg, nArg, zA ? zA : zSql);
  sqlite3_free(zS);
  sqlite3_free(zA);
  pD->zSql = zSql;
  if( !fzColumns(p, pD) ) pD->zSql = 0;
}

/* Bind a dataset argument (text or a bad type). */
static void fzBindData(sqlite3_stmt *pStmt, int i, const FzData *pD){
  switch( pD->eType ){
    case SQLITE_NULL: sqlite3_bind_null(pStmt, i); break;
    case SQLITE_INTEGER: sqlite3_bind_int(pStmt, i, 0); break;
    case SQLITE_FLOAT: sqlite3_bind_double(pStmt, i, 0.0); break;
    case SQLITE_BLOB: sqlite3_bind_blob(pStmt, i, "t0", 2, SQLITE_STATIC); break;
    default: sqlite3_bind_text(pStmt, i, pD->zArg, -1, SQLITE_STATIC); break;
  }
}

/* A key argument: valid (column names and positions) or not. */
typedef struct FzKey FzKey;
struct FzKey {
  int bValid;
  int eType;              /* SQLITE_TEXT or SQLITE_INTEGER, or bad */
  const char *zText;
  int iInt;
  int nKey;
  int aiKey[OR_MAX_KEY];
};

static const char *const azBadKey[] = {
  "", ",", "a,", ",a", "\"unterminated", "0x1", "1.5", "+1", "-1", " 0 ",
  "\"a\" \"b\"", "99", "a,,b", "nosuch", "[a]", "`a`", "'a'", "a b", "1e0",
  "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
};

/*
** Can z be written without quotes?  Not a keyword either: a dataset text
** "select" is a query (the SPEC: text starting with SELECT), so a table
** named select must be quoted, as in SQL.
*/
static int fzPlainName(const char *z){
  const char *c;
  if( (z[0]>='0' && z[0]<='9') || z[0]==0 ) return 0;
  for(c=z; *c; c++){
    if( !((*c>='a' && *c<='z') || (*c>='A' && *c<='Z') || *c=='_'
          || (*c>='0' && *c<='9')) ) return 0;
  }
  return !sqlite3_keyword_check(z, (int)strlen(z));
}

/* Is z an identifier (keywords too: a key argument is no SQL)? */
static int fzIdentifier(const char *z){
  return fzPlainName(z) || sqlite3_keyword_check(z, (int)strlen(z));
}

static void fzKeys(Fz *p, int iSlot, const FzData *pD, int nWant, FzKey *pK){
  char *z = p->azText[iSlot];
  size_t nZ = sizeof(p->azText[0]);
  unsigned k = fzByte(&p->in);
  int i;
  memset(pK, 0, sizeof(*pK));
  pK->eType = SQLITE_TEXT;
  pK->zText = z;
  z[0] = 0;
  if( k>=224 || pD->nCol==0 ){
    switch( k % 6 ){
      case 0: fzText(&p->in, z); break;
      case 1: pK->eType = SQLITE_INTEGER; pK->iInt = (int)(k % 7) - 3 + 50*(k&1); break;
      case 2: pK->eType = SQLITE_NULL; break;
      case 3: pK->eType = SQLITE_FLOAT; break;
      case 4: pK->eType = SQLITE_BLOB; break;
      default: snprintf(z, nZ, "%s", azBadKey[fzPick(&p->in, NPOOL(azBadKey))]); break;
    }
    return;
  }
  pK->bValid = 1;
  pK->nKey = nWant>0 ? nWant : 1 + (int)(k % 3);
  if( pK->nKey > OR_MAX_KEY ) pK->nKey = OR_MAX_KEY;
  for(i=0; i<pK->nKey; i++) pK->aiKey[i] = (int)fzPick(&p->in, (unsigned)pD->nCol);
  if( pK->nKey==1 && (k & 0x60)==0x60 ){
    pK->eType = SQLITE_INTEGER;
    pK->iInt = pK->aiKey[0];
    return;
  }
  for(i=0; i<pK->nKey; i++){
    const char *zName = pD->azName[pK->aiKey[i]];
    unsigned kStyle = fzByte(&p->in);
    char *zOne;
    if( kStyle & 1 ){
      zOne = sqlite3_mprintf("%d", pK->aiKey[i]);
    }else if( fzIdentifier(zName) && (kStyle & 2) ){
      /* Names match without regard to case. */
      char *c;
      zOne = sqlite3_mprintf("%s", zName);
      for(c=zOne; c && *c && (kStyle & 4); c++){
        if( *c>='a' && *c<='z' ) *c -= 32; else if( *c>='A' && *c<='Z' ) *c += 32;
      }
    }else{
      zOne = sqlite3_mprintf("\"%w\"", zName);
    }
    if( i ) strncat(z, (kStyle & 8) ? " , " : ",", nZ - strlen(z) - 1);
    if( zOne ) strncat(z, zOne, nZ - strlen(z) - 1);
    sqlite3_free(zOne);
  }
}

static void fzBindKey(sqlite3_stmt *pStmt, int i, const FzKey *pK){
  switch( pK->eType ){
    case SQLITE_NULL: sqlite3_bind_null(pStmt, i); break;
    case SQLITE_INTEGER: sqlite3_bind_int(pStmt, i, pK->iInt); break;
    case SQLITE_FLOAT: sqlite3_bind_double(pStmt, i, 0.5); break;
    case SQLITE_BLOB: sqlite3_bind_blob(pStmt, i, "a", 1, SQLITE_STATIC); break;
    default: sqlite3_bind_text(pStmt, i, pK->zText, -1, SQLITE_STATIC); break;
  }
}

static const char *const azJoinHint[] = {
  "OPTIMIZER_CHOOSES", "BROADCAST_HASH_FIRST", "BROADCAST_HASH_SECOND",
  "REPARTITION_HASH_FIRST", "REPARTITION_HASH_SECOND", "REPARTITION_SORT_MERGE",
  "broadcast_hash_first", "Repartition_Sort_Merge"
};
static const char *const azCrossHint[] = {
  "OPTIMIZER_CHOOSES", "FIRST_IS_SMALL", "SECOND_IS_SMALL", "second_is_small"
};
static const char *const azJoinType[] = {
  "INNER", "LEFT_OUTER", "RIGHT_OUTER", "FULL_OUTER", "LEFT", "RIGHT", "FULL",
  "left_outer", "Full"
};
static const int aeJoinType[] = { 0, 1, 2, 3, 1, 2, 3, 1, 3 };
static const char *const azBadWord[] = {
  "FASTEST", "", " INNER", "OUTER", "BROADCAST", "CROSS", "NATURAL",
  "INNER JOIN", "FIRST_IS_SMALL", "REPARTITION_SORT_MERGE "
};

/* A hint or join type: valid (*pbValid), and the text given or NULL. */
typedef struct FzWord FzWord;
struct FzWord {
  int bValid;
  int eType;              /* SQLITE_TEXT, SQLITE_NULL, or bad types */
  const char *zText;      /* NULL: leave the argument out */
  int iValue;             /* index in the valid list */
};

static void fzWordArg(Fz *p, int iSlot, const char *const *azValid, int nValid,
                      FzWord *pW){
  unsigned k = fzByte(&p->in);
  char *z = p->azText[iSlot];
  memset(pW, 0, sizeof(*pW));
  pW->eType = SQLITE_TEXT;
  if( k<32 ){
    pW->bValid = 1;       /* left out */
    pW->iValue = 0;
  }else if( k<48 ){
    pW->bValid = 1;
    pW->eType = SQLITE_NULL;
    pW->zText = "";
  }else if( k<224 ){
    pW->bValid = 1;
    pW->iValue = (int)(k % (unsigned)nValid);
    pW->zText = azValid[pW->iValue];
  }else if( k<240 ){
    snprintf(z, sizeof(p->azText[0]), "%s", azBadWord[k % NPOOL(azBadWord)]);
    pW->zText = z;
  }else if( k<248 ){
    fzText(&p->in, z);
    pW->zText = z;
  }else{
    pW->eType = (k & 1) ? SQLITE_INTEGER : SQLITE_BLOB;
    pW->zText = "";
  }
}

static void fzBindWord(sqlite3_stmt *pStmt, int i, const FzWord *pW){
  switch( pW->eType ){
    case SQLITE_NULL: sqlite3_bind_null(pStmt, i); break;
    case SQLITE_INTEGER: sqlite3_bind_int(pStmt, i, 1); break;
    case SQLITE_BLOB: sqlite3_bind_blob(pStmt, i, "INNER", 5, SQLITE_STATIC); break;
    default: sqlite3_bind_text(pStmt, i, pW->zText, -1, SQLITE_STATIC); break;
  }
}

/*************************************************************************
** Checks after every statement
*/

/* Messages of SQLite's own that an operator may pass on. */
static int fzSqliteMessage(const char *zMsg){
  return strcmp(zMsg, "interrupted")==0 || strcmp(zMsg, "out of memory")==0
      || strncmp(zMsg, "no such module: ", 16)==0;   /* ds_join_plan */
}

/* An error of statement zFunc(...) must name the function first. */
static void fzCheckMessage(Fz *p, const char *zFunc, const char *zMsg,
                           const char *zSql){
  size_t n = strlen(zFunc);
  if( fzSqliteMessage(zMsg) ) return;
  if( strncmp(zMsg, zFunc, n)==0 && zMsg[n]==':' ) return;
  fzFail(p, "an error of %s does not start with '%s:': %s\n  in: %s",
         zFunc, zFunc, zMsg, zSql);
}

/* Run zSql with the bindings done by xBind; check its error message. */
static int fzRun(Fz *p, const char *zFunc, const char *zSql,
                 void (*xBind)(Fz*, sqlite3_stmt*, void*), void *pArg){
  sqlite3_stmt *pStmt = 0;
  int rc;
  p->nStep = 0;
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ){
    /* SQLite's own error: the statement does not compile. */
    fzTrace("  %s\n    -> does not compile: %s\n", zSql, sqlite3_errmsg(p->db));
    return rc;
  }
  if( xBind ) xBind(p, pStmt, pArg);
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    int i;
    for(i=0; i<sqlite3_column_count(pStmt); i++){
      (void)sqlite3_column_text(pStmt, i);
    }
  }
  fzTrace("  %s\n    -> %s\n", zSql, rc==SQLITE_DONE ? "ok" : sqlite3_errmsg(p->db));
  if( rc!=SQLITE_DONE && zFunc ){
    fzCheckMessage(p, zFunc, sqlite3_errmsg(p->db), zSql);
  }
  sqlite3_finalize(pStmt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

static void fzCheckState(Fz *p, const char *zWhat){
  sqlite3_stmt *pStmt;
  if( sqlite3_total_changes64(p->db)!=p->nChange ){
    fzFail(p, "%s wrote to the database (total_changes %lld, was %lld)",
           zWhat, sqlite3_total_changes64(p->db), p->nChange);
  }
  if( !sqlite3_get_autocommit(p->db) ){
    fzFail(p, "%s left a transaction open", zWhat);
  }
  if( (pStmt = sqlite3_next_stmt(p->db, 0))!=0 ){
    fzFail(p, "%s left a statement open: %s", zWhat, sqlite3_sql(pStmt));
  }
  p->nStep = 0;
  if( sqlite3_exec(p->db, "SELECT 1", 0, 0, 0)!=SQLITE_OK ){
    fzFail(p, "after %s the connection cannot run SELECT 1: %s", zWhat,
           sqlite3_errmsg(p->db));
  }
}

/* Is this failure of a valid case one that the case may have? */
static int fzAcceptedFailure(Fz *p, const char *zMsg){
  (void)p;
  return strstr(zMsg, "interrupted")!=0              /* the step limit */
      || strstr(zMsg, "Invalid JoinHint")!=0         /* strict_hints */
      || strstr(zMsg, "cannot declare the columns")!=0  /* names clash */
      || strstr(zMsg, "temp_dir")!=0                 /* set to nothing */
      || strstr(zMsg, "spill file")!=0;
}

/*************************************************************************
** Operators
*/
#define FZ_JOIN      0
#define FZ_COGROUP   1
#define FZ_CROSS     2
#define FZ_PLAN      3

typedef struct FzCall FzCall;
struct FzCall {
  int eOp;
  FzData a[2];
  FzKey k[2];
  FzWord hint, type;
};

static void fzBindCall(Fz *p, sqlite3_stmt *pStmt, void *pArg){
  FzCall *c = (FzCall*)pArg;
  int i = 0;
  (void)p;
  fzBindData(pStmt, ++i, &c->a[0]);
  fzBindData(pStmt, ++i, &c->a[1]);
  if( c->eOp!=FZ_CROSS ){
    fzBindKey(pStmt, ++i, &c->k[0]);
    fzBindKey(pStmt, ++i, &c->k[1]);
  }
  if( c->eOp!=FZ_COGROUP && (c->hint.zText || c->type.zText) ){
    if( c->hint.zText ) fzBindWord(pStmt, ++i, &c->hint);
    else sqlite3_bind_null(pStmt, ++i);
  }
  if( (c->eOp==FZ_JOIN || c->eOp==FZ_PLAN) && c->type.zText ){
    fzBindWord(pStmt, ++i, &c->type);
  }
}

static const char *const azFunc[] = {
  "ds_join_hint", "ds_cogroup", "ds_cross", "ds_join_plan"
};

/* The call with bound arguments, for a case with a bad argument. */
static void fzRunBad(Fz *p, FzCall *c){
  char *zSql;
  int nArg = c->eOp==FZ_CROSS ? 2 : 4;
  int i;
  if( c->eOp!=FZ_COGROUP && (c->hint.zText || c->type.zText) ) nArg++;
  if( (c->eOp==FZ_JOIN || c->eOp==FZ_PLAN) && c->type.zText ) nArg++;
  zSql = sqlite3_mprintf("SELECT * FROM %s(?1", azFunc[c->eOp]);
  for(i=2; i<=nArg; i++) zSql = sqlite3_mprintf("%z, ?%d", zSql, i);
  zSql = sqlite3_mprintf("%z)", zSql);
  fzRun(p, azFunc[c->eOp], zSql, fzBindCall, c);
  sqlite3_free(zSql);
}

/* The CREATE VIRTUAL TABLE value of an argument text. */
static char *fzVtabValue(const char *z, unsigned k){
  if( fzPlainName(z) && (k & 1) ) return sqlite3_mprintf("%s", z);
  return sqlite3_mprintf("'%q'", z);
}

/* The CREATE form of a case with a bad argument: the pieces as text. */
static void fzRunBadVtab(Fz *p, FzCall *c){
  static const char *const azMod[] = {
    "ds_join_hint", "ds_cogroup", "ds_cross", "ds_join_plan"
  };
  char *zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.fz_vt USING %s(",
                               azMod[c->eOp]);
  char *z;
  int s;
  for(s=0; s<2; s++){
    z = fzVtabValue(c->a[s].eType==SQLITE_TEXT ? c->a[s].zArg : "", (unsigned)s);
    zSql = sqlite3_mprintf("%z%s%s=%s", zSql, s ? ", " : "", s ? "right" : "left", z);
    sqlite3_free(z);
  }
  if( c->eOp!=FZ_CROSS ){
    for(s=0; s<2; s++){
      if( c->k[s].eType==SQLITE_INTEGER ){
        zSql = sqlite3_mprintf("%z, %s_key=%d", zSql, s ? "right" : "left",
                               c->k[s].iInt);
      }else{
        z = fzVtabValue(c->k[s].eType==SQLITE_TEXT ? c->k[s].zText : "", 1);
        zSql = sqlite3_mprintf("%z, %s_key=%s", zSql, s ? "right" : "left", z);
        sqlite3_free(z);
      }
    }
  }
  if( c->hint.zText && c->eOp!=FZ_COGROUP ){
    z = fzVtabValue(c->hint.zText, 1);
    zSql = sqlite3_mprintf("%z, hint=%s", zSql, z);
    sqlite3_free(z);
  }
  if( c->type.zText && c->eOp==FZ_JOIN ){
    z = fzVtabValue(c->type.zText, 0);
    zSql = sqlite3_mprintf("%z, join_type=%s", zSql, z);
    sqlite3_free(z);
  }
  zSql = sqlite3_mprintf("%z)", zSql);
  fzExec(p, "DROP TABLE IF EXISTS temp.fz_vt");
  if( fzRun(p, azMod[c->eOp], zSql, 0, 0)==SQLITE_OK ){
    fzRun(p, azMod[c->eOp], "SELECT * FROM temp.fz_vt", 0, 0);
    fzRun(p, azMod[c->eOp], "SELECT count(*) FROM temp.fz_vt", 0, 0);
  }
  fzExec(p, "DROP TABLE IF EXISTS temp.fz_vt");
  sqlite3_free(zSql);
}

/* Print what the oracle found and stop. */
static void fzMismatch(Fz *p, const OrCase *pCase, int e){
  int t;
  fprintf(stderr, "fuzz_ops: %s on a valid case: %s\n",
          e==OR_MISMATCH ? "MISMATCH" : e==OR_FAILED ? "FAILURE" : "ORACLE ERROR",
          orMessage(p->pOr));
  fprintf(stderr, "-- the tables:\n");
  for(t=0; t<p->nTab; t++){
    if( p->aTab[t].bLive ) orDumpTable(p->db, p->aTab[t].zName, stderr);
  }
  if( p->bView ) orDumpTable(p->db, "v0", stderr);
  orReport(p->pOr, pCase, stderr);
  fzFail(p, "stopping");
}

static void fzOperator(Fz *p, int eOp, int bVtab){
  FzCall c;
  unsigned kOpt = fzByte(&p->in);
  int bValid;
  memset(&c, 0, sizeof(c));
  c.eOp = eOp;
  fzDataset(p, 0, &c.a[0]);
  fzDataset(p, 2, &c.a[1]);
  if( eOp!=FZ_CROSS ){
    fzKeys(p, 4, &c.a[0], 0, &c.k[0]);
    fzKeys(p, 5, &c.a[1], c.k[0].bValid ? c.k[0].nKey : 0, &c.k[1]);
  }
  if( eOp==FZ_CROSS ){
    fzWordArg(p, 6, azCrossHint, NPOOL(azCrossHint), &c.hint);
  }else if( eOp!=FZ_COGROUP ){
    fzWordArg(p, 6, azJoinHint, NPOOL(azJoinHint), &c.hint);
    fzWordArg(p, 7, azJoinType, NPOOL(azJoinType), &c.type);
  }
  bValid = c.a[0].zSql && c.a[1].zSql;
  if( eOp!=FZ_CROSS ){
    bValid = bValid && c.k[0].bValid && c.k[1].bValid
          && c.k[0].nKey==c.k[1].nKey;
  }
  if( eOp!=FZ_COGROUP ) bValid = bValid && c.hint.bValid && c.type.bValid;
  if( bValid && bVtab && (c.hint.eType==SQLITE_NULL || c.type.eType==SQLITE_NULL) ){
    bValid = 0;   /* a CREATE argument cannot be NULL */
  }
  if( bValid ){
    OrCase oc;
    i64 nOwn;
    int s, e, i;
    memset(&oc, 0, sizeof(oc));
    oc.eOp = eOp;
    oc.bVtab = bVtab && eOp!=FZ_PLAN;
    oc.bLiteral = (kOpt & 1)!=0;
    oc.zHint = c.hint.eType==SQLITE_NULL ? 0 : c.hint.zText;
    oc.bHintNull = c.hint.eType==SQLITE_NULL;
    oc.eJoin = c.type.zText && c.type.eType==SQLITE_TEXT ? aeJoinType[c.type.iValue] : 0;
    oc.zJoinArg = c.type.eType==SQLITE_NULL ? 0 : c.type.zText;
    if( c.type.eType==SQLITE_NULL ){
      /* A NULL join type is the default; say it as NULL is not possible
      ** here, so leave it out. */
      oc.zJoinArg = 0;
    }
    for(s=0; s<2; s++){
      oc.a[s].zArg = c.a[s].zArg;
      oc.a[s].zSql = c.a[s].zSql;
      oc.a[s].zKeyArg = c.k[s].eType==SQLITE_INTEGER ? 0 : c.k[s].zText;
      oc.a[s].iKeyArg = c.k[s].iInt;
      oc.a[s].nKey = c.k[s].nKey;
      for(i=0; i<c.k[s].nKey; i++) oc.a[s].aiKey[i] = c.k[s].aiKey[i];
    }
    if( eOp==FZ_CROSS ) oc.a[0].nKey = oc.a[1].nKey = 0;
    if( oc.bVtab ){
      oc.mProj = (kOpt & 2) ? ((u64)fzByte(&p->in) | 1) : 0;
      if( (kOpt & 4) && eOp==FZ_JOIN ){
        int iSide = (kOpt >> 3) & 1;
        oc.nOrder = c.k[iSide].nKey;
        for(i=0; i<oc.nOrder; i++){
          oc.aiOrder[i] = c.k[iSide].aiKey[i] + (iSide ? c.a[0].nCol : 0);
          oc.aOrderFlag[i] = (unsigned char)((kOpt >> 4) & 3);
        }
        /* Key columns may repeat: ORDER BY a, a is fine, but keep the
        ** terms distinct for GROUP BY. */
        oc.bGroupBy = (kOpt & 0x40) && oc.nOrder==1;
      }else if( (kOpt & 4) && eOp==FZ_COGROUP ){
        oc.nOrder = c.k[0].nKey;
        for(i=0; i<oc.nOrder; i++){
          oc.aiOrder[i] = i;
          oc.aOrderFlag[i] = (unsigned char)((kOpt >> 4) & 3);
        }
      }
    }else if( eOp!=FZ_PLAN ){
      oc.bCount = (kOpt & 0x80)!=0;
    }
    oc.nMemLimit = 0;
    p->nStep = 0;
    nOwn = orOwnChanges(p->pOr);
    e = orCheck(p->pOr, &oc);
    if( fzTracing() ){
      char *zCase = orCaseSql(p->pOr, &oc);
      fzTrace("  valid case, checked against the oracle: %s (%lld rows)\n%s",
              e==OR_OK ? "same rows" : orMessage(p->pOr), orRows(p->pOr), zCase);
      sqlite3_free(zCase);
    }
    /* The oracle's copies of the inputs are its own writes. */
    p->nChange += orOwnChanges(p->pOr) - nOwn;
    if( (e==OR_FAILED || e==OR_ORACLE) && fzAcceptedFailure(p, orMessage(p->pOr)) ){
      e = OR_OK;
    }
    if( e!=OR_OK ) fzMismatch(p, &oc, e);
  }else if( bVtab ){
    fzRunBadVtab(p, &c);
  }else{
    fzRunBad(p, &c);
  }
  fzFreeNames(&c.a[0]);
  fzFreeNames(&c.a[1]);
  fzCheckState(p, azFunc[eOp]);
}

/*
** A second connection to the input's database (a shared-cache in-memory
** database) connects to main.fz_raw anew (xConnect, not xCreate), perhaps
** after its input changed or went away: querying it may fail, with the
** module's name first, but dropping it must work (the pivot_vtab trap:
** a table whose xConnect fails can be neither queried nor dropped).
*/
static void fzReconnect(Fz *p, const char *zMod){
  sqlite3 *db2 = 0;
  sqlite3 *dbMain = p->db;
  char *zErr = 0;
  int rc;
  if( sqlite3_open_v2(p->zUri, &db2, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, 0)
        !=SQLITE_OK
   || sqlite3_dataset_init(db2, &zErr, 0)!=SQLITE_OK ){
    fzFail(p, "cannot open a second connection: %s", sqlite3_errmsg(db2));
  }
  if( orTestThreads(db2)!=SQLITE_OK ){
    fzFail(p, "DS_TEST_THREADS: %s", sqlite3_errmsg(db2));
  }
  sqlite3_progress_handler(db2, FZ_TICK, fzProgress, p);
  p->db = db2;
  fzRun(p, zMod, "SELECT * FROM main.fz_raw", 0, 0);
  fzRun(p, zMod, "SELECT count(*) FROM main.fz_raw", 0, 0);
  p->nStep = 0;
  rc = sqlite3_exec(db2, "DROP TABLE main.fz_raw", 0, 0, &zErr);
  fzTrace("  reconnected; DROP TABLE main.fz_raw -> %s\n", rc ? zErr : "ok");
  if( rc!=SQLITE_OK && !fzSqliteMessage(zErr ? zErr : "") ){
    fzFail(p, "a second connection cannot drop %s table main.fz_raw: %s",
           zMod, zErr);
  }
  sqlite3_free(zErr);
  p->db = dbMain;
  if( sqlite3_close(db2)!=SQLITE_OK ) fzFail(p, "the second connection left statements");
}

/*
** A CREATE VIRTUAL TABLE with an argument list of pieces (name=value
** pairs, names and values from lists or the input) or raw text; then
** queries of the table, a change to its input, and queries again.
*/
static void fzVtabRaw(Fz *p){
  static const char *const azMod[] = {
    "ds_join_hint", "ds_cogroup", "ds_cross", "ds_join_plan", "ds_nosuch"
  };
  static const char *const azName[] = {
    "left", "right", "left_key", "right_key", "hint", "join_type", "LEFT",
    "bogus", "", "left ", "Right_Key"
  };
  static const char *const azValue[] = {
    "t0", "t1", "\"t0\"", "'t0'", "'SELECT * FROM t0'", "SELECT * FROM t0",
    "a", "'a,b'", "0", "1", "''", "INNER", "FULL", "REPARTITION_SORT_MERGE",
    "'DELETE FROM t0'", "\"odd name\"", "x'00'", "(a)", "'", "'a''b'", "NULL"
  };
  unsigned k = fzByte(&p->in);
  const char *zMod = azMod[k % NPOOL(azMod)];
  char zRaw[FZ_MAX_TEXT+1];
  char *zSql;
  int i, n;
  if( k & 0x80 ){
    fzText(&p->in, zRaw);
    zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE %s.fz_raw USING %s(%s)",
                           (k & 0x40) ? "main" : "temp", zMod, zRaw);
  }else{
    zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE %s.fz_raw USING %s(",
                           (k & 0x40) ? "main" : "temp", zMod);
    n = (int)fzPick(&p->in, 8);
    for(i=0; i<n; i++){
      unsigned kn = fzByte(&p->in), kv = fzByte(&p->in);
      const char *zV;
      if( kv==255 ){ fzText(&p->in, zRaw); zV = zRaw; }
      else zV = azValue[kv % NPOOL(azValue)];
      if( kn==255 ){
        zSql = sqlite3_mprintf("%z%s%s", zSql, i ? ", " : "", zV);
      }else{
        zSql = sqlite3_mprintf("%z%s%s=%s", zSql, i ? ", " : "",
                               azName[kn % NPOOL(azName)], zV);
      }
    }
    zSql = sqlite3_mprintf("%z)", zSql);
  }
  fzExec(p, "DROP TABLE IF EXISTS temp.fz_raw; DROP TABLE IF EXISTS main.fz_raw");
  if( fzRun(p, zMod, zSql, 0, 0)==SQLITE_OK ){
    unsigned kc = fzByte(&p->in);
    fzRun(p, zMod, "SELECT * FROM fz_raw", 0, 0);
    fzRun(p, zMod, "SELECT count(*) FROM fz_raw WHERE rowid>0", 0, 0);
    if( kc & 1 ){
      /* Change the first table under the virtual table, query again. */
      char *zAlter = (kc & 2)
          ? sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN fz_new", p->aTab[0].zName)
          : sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\"", p->aTab[0].zName);
      fzWrite(p, zAlter);
      sqlite3_free(zAlter);
      if( !(kc & 2) ) p->aTab[0].bLive = 0;
      else p->aTab[0].nCol++;
      fzRun(p, zMod, "SELECT * FROM fz_raw", 0, 0);
    }
    if( (kc & 4) && (k & 0x40) ) fzReconnect(p, zMod);
  }
  fzExec(p, "DROP TABLE IF EXISTS temp.fz_raw; DROP TABLE IF EXISTS main.fz_raw");
  p->nChange = sqlite3_total_changes64(p->db);
  sqlite3_free(zSql);
  fzCheckState(p, zMod);
}

/*************************************************************************
** Aggregates
*/

/* Compare two single-value queries exactly; abort if they differ. */
static void fzCompareOne(Fz *p, const char *zOurs, const char *zOracle){
  sqlite3_stmt *pA = 0, *pB = 0;
  int rcA, rcB;
  p->nStep = 0;
  if( sqlite3_prepare_v2(p->db, zOurs, -1, &pA, 0)!=SQLITE_OK
   || sqlite3_prepare_v2(p->db, zOracle, -1, &pB, 0)!=SQLITE_OK ){
    fzFail(p, "cannot compile a valid aggregate case: %s\n  in: %s\n  or: %s",
           sqlite3_errmsg(p->db), zOurs, zOracle);
  }
  rcA = sqlite3_step(pA);
  fzTrace("  valid aggregate, checked against the oracle:\n  %s\n  %s\n", zOurs, zOracle);
  if( rcA!=SQLITE_ROW && !fzAcceptedFailure(p, sqlite3_errmsg(p->db)) ){
    fzFail(p, "a valid aggregate case fails: %s\n  in: %s",
           sqlite3_errmsg(p->db), zOurs);
  }
  p->nStep = 0;
  rcB = sqlite3_step(pB);
  if( rcA==SQLITE_ROW && rcB==SQLITE_ROW ){
    sqlite3_value *a = sqlite3_column_value(pA, 0);
    sqlite3_value *b = sqlite3_column_value(pB, 0);
    char *zA = orSqlLiteral(a), *zB = orSqlLiteral(b);
    if( strcmp(zA, zB)!=0 || sqlite3_value_type(a)!=sqlite3_value_type(b) ){
      int t;
      fprintf(stderr, "-- the tables:\n");
      for(t=0; t<p->nTab; t++){
        if( p->aTab[t].bLive ) orDumpTable(p->db, p->aTab[t].zName, stderr);
      }
      fzFail(p, "MISMATCH of an aggregate: %s, the oracle %s\n  ours:   %s\n"
             "  oracle: %s", zA, zB, zOurs, zOracle);
    }
    sqlite3_free(zA);
    sqlite3_free(zB);
  }
  sqlite3_finalize(pA);
  sqlite3_finalize(pB);
}

static void fzAggregate(Fz *p){
  FzTable *pT = &p->aTab[fzPick(&p->in, (unsigned)p->nTab)];
  unsigned k = fzByte(&p->in);
  unsigned kn = fzByte(&p->in);
  char zV[32], zB[32];
  char *zT, *zOurs = 0, *zOracle = 0, *zH, *zWith;
  int n = (int)(kn % 5);        /* 0 is not a valid n */
  if( !pT->bLive ) return;
  snprintf(zV, sizeof(zV), "c%d", (int)((k >> 4) % (unsigned)pT->nCol));
  snprintf(zB, sizeof(zB), "c%d", (int)((k >> 6) % (unsigned)pT->nCol));
  /* The table's columns as c0, c1, ... (its own names may be anything),
  ** and fz_n, the row's place in the order the aggregates see. */
  {
    char *zCols = sqlite3_mprintf("c0");
    int c;
    for(c=1; c<pT->nCol; c++) zCols = sqlite3_mprintf("%z, c%d", zCols, c);
    zWith = sqlite3_mprintf("WITH x(%z, fz_n) AS (SELECT *, row_number() OVER ()"
                            " FROM main.\"%w\") ", zCols, pT->zName);
  }
  zT = sqlite3_mprintf("x");
  zH = orJsonValueSql(zV);
  switch( k % 6 ){
    case 0:
      if( n>0 ){
        zOurs = sqlite3_mprintf("%sSELECT ds_first(%s, %d) FROM %s", zWith,
                                zV, n, zT);
        zOracle = sqlite3_mprintf("%sSELECT json_group_array(%s) FROM"
                                  " (SELECT * FROM %s ORDER BY fz_n LIMIT %d)",
                                  zWith, zH, zT, n);
      }else{
        static const char *const azN[] = { "0", "-1", "'2'", "NULL", "1.5",
          "2.0", "x'01'", "9223372036854775807" };
        char *zSql = sqlite3_mprintf("%sSELECT ds_first(%s, %s) FROM %s", zWith,
                                     zV, azN[(kn/5) % NPOOL(azN)], zT);
        fzRun(p, "ds_first", zSql, 0, 0);
        sqlite3_free(zSql);
      }
      break;
    case 1:
      /* No row with a by: NULL, as the scalar subquery gives. */
      zOurs = sqlite3_mprintf("%sSELECT ds_min_by(%s, %s) FROM %s", zWith,
                              zV, zB, zT);
      zOracle = sqlite3_mprintf("%sSELECT (SELECT %s FROM %s WHERE %s IS NOT NULL"
                                " ORDER BY %s, fz_n LIMIT 1)", zWith, zV, zT, zB, zB);
      break;
    case 2:
      zOurs = sqlite3_mprintf("%sSELECT ds_max_by(%s, %s) FROM %s", zWith,
                              zV, zB, zT);
      zOracle = sqlite3_mprintf("%sSELECT (SELECT %s FROM %s WHERE %s IS NOT NULL"
                                " ORDER BY %s DESC, fz_n LIMIT 1)", zWith, zV, zT,
                                zB, zB);
      break;
    case 3:
      zOurs = sqlite3_mprintf(
          "%sSELECT json_extract(s, '$.rows') || ',' || json_extract(s, '$.nulls')"
          " || ',' || json_extract(s, '$.distinct') || ','"
          " || json_extract(s, '$.max_count') || ',' ||"
          " (SELECT group_concat(c) FROM (SELECT json_extract(value, '$[1]') AS c"
          "  FROM json_each(json_extract(s, '$.top')) ORDER BY c DESC))"
          " FROM (SELECT ds_key_stats(%s) AS s FROM %s)", zWith, zV, zT);
      zOracle = sqlite3_mprintf(
          "%sSELECT count(*) || ',' || (count(*) - count(%s)) || ',' ||"
          " count(DISTINCT %s) || ',' || (SELECT coalesce(max(n), 0) FROM"
          " (SELECT count(*) AS n FROM %s WHERE %s IS NOT NULL GROUP BY %s)) || ','"
          " || (SELECT group_concat(n) FROM (SELECT count(*) AS n FROM %s"
          "  WHERE %s IS NOT NULL GROUP BY %s ORDER BY n DESC LIMIT 10))"
          " FROM %s", zWith, zV, zV, zT, zV, zV, zT, zV, zV, zT);
      break;
    case 4: {
      /* Grouped and windowed: for the sanitizers. */
      char *zSql = sqlite3_mprintf(
          "%sSELECT %s, ds_first(%s, 2), ds_min_by(%s, %s), ds_max_by(%s, %s),"
          " ds_key_stats(%s) FROM %s GROUP BY %s", zWith, zB, zV, zV, zB, zV, zB,
          zV, zT, zB);
      fzRun(p, 0, zSql, 0, 0);
      sqlite3_free(zSql);
      zSql = sqlite3_mprintf(
          "%sSELECT ds_first(%s, %d) OVER (ORDER BY fz_n ROWS BETWEEN UNBOUNDED"
          " PRECEDING AND CURRENT ROW), ds_min_by(%s, %s) OVER (PARTITION BY %s)"
          " FROM %s", zWith, zV, 1 + n, zV, zB, zB, zT);
      fzRun(p, 0, zSql, 0, 0);
      sqlite3_free(zSql);
      break;
    }
    default: {
      /* Sliding frames: rows leave the frame (xInverse). */
      char *zSql = sqlite3_mprintf(
          "%sSELECT ds_first(%s, 2) OVER w, ds_min_by(%s, %s) OVER w,"
          " ds_max_by(%s, %s) OVER w FROM %s"
          " WINDOW w AS (ORDER BY fz_n ROWS 1 PRECEDING)",
          zWith, zV, zV, zB, zV, zB, zT);
      fzRun(p, 0, zSql, 0, 0);
      sqlite3_free(zSql);
      break;
    }
  }
  if( zOurs ) fzCompareOne(p, zOurs, zOracle);
  sqlite3_free(zOurs);
  sqlite3_free(zOracle);
  sqlite3_free(zH);
  sqlite3_free(zT);
  sqlite3_free(zWith);
  fzCheckState(p, "an aggregate");
}

/*************************************************************************
** Settings, statistics, changes
*/
static void fzConfig(Fz *p){
  static const char *const azName[] = {
    "memory_limit", "temp_dir", "threads", "strict_hints", "MEMORY_LIMIT",
    "", "nosuch", "memory_limit "
  };
  static const char *const azMem[] = {
    "1", "100", "'1K'", "'64KB'", "'1 MiB'", "0", "-5", "'1.5GB'", "'lots'",
    "NULL", "1e6", "x'00'", "'9999999999999999999999'", "'16 T'", "4096",
    "268435456", "'8k'", "' 2 GiB '"
  };
  static const char *const azTemp[] = {
    "'/tmp'", "''", "NULL", "'/no/such/dir'", "'/dev/null'", "1", "'/dev/shm'"
  };
  static const char *const azSmall[] = {
    "0", "1", "2", "'1'", "65", "-1", "'two'", "NULL", "1.0", "64"
  };
  unsigned k = fzByte(&p->in), kv = fzByte(&p->in);
  const char *zName = azName[k % NPOOL(azName)];
  const char *zValue;
  char *zSql;
  switch( k % NPOOL(azName) ){
    case 0: case 4: zValue = azMem[kv % NPOOL(azMem)]; break;
    case 1: zValue = azTemp[kv % NPOOL(azTemp)]; break;
    default: zValue = azSmall[kv % NPOOL(azSmall)]; break;
  }
  if( (k & 0xC0)==0xC0 ){
    zSql = sqlite3_mprintf("SELECT ds_config(%Q)", zName);
  }else if( (k & 0xC0)==0x80 ){
    zSql = sqlite3_mprintf("SELECT ds_config()");
  }else{
    zSql = sqlite3_mprintf("SELECT ds_config(%Q, %s)", zName, zValue);
  }
  fzRun(p, "ds_config", zSql, 0, 0);
  sqlite3_free(zSql);
  fzCheckState(p, "ds_config");
}

static void fzLastStats(Fz *p){
  sqlite3_stmt *pStmt = 0;
  p->nStep = 0;
  if( sqlite3_prepare_v2(p->db, "SELECT ds_last_stats(),"
                         " ds_last_stats() IS NULL OR json_valid(ds_last_stats())",
                         -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW
   && sqlite3_column_int(pStmt, 1)!=1 ){
    fzFail(p, "ds_last_stats() is not JSON: %s", sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
}

static void fzChange(Fz *p){
  FzTable *pT = &p->aTab[fzPick(&p->in, (unsigned)p->nTab)];
  unsigned k = fzByte(&p->in);
  char *zSql = 0;
  if( !pT->bLive ) return;
  switch( k % 5 ){
    case 0: case 1: {
      sqlite3_stmt *pStmt = 0;
      char *zIns = sqlite3_mprintf("INSERT INTO \"%w\" SELECT * FROM"
                                   " (SELECT ?1%s%s%s)", pT->zName,
                                   pT->nCol>1 ? ",?2" : "", pT->nCol>2 ? ",?3" : "",
                                   pT->nCol>3 ? ",?4" : "");
      if( sqlite3_prepare_v2(p->db, zIns, -1, &pStmt, 0)==SQLITE_OK ){
        int c;
        for(c=0; c<pT->nCol; c++) fzBindValue(p, pStmt, c+1);
        p->nStep = 0;
        sqlite3_step(pStmt);
      }
      sqlite3_finalize(pStmt);
      sqlite3_free(zIns);
      p->nChange = sqlite3_total_changes64(p->db);
      break;
    }
    case 2:
      zSql = sqlite3_mprintf("DELETE FROM \"%w\" WHERE rowid %% %u = 0",
                             pT->zName, 1 + (k/8) % 3);
      break;
    case 3:
      zSql = sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN \"%s\"", pT->zName,
                             (k & 0x80) ? "z" : "A");
      if( pT->nCol < 8 ) pT->nCol++;
      break;
    default:
      if( !p->bView ){
        zSql = sqlite3_mprintf("CREATE VIEW v0 AS SELECT * FROM \"%w\"%s",
                               pT->zName, (k & 0x80) ? " WHERE rowid % 2" : "");
        p->bView = 1;
      }
      break;
  }
  if( zSql ){
    fzWrite(p, zSql);
    sqlite3_free(zSql);
  }
  /* An ALTER that failed (a name taken) leaves the count as it was. */
  {
    sqlite3_stmt *pStmt = 0;
    char *zCount = sqlite3_mprintf("SELECT * FROM \"%w\"", pT->zName);
    if( sqlite3_prepare_v2(p->db, zCount, -1, &pStmt, 0)==SQLITE_OK ){
      pT->nCol = sqlite3_column_count(pStmt);
    }
    sqlite3_finalize(pStmt);
    sqlite3_free(zCount);
  }
  fzCheckState(p, "a change to the tables");
}

/*************************************************************************
** One input
*/
static int fzOpenFds(void){
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  if( d==0 ) return -1;
  while( readdir(d) ) n++;
  closedir(d);
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData);
int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  Fz fz;
  Fz *p = &fz;
  char *zErr = 0;
  int nFd0, nFd1, t, iOp;
  memset(p, 0, sizeof(*p));
  p->in.a = aData;
  p->in.n = nData;
  /* A shared-cache in-memory database, so that a second connection can
  ** open it (fzReconnect); gone when the last connection closes. */
  {
    static unsigned iDb = 0;
    snprintf(p->zUri, sizeof(p->zUri), "file:fz%u?mode=memory&cache=shared", ++iDb);
  }
  if( sqlite3_open_v2(p->zUri, &p->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                      | SQLITE_OPEN_URI, 0)!=SQLITE_OK ){
    fzFail(p, "cannot open");
  }
  if( sqlite3_dataset_init(p->db, &zErr, 0)!=SQLITE_OK ) fzFail(p, "init: %s", zErr);
  if( orOpen(p->db, &p->pOr)!=SQLITE_OK ) fzFail(p, "oracle");
  if( orTestThreads(p->db)!=SQLITE_OK ){
    fzFail(p, "DS_TEST_THREADS: %s", sqlite3_errmsg(p->db));
  }
  sqlite3_progress_handler(p->db, FZ_TICK, fzProgress, p);
  /* Spill files go to a memory file system when there is one (creating
  ** and removing thousands of them on a disk costs more than the rest),
  ** and never anywhere a temp_dir from the input might name. */
  fzExec(p, access("/dev/shm", W_OK)==0 ? "SELECT ds_config('temp_dir', '/dev/shm')"
                                        : "SELECT ds_config('temp_dir', '/tmp')");
  nFd0 = fzOpenFds();

  p->nTab = 1 + (int)fzPick(&p->in, FZ_MAX_TABLE);
  for(t=0; t<p->nTab; t++) fzMakeTable(p, t);
  if( fzByte(&p->in) & 1 ){
    char *z = sqlite3_mprintf("CREATE VIEW v0 AS SELECT * FROM \"%w\"",
                              p->aTab[0].zName);
    fzWrite(p, z);
    sqlite3_free(z);
    p->bView = 1;
  }
  for(iOp=0; iOp<FZ_MAX_OP && fzMore(&p->in); iOp++){
    unsigned op = fzByte(&p->in);
    fzTrace("op %d: %u\n", iOp, op % 16);
    switch( op % 16 ){
      case 0: case 1: fzOperator(p, FZ_JOIN, 0); break;
      case 2: fzOperator(p, FZ_JOIN, 1); break;
      case 3: fzOperator(p, FZ_COGROUP, 0); break;
      case 4: fzOperator(p, FZ_COGROUP, 1); break;
      case 5: fzOperator(p, FZ_CROSS, 0); break;
      case 6: fzOperator(p, FZ_CROSS, 1); break;
      case 7: fzOperator(p, FZ_PLAN, 0); break;
      case 8: fzVtabRaw(p); break;
      case 9: case 10: fzAggregate(p); break;
      case 11: fzConfig(p); break;
      case 12: fzLastStats(p); break;
      case 13: case 14: fzChange(p); break;
      default: fzOperator(p, FZ_JOIN, (op >> 4) & 1); break;
    }
  }
  fzLastStats(p);
  orClose(p->pOr);
  if( sqlite3_close(p->db)!=SQLITE_OK ) fzFail(p, "close: statements left open");
  nFd1 = fzOpenFds();
  if( nFd1!=nFd0 ) fzFail(p, "%d file descriptors open after the input, %d before",
                          nFd1, nFd0);
  return 0;
}

#ifdef FUZZ_REPLAY
/*
** The replay driver: run each file named (or each file in each directory
** named) through the target once, in name order, printing the name first
** so that a failure says which input it was.
*/
static int fzReplayFile(const char *zPath){
  FILE *f = fopen(zPath, "rb");
  unsigned char *a;
  long n;
  if( f==0 ){ perror(zPath); return 1; }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  a = malloc((size_t)n + 1);
  if( a==0 || fread(a, 1, (size_t)n, f)!=(size_t)n ){ fclose(f); return 1; }
  fclose(f);
  printf("%s\n", zPath);
  fflush(stdout);
  LLVMFuzzerTestOneInput(a, (size_t)n);
  free(a);
  return 0;
}

static int fzCmp(const void *a, const void *b){
  return strcmp(*(char *const*)a, *(char *const*)b);
}

int main(int argc, char **argv){
  int i, nFile = 0, nErr = 0;
  for(i=1; i<argc; i++){
    struct stat st;
    if( stat(argv[i], &st)==0 && S_ISDIR(st.st_mode) ){
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      char **az = 0;
      int n = 0, j;
      while( d && (e = readdir(d))!=0 ){
        if( e->d_name[0]=='.' ) continue;
        az = realloc(az, sizeof(char*) * (size_t)(n + 1));
        az[n++] = sqlite3_mprintf("%s/%s", argv[i], e->d_name);
      }
      if( d ) closedir(d);
      qsort(az, (size_t)n, sizeof(char*), fzCmp);
      for(j=0; j<n; j++){
        nErr += fzReplayFile(az[j]);
        nFile++;
        sqlite3_free(az[j]);
      }
      free(az);
    }else{
      nErr += fzReplayFile(argv[i]);
      nFile++;
    }
  }
  printf("%d inputs replayed, %d unreadable\n", nFile, nErr);
  return nErr!=0;
}
#endif
