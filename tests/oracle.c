/*
** oracle.c: the extension's operators checked against SQLite itself.
**
** Used by tests/soak.c (a million random cases) and tests/fuzz/fuzz_ops.c
** (every valid case the fuzzer makes).  A case (OrCase, oracle.h) is one
** run of ds_join_hint, ds_cogroup, ds_cross or ds_join_plan; orCheck()
** runs it and the same question asked in plain SQL, and compares the two.
**
** The oracle's inputs.  Each side's rows are copied, by plain SQLite, from
** the side's zSql into temp.or_l / temp.or_r, whose columns c0, c1, ...
** have no declared type.  Columns without affinity compare with no
** conversion under BINARY, which is exactly the spec's key equality
** (`+l.k = +r.k`): so the oracle's ON clause is the spec's own, and for
** larger inputs (where a nested loop would take seconds) the same
** comparison written `l.c0 = r.c1`, which is identical on affinity-less
** columns and lets SQLite use an index on the copy.  The copy is kept
** while the side's SQL and the database are unchanged (total_changes and
** main's schema_version).
**
** The questions, with the extension's side first:
**
**   join, table-valued   key, left, right  against
**                        CASE WHEN l.rowid IS NOT NULL THEN l.key ELSE
**                        r.key END, json_object(l...), json_object(r...)
**                        FROM or_l AS l [LEFT|RIGHT|FULL] JOIN or_r AS r
**                        (JSON values as tester.tcl's json_value_sql)
**   join, CREATE form    the selected typed columns, the same from the
**                        native join; with ORDER BY, the rows must come
**                        in that order; with GROUP BY, the groups
**   cogroup              per key: the key (integral reals as integers:
**                        which of 1 and 1.0 shows is not compared),
**                        left_count, right_count, and each group as a
**                        multiset of row objects, against GROUP BY on
**                        each side, a full outer join of the groups, and
**                        the two NULL-key groups; a single-key table-
**                        valued coGroup must come in key order, its NULL
**                        groups first (left, then right)
**   cross                the rows of or_l CROSS JOIN or_r
**   join plan            left_rows, right_rows, output_rows against
**                        counts, and the strategy against the hint
**
** After an operator runs, ds_last_stats() must name its operator, say the
** strategy really used (the hint, when one was given) and count the rows
** it produced.
**
** Comparison.  Each row is hashed, value by value (type and exact bytes:
** REAL by its bits), and the rows compared as a multiset: the count and
** the sum of the row hashes must agree.  Only on a mismatch are the rows
** read again as text and sorted, so that orReport() can show the rows
** missing and the rows extra.  Two SQL functions help: or_norm(x) (an
** integral REAL in int64 range as INTEGER, so -0.0 and 1.0 as 0 and 1)
** and the aggregate or_msum(x) (the sum of the hashes of x: a multiset
** of values as one integer, 0 for none).  JSON reals are checked against
** the spec's rule (15 digits when they read back, else 17) with the
** digits of SQLite's printf and or_reads_back(), a read-back by strtod():
** SQLite 3.40's CAST is not correctly rounded for some values.  Where
** SQLite's 17 digits do not read back either (large exponents), the
** correctly rounded 17 of or_real17() are expected.
*/
#include "oracle.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;

struct OrCtx {
  sqlite3 *db;
  char *zMsg;             /* what the last orCheck() found */
  i64 nRows;              /* rows the last orCheck() compared */
  char *azCopied[2];      /* zSql of the side copied into or_l / or_r */
  i64 anChange[2];        /* total_changes right after that copy */
  int aiSchema[2];        /* main's schema_version then */
  i64 anRow[2];           /* rows copied */
  int anCol[2];           /* columns of each side */
  char **aazName[2];      /* their names, made unique as the extension does */
  int bIndexed;           /* use plain = and indexes, not + */
  i64 nOwnChanges;        /* rows this context has written (the copies) */
  int nVtabCol;           /* CREATE form: the table's columns ... */
  char **azVtabCol;       /* ... and their names */
};

static const char *const azJoinSql[4] = {
  "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"
};
static const char *const azSideAlias[2] = { "l", "r" };
static const char *const azCopy[2] = { "or_l", "or_r" };

/*************************************************************************
** Hashing values and rows
*/
static u64 orMix(u64 h){
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

static u64 orBytes(u64 h, const void *p, size_t n){
  const unsigned char *z = p;
  size_t i;
  for(i=0; i<n; i++){ h ^= z[i]; h *= 0x100000001b3ULL; }
  return h;
}

/* Hash of one value: its type and its exact bytes. */
static u64 orValueHash(sqlite3_value *v, u64 h){
  int t = sqlite3_value_type(v);
  unsigned char c = (unsigned char)t;
  h = orBytes(h, &c, 1);
  switch( t ){
    case SQLITE_INTEGER: {
      i64 i = sqlite3_value_int64(v);
      return orBytes(h, &i, 8);
    }
    case SQLITE_FLOAT: {
      double r = sqlite3_value_double(v);
      return orBytes(h, &r, 8);
    }
    case SQLITE_TEXT: {
      const unsigned char *z = sqlite3_value_text(v);
      int n = sqlite3_value_bytes(v);
      h = orBytes(h, &n, sizeof(n));
      return z ? orBytes(h, z, (size_t)n) : h;
    }
    case SQLITE_BLOB: {
      const void *z = sqlite3_value_blob(v);
      int n = sqlite3_value_bytes(v);
      h = orBytes(h, &n, sizeof(n));
      return z ? orBytes(h, z, (size_t)n) : h;
    }
    default:
      return h;
  }
}

static void orNormFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3_value *v = argv[0];
  (void)argc;
  if( sqlite3_value_type(v)==SQLITE_FLOAT ){
    double r = sqlite3_value_double(v);
    if( r==floor(r) && r>=-9223372036854775808.0 && r<9223372036854775808.0 ){
      sqlite3_result_int64(ctx, (i64)r);
      return;
    }
  }
  sqlite3_result_value(ctx, v);
}

/*
** or_reads_back(text, x): does the decimal text read back as the real x?
** By strtod(), which rounds correctly: SQLite 3.40's own text-to-real
** conversion (CAST) is off by an ulp for some values, so it cannot say.
*/
static void orReadsBackFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  const char *z = (const char *)sqlite3_value_text(argv[0]);
  (void)argc;
  sqlite3_result_int(ctx, z!=0 && strtod(z, 0)==sqlite3_value_double(argv[1]));
}

/*
** or_real17(x): the 17 correctly rounded significant digits of real x, as
** SQLite's "%!.17g" lays them out (a '.' always, "e+NN" past 1e17): from
** the C library's "%.17g", for the reals whose digits SQLite 3.40's
** printf gets wrong (large exponents).
*/
static void orReal17Func(sqlite3_context *ctx, int argc,
                         sqlite3_value **argv){
  char zBuf[64];
  char *zE;
  (void)argc;
  snprintf(zBuf, sizeof(zBuf), "%.17g", sqlite3_value_double(argv[0]));
  zE = strchr(zBuf, 'e');
  if( strchr(zBuf, '.')==0 ){
    if( zE ){
      memmove(zE + 2, zE, strlen(zE) + 1);
      zE[0] = '.';
      zE[1] = '0';
    }else{
      strcat(zBuf, ".0");
    }
  }
  sqlite3_result_text(ctx, zBuf, -1, SQLITE_TRANSIENT);
}

static void orMsumStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  u64 *pSum = sqlite3_aggregate_context(ctx, sizeof(u64));
  (void)argc;
  if( pSum ) *pSum += orMix(orValueHash(argv[0], 0xcbf29ce484222325ULL));
}

