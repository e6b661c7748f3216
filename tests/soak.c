/*
** soak.c: a long differential run of the extension against SQLite itself.
**
**     build/soak [--seed N] [--cases N] [--case N] [--rows N]
**                [--progress N] [--report N] [--slow SEC] [--temp-dir DIR]
**                [--no-shrink] [--verbose]
**
** Random cases, each one operator run compared with the same question in
** plain SQL by tests/oracle.c: joins under every hint and join type,
** coGroups, crosses and join plans, in the table-valued and the CREATE
** VIRTUAL TABLE forms, over tables of 0 to --rows rows (default 3000) of
** mixed-type values, with keys of one to three columns named by name or
** by position, and memory budgets from 1 byte (everything spills) to the
** default.  It prints progress, then `N cases, N mismatches`, and exits 1
** if there was any mismatch.
**
** Reproducing.  The cases come in rounds of 32 that share two tables.
** Round r's tables depend only on the seed and r, and case c of a round
** only on the seed, r and c; case number N is case N%32 of round N/32.
** So `build/soak --seed S --case N` runs exactly case N of seed S again
** (its tables built the same way), and prints it.  On a mismatch the
** rows of both tables are cut down (while the mismatch remains: halves,
** quarters, ... single rows), and the case is printed as an SQL script
** for the sqlite3 shell: the tables, the extension's statement, the
** oracle's, and the rows missing and extra.
**
** Other options: --progress N prints a line every N cases; --report N
** prints in full (shrunk) only the first N mismatches (default 3);
** --slow SEC prints every case that takes longer (default 5); --verbose
** prints every case, and at the end the time spent per operator and
** budget.
**
** The extension is linked in (-DSQLITE_CORE) and registered on the one
** connection, an in-memory database, with ds_config('threads', N) when
** DS_TEST_THREADS=N is set (`make test-threads1`).  Spill files go to --temp-dir, by
** default /dev/shm when that is a writable directory (creating and
** deleting thousands of small files on a disk file system costs more
** than the cases themselves), else the extension's default.
*/
#include <math.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>
#include "dataset.h"
#include "oracle.h"

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;

#define ROUND_CASES 32
#define MAX_COL     6

/*************************************************************************
** Random numbers: splitmix64, seeded per round and per case
*/
static u64 gRng;