static void orMsumFinal(sqlite3_context *ctx){
  u64 *pSum = sqlite3_aggregate_context(ctx, 0);
  sqlite3_result_int64(ctx, pSum ? (i64)*pSum : 0);
}

/*************************************************************************
** SQLite's order of values (ORDER BY, BINARY), for the order checks
*/
static int orTypeClass(int t){
  switch( t ){
    case SQLITE_NULL: return 0;
    case SQLITE_INTEGER: case SQLITE_FLOAT: return 1;
    case SQLITE_TEXT: return 2;
    default: return 3;
  }
}

/* Compare an integer and a real exactly, as SQLite does. */
static int orIntRealCompare(i64 i, double r){
  double d;
  if( r < -9223372036854775808.0 ) return 1;
  if( r >= 9223372036854775808.0 ) return -1;
  d = (double)i;
  if( d < r ) return -1;
  if( d > r ) return 1;
  {
    i64 y = (i64)r;
    if( i < y ) return -1;
    if( i > y ) return 1;
  }
  return 0;
}

static int orValueCompare(sqlite3_value *a, sqlite3_value *b){
  int ta = sqlite3_value_type(a), tb = sqlite3_value_type(b);
  int ca = orTypeClass(ta), cb = orTypeClass(tb);
  if( ca!=cb ) return ca<cb ? -1 : 1;
  if( ca==0 ) return 0;
  if( ca==1 ){
    if( ta==SQLITE_INTEGER && tb==SQLITE_INTEGER ){
      i64 x = sqlite3_value_int64(a), y = sqlite3_value_int64(b);
      return x<y ? -1 : x>y;
    }
    if( ta==SQLITE_FLOAT && tb==SQLITE_FLOAT ){
      double x = sqlite3_value_double(a), y = sqlite3_value_double(b);
      return x<y ? -1 : x>y;
    }
    if( ta==SQLITE_INTEGER ){
      return orIntRealCompare(sqlite3_value_int64(a), sqlite3_value_double(b));
    }
    return -orIntRealCompare(sqlite3_value_int64(b), sqlite3_value_double(a));
  }
  {
    const void *za = ca==2 ? (const void*)sqlite3_value_text(a)
                           : sqlite3_value_blob(a);
    const void *zb = ca==2 ? (const void*)sqlite3_value_text(b)
                           : sqlite3_value_blob(b);
    int na = sqlite3_value_bytes(a), nb = sqlite3_value_bytes(b);
    int n = na<nb ? na : nb;
    int c = n>0 ? memcmp(za, zb, (size_t)n) : 0;
    if( c ) return c<0 ? -1 : 1;
    return na<nb ? -1 : na>nb;
  }
}

/* Compare two rows on ORDER BY terms: flags as OR_DESC, OR_NULLS_LAST. */
static int orRowOrder(sqlite3_value **a, sqlite3_value **b, int n,
                      const unsigned char *aFlag){
  int i;
  for(i=0; i<n; i++){
    int na = sqlite3_value_type(a[i])==SQLITE_NULL;
    int nb = sqlite3_value_type(b[i])==SQLITE_NULL;
    int c;
    if( na || nb ){
      if( na && nb ) continue;
      /* NULL is the smallest value: first ascending, last descending,
      ** unless NULLS LAST says last. */
      c = na ? -1 : 1;
      if( (aFlag[i] & (OR_DESC|OR_NULLS_LAST)) ) c = -c;
      return c;
    }
    c = orValueCompare(a[i], b[i]);
    if( aFlag[i] & OR_DESC ) c = -c;
    if( c ) return c;
  }
  return 0;
}

/*************************************************************************
** Text helpers
*/

/* Append to *pz (sqlite3_malloc'd, may be NULL) a formatted text. */
static void orAppend(char **pz, const char *zFmt, ...){
  va_list ap;
  char *zMore;
  char *zNew;
  va_start(ap, zFmt);
  zMore = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( zMore==0 ){ fprintf(stderr, "oracle: out of memory\n"); abort(); }
  zNew = sqlite3_mprintf("%s%s", *pz ? *pz : "", zMore);
  if( zNew==0 ){ fprintf(stderr, "oracle: out of memory\n"); abort(); }
  sqlite3_free(zMore);
  sqlite3_free(*pz);
  *pz = zNew;
}

static void orSetMsg(OrCtx *p, const char *zFmt, ...){
  va_list ap;
  sqlite3_free(p->zMsg);
  va_start(ap, zFmt);
  p->zMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
}

/* A real as SQL text that reads back as the same double. */
static char *orRealLiteral(double r){
  char zBuf[64];
  if( isinf(r) ) return sqlite3_mprintf("%s1e999", r<0 ? "-" : "");
  if( r==0.0 ) return sqlite3_mprintf("%s0.0", signbit(r) ? "-" : "");
  snprintf(zBuf, sizeof(zBuf), "%.17g", r);
  if( strpbrk(zBuf, ".eEn")==0 ) strcat(zBuf, ".0");
  return sqlite3_mprintf("%s", zBuf);
}

/*
** An SQL literal giving exactly this value: text that is not plain
** printable UTF-8 as CAST(X'..' AS TEXT), reals with 17 digits.
*/
char *orSqlLiteral(sqlite3_value *pVal){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
      return sqlite3_mprintf("%lld", sqlite3_value_int64(pVal));
    case SQLITE_FLOAT:
      return orRealLiteral(sqlite3_value_double(pVal));
    case SQLITE_TEXT: {
      const unsigned char *z = sqlite3_value_text(pVal);
      int n = sqlite3_value_bytes(pVal);
      int i, bPlain = 1;
      for(i=0; i<n; i++){
        if( z[i]<0x20 || z[i]>=0x7f ){ bPlain = 0; break; }
      }
      if( bPlain ) return sqlite3_mprintf("%Q", (const char*)z);
      {
        char *zOut = sqlite3_mprintf("CAST(X'");
        for(i=0; i<n; i++) orAppend(&zOut, "%02X", z[i]);
        orAppend(&zOut, "' AS TEXT)");
        return zOut;
      }
    }
    case SQLITE_BLOB: {
      const unsigned char *z = sqlite3_value_blob(pVal);
      int n = sqlite3_value_bytes(pVal);
      int i;
      char *zOut = sqlite3_mprintf("X'");
      for(i=0; i<n; i++) orAppend(&zOut, "%02X", z[i]);
      orAppend(&zOut, "'");
      return zOut;
    }
    default:
      return sqlite3_mprintf("NULL");
  }
}

/* SQL for the JSON value of expression zX, as the extension writes it. */
char *orJsonValueSql(const char *zX){
  return sqlite3_mprintf(
    "CASE typeof(%s) WHEN 'blob' THEN hex(%s) WHEN 'real' THEN json(CASE"
    " WHEN %s > 1.7976931348623157e308 THEN '9.0e+999'"
    " WHEN %s < -1.7976931348623157e308 THEN '-9.0e+999'"
    " WHEN or_reads_back(printf('%%!.15g', %s), %s) THEN printf('%%!.15g', %s)"
    " WHEN or_reads_back(printf('%%!.17g', %s), %s) THEN printf('%%!.17g', %s)"
    " ELSE or_real17(%s) END) ELSE %s END",
    zX, zX, zX, zX, zX, zX, zX, zX, zX, zX, zX, zX);
}