static u64 rnd64(void){
  u64 z = (gRng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static int rnd(int n){ return n<=1 ? 0 : (int)(rnd64() % (u64)n); }
static int chance(int pct){ return rnd(100) < pct; }
static double rndUnit(void){ return (double)(rnd64() >> 11) / 9007199254740992.0; }

static void seedRng(u64 seed, u64 a, u64 b){
  gRng = seed * 0x2545F4914F6CDD1DULL ^ (a + 1) * 0x9E3779B97F4A7C15ULL
       ^ (b + 7) * 0xD1B54A32D192ED03ULL;
  rnd64();
}

/*************************************************************************
** Values
*/
typedef struct Val Val;
struct Val {
  int t;                  /* SQLITE_INTEGER ... SQLITE_NULL */
  i64 i;
  double r;
  char *z;                /* TEXT or BLOB bytes, malloc'd */
  int n;
};

/* Kinds of column: what values a column's pool holds. */
#define D_SMALLINT 0      /* a dozen small integers */
#define D_NUMERIC  1      /* integers, integral and fractional reals, edges */
#define D_TEXT     2      /* short texts, numeric-looking ones too */
#define D_BLOB     3
#define D_MIXED    4      /* any of the above */
#define D_WIDE     5      /* long texts */
#define D_SPREAD   6      /* integers and texts from a wide range */
#define N_DOMAIN   7

static const i64 aEdgeInt[] = {
  0, 1, 2, 3, 5, 7, -1, 42, 9007199254740992LL, 9007199254740993LL,
  -9007199254740993LL, INT64_MIN, INT64_MAX, INT64_MAX - 1, 1LL<<62
};
static const double aEdgeReal[] = {
  2.0, 3.0, 5.0, -0.0, 0.0, 42.0, 2.5, 0.5, -1.5, 0.1, 1.0/3.0, 1e300,
  -1e300, 1e-300, 9007199254740992.0, 9007199254740994.0,
  -9223372036854775808.0, 9223372036854775808.0, 18446744073709551616.0,
  4.9406564584124654e-324, 0.30000000000000004
};
static const char *const azEdgeText[] = {
  "a", "A", "b", "", "a ", "3", "2.0", "42", "-0", "\xc3\xa9", "quote\" and \\",
  "it's", "tab\there", "line\nbreak", "\x01\x1f", "null", "[1]", "{\"a\":1}",
  "Z", "zz", "abcdefgh", "abcdefgi"
};

static void valText(Val *v, int t, const char *z, int n){
  v->t = t;
  v->n = n;
  v->z = malloc((size_t)n + 1);
  if( v->z==0 ) abort();
  if( n ) memcpy(v->z, z, (size_t)n);
  v->z[n] = 0;
}

static void valRandom(Val *v, int eDomain, int nSpace){
  memset(v, 0, sizeof(*v));
  if( eDomain==D_MIXED ) eDomain = rnd(4);
  switch( eDomain ){
    case D_SMALLINT:
      v->t = SQLITE_INTEGER;
      v->i = rnd(12) - 2;
      break;
    case D_NUMERIC:
      switch( rnd(6) ){
        case 0: v->t = SQLITE_INTEGER; v->i = aEdgeInt[rnd(15)]; break;
        case 1: v->t = SQLITE_FLOAT;
                v->r = aEdgeReal[rnd(sizeof(aEdgeReal)/sizeof(double))]; break;
        case 2: v->t = SQLITE_FLOAT; v->r = (double)(rnd(20) - 5); break;
        case 3: v->t = SQLITE_INTEGER; v->i = rnd(20) - 5; break;
        case 4: {
          u64 b = rnd64();
          memcpy(&v->r, &b, 8);
          v->t = SQLITE_FLOAT;
          if( isnan(v->r) ) v->r = 0.25;   /* SQLite would store NULL */
          break;
        }
        default: v->t = SQLITE_FLOAT; v->r = (rnd(200) - 100) / 8.0; break;
      }
      break;
    case D_TEXT:
      if( chance(70) ){
        const char *z = azEdgeText[rnd(sizeof(azEdgeText)/sizeof(char*))];
        valText(v, SQLITE_TEXT, z, (int)strlen(z));
      }else{
        char zBuf[16];
        int n = rnd(6), i;
        for(i=0; i<n; i++) zBuf[i] = (char)('a' + rnd(3));
        valText(v, SQLITE_TEXT, zBuf, n);
      }
      break;
    case D_BLOB: {
      char zBuf[8];
      int n = rnd(5), i;
      for(i=0; i<n; i++) zBuf[i] = (char)(chance(50) ? rnd(3) : 'a' + rnd(2));
      valText(v, SQLITE_BLOB, zBuf, n);
      break;
    }
    case D_WIDE: {
      int n = 100 + rnd(1500), i;
      char *z = malloc((size_t)n);
      if( z==0 ) abort();
      for(i=0; i<n; i++) z[i] = (char)('a' + (i*7 + n) % 26);
      z[rnd(n)] = (char)('0' + rnd(10));
      valText(v, SQLITE_TEXT, z, n);
      free(z);
      break;
    }
    default: {  /* D_SPREAD */
      int x = rnd(nSpace*2 + 1) - nSpace;
      if( chance(75) ){
        v->t = SQLITE_INTEGER;
        v->i = x;
      }else if( chance(50) ){
        v->t = SQLITE_FLOAT;
        v->r = x;
      }else{
        char zBuf[24];
        snprintf(zBuf, sizeof(zBuf), "k%d", x);
        valText(v, SQLITE_TEXT, zBuf, (int)strlen(zBuf));
      }
      break;
    }
  }
}

static void valBind(sqlite3_stmt *pStmt, int i, const Val *v){
  switch( v->t ){
    case SQLITE_INTEGER: sqlite3_bind_int64(pStmt, i, v->i); break;
    case SQLITE_FLOAT: sqlite3_bind_double(pStmt, i, v->r); break;
    case SQLITE_TEXT: sqlite3_bind_text(pStmt, i, v->z, v->n, SQLITE_STATIC); break;
    case SQLITE_BLOB: sqlite3_bind_blob(pStmt, i, v->z, v->n, SQLITE_STATIC); break;
    default: sqlite3_bind_null(pStmt, i); break;
  }
}

/*************************************************************************
** A round: two tables, and the inputs made of them
*/

/* One column of a table: its name, type and where its values come from. */
typedef struct Col Col;
struct Col {
  char zName[32];
  const char *zType;
  int eDomain;
  int nPool;
  Val *aPool;
  int pctNull;
  int bSkew;              /* the first values of the pool are much likelier */
};

/* One input of the round: a table, view or query, and its columns. */
typedef struct Input Input;
struct Input {
  char zArg[512];         /* dataset text for the extension */
  char zVtab[512];        /* CREATE argument value, or "" to quote zArg */
  char zSql[512];         /* plain SQL for the oracle */
  int nCol;               /* its columns ... */
  int aiBase[MAX_COL];    /* ... as columns of the table */
  char azName[MAX_COL][40];  /* ... and their names */
};

typedef struct Round Round;
struct Round {
  int anRow[2];
  int anCol[2];
  Col aaCol[2][MAX_COL];
  Input aIn[2];
  int bSelf;              /* both inputs read table dl */
};

static const char *const azTable[2] = { "dl", "dr" };
static const char *const azColName[] = {
  "id", "k", "k2", "k3", "p", "q", "Name", "odd name", "x\"y", "v\xc3\xa9",
  "_x", "val"
};
static const char *const azType[] = {
  "", "", "", "", "INTEGER", "TEXT", "REAL", "NUMERIC", "BLOB", "ANY",
  "VARCHAR(10)"
};

/* Rows of a table: 0 now and then, else spread over 1 .. nMax, mostly small. */
static int pickRows(int nMax){
  int r = rnd(100);
  if( r<4 ) return 0;
  if( r<14 ) return 1 + rnd(3);
  if( r<90 ) return 1 + (int)pow((double)(nMax<200 ? nMax : 200), rndUnit());
  return 1 + (int)pow((double)nMax, rndUnit());
}

static void freeRound(Round *p){
  int s, c, i;
  for(s=0; s<2; s++){
    for(c=0; c<p->anCol[s]; c++){
      Col *pCol = &p->aaCol[s][c];
      for(i=0; i<pCol->nPool; i++) free(pCol->aPool[i].z);
      free(pCol->aPool);
    }
  }
  memset(p, 0, sizeof(*p));
}

static void makeColumn(Col *pCol, int nRow, int bBig){
  int i;
  int aDistinct[6];
  aDistinct[0] = 1; aDistinct[1] = 2; aDistinct[2] = 5;
  aDistinct[3] = nRow/10 + 1; aDistinct[4] = nRow + 1; aDistinct[5] = 3*nRow + 1;
  pCol->zType = azType[rnd(sizeof(azType)/sizeof(char*))];
  pCol->eDomain = rnd(N_DOMAIN);
  if( pCol->eDomain==D_WIDE && chance(60) ) pCol->eDomain = D_TEXT;
  pCol->nPool = aDistinct[rnd(6)];
  pCol->bSkew = chance(30);
  pCol->pctNull = chance(40) ? 0 : (chance(70) ? 10 : 40);
  if( bBig ){
    /* Many rows on both sides: keep every key's group small, so that the
    ** joins produce about as many rows as they read. */
    pCol->eDomain = D_SPREAD;
    if( pCol->nPool < nRow/4 + 1 ) pCol->nPool = nRow/4 + 1;
    pCol->bSkew = 0;
  }
  pCol->aPool = calloc((size_t)pCol->nPool, sizeof(Val));
  if( pCol->aPool==0 ) abort();
  for(i=0; i<pCol->nPool; i++){
    valRandom(&pCol->aPool[i], pCol->eDomain, pCol->nPool);
  }
}

static const Val *pickValue(const Col *pCol){
  static const Val vNull = { SQLITE_NULL, 0, 0.0, 0, 0 };
  int i;
  if( chance(pCol->pctNull) ) return &vNull;
  if( pCol->bSkew ) i = (int)(pCol->nPool * pow(rndUnit(), 3.0));
  else i = rnd(pCol->nPool);
  if( i>=pCol->nPool ) i = pCol->nPool - 1;
  return &pCol->aPool[i];
}

static int execf(sqlite3 *db, const char *zFmt, ...){
  va_list ap;
  char *zSql, *zErr = 0;
  int rc;
  va_start(ap, zFmt);
  zSql = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  rc = sqlite3_exec(db, zSql, 0, 0, &zErr);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "soak: %s\n  in: %s\n", zErr, zSql);
    exit(2);
  }
  sqlite3_free(zSql);
  return rc;
}

/* Pick names for the columns of a table: distinct, ignoring case. */
static void nameColumns(Col *aCol, int nCol){
  int c, j;
  for(c=0; c<nCol; c++){
    for(;;){
      int bClash = 0;
      snprintf(aCol[c].zName, sizeof(aCol[c].zName), "%s",
               azColName[rnd(sizeof(azColName)/sizeof(char*))]);
      for(j=0; j<c; j++){
        if( sqlite3_stricmp(aCol[j].zName, aCol[c].zName)==0 ) bClash = 1;
      }
      if( !bClash ) break;
    }
  }
}

/* Write the rows of table s. */
static void fillTable(sqlite3 *db, Round *p, int s){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("INSERT INTO %s VALUES(?1", azTable[s]);
  int r, c;
  for(c=1; c<p->anCol[s]; c++){
    char *z = sqlite3_mprintf("%s, ?%d", zSql, c+1);
    sqlite3_free(zSql);
    zSql = z;
  }
  {
    char *z = sqlite3_mprintf("%s)", zSql);
    sqlite3_free(zSql);
    zSql = z;
  }
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    fprintf(stderr, "soak: %s\n", sqlite3_errmsg(db));
    exit(2);
  }
  sqlite3_free(zSql);
  for(r=0; r<p->anRow[s]; r++){
    for(c=0; c<p->anCol[s]; c++) valBind(pStmt, c+1, pickValue(&p->aaCol[s][c]));
    sqlite3_step(pStmt);
    sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
}