/* json_object() of side iSide's row (alias l or r), under its names. */
static char *orObjectSql(OrCtx *p, int iSide){
  char *z = sqlite3_mprintf("json_object(");
  int i;
  for(i=0; i<p->anCol[iSide]; i++){
    char *zCol = sqlite3_mprintf("%s.c%d", azSideAlias[iSide], i);
    char *zV = orJsonValueSql(zCol);
    orAppend(&z, "%s%Q, %s", i ? ", " : "", p->aazName[iSide][i], zV);
    sqlite3_free(zV);
    sqlite3_free(zCol);
  }
  orAppend(&z, ")");
  return z;
}

/*************************************************************************
** The oracle's copies of the inputs
*/
static void orFreeNames(OrCtx *p, int iSide){
  int i;
  for(i=0; i<p->anCol[iSide]; i++) sqlite3_free(p->aazName[iSide][i]);
  sqlite3_free(p->aazName[iSide]);
  p->aazName[iSide] = 0;
  p->anCol[iSide] = 0;
}

/*
** The column names of pStmt made unique as the extension's inputs make
** them (SPEC: a name repeated inside one input becomes id, id_2, ...):
** each name that equals an earlier one, compared as sqlite3_stricmp()
** does, gets the next suffix until it is new.
*/
static int orNames(OrCtx *p, int iSide, sqlite3_stmt *pStmt){
  int n = sqlite3_column_count(pStmt);
  int i, j;
  p->aazName[iSide] = sqlite3_malloc64(sizeof(char*) * (size_t)(n + 1));
  if( p->aazName[iSide]==0 ) return SQLITE_NOMEM;
  for(i=0; i<n; i++){
    const char *zName = sqlite3_column_name(pStmt, i);
    char *zU = sqlite3_mprintf("%s", zName ? zName : "");
    int iSuffix = 1;
    for(j=0; zU && j<i; j++){
      if( sqlite3_stricmp(zU, p->aazName[iSide][j])==0 ){
        sqlite3_free(zU);
        zU = sqlite3_mprintf("%s_%d", zName, ++iSuffix);
        j = -1;
      }
    }
    if( zU==0 ) return SQLITE_NOMEM;
    p->aazName[iSide][i] = zU;
    p->anCol[iSide] = i + 1;
  }
  return SQLITE_OK;
}

static int orExec(OrCtx *p, const char *zSql){
  char *zErr = 0;
  int rc = sqlite3_exec(p->db, zSql, 0, 0, &zErr);
  if( rc!=SQLITE_OK ){
    orSetMsg(p, "oracle: %s\n  in: %s", zErr ? zErr : sqlite3_errstr(rc),
             zSql);
  }
  sqlite3_free(zErr);
  return rc;
}

/* PRAGMA main.schema_version: it moves with every change of a schema. */
static int orSchemaVersion(OrCtx *p){
  sqlite3_stmt *pStmt = 0;
  int v = -1;
  if( sqlite3_prepare_v2(p->db, "PRAGMA main.schema_version", -1, &pStmt, 0)
        ==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    v = sqlite3_column_int(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return v;
}

/*
** Copy side iSide's rows into its untyped table, unless already there:
** the same SQL, and neither rows (total_changes) nor tables (an ALTER
** TABLE, say: schema_version) changed since.
*/
static int orCopySide(OrCtx *p, int iSide, const char *zSide, int iSchema){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc, i;
  if( p->azCopied[iSide] && strcmp(p->azCopied[iSide], zSide)==0
   && p->anChange[iSide]==sqlite3_total_changes64(p->db)
   && p->aiSchema[iSide]==iSchema ){
    return SQLITE_OK;
  }
  sqlite3_free(p->azCopied[iSide]);
  p->azCopied[iSide] = 0;
  orFreeNames(p, iSide);
  rc = sqlite3_prepare_v2(p->db, zSide, -1, &pStmt, 0);
  if( rc!=SQLITE_OK ){
    orSetMsg(p, "oracle: the %s side's SQL does not compile: %s\n  in: %s",
             iSide ? "right" : "left", sqlite3_errmsg(p->db), zSide);
    return rc;
  }
  rc = orNames(p, iSide, pStmt);
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK ) return rc;
  zSql = sqlite3_mprintf("DROP TABLE IF EXISTS temp.%s; CREATE TEMP TABLE %s(",
                         azCopy[iSide], azCopy[iSide]);
  for(i=0; i<p->anCol[iSide]; i++) orAppend(&zSql, "%sc%d", i ? ", " : "", i);
  orAppend(&zSql, "); INSERT INTO temp.%s SELECT * FROM (%s\n);",
           azCopy[iSide], zSide);
  rc = orExec(p, zSql);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ) return rc;
  p->anRow[iSide] = sqlite3_changes64(p->db);
  p->nOwnChanges += p->anRow[iSide];
  p->azCopied[iSide] = sqlite3_mprintf("%s", zSide);
  return p->azCopied[iSide] ? SQLITE_OK : SQLITE_NOMEM;
}

/* Make sure the copies have an index on the key columns of the case. */
static int orIndexKeys(OrCtx *p, const OrCase *pCase){
  int s, i, rc = SQLITE_OK;
  for(s=0; s<2 && rc==SQLITE_OK; s++){
    const OrSide *pS = &pCase->a[s];
    char *zName = sqlite3_mprintf("%s_ix", azCopy[s]);
    char *zCols = 0;
    char *zSql;
    for(i=0; i<pS->nKey; i++){
      orAppend(&zName, "_%d", pS->aiKey[i]);
      orAppend(&zCols, "%sc%d", i ? ", " : "", pS->aiKey[i]);
    }
    zSql = sqlite3_mprintf("CREATE INDEX IF NOT EXISTS temp.%s ON %s(%s)",
                           zName, azCopy[s], zCols);
    rc = orExec(p, zSql);
    sqlite3_free(zSql);
    sqlite3_free(zCols);
    sqlite3_free(zName);
  }
  return rc;
}

/*************************************************************************
** The extension's side of a case: SQL text
*/

/* An argument as an SQL literal (bLiteral) or the next parameter. */
static void orArg(char **pz, const OrCase *pCase, int *piParam,
                  const char *zText, int bInt, int iInt){
  if( pCase->bLiteral ){
    if( zText ) orAppend(pz, "%Q", zText);
    else if( bInt ) orAppend(pz, "%d", iInt);
    else orAppend(pz, "NULL");
  }else{
    orAppend(pz, "?%d", ++*piParam);
  }
}

static const char *orFuncName(int eOp){
  switch( eOp ){
    case OR_COGROUP: return "ds_cogroup";
    case OR_CROSS:   return "ds_cross";
    case OR_PLAN:    return "ds_join_plan";
    default:         return "ds_join_hint";
  }
}

/* "ds_join_hint(?1, ?2, ...)": the table-valued call of a case. */
static char *orTvfCall(const OrCase *pCase){
  char *z = sqlite3_mprintf("%s(", orFuncName(pCase->eOp));
  int iParam = 0;
  int s;
  orArg(&z, pCase, &iParam, pCase->a[0].zArg, 0, 0);
  orAppend(&z, ", ");
  orArg(&z, pCase, &iParam, pCase->a[1].zArg, 0, 0);
  if( pCase->eOp!=OR_CROSS ){
    for(s=0; s<2; s++){
      const OrSide *pS = &pCase->a[s];
      orAppend(&z, ", ");
      orArg(&z, pCase, &iParam, pS->zKeyArg, pS->zKeyArg==0, pS->iKeyArg);
    }
  }
  if( pCase->eOp!=OR_COGROUP
   && (pCase->zHint || pCase->bHintNull || pCase->zJoinArg) ){
    orAppend(&z, ", ");
    orArg(&z, pCase, &iParam, pCase->bHintNull ? 0 : pCase->zHint, 0, 0);
  }
  if( (pCase->eOp==OR_JOIN || pCase->eOp==OR_PLAN) && pCase->zJoinArg ){
    orAppend(&z, ", ");
    orArg(&z, pCase, &iParam, pCase->zJoinArg, 0, 0);
  }
  orAppend(&z, ")");
  return z;
}