/* How side s of the round is given: a table, a view, or a query. */
static void makeInput(Round *p, int s){
  Input *pIn = &p->aIn[s];
  int t = (s==1 && p->bSelf) ? 0 : s;
  const char *zT = azTable[t];
  int nCol = p->anCol[t];
  int c;
  memset(pIn, 0, sizeof(*pIn));
  pIn->nCol = nCol;
  for(c=0; c<nCol; c++){
    pIn->aiBase[c] = c;
    snprintf(pIn->azName[c], sizeof(pIn->azName[c]), "%s", p->aaCol[t][c].zName);
  }
  snprintf(pIn->zSql, sizeof(pIn->zSql), "SELECT * FROM %s", zT);
  switch( rnd(9) ){
    case 0: case 1:
      snprintf(pIn->zArg, sizeof(pIn->zArg), "%s", zT);
      snprintf(pIn->zVtab, sizeof(pIn->zVtab), "%s", zT);
      break;
    case 2:
      snprintf(pIn->zArg, sizeof(pIn->zArg), "main.\"%s\"", zT);
      break;
    case 3:
      snprintf(pIn->zArg, sizeof(pIn->zArg), "v%s", zT);
      break;
    case 4:
      snprintf(pIn->zArg, sizeof(pIn->zArg), "SELECT * FROM %s", zT);
      break;
    case 5:
      snprintf(pIn->zArg, sizeof(pIn->zArg),
               " ( WITH w AS (SELECT * FROM %s) SELECT * FROM w ) ; -- all", zT);
      break;
    default: {
      /* A query of some of the columns, in another order, one renamed. */
      int aPerm[MAX_COL], n = 1 + rnd(nCol), i;
      char zList[400] = "";
      for(i=0; i<nCol; i++) aPerm[i] = i;
      for(i=nCol-1; i>0; i--){
        int j = rnd(i+1), x = aPerm[i];
        aPerm[i] = aPerm[j];
        aPerm[j] = x;
      }
      pIn->nCol = n;
      for(i=0; i<n; i++){
        char *zItem;
        const char *zBase = p->aaCol[t][aPerm[i]].zName;
        pIn->aiBase[i] = aPerm[i];
        if( i==0 && chance(50) ){
          zItem = sqlite3_mprintf("%s\"%w\" AS \"renamed %d\"", i ? ", " : "",
                                  zBase, s);
          snprintf(pIn->azName[i], sizeof(pIn->azName[i]), "renamed %d", s);
        }else{
          zItem = sqlite3_mprintf("%s\"%w\"", i ? ", " : "", zBase);
          snprintf(pIn->azName[i], sizeof(pIn->azName[i]), "%s", zBase);
        }
        strncat(zList, zItem, sizeof(zList) - strlen(zList) - 1);
        sqlite3_free(zItem);
      }
      snprintf(pIn->zSql, sizeof(pIn->zSql), "SELECT %s FROM %s", zList, zT);
      snprintf(pIn->zArg, sizeof(pIn->zArg), "%s", pIn->zSql);
      break;
    }
  }
}

static void makeRound(sqlite3 *db, Round *p, u64 seed, int iRound, int nMaxRow){
  int s, c;
  int bBig;
  freeRound(p);
  seedRng(seed, (u64)iRound, 0);
  p->bSelf = chance(8);
  for(s=0; s<2; s++){
    p->anRow[s] = pickRows(nMaxRow);
    p->anCol[s] = 2 + rnd(MAX_COL - 1);
  }
  if( p->bSelf ){ p->anRow[1] = p->anRow[0]; p->anCol[1] = p->anCol[0]; }
  bBig = (i64)p->anRow[0] * p->anRow[1] > 100000;
  execf(db, "DROP VIEW IF EXISTS vdl; DROP VIEW IF EXISTS vdr;"
            "DROP TABLE IF EXISTS dl; DROP TABLE IF EXISTS dr;");
  for(s=0; s<2; s++){
    char *zCreate;
    nameColumns(p->aaCol[s], p->anCol[s]);
    for(c=0; c<p->anCol[s]; c++) makeColumn(&p->aaCol[s][c], p->anRow[s], bBig);
    zCreate = sqlite3_mprintf("CREATE TABLE %s(", azTable[s]);
    for(c=0; c<p->anCol[s]; c++){
      char *z = sqlite3_mprintf("%s%s\"%w\" %s", zCreate, c ? ", " : "",
                                p->aaCol[s][c].zName, p->aaCol[s][c].zType);
      sqlite3_free(zCreate);
      zCreate = z;
    }
    execf(db, "%s); CREATE VIEW v%s AS SELECT * FROM %s;", zCreate,
          azTable[s], azTable[s]);
    sqlite3_free(zCreate);
  }
  execf(db, "BEGIN");
  for(s=0; s<2; s++){
    if( s==0 || !p->bSelf ) fillTable(db, p, s);
  }
  execf(db, "COMMIT");
  for(s=0; s<2; s++) makeInput(p, s);
}

/*************************************************************************
** A case
*/
static const char *const azHint[] = {
  "OPTIMIZER_CHOOSES", "BROADCAST_HASH_FIRST", "BROADCAST_HASH_SECOND",
  "REPARTITION_HASH_FIRST", "REPARTITION_HASH_SECOND", "REPARTITION_SORT_MERGE"
};
static const char *const azCrossHint[] = {
  "OPTIMIZER_CHOOSES", "FIRST_IS_SMALL", "SECOND_IS_SMALL"
};
static const char *const azJoinArg[4][2] = {
  { "INNER", "inner" }, { "LEFT_OUTER", "left" },
  { "RIGHT_OUTER", "Right" }, { "FULL_OUTER", "FULL" }
};
static const i64 aMemLimit[] = {
  1, 100, 1024, 4096, 16384, 65536, 262144, 1048576, 268435456
};

/* Text storage for one case's arguments. */
typedef struct CaseText CaseText;
struct CaseText {
  char azKey[2][256];
  char zHint[64];
};

/* The name of an input column as a key argument: quoted when it must be. */
static void keyName(char *zOut, size_t nOut, const char *zName){
  const char *c;
  int bPlain = (zName[0]<'0' || zName[0]>'9');
  for(c=zName; *c; c++){
    if( !((*c>='a' && *c<='z') || (*c>='A' && *c<='Z') || *c=='_'
          || (*c>='0' && *c<='9')) ) bPlain = 0;
  }
  if( bPlain && chance(20) ){
    /* Names match without regard to case. */
    size_t i, n = strlen(zName);
    for(i=0; i<n && i+1<nOut; i++){
      char ch = zName[i];
      zOut[i] = (char)((ch>='a' && ch<='z') ? ch-32 : (ch>='A' && ch<='Z') ? ch+32 : ch);
    }
    zOut[i] = 0;
  }else if( bPlain && chance(80) ){
    snprintf(zOut, nOut, "%s", zName);
  }else{
    char *z = sqlite3_mprintf("\"%w\"", zName);
    snprintf(zOut, nOut, "%s", z);
    sqlite3_free(z);
  }
}

/* Pick the key columns of both sides, and how each side names them. */
static void makeKeys(const Round *pR, OrCase *pCase, CaseText *pT){
  int nMax = pR->aIn[0].nCol < pR->aIn[1].nCol ? pR->aIn[0].nCol : pR->aIn[1].nCol;
  int nKey = chance(60) ? 1 : chance(75) ? 2 : 3;
  int s, i, j;
  if( nKey>nMax ) nKey = nMax;
  for(s=0; s<2; s++){
    OrSide *pS = &pCase->a[s];
    const Input *pIn = &pR->aIn[s];
    int eStyle = rnd(4);      /* 0 names, 1 positions, 2 mixed, 3 integer */
    char *zKey = pT->azKey[s];
    pS->nKey = nKey;
    for(i=0; i<nKey; i++){
      int bDup;
      do{
        pS->aiKey[i] = rnd(pIn->nCol);
        bDup = 0;
        for(j=0; j<i; j++) if( pS->aiKey[j]==pS->aiKey[i] ) bDup = 1;
      }while( bDup );
    }
    if( eStyle==3 && nKey==1 ){
      pS->zKeyArg = 0;
      pS->iKeyArg = pS->aiKey[0];
      continue;
    }
    zKey[0] = 0;
    for(i=0; i<nKey; i++){
      char zOne[96];
      if( eStyle==1 || (eStyle==2 && chance(50)) ){
        snprintf(zOne, sizeof(zOne), "%d", pS->aiKey[i]);
      }else{
        keyName(zOne, sizeof(zOne), pIn->azName[pS->aiKey[i]]);
      }
      if( i ) strncat(zKey, chance(50) ? "," : " , ", 255 - strlen(zKey));
      strncat(zKey, zOne, 255 - strlen(zKey));
    }
    pS->zKeyArg = zKey;
  }
}