/* Bind the arguments of a table-valued call, in the order of orTvfCall. */
static int orTvfBind(sqlite3_stmt *pStmt, const OrCase *pCase){
  int i = 0, s;
  if( pCase->bLiteral ) return SQLITE_OK;
  sqlite3_bind_text(pStmt, ++i, pCase->a[0].zArg, -1, SQLITE_STATIC);
  sqlite3_bind_text(pStmt, ++i, pCase->a[1].zArg, -1, SQLITE_STATIC);
  if( pCase->eOp!=OR_CROSS ){
    for(s=0; s<2; s++){
      const OrSide *pS = &pCase->a[s];
      if( pS->zKeyArg ){
        sqlite3_bind_text(pStmt, ++i, pS->zKeyArg, -1, SQLITE_STATIC);
      }else{
        sqlite3_bind_int(pStmt, ++i, pS->iKeyArg);
      }
    }
  }
  if( pCase->eOp!=OR_COGROUP
   && (pCase->zHint || pCase->bHintNull || pCase->zJoinArg) ){
    if( pCase->bHintNull || pCase->zHint==0 ){
      sqlite3_bind_null(pStmt, ++i);
    }else{
      sqlite3_bind_text(pStmt, ++i, pCase->zHint, -1, SQLITE_STATIC);
    }
  }
  if( (pCase->eOp==OR_JOIN || pCase->eOp==OR_PLAN) && pCase->zJoinArg ){
    sqlite3_bind_text(pStmt, ++i, pCase->zJoinArg, -1, SQLITE_STATIC);
  }
  return SQLITE_OK;
}

/* A CREATE argument value: plain if an identifier or number, else quoted. */
static void orVtabValue(char **pz, const char *zValue){
  const char *c = zValue;
  int bPlain = *c!=0;
  for(; *c; c++){
    if( !((*c>='a' && *c<='z') || (*c>='A' && *c<='Z') || *c=='_'
          || (*c>='0' && *c<='9')) ) bPlain = 0;
  }
  /* A keyword (SELECT, ...) as a bare value would read as a query. */
  if( bPlain && sqlite3_keyword_check(zValue, (int)strlen(zValue)) ) bPlain = 0;
  if( bPlain ) orAppend(pz, "%s", zValue);
  else orAppend(pz, "'%q'", zValue);
}

/* The CREATE VIRTUAL TABLE statement of a case. */
static char *orVtabCreate(const OrCase *pCase){
  static const char *const azModule[] = {
    "ds_join_hint", "ds_cogroup", "ds_cross", "ds_join_plan"
  };
  char *z = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.or_vt USING %s(",
                            azModule[pCase->eOp]);
  int s;
  for(s=0; s<2; s++){
    const OrSide *pS = &pCase->a[s];
    orAppend(&z, "%s%s=", s ? ", " : "", s ? "right" : "left");
    if( pS->zVtabArg ) orAppend(&z, "%s", pS->zVtabArg);
    else orAppend(&z, "'%q'", pS->zArg);
  }
  if( pCase->eOp!=OR_CROSS ){
    for(s=0; s<2; s++){
      const OrSide *pS = &pCase->a[s];
      orAppend(&z, ", %s_key=", s ? "right" : "left");
      if( pS->zKeyArg ) orVtabValue(&z, pS->zKeyArg);
      else orAppend(&z, "%d", pS->iKeyArg);
    }
  }
  if( pCase->zHint && pCase->eOp!=OR_COGROUP ){
    orAppend(&z, ", hint=");
    orVtabValue(&z, pCase->zHint);
  }
  if( pCase->zJoinArg && pCase->eOp==OR_JOIN ){
    orAppend(&z, ", join_type=");
    orVtabValue(&z, pCase->zJoinArg);
  }
  orAppend(&z, ")");
  return z;
}

/* The output columns a CREATE-form case selects: ORDER BY ones first. */
static int orVtabSelected(OrCtx *p, const OrCase *pCase, int *aiCol){
  int n = 0, i, j;
  for(i=0; i<pCase->nOrder; i++) aiCol[n++] = pCase->aiOrder[i];
  if( pCase->bGroupBy ) return n;
  for(i=0; i<p->nVtabCol; i++){
    int bSeen = 0;
    if( pCase->mProj && (i>=64 || !(pCase->mProj & (1ULL<<i))) ) continue;
    for(j=0; j<pCase->nOrder; j++) if( pCase->aiOrder[j]==i ) bSeen = 1;
    if( !bSeen ) aiCol[n++] = i;
  }
  return n;
}

/*
** The extension's query of a case.  *pnSkip is set to the leading result
** columns that only serve the order check; *pnOrder to the columns whose
** order is checked, *paFlag to their flags.
*/
static char *orOurQuery(OrCtx *p, const OrCase *pCase, int *pnOrder,
                        const unsigned char **paFlag, int *pnSkip){
  static const unsigned char aAsc[2] = { 0, 0 };
  char *z = 0;
  char *zCall;
  int nKey = pCase->a[0].nKey;
  int i;
  *pnOrder = 0;
  *pnSkip = 0;
  *paFlag = aAsc;
  if( pCase->bVtab && pCase->eOp!=OR_PLAN ){
    int aiCol[512];
    int nSel;
    if( pCase->eOp==OR_COGROUP ){
      z = sqlite3_mprintf("SELECT ");
      for(i=0; i<pCase->nOrder; i++){
        orAppend(&z, "\"%w\", ", p->azVtabCol[pCase->aiOrder[i]]);
      }
      for(i=0; i<nKey; i++) orAppend(&z, "or_norm(\"%w\"), ", p->azVtabCol[i]);
      orAppend(&z, "left_count, right_count");
      if( !pCase->bCount ){
        orAppend(&z, ", (SELECT or_msum(value) FROM json_each(c.\"left\")),"
                     " (SELECT or_msum(value) FROM json_each(c.\"right\"))");
      }
      orAppend(&z, " FROM temp.or_vt AS c");
      *pnSkip = *pnOrder = pCase->nOrder;
    }else{
      nSel = orVtabSelected(p, pCase, aiCol);
      z = sqlite3_mprintf("SELECT ");
      for(i=0; i<nSel; i++){
        if( pCase->bGroupBy ){
          orAppend(&z, "%sor_norm(\"%w\")", i ? ", " : "",
                   p->azVtabCol[aiCol[i]]);
        }else{
          orAppend(&z, "%s\"%w\"", i ? ", " : "", p->azVtabCol[aiCol[i]]);
        }
      }
      if( pCase->bGroupBy ) orAppend(&z, "%scount(*)", nSel ? ", " : "");
      if( nSel==0 && !pCase->bGroupBy ) orAppend(&z, "count(*)");
      orAppend(&z, " FROM temp.or_vt");
      if( pCase->bGroupBy && pCase->nOrder ){
        orAppend(&z, " GROUP BY ");
        for(i=0; i<pCase->nOrder; i++){
          orAppend(&z, "%s\"%w\"", i ? ", " : "",
                   p->azVtabCol[pCase->aiOrder[i]]);
        }
      }
      if( !pCase->bGroupBy ) *pnOrder = pCase->nOrder;
    }
    if( pCase->nOrder && !pCase->bGroupBy ){
      orAppend(&z, " ORDER BY ");
      for(i=0; i<pCase->nOrder; i++){
        orAppend(&z, "%s\"%w\"%s%s", i ? ", " : "",
                 p->azVtabCol[pCase->aiOrder[i]],
                 (pCase->aOrderFlag[i] & OR_DESC) ? " DESC" : "",
                 (pCase->aOrderFlag[i] & OR_NULLS_LAST) ? " NULLS LAST" : "");
      }
      *paFlag = pCase->aOrderFlag;
    }
    return z;
  }
  zCall = orTvfCall(pCase);
  switch( pCase->eOp ){
    case OR_JOIN:
      z = sqlite3_mprintf(pCase->bCount ? "SELECT count(*) FROM %s"
                          : "SELECT key, \"left\", \"right\" FROM %s", zCall);
      break;
    case OR_CROSS:
      z = sqlite3_mprintf(pCase->bCount ? "SELECT count(*) FROM %s"
                          : "SELECT \"left\", \"right\" FROM %s", zCall);
      break;
    case OR_PLAN: {
      const char *zHint = pCase->zHint;
      z = sqlite3_mprintf("SELECT left_rows, right_rows, output_rows, ");
      if( zHint && sqlite3_stricmp(zHint, "OPTIMIZER_CHOOSES")!=0 ){
        orAppend(&z, "strategy = upper(%Q)", zHint);
      }else{
        orAppend(&z, "strategy IN ('BROADCAST_HASH_FIRST',"
          " 'BROADCAST_HASH_SECOND', 'REPARTITION_HASH_FIRST',"
          " 'REPARTITION_HASH_SECOND', 'REPARTITION_SORT_MERGE')");
      }
      orAppend(&z, " FROM %s", zCall);
      break;
    }
    default: {  /* OR_COGROUP */
      z = sqlite3_mprintf("SELECT ");
      if( nKey==1 ){
        /* Key order, and the left NULL group before the right one. */
        orAppend(&z, "key, CASE WHEN key IS NULL THEN left_count=0 END, "
                     "or_norm(key), ");
        *pnSkip = *pnOrder = 2;
      }else{
        for(i=0; i<nKey; i++){
          orAppend(&z, "or_norm(json_extract(key, '$[%d]')), ", i);
        }
      }
      orAppend(&z, "left_count, right_count");
      if( !pCase->bCount ){
        orAppend(&z, ", (SELECT or_msum(value) FROM json_each(c.\"left\")),"
                     " (SELECT or_msum(value) FROM json_each(c.\"right\"))");
      }
      orAppend(&z, " FROM %s AS c", zCall);
      break;
    }
  }
  sqlite3_free(zCall);
  return z;
}