/* A hint in some spelling: as listed, or in lower case. */
static const char *spellHint(CaseText *pT, const char *zHint){
  size_t i;
  if( chance(80) ) return zHint;
  for(i=0; zHint[i] && i+1<sizeof(pT->zHint); i++){
    char c = zHint[i];
    pT->zHint[i] = (char)((c>='A' && c<='Z') ? c+32 : c);
  }
  pT->zHint[i] = 0;
  return pT->zHint;
}

/* Choose ORDER BY terms for a CREATE-form case over the given columns. */
static void makeOrder(OrCase *pCase, const int *aiCand, int nCand){
  int i;
  pCase->nOrder = 1 + rnd(nCand < OR_MAX_KEY ? nCand : OR_MAX_KEY);
  if( pCase->nOrder>nCand ) pCase->nOrder = nCand;
  for(i=0; i<pCase->nOrder; i++){
    pCase->aiOrder[i] = aiCand[i];
    pCase->aOrderFlag[i] = 0;
    if( chance(15) ) pCase->aOrderFlag[i] |= OR_DESC;
    if( chance(10) ) pCase->aOrderFlag[i] |= OR_NULLS_LAST;
  }
}

static void makeCase(const Round *pR, OrCase *pCase, CaseText *pT,
                     u64 seed, int iRound, int iCase){
  int r, s, i;
  i64 nPairs = (i64)pR->anRow[0] * pR->anRow[1];
  memset(pCase, 0, sizeof(*pCase));
  memset(pT, 0, sizeof(*pT));
  seedRng(seed, (u64)iRound, (u64)iCase + 1);
  for(s=0; s<2; s++){
    pCase->a[s].zArg = pR->aIn[s].zArg;
    pCase->a[s].zVtabArg = pR->aIn[s].zVtab[0] ? pR->aIn[s].zVtab : 0;
    pCase->a[s].zSql = pR->aIn[s].zSql;
  }
  r = rnd(100);
  pCase->eOp = r<70 ? OR_JOIN : r<85 ? OR_COGROUP : r<95 ? OR_CROSS : OR_PLAN;
  if( pCase->eOp==OR_CROSS && nPairs>20000 ) pCase->eOp = OR_JOIN;
  pCase->bVtab = pCase->eOp!=OR_PLAN && chance(45);
  pCase->bLiteral = chance(30);
  pCase->nMemLimit = chance(20) ? 0 : aMemLimit[rnd(sizeof(aMemLimit)/sizeof(i64))];
  if( pCase->eOp!=OR_CROSS ) makeKeys(pR, pCase, pT);
  pCase->eJoin = rnd(4);
  switch( pCase->eOp ){
    case OR_JOIN: case OR_PLAN:
      r = rnd(8);
      if( r<6 ) pCase->zHint = spellHint(pT, azHint[r]);
      else if( r==6 && !pCase->bVtab ) pCase->bHintNull = 1;
      if( pCase->eJoin || chance(50) ){
        pCase->zJoinArg = azJoinArg[pCase->eJoin][rnd(2)];
      }
      break;
    case OR_CROSS:
      r = rnd(4);
      if( r<3 ) pCase->zHint = spellHint(pT, azCrossHint[r]);
      break;
    default:
      break;
  }
  if( pCase->bVtab ){
    int aiCand[2*OR_MAX_KEY + MAX_COL*2];
    int n = 0;
    if( pCase->eOp==OR_COGROUP ){
      for(i=0; i<pCase->a[0].nKey; i++) aiCand[n++] = i;
      if( chance(40) ) makeOrder(pCase, aiCand, n);
    }else{
      if( chance(30) ) pCase->mProj = rnd64() | 1;
      if( chance(35) ){
        /* The key columns of one side, in key order: what sort-merge may
        ** consume; now and then any columns. */
        int iSide = rnd(2);
        int nLeft = pR->aIn[0].nCol;
        if( pCase->eOp==OR_JOIN && chance(80) ){
          for(i=0; i<pCase->a[iSide].nKey; i++){
            aiCand[n++] = pCase->a[iSide].aiKey[i] + (iSide ? nLeft : 0);
          }
        }else{
          int nAll = nLeft + pR->aIn[1].nCol;
          for(i=0; i<OR_MAX_KEY; i++) aiCand[n++] = rnd(nAll);
          for(i=1; i<n; i++) if( aiCand[i]==aiCand[0] ) aiCand[i] = -1;
          { int j = 0; for(i=0; i<n; i++) if( aiCand[i]>=0 ) aiCand[j++] = aiCand[i]; n = j; }
        }
        makeOrder(pCase, aiCand, n);
        if( pCase->eOp==OR_JOIN && chance(25) ) pCase->bGroupBy = 1;
      }
    }
  }else if( pCase->eOp!=OR_PLAN ){
    pCase->bCount = chance(15);
  }
}

/*************************************************************************
** Shrinking a failing case, and printing it
*/

/* Does the case still fail (mismatch or failure, as before)? */
static int stillFails(OrCtx *pOr, const OrCase *pCase){
  int e = orCheck(pOr, pCase);
  return e==OR_MISMATCH || e==OR_FAILED;
}

/* Delete rows of table zT in chunks as long as the case keeps failing. */
static void shrinkTable(sqlite3 *db, OrCtx *pOr, const OrCase *pCase,
                        const char *zT){
  i64 nRow;
  i64 nChunk;
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT count(*) FROM %s", zT);
  sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  sqlite3_step(pStmt);
  nRow = sqlite3_column_int64(pStmt, 0);
  sqlite3_finalize(pStmt);
  for(nChunk=nRow/2; nChunk>=1; nChunk/=2){
    i64 iStart = 0;
    while( iStart < nRow ){
      execf(db, "SAVEPOINT shrink; DELETE FROM %s WHERE rowid IN"
                " (SELECT rowid FROM %s ORDER BY rowid LIMIT %lld OFFSET %lld)",
            zT, zT, nChunk, iStart);
      if( stillFails(pOr, pCase) ){
        execf(db, "RELEASE shrink");
        nRow -= nChunk;
      }else{
        execf(db, "ROLLBACK TO shrink; RELEASE shrink");
        iStart += nChunk;
      }
    }
  }
}

static void printCase(sqlite3 *db, OrCtx *pOr, const Round *pR,
                      const OrCase *pCase, int bShrink){
  int s;
  if( bShrink && stillFails(pOr, pCase) ){
    shrinkTable(db, pOr, pCase, "dl");
    if( !pR->bSelf ) shrinkTable(db, pOr, pCase, "dr");
    stillFails(pOr, pCase);
  }
  if( getenv("SOAK_SAVE") ){
    /* The database as it is, for a closer look: SOAK_SAVE=FILE. */
    execf(db, "VACUUM INTO %Q", getenv("SOAK_SAVE"));
  }
  printf("-- the tables (run in the sqlite3 shell after .load build/dataset)\n");
  for(s=0; s<2; s++){
    orDumpTable(db, azTable[s], stdout);
    printf("CREATE VIEW v%s AS SELECT * FROM %s;\n", azTable[s], azTable[s]);
  }
  orReport(pOr, pCase, stdout);
  fflush(stdout);
}

/*************************************************************************
** Main
*/
static double nowSeconds(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec/1e9;
}

static void usage(void){
  fprintf(stderr, "usage: soak [--seed N] [--cases N] [--case N] [--rows N]"
          " [--progress N] [--report N] [--slow SEC] [--temp-dir DIR]"
          " [--no-shrink] [--verbose]\n");
  exit(2);
}