/*************************************************************************
** The oracle's side of a case
*/

/* "ON +l.c0 = +r.c2 AND ..." */
static char *orOnClause(OrCtx *p, const OrCase *pCase){
  const char *zPlus = p->bIndexed ? "" : "+";
  char *z = sqlite3_mprintf("ON ");
  int i;
  for(i=0; i<pCase->a[0].nKey; i++){
    orAppend(&z, "%s%sl.c%d = %sr.c%d", i ? " AND " : "", zPlus,
             pCase->a[0].aiKey[i], zPlus, pCase->a[1].aiKey[i]);
  }
  return z;
}

/* The key column of a join row: the left one when the left row is there. */
static char *orJoinKeySql(const OrCase *pCase){
  int nKey = pCase->a[0].nKey;
  char *z = sqlite3_mprintf("CASE WHEN l.rowid IS NOT NULL THEN ");
  int s, i;
  for(s=0; s<2; s++){
    if( s ) orAppend(&z, " ELSE ");
    if( nKey==1 ){
      orAppend(&z, "%s.c%d", azSideAlias[s], pCase->a[s].aiKey[0]);
    }else{
      orAppend(&z, "json_array(");
      for(i=0; i<nKey; i++){
        char *zC = sqlite3_mprintf("%s.c%d", azSideAlias[s],
                                   pCase->a[s].aiKey[i]);
        char *zV = orJsonValueSql(zC);
        orAppend(&z, "%s%s", i ? ", " : "", zV);
        sqlite3_free(zV);
        sqlite3_free(zC);
      }
      orAppend(&z, ")");
    }
  }
  orAppend(&z, " END");
  return z;
}

/* The oracle's expression for output column i of a CREATE-form table. */
static char *orVtabColSql(OrCtx *p, int i){
  if( i < p->anCol[0] ) return sqlite3_mprintf("l.c%d", i);
  return sqlite3_mprintf("r.c%d", i - p->anCol[0]);
}

/* The oracle's query for a coGroup. */
static char *orCoGroupOracle(OrCtx *p, const OrCase *pCase){
  int nKey = pCase->a[0].nKey;
  char *z = sqlite3_mprintf("WITH ");
  char *zObj[2];
  int s, i;
  for(s=0; s<2; s++){
    const OrSide *pS = &pCase->a[s];
    zObj[s] = orObjectSql(p, s);
    orAppend(&z, "%sg%d(", s ? ", " : "", s);
    for(i=0; i<nKey; i++) orAppend(&z, "k%d, ", i);
    orAppend(&z, "n, m) AS (SELECT ");
    for(i=0; i<nKey; i++) orAppend(&z, "%s.c%d, ", azSideAlias[s], pS->aiKey[i]);
    orAppend(&z, "count(*), or_msum(%s) FROM %s AS %s WHERE ",
             zObj[s], azCopy[s], azSideAlias[s]);
    for(i=0; i<nKey; i++){
      orAppend(&z, "%s%s.c%d IS NOT NULL", i ? " AND " : "", azSideAlias[s],
               pS->aiKey[i]);
    }
    orAppend(&z, " GROUP BY ");
    for(i=0; i<nKey; i++){
      orAppend(&z, "%s%s.c%d", i ? ", " : "", azSideAlias[s], pS->aiKey[i]);
    }
    orAppend(&z, ")");
  }
  orAppend(&z, " SELECT ");
  for(i=0; i<nKey; i++){
    char *zK = sqlite3_mprintf("CASE WHEN g0.n IS NOT NULL THEN g0.k%d"
                               " ELSE g1.k%d END", i, i);
    if( nKey>1 && !pCase->bVtab ){
      /* The table-valued form's key is JSON: take each part back as ours. */
      char *zV = orJsonValueSql(zK);
      orAppend(&z, "or_norm(json_extract(json_array(%s), '$[0]')), ", zV);
      sqlite3_free(zV);
    }else{
      orAppend(&z, "or_norm(%s), ", zK);
    }
    sqlite3_free(zK);
  }
  orAppend(&z, "coalesce(g0.n, 0), coalesce(g1.n, 0)");
  if( !pCase->bCount ) orAppend(&z, ", coalesce(g0.m, 0), coalesce(g1.m, 0)");
  orAppend(&z, " FROM g0 FULL JOIN g1 ON ");
  for(i=0; i<nKey; i++) orAppend(&z, "%s+g0.k%d = +g1.k%d", i ? " AND " : "", i, i);
  for(s=0; s<2; s++){
    const OrSide *pS = &pCase->a[s];
    orAppend(&z, " UNION ALL SELECT ");
    for(i=0; i<nKey; i++) orAppend(&z, "NULL, ");
    orAppend(&z, s ? "0, count(*)" : "count(*), 0");
    if( !pCase->bCount ){
      orAppend(&z, s ? ", 0, or_msum(%s)" : ", or_msum(%s), 0", zObj[s]);
    }
    orAppend(&z, " FROM %s AS %s WHERE ", azCopy[s], azSideAlias[s]);
    for(i=0; i<nKey; i++){
      orAppend(&z, "%s%s.c%d IS NULL", i ? " OR " : "", azSideAlias[s],
               pS->aiKey[i]);
    }
    orAppend(&z, " HAVING count(*) > 0");
  }
  sqlite3_free(zObj[0]);
  sqlite3_free(zObj[1]);
  return z;
}