int main(int argc, char **argv){
  u64 seed = 1;
  i64 nCase = 1000, iOnly = -1, nProgress = 0;
  int nMaxRow = 3000, nReport = 3, bShrink = 1, bVerbose = 0;
  double nSlow = 5.0;
  const char *zTempDir = access("/dev/shm", W_OK)==0 ? "/dev/shm" : 0;
  double aTime[10][4];
  int anTime[10][4];
  i64 anForm[4][2];
  i64 i, nMismatch = 0, nRowsCompared = 0;
  int iRound = -1;
  sqlite3 *db = 0;
  OrCtx *pOr = 0;
  Round round;
  char *zErr = 0;
  time_t t0 = time(0);
  int k;

  for(k=1; k<argc; k++){
    const char *z = argv[k];
    const char *zVal = k+1<argc ? argv[k+1] : 0;
    if( strcmp(z, "--no-shrink")==0 ){ bShrink = 0; continue; }
    if( strcmp(z, "--verbose")==0 ){ bVerbose = 1; continue; }
    if( zVal==0 ) usage();
    if( strcmp(z, "--seed")==0 ) seed = strtoull(zVal, 0, 10);
    else if( strcmp(z, "--cases")==0 ) nCase = strtoll(zVal, 0, 10);
    else if( strcmp(z, "--case")==0 ) iOnly = strtoll(zVal, 0, 10);
    else if( strcmp(z, "--rows")==0 ) nMaxRow = atoi(zVal);
    else if( strcmp(z, "--progress")==0 ) nProgress = strtoll(zVal, 0, 10);
    else if( strcmp(z, "--report")==0 ) nReport = atoi(zVal);
    else if( strcmp(z, "--slow")==0 ) nSlow = atof(zVal);
    else if( strcmp(z, "--temp-dir")==0 ) zTempDir = zVal;
    else usage();
    k++;
  }
  if( nMaxRow<1 ) nMaxRow = 1;
  memset(&round, 0, sizeof(round));
  memset(aTime, 0, sizeof(aTime));
  memset(anTime, 0, sizeof(anTime));
  memset(anForm, 0, sizeof(anForm));
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK
   || sqlite3_dataset_init(db, &zErr, 0)!=SQLITE_OK
   || orOpen(db, &pOr)!=SQLITE_OK
   || orTestThreads(db)!=SQLITE_OK ){
    fprintf(stderr, "soak: cannot set up: %s\n", zErr ? zErr : sqlite3_errmsg(db));
    return 2;
  }
  if( zTempDir ) execf(db, "SELECT ds_config('temp_dir', %Q)", zTempDir);
  printf("soak: seed %llu, %lld cases, tables of 0 to %d rows\n",
         (unsigned long long)seed, iOnly>=0 ? 1 : nCase, nMaxRow);
  fflush(stdout);
  for(i=(iOnly>=0 ? iOnly : 0); i<(iOnly>=0 ? iOnly+1 : nCase); i++){
    OrCase c;
    CaseText text;
    double tCase;
    int e;
    if( i/ROUND_CASES != iRound ){
      iRound = (int)(i/ROUND_CASES);
      makeRound(db, &round, seed, iRound, nMaxRow);
    }
    makeCase(&round, &c, &text, seed, iRound, (int)(i%ROUND_CASES));
    tCase = nowSeconds();
    e = orCheck(pOr, &c);
    tCase = nowSeconds() - tCase;
    {
      int iMem = 0;
      while( iMem<(int)(sizeof(aMemLimit)/sizeof(i64)) && aMemLimit[iMem]!=c.nMemLimit ) iMem++;
      aTime[iMem][c.eOp] += tCase;
      anTime[iMem][c.eOp]++;
      anForm[c.eOp][c.bVtab]++;
    }
    if( tCase>=nSlow ){
      char *zSql = orCaseSql(pOr, &c);
      printf("-- slow: case %lld took %.1fs (round %d: %d and %d rows)\n%s",
             i, tCase, iRound, round.anRow[0], round.anRow[1], zSql);
      sqlite3_free(zSql);
    }
    nRowsCompared += orRows(pOr);
    if( bVerbose || iOnly>=0 ){
      char *zSql = orCaseSql(pOr, &c);
      printf("-- case %lld (round %d: %d and %d rows): %s\n%s",
             i, iRound, round.anRow[0], round.anRow[1],
             e==OR_OK ? "ok" : orMessage(pOr), zSql);
      sqlite3_free(zSql);
    }
    if( e!=OR_OK ){
      nMismatch++;
      printf("MISMATCH seed %llu case %lld: %s\n", (unsigned long long)seed,
             i, orMessage(pOr));
      printf("-- reproduce: build/soak --seed %llu --case %lld\n",
             (unsigned long long)seed, i);
      if( nMismatch<=nReport ){
        printCase(db, pOr, &round, &c, bShrink);
        /* The tables were cut down: make the round again. */
        iRound = -1;
      }
      fflush(stdout);
    }
    if( nProgress>0 && (i+1)%nProgress==0 ){
      printf("%lld cases, %lld mismatches, %lld rows compared, %lds\n",
             i+1, nMismatch, nRowsCompared, (long)(time(0) - t0));
      fflush(stdout);
    }
  }
  {
    /* What the cases were: operators and forms, budgets. */
    static const char *const azOp[] = { "join", "cogroup", "cross", "plan" };
    i64 nSpill = 0;
    int m, o;
    printf("cases by operator (table-valued + CREATE form):");
    for(o=0; o<4; o++){
      printf(" %s %lld+%lld", azOp[o], anForm[o][0], anForm[o][1]);
    }
    for(m=0; m<8; m++) for(o=0; o<4; o++) nSpill += anTime[m][o];
    printf("; under a budget of 1 MiB or less: %lld\n", nSpill);
  }
  printf("%lld cases, %lld mismatches (seed %llu, %lld rows compared, %lds)\n",
         iOnly>=0 ? 1 : nCase, nMismatch, (unsigned long long)seed,
         nRowsCompared, (long)(time(0) - t0));
  if( bVerbose ){
    int m, o;
    for(m=0; m<10; m++){
      printf("memory %10lld:", m<9 ? aMemLimit[m] : 0LL);
      for(o=0; o<4; o++) printf("  %6d cases %7.1fs", anTime[m][o], aTime[m][o]);
      printf("\n");
    }
  }
  freeRound(&round);
  orClose(pOr);
  sqlite3_close(db);
  return nMismatch ? 1 : 0;
}