static char *orOracleQuery(OrCtx *p, const OrCase *pCase){
  char *z = 0;
  char *zOn;
  char *zFrom;
  int i;
  if( pCase->eOp==OR_COGROUP ) return orCoGroupOracle(p, pCase);
  if( pCase->eOp==OR_CROSS ){
    zFrom = sqlite3_mprintf("or_l AS l CROSS JOIN or_r AS r");
  }else{
    zOn = orOnClause(p, pCase);
    zFrom = sqlite3_mprintf("or_l AS l %s or_r AS r %s",
                            azJoinSql[pCase->eJoin], zOn);
    sqlite3_free(zOn);
  }
  if( pCase->eOp==OR_PLAN ){
    z = sqlite3_mprintf("SELECT (SELECT count(*) FROM or_l),"
                        " (SELECT count(*) FROM or_r),"
                        " (SELECT count(*) FROM %s), 1", zFrom);
  }else if( pCase->bVtab ){
    int aiCol[512];
    int nSel = orVtabSelected(p, pCase, aiCol);
    z = sqlite3_mprintf("SELECT ");
    for(i=0; i<nSel; i++){
      char *zC = orVtabColSql(p, aiCol[i]);
      if( pCase->bGroupBy ) orAppend(&z, "%sor_norm(%s)", i ? ", " : "", zC);
      else orAppend(&z, "%s%s", i ? ", " : "", zC);
      sqlite3_free(zC);
    }
    if( pCase->bGroupBy ) orAppend(&z, "%scount(*)", nSel ? ", " : "");
    if( nSel==0 && !pCase->bGroupBy ) orAppend(&z, "count(*)");
    orAppend(&z, " FROM %s", zFrom);
    if( pCase->bGroupBy && pCase->nOrder ){
      orAppend(&z, " GROUP BY ");
      for(i=0; i<nSel; i++){
        char *zC = orVtabColSql(p, aiCol[i]);
        orAppend(&z, "%s%s", i ? ", " : "", zC);
        sqlite3_free(zC);
      }
    }
  }else if( pCase->bCount ){
    z = sqlite3_mprintf("SELECT count(*) FROM %s", zFrom);
  }else{
    char *zL = orObjectSql(p, 0);
    char *zR = orObjectSql(p, 1);
    if( pCase->eOp==OR_CROSS ){
      z = sqlite3_mprintf("SELECT %s, %s FROM %s", zL, zR, zFrom);
    }else{
      char *zKey = orJoinKeySql(pCase);
      z = sqlite3_mprintf("SELECT %s, CASE WHEN l.rowid IS NULL THEN NULL"
                          " ELSE %s END, CASE WHEN r.rowid IS NULL THEN NULL"
                          " ELSE %s END FROM %s", zKey, zL, zR, zFrom);
      sqlite3_free(zKey);
    }
    sqlite3_free(zL);
    sqlite3_free(zR);
  }
  sqlite3_free(zFrom);
  return z;
}

/*************************************************************************
** Running both sides
*/

/* The multiset of rows of a statement: count, and the sum of row hashes. */
typedef struct OrSum OrSum;
struct OrSum {
  i64 nRow;
  u64 sum;
};

/*
** Step pStmt to the end, summing its rows (less nSkip leading columns).
** The first nOrder columns must be in order (aFlag); a row out of order
** is reported in p->zMsg and gives OR_MISMATCH.
*/
static int orStepAll(OrCtx *p, sqlite3_stmt *pStmt, int nSkip, int nOrder,
                     const unsigned char *aFlag, OrSum *pSum){
  sqlite3_value *apPrev[OR_MAX_KEY];
  int nCol = sqlite3_column_count(pStmt);
  int rc, i, bOrderBad = 0;
  memset(apPrev, 0, sizeof(apPrev));
  memset(pSum, 0, sizeof(*pSum));
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    u64 h = 0xcbf29ce484222325ULL;
    for(i=nSkip; i<nCol; i++){
      h = orValueHash(sqlite3_column_value(pStmt, i), h);
    }
    pSum->sum += orMix(h);
    pSum->nRow++;
    if( nOrder>0 && !bOrderBad ){
      sqlite3_value *apCur[OR_MAX_KEY];
      for(i=0; i<nOrder; i++) apCur[i] = sqlite3_column_value(pStmt, i);
      if( apPrev[0] && orRowOrder(apPrev, apCur, nOrder, aFlag)>0 ){
        char *zA = orSqlLiteral(apPrev[0]);
        char *zB = orSqlLiteral(apCur[0]);
        orSetMsg(p, "rows out of order: row %lld (first order column %s)"
                 " comes after one with %s", pSum->nRow, zB, zA);
        sqlite3_free(zA);
        sqlite3_free(zB);
        bOrderBad = 1;
      }
      for(i=0; i<nOrder; i++){
        sqlite3_value_free(apPrev[i]);
        apPrev[i] = sqlite3_value_dup(apCur[i]);
      }
    }
  }
  for(i=0; i<OR_MAX_KEY; i++) sqlite3_value_free(apPrev[i]);
  if( rc!=SQLITE_DONE ) return rc;
  return bOrderBad ? -1 : SQLITE_OK;
}

/* The names of the columns of temp.or_vt. */
static int orVtabColumns(OrCtx *p){
  sqlite3_stmt *pStmt = 0;
  int i, n, rc;
  for(i=0; i<p->nVtabCol; i++) sqlite3_free(p->azVtabCol[i]);
  sqlite3_free(p->azVtabCol);
  p->azVtabCol = 0;
  p->nVtabCol = 0;
  rc = sqlite3_prepare_v2(p->db, "SELECT * FROM temp.or_vt", -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) return rc;
  n = sqlite3_column_count(pStmt);
  p->azVtabCol = sqlite3_malloc64(sizeof(char*) * (size_t)(n + 1));
  if( p->azVtabCol==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
  for(i=0; i<n; i++){
    p->azVtabCol[i] = sqlite3_mprintf("%s", sqlite3_column_name(pStmt, i));
    p->nVtabCol = i + 1;
  }
  sqlite3_finalize(pStmt);
  return SQLITE_OK;
}

/* The statistics of the last run must agree with the case. */
static int orCheckStats(OrCtx *p, const OrCase *pCase, i64 nOut){
  static const char *const azOp[] = { "join", "cogroup", "cross", "plan" };
  sqlite3_stmt *pStmt = 0;
  const char *zWant = 0;
  int rc, bad = 0;
  rc = sqlite3_prepare_v2(p->db,
      "SELECT json_extract(s, '$.operator'), json_extract(s, '$.strategy'),"
      " json_extract(s, '$.output_rows'), s FROM (SELECT ds_last_stats() AS s)",
      -1, &pStmt, 0);
  if( rc!=SQLITE_OK ) return rc;
  if( sqlite3_step(pStmt)!=SQLITE_ROW ){
    sqlite3_finalize(pStmt);
    orSetMsg(p, "ds_last_stats() fails: %s", sqlite3_errmsg(p->db));
    return OR_MISMATCH;
  }
  if( pCase->eOp==OR_COGROUP ) zWant = "REPARTITION_SORT_MERGE";
  else if( pCase->zHint && sqlite3_stricmp(pCase->zHint, "OPTIMIZER_CHOOSES") ){
    zWant = pCase->zHint;
  }
  {
    const char *zOp = (const char*)sqlite3_column_text(pStmt, 0);
    const char *zStrat = (const char*)sqlite3_column_text(pStmt, 1);
    if( zOp==0 || strcmp(zOp, azOp[pCase->eOp]) ) bad = 1;
    if( zStrat==0 || (zWant && sqlite3_stricmp(zStrat, zWant)) ) bad = 1;
    if( nOut>=0 && sqlite3_column_int64(pStmt, 2)!=nOut ) bad = 1;
    if( bad ){
      orSetMsg(p, "ds_last_stats() does not fit the run (operator %s,"
               " strategy %s, %lld rows out): %s", azOp[pCase->eOp],
               zWant ? zWant : "any", nOut, sqlite3_column_text(pStmt, 3));
    }
  }
  sqlite3_finalize(pStmt);
  return bad ? OR_MISMATCH : OR_OK;
}

static int orSetMemory(OrCtx *p, i64 n){
  char *zSql;
  int rc;
  if( n<=0 ) return SQLITE_OK;
  zSql = sqlite3_mprintf("SELECT ds_config('memory_limit', %lld)", n);
  rc = orExec(p, zSql);
  sqlite3_free(zSql);
  return rc;
}

/* Prepare and run our query; *pSum gets its rows.  OR_* result. */
static int orRunOurs(OrCtx *p, const OrCase *pCase, OrSum *pSum){
  sqlite3_stmt *pStmt = 0;
  const unsigned char *aFlag;
  int nOrder, nSkip, rc, eRes = OR_OK;
  char *zSql;
  if( pCase->bVtab && pCase->eOp!=OR_PLAN ){
    char *zCreate = orVtabCreate(pCase);
    char *zErr = 0;
    sqlite3_exec(p->db, "DROP TABLE IF EXISTS temp.or_vt", 0, 0, 0);
    rc = sqlite3_exec(p->db, zCreate, 0, 0, &zErr);
    if( rc!=SQLITE_OK ){
      orSetMsg(p, "%s\n  in: %s", zErr ? zErr : sqlite3_errstr(rc), zCreate);
      sqlite3_free(zErr);
      sqlite3_free(zCreate);
      return OR_FAILED;
    }
    sqlite3_free(zCreate);
    rc = orVtabColumns(p);
    if( rc!=SQLITE_OK ){
      orSetMsg(p, "querying the new table: %s", sqlite3_errmsg(p->db));
      return OR_FAILED;
    }
  }
  zSql = orOurQuery(p, pCase, &nOrder, &aFlag, &nSkip);
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    orTvfBind(pStmt, pCase);
    rc = orStepAll(p, pStmt, nSkip, nOrder, aFlag, pSum);
  }
  if( rc==-1 ){
    eRes = OR_MISMATCH;
  }else if( rc!=SQLITE_OK ){
    orSetMsg(p, "%s\n  in: %s", sqlite3_errmsg(p->db), zSql);
    eRes = OR_FAILED;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return eRes;
}

static int orRunOracle(OrCtx *p, const OrCase *pCase, OrSum *pSum){
  sqlite3_stmt *pStmt = 0;
  char *zSql = orOracleQuery(p, pCase);
  int rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = orStepAll(p, pStmt, 0, 0, 0, pSum);
  if( rc!=SQLITE_OK ){
    orSetMsg(p, "oracle: %s\n  in: %s", sqlite3_errmsg(p->db), zSql);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return rc==SQLITE_OK ? OR_OK : OR_ORACLE;
}

/* Does the row count of this case's query equal the operator's output? */
static int orCountsOutput(const OrCase *pCase){
  if( pCase->eOp==OR_PLAN ) return 0;
  if( pCase->bVtab ) return !pCase->bGroupBy;
  return pCase->eOp==OR_COGROUP || !pCase->bCount;
}

int orCheck(OrCtx *p, const OrCase *pCase){
  OrSum ours, oracle;
  int s, eRes;
  int iSchema = orSchemaVersion(p);
  sqlite3_free(p->zMsg);
  p->zMsg = 0;
  p->nRows = 0;
  for(s=0; s<2; s++){
    if( orCopySide(p, s, pCase->a[s].zSql, iSchema)!=SQLITE_OK ) return OR_ORACLE;
  }
  /* Copying one side changes nothing the other was copied from. */
  p->anChange[0] = p->anChange[1] = sqlite3_total_changes64(p->db);
  p->aiSchema[0] = p->aiSchema[1] = iSchema;
  p->bIndexed = p->anRow[0]*p->anRow[1] > 4096 && pCase->eOp!=OR_CROSS;
  if( p->bIndexed && orIndexKeys(p, pCase)!=SQLITE_OK ) return OR_ORACLE;
  if( orSetMemory(p, pCase->nMemLimit)!=SQLITE_OK ) return OR_FAILED;
  eRes = orRunOurs(p, pCase, &ours);
  if( eRes==OR_OK ) eRes = orRunOracle(p, pCase, &oracle);
  if( eRes==OR_OK ){
    p->nRows = oracle.nRow;
    if( ours.nRow!=oracle.nRow || ours.sum!=oracle.sum ){
      orSetMsg(p, "%lld rows, the oracle %lld; the rows differ",
               ours.nRow, oracle.nRow);
      eRes = OR_MISMATCH;
    }
  }
  if( eRes==OR_OK && pCase->eOp!=OR_PLAN ){
    eRes = orCheckStats(p, pCase, orCountsOutput(pCase) ? oracle.nRow : -1);
  }
  if( pCase->bVtab ) sqlite3_exec(p->db, "DROP TABLE IF EXISTS temp.or_vt",
                                  0, 0, 0);
  return eRes;
}

/*************************************************************************
** Reports
*/

/* Every row of a query, as "v1 | v2 | ..." texts, sorted. */
static int orRowTexts(OrCtx *p, const OrCase *pCase, int bOurs,
                      char ***pazRow, int *pnRow){
  sqlite3_stmt *pStmt = 0;
  const unsigned char *aFlag;
  int nOrder = 0, nSkip = 0, rc, i;
  char *zSql = bOurs ? orOurQuery(p, pCase, &nOrder, &aFlag, &nSkip)
                     : orOracleQuery(p, pCase);
  char **az = 0;
  int n = 0;
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK && bOurs ) orTvfBind(pStmt, pCase);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    char *zRow = 0;
    for(i=nSkip; i<sqlite3_column_count(pStmt); i++){
      char *zV = orSqlLiteral(sqlite3_column_value(pStmt, i));
      orAppend(&zRow, "%s%s", i>nSkip ? " | " : "", zV);
      sqlite3_free(zV);
    }
    if( (n & (n-1))==0 ){
      az = realloc(az, sizeof(char*) * (size_t)(n ? 2*n : 1));
      if( az==0 ) abort();
    }
    az[n++] = zRow;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  *pazRow = az;
  *pnRow = n;
  return rc;
}

static int orStrCmp(const void *a, const void *b){
  const char *x = *(const char *const*)a, *y = *(const char *const*)b;
  return strcmp(x ? x : "", y ? y : "");
}

/* Print the rows only in a (marked zMark), up to nMax. */
static void orPrintDiff(FILE *out, char **a, int na, char **b, int nb,
                        const char *zMark, int nMax){
  int i = 0, j = 0, nShown = 0, nMore = 0;
  while( i<na ){
    int c = j<nb ? orStrCmp(&a[i], &b[j]) : -1;
    if( c==0 ){ i++; j++; continue; }
    if( c>0 ){ j++; continue; }
    if( nShown<nMax ){
      fprintf(out, "--   %s %s\n", zMark, a[i]);
      nShown++;
    }else{
      nMore++;
    }
    i++;
  }
  if( nMore ) fprintf(out, "--   ... and %d more\n", nMore);
}

char *orCaseSql(OrCtx *p, const OrCase *pCase){
  const unsigned char *aFlag;
  int nOrder, nSkip;
  OrCase lit = *pCase;
  char *z = 0;
  char *zQuery;
  lit.bLiteral = 1;
  if( pCase->nMemLimit>0 ){
    orAppend(&z, "SELECT ds_config('memory_limit', %lld);\n", pCase->nMemLimit);
  }
  if( pCase->bVtab && pCase->eOp!=OR_PLAN ){
    char *zCreate = orVtabCreate(pCase);
    orAppend(&z, "%s;\n", zCreate);
    sqlite3_free(zCreate);
  }
  zQuery = orOurQuery(p, &lit, &nOrder, &aFlag, &nSkip);
  orAppend(&z, "%s;\n", zQuery);
  sqlite3_free(zQuery);
  return z;
}

char *orOracleSql(OrCtx *p, const OrCase *pCase){
  char *z = 0;
  char *zQuery;
  int s, i;
  for(s=0; s<2; s++){
    orAppend(&z, "CREATE TEMP TABLE %s(", azCopy[s]);
    for(i=0; i<p->anCol[s]; i++) orAppend(&z, "%sc%d", i ? ", " : "", i);
    orAppend(&z, ");\nINSERT INTO temp.%s SELECT * FROM (%s\n);\n",
             azCopy[s], pCase->a[s].zSql);
  }
  zQuery = orOracleQuery(p, pCase);
  orAppend(&z, "%s;\n", zQuery);
  sqlite3_free(zQuery);
  return z;
}

/*
** The case as SQL (ours and the oracle's) and the rows that differ.
** The caller prints the tables.  The functions or_norm and or_msum are
** this file's; the row texts are SQL literals.
*/
void orReport(OrCtx *p, const OrCase *pCase, FILE *out){
  char **azOurs = 0, **azOracle = 0;
  int nOurs = 0, nOracle = 0, i;
  char *zCase = orCaseSql(p, pCase);
  char *zOracle = orOracleSql(p, pCase);
  fprintf(out, "-- %s\n", p->zMsg ? p->zMsg : "(no message)");
  fprintf(out, "-- the extension:\n%s", zCase);
  fprintf(out, "-- the oracle (SQLite alone; or_norm, or_msum: tests/oracle.c):\n%s",
          zOracle);
  sqlite3_free(zCase);
  sqlite3_free(zOracle);
  if( pCase->bVtab && pCase->eOp!=OR_PLAN ){
    char *zCreate = orVtabCreate(pCase);
    sqlite3_exec(p->db, "DROP TABLE IF EXISTS temp.or_vt", 0, 0, 0);
    sqlite3_exec(p->db, zCreate, 0, 0, 0);
    sqlite3_free(zCreate);
  }
  if( orRowTexts(p, pCase, 1, &azOurs, &nOurs)==SQLITE_OK
   && orRowTexts(p, pCase, 0, &azOracle, &nOracle)==SQLITE_OK ){
    if( nOurs ) qsort(azOurs, (size_t)nOurs, sizeof(char*), orStrCmp);
    if( nOracle ) qsort(azOracle, (size_t)nOracle, sizeof(char*), orStrCmp);
    fprintf(out, "-- %d rows from the extension, %d from the oracle\n",
            nOurs, nOracle);
    orPrintDiff(out, azOracle, nOracle, azOurs, nOurs, "missing:", 10);
    orPrintDiff(out, azOurs, nOurs, azOracle, nOracle, "extra:  ", 10);
  }
  if( pCase->bVtab ) sqlite3_exec(p->db, "DROP TABLE IF EXISTS temp.or_vt",
                                  0, 0, 0);
  for(i=0; i<nOurs; i++) sqlite3_free(azOurs[i]);
  for(i=0; i<nOracle; i++) sqlite3_free(azOracle[i]);
  free(azOurs);
  free(azOracle);
}

/*************************************************************************
** The context
*/
int orOpen(sqlite3 *db, OrCtx **pp){
  OrCtx *p = sqlite3_malloc64(sizeof(OrCtx));
  int rc;
  *pp = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  rc = sqlite3_create_function(db, "or_norm", 1,
                               SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0,
                               orNormFunc, 0, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "or_reads_back", 2,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0,
                                 orReadsBackFunc, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "or_real17", 1,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0,
                                 orReal17Func, 0, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "or_msum", 1,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0, 0,
                                 orMsumStep, orMsumFinal);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

/*
** DS_TEST_THREADS=N in the environment (`make test-threads1`): give
** connection db ds_config('threads', N), as tests/tester.tcl does for
** every connection of the Tcl tests, so that the soak and fuzz drivers
** run with that many threads instead of the default.  SQLITE_OK, or the
** error of ds_config() for a value it refuses (the caller stops).
*/
int orTestThreads(sqlite3 *db){
  const char *z = getenv("DS_TEST_THREADS");
  char *zSql;
  int rc;
  if( z==0 || z[0]==0 ) return SQLITE_OK;
  zSql = sqlite3_mprintf("SELECT ds_config('threads', %Q)", z);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  return rc;
}

void orClose(OrCtx *p){
  int i;
  if( p==0 ) return;
  for(i=0; i<2; i++){
    sqlite3_free(p->azCopied[i]);
    orFreeNames(p, i);
  }
  for(i=0; i<p->nVtabCol; i++) sqlite3_free(p->azVtabCol[i]);
  sqlite3_free(p->azVtabCol);
  sqlite3_free(p->zMsg);
  sqlite3_free(p);
}

const char *orMessage(OrCtx *p){ return p->zMsg ? p->zMsg : ""; }
sqlite3_int64 orRows(OrCtx *p){ return p->nRows; }
sqlite3_int64 orOwnChanges(OrCtx *p){ return p->nOwnChanges; }

/*
** Print table or view zName as SQL that makes it again: its CREATE
** statement and, for a table, one INSERT per row with exact literals.
*/
void orDumpTable(sqlite3 *db, const char *zName, FILE *out){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int bTable = 0;
  sqlite3_prepare_v2(db, "SELECT sql, type='table' FROM sqlite_schema"
                     " WHERE name=?1", -1, &pStmt, 0);
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    fprintf(out, "%s;\n", sqlite3_column_text(pStmt, 0));
    bTable = sqlite3_column_int(pStmt, 1);
  }
  sqlite3_finalize(pStmt);
  if( !bTable ) return;
  zSql = sqlite3_mprintf("SELECT * FROM \"%w\" ORDER BY rowid", zName);
  sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  while( pStmt && sqlite3_step(pStmt)==SQLITE_ROW ){
    int i;
    char *zIns = sqlite3_mprintf("INSERT INTO \"%w\" VALUES(", zName);
    fprintf(out, "%s", zIns ? zIns : "INSERT INTO ? VALUES(");
    sqlite3_free(zIns);
    for(i=0; i<sqlite3_column_count(pStmt); i++){
      char *zV = orSqlLiteral(sqlite3_column_value(pStmt, i));
      fprintf(out, "%s%s", i ? ", " : "", zV);
      sqlite3_free(zV);
    }
    fprintf(out, ");\n");
  }
  sqlite3_finalize(pStmt);
}
