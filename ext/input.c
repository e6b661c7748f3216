/*
** input.c: dataset arguments, key arguments, and reading rows from inputs.
**
** A dataset argument is text naming a table or view (optionally
** schema-qualified, quoted where needed) or one read-only query starting
** with SELECT, WITH or VALUES, optionally in parentheses.  Blanks and
** comments around either, and semicolons after it, are a statement's
** tail, not part of the name or query: ' sp ' and 'sp;' name sp, as
** 'SELECT 1;;' is the query SELECT 1; a name with a blank at an end is
** quoted.  Names match as SQLite matches them (ASCII letters without
** regard to case, other letters exactly), since SQLite resolves them:
** the extension only quotes them again.  dsInputOpen()
** turns it into a DsInput: a SELECT that yields the whole input, plus the
** input's column names (made unique: id, id_2) and declared types.
**
** No argument is ever pasted into SQL as it stands.  A name is parsed into
** its schema and object parts, which are then quoted with "%w".  A query
** is compiled on its own first: it must be one complete statement that
** sqlite3_stmt_readonly() accepts, with nothing after it but space,
** comments and semicolons, that calls no function SQLite allows only in
** top-level SQL (below).  Only then is it used as the body of a CTE, on
** lines of its own so that a trailing line comment cannot swallow the
** closing parenthesis.
**
** Functions registered SQLITE_DIRECTONLY (load_extension(), the sqlite3
** shell's readfile() and writefile(), ds_config()) are refused by SQLite
** in views and triggers, which may come from a database file nobody
** checked.  The extension compiles a dataset query itself, as top-level
** SQL, so SQLite cannot tell that its text came from a view:
** `CREATE VIEW v AS SELECT * FROM ds_join_hint('SELECT writefile(...)'
** ...)` would write a file whenever v is read.  So a dataset query that
** calls such a function is refused, wherever it comes from: the functions
** it calls are read from its bytecode (EXPLAIN), their flags from
** pragma_function_list.
**
** A reader reads
**
**     WITH "ds:input"(c0, c1, ...) AS (<body>) SELECT cK1, ..., cP1, ...
**
** (under another name, ds:input:2 and so on, when the body holds the text
** ds:input: a table of that name would otherwise mean the CTE itself)
**
** naming exactly the columns an operator needs, key columns first: the
** CTE's column list renames the input's columns by position, so inputs
** whose result repeats a name (a query's `a.id, b.id`) are read correctly,
** and SQLite's flattener reduces this to reading just those columns.  The
** rows come out in batches, through a function in a WHERE clause around
** that query (see "Readers" below), not one sqlite3_step() per row;
** except for a reader of more columns than a function takes arguments,
** which steps its query row by row (the wide path).
*/
#include "dataset_int.h"

#include <ctype.h>
#include <stdlib.h>

#define DS_DATASET_HELP \
  "a dataset is a table or view name (optionally schema-qualified) or one " \
  "read-only query starting with SELECT, WITH or VALUES"

static void dsInputSetErr(char **pzErr, char *zMsg){
  sqlite3_free(*pzErr);
  *pzErr = zMsg;
}

/*
** The message for SQL the extension made from the zSide dataset (zText)
** that SQLite refused to compile, or NULL if SQLite's own message says it
** well enough.  Two causes get words of their own: a table that reads
** itself while it is created, and SQL over SQLite's length limit.
** SQLite says only "string or blob too big" when a text is longer than
** SQLITE_LIMIT_SQL_LENGTH, which names neither the dataset
** nor the limit; a dataset given as a bound value or built by an
** expression can be near the limit while the statement around it is
** short, and the extension's SQL adds to it.
*/
static char *dsPrepareError(sqlite3 *db, const char *zFunc,
                            const char *zSide, const char *zText,
                            const char *zSql){
  static const char zRecursive[] = "vtable constructor called recursively: ";
  int nLimit = sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, -1);
  i64 nSql = (i64)strlen(zSql);
  const char *zMsg = sqlite3_errmsg(db);
  if( zMsg && strncmp(zMsg, zRecursive, sizeof(zRecursive)-1)==0 ){
    /* CREATE VIRTUAL TABLE t whose input reads t (left=t, or a view or
    ** query over t): SQLite's words for it name no cause a user knows,
    ** and it is the cycle that a query of such tables reports. */
    return sqlite3_mprintf("%s: table %s reads itself through its inputs "
        "(a cycle of tables and views)", zFunc,
        zMsg + sizeof(zRecursive) - 1);
  }
  if( (sqlite3_errcode(db) & 0xff)!=SQLITE_TOOBIG || nSql<=nLimit ){
    return 0;
  }
  return sqlite3_mprintf("%s: the %s%sdataset '%.40s%s' is too long: the "
      "SQL that reads it has %lld bytes, more than SQLite's limit of %d "
      "bytes (SQLITE_LIMIT_SQL_LENGTH); make it a view, or raise the limit "
      "with sqlite3_limit()", zFunc, zSide ? zSide : "", zSide ? " " : "",
      zText, strlen(zText)>40 ? "..." : "", nSql, nLimit);
}

/*
** The collation of result column i of pStmt, if it is not BINARY and
** SQLite says it: NULL otherwise, or SQLITE_NOMEM in *pRc.  SQLite tells
** the collation of a table's column (sqlite3_table_column_metadata()),
** and which table column a result column reads, through views and
** subqueries, when it is built with SQLITE_ENABLE_COLUMN_METADATA (as
** Debian's is: sqlite3_column_origin_name()).  It does not tell the
** collation of an expression, so `k COLLATE NOCASE AS k` in a view or
** query, or `+k`, gives none: such a column is BINARY in the virtual
** table, though SQLite would give it NOCASE in a view.  Without
** column metadata (a loadable extension sees a NULL routine; a build
** with -DSQLITE_CORE must define SQLITE_ENABLE_COLUMN_METADATA to use
** it) only a named table's own columns get theirs.
*/
#if !defined(SQLITE_CORE) || defined(SQLITE_ENABLE_COLUMN_METADATA)
# define DS_HAVE_COLUMN_ORIGIN 1
#endif
static char *dsColumnCollation(sqlite3 *db, const DsInput *pIn,
                               sqlite3_stmt *pStmt, int i, int *pRc){
  const char *zDb = pIn->zSchema;
  const char *zTab = pIn->zName;
  const char *zCol = 0;
  const char *zColl = 0;
  char *zOut;
#ifdef DS_HAVE_COLUMN_ORIGIN
# ifndef SQLITE_CORE
  /* Left out of a SQLite built without the metadata: 0 in their slots. */
  if( sqlite3_api->column_database_name!=0
   && sqlite3_api->column_table_name!=0
   && sqlite3_api->column_origin_name!=0 )
# endif
  {
    zDb = sqlite3_column_database_name(pStmt, i);
    zTab = sqlite3_column_table_name(pStmt, i);
    zCol = sqlite3_column_origin_name(pStmt, i);
  }
#endif
  if( zCol==0 && zTab && zTab==pIn->zName ){
    /* No origin routines: a named table's column i is its column i, by
    ** name (a view's columns have no metadata: the lookup fails). */
    zCol = sqlite3_column_name(pStmt, i);
  }
  if( zTab==0 || zCol==0 ) return 0;
  if( sqlite3_table_column_metadata(db, zDb, zTab, zCol, 0, &zColl,
                                    0, 0, 0)!=SQLITE_OK
   || zColl==0 || sqlite3_stricmp(zColl, "BINARY")==0 ){
    return 0;
  }
  zOut = sqlite3_mprintf("%s", zColl);
  if( zOut==0 ) *pRc = SQLITE_NOMEM;
  return zOut;
}

/* Record the result columns of pStmt in pIn, with unique names. */
static int dsInputColumns(sqlite3 *db, DsInput *pIn, sqlite3_stmt *pStmt){
  int nCol = sqlite3_column_count(pStmt);
  int i, j;
  int rc = SQLITE_OK;
  pIn->azCol = sqlite3_malloc64(sizeof(char *) * (size_t)(nCol + 1) * 3);
  if( pIn->azCol==0 ) return SQLITE_NOMEM;
  memset(pIn->azCol, 0, sizeof(char *) * (size_t)(nCol + 1) * 3);
  pIn->azDecl = &pIn->azCol[nCol + 1];
  pIn->azColl = &pIn->azCol[(nCol + 1)*2];
  pIn->nCol = nCol;
  for(i=0; i<nCol; i++){
    const char *zName = sqlite3_column_name(pStmt, i);
    const char *zDecl = sqlite3_column_decltype(pStmt, i);
    char *zUnique;
    int iSuffix = 1;
    if( zName==0 ) return SQLITE_NOMEM;
    zUnique = sqlite3_mprintf("%s", zName);
    for(j=0; zUnique && j<i; j++){
      if( sqlite3_stricmp(zUnique, pIn->azCol[j])==0 ){
        sqlite3_free(zUnique);
        zUnique = sqlite3_mprintf("%s_%d", zName, ++iSuffix);
        j = -1;
      }
    }
    if( zUnique==0 ) return SQLITE_NOMEM;
    pIn->azCol[i] = zUnique;
    if( zDecl ){
      pIn->azDecl[i] = sqlite3_mprintf("%s", zDecl);
      if( pIn->azDecl[i]==0 ) return SQLITE_NOMEM;
    }
    pIn->azColl[i] = dsColumnCollation(db, pIn, pStmt, i, &rc);
    if( rc!=SQLITE_OK ) return rc;
  }
  return SQLITE_OK;
}

/*
** If the compiled query zBody calls a function registered with
** SQLITE_DIRECTONLY, *pzFunc gets its name (sqlite3_malloc'd).  Each
** function call of the bytecode names its function in P4 as "name(nArg)".
** Where SQLite lacks EXPLAIN or pragma_function_list no function is found.
*/
static int dsQueryDirectOnly(sqlite3 *db, const char *zBody, char **pzFunc){
  sqlite3_stmt *pExplain = 0, *pFlags = 0;
  char *zSql = sqlite3_mprintf("EXPLAIN %s", zBody);
  int rc;
  *pzFunc = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pExplain, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_function_list "
        "WHERE name = ?1 COLLATE NOCASE AND narg = ?2 "
        "AND (flags & 0x80000)!=0", -1, &pFlags, 0);      /* DIRECTONLY */
  }
  if( rc!=SQLITE_OK ){
    sqlite3_finalize(pExplain);
    return rc==SQLITE_NOMEM ? rc : SQLITE_OK;
  }
  while( *pzFunc==0 && sqlite3_step(pExplain)==SQLITE_ROW ){
    const char *zOp = (const char *)sqlite3_column_text(pExplain, 1);
    const char *zP4 = (const char *)sqlite3_column_text(pExplain, 5);
    const char *zParen;
    if( zOp==0 || zP4==0 ) continue;
    if( strcmp(zOp, "Function")!=0 && strcmp(zOp, "PureFunc")!=0
     && strncmp(zOp, "Agg", 3)!=0 ){
      continue;
    }
    zParen = strrchr(zP4, '(');
    if( zParen==0 ) continue;
    sqlite3_bind_text(pFlags, 1, zP4, (int)(zParen - zP4), SQLITE_STATIC);
    sqlite3_bind_int(pFlags, 2, atoi(zParen + 1));
    if( sqlite3_step(pFlags)==SQLITE_ROW ){
      *pzFunc = sqlite3_mprintf("%.*s", (int)(zParen - zP4), zP4);
      if( *pzFunc==0 ) rc = SQLITE_NOMEM;
    }
    sqlite3_reset(pFlags);
  }
  sqlite3_finalize(pExplain);
  sqlite3_finalize(pFlags);
  return rc;
}

/* Compile the query pIn->zBody; set up its columns or an error. */
static int dsInputOpenQuery(sqlite3 *db, const char *zFunc,
                            const char *zSide, DsInput *pIn, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  const char *zTail = 0;
  char *zDirect = 0;
  int rc = sqlite3_prepare_v2(db, pIn->zBody, -1, &pStmt, &zTail);
  if( rc!=SQLITE_OK ){
    char *zWhy = dsPrepareError(db, zFunc, zSide, pIn->zText, pIn->zBody);
    dsInputSetErr(pzErr, zWhy ? zWhy : sqlite3_mprintf(
        "%s: the %s dataset query is not valid SQL: %s",
        zFunc, zSide, sqlite3_errmsg(db)));
    return rc==SQLITE_NOMEM ? rc : SQLITE_ERROR;
  }
  if( !dsTailIsEmpty(zTail) ){
    dsInputSetErr(pzErr, sqlite3_mprintf(
        "%s: the %s dataset holds more than one statement; a dataset query "
        "must be exactly one SELECT, WITH or VALUES statement",
        zFunc, zSide));
    rc = SQLITE_ERROR;
  }else if( !sqlite3_stmt_readonly(pStmt) || sqlite3_column_count(pStmt)==0 ){
    dsInputSetErr(pzErr, sqlite3_mprintf(
        "%s: the %s dataset is a statement that writes; a dataset query "
        "must be read-only (SELECT, WITH or VALUES)", zFunc, zSide));
    rc = SQLITE_ERROR;
  }else if( (rc = dsQueryDirectOnly(db, pIn->zBody, &zDirect))!=SQLITE_OK
         || zDirect ){
    if( zDirect ){
      dsInputSetErr(pzErr, sqlite3_mprintf(
          "%s: the %s dataset query calls %s(), which SQLite allows only in "
          "top-level SQL (SQLITE_DIRECTONLY); a dataset query must not call "
          "it", zFunc, zSide, zDirect));
      rc = SQLITE_ERROR;
    }
  }else if( sqlite3_bind_parameter_count(pStmt)>0 ){
    /* The query is compiled again by every reader, and nothing could ever
    ** be bound to it there: each parameter would silently read as NULL. */
    int nParam = sqlite3_bind_parameter_count(pStmt);
    const char *zParam = 0;
    int i;
    for(i=1; i<=nParam && zParam==0; i++){
      zParam = sqlite3_bind_parameter_name(pStmt, i);
    }
    dsInputSetErr(pzErr, sqlite3_mprintf(
        "%s: the %s dataset query has a parameter (%s); a dataset query "
        "cannot take bound values: write the values into its text (for "
        "example with format() or quote())", zFunc, zSide,
        zParam ? zParam : "?"));
    rc = SQLITE_ERROR;
  }else{
    /* Keep the statement's own text, without a final semicolon. */
    int n = (int)(zTail - pIn->zBody);
    char *zBody;
    while( n>0 && (pIn->zBody[n-1]==';' || isspace((unsigned char)pIn->zBody[n-1])) ){
      n--;
    }
    zBody = sqlite3_mprintf("%.*s", n, pIn->zBody);
    if( zBody==0 ){
      rc = SQLITE_NOMEM;
    }else{
      sqlite3_free(pIn->zBody);
      pIn->zBody = zBody;
      rc = dsInputColumns(db, pIn, pStmt);
    }
  }
  sqlite3_free(zDirect);
  sqlite3_finalize(pStmt);
  return rc;
}

/* Did a step of finding out about an input (its size, whether it is a
** plain scan) run out of memory?  Other failures (no sqlite_stat1, a view
** that cannot be counted) only leave the answer unknown; this one is the
** statement's answer. */
static int dsIsNoMem(int rc){
  return (rc & 0xff)==SQLITE_NOMEM;
}

/*
** Is pIn->zBody a plain scan of one table: one cursor read from start to
** end, each row handed out, nothing filtered, grouped, sorted, limited or
** made distinct?  Then a reader can put its function in the WHERE clause
** of the scan itself (see dsReaderSql).  Decided from the statement's own
** program (EXPLAIN), so that it holds for a table, a view or a query alike
** and whatever a name resolves to: every opcode must be one that such a
** scan is made of.  On any doubt (an error included) the answer is no;
** SQLITE_NOMEM if memory ran out.
*/
static int dsBodyIsPlainScan(sqlite3 *db, const DsInput *pIn, int *pbPlain){
  static const char *const azOk[] = {
    "Init", "Goto", "Transaction", "TableLock", "OpenRead", "ColumnsUsed",
    "Explain", "Rewind", "Column", "Rowid", "RealAffinity", "ResultRow",
    "Next", "Halt", "Noop"
  };
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("EXPLAIN %s", pIn->zBody);
  int nOpen = 0;
  int bPlain = 1;
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  if( rc!=SQLITE_OK ) bPlain = 0;
  while( bPlain && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zOp = (const char *)sqlite3_column_text(pStmt, 1);
    size_t i;
    bPlain = 0;
    if( zOp==0 ) rc = SQLITE_NOMEM;
    for(i=0; zOp && i<sizeof(azOk)/sizeof(azOk[0]); i++){
      if( strcmp(zOp, azOk[i])==0 ){ bPlain = 1; break; }
    }
    if( zOp && strcmp(zOp, "OpenRead")==0 ) nOpen++;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  *pbPlain = bPlain && nOpen==1;
  /* Out of memory is an answer of its own: a plan chosen from a wrong "no"
  ** would differ from the plan of the same query with memory to spare. */
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** Double quotes make a name in SQL, so "SELECT a FROM t" names a table
** that is unlikely to exist.  When a missing name in double quotes reads
** as a query (a keyword and more, so not "values" or [with x], which may
** well be meant as names), say how a query is written instead.
*/
static const char *dsQuotedQueryHint(const DsInput *pIn){
  const char *z = pIn->zName;
  if( pIn->zSchema || *dsSkipSpace(pIn->zText)!='"'
   || !dsIsQuery(dsSkipSpace(z)) || strpbrk(z, " \t\r\n")==0 ){
    return "";
  }
  return "; a query in double quotes is read as a name: write it in "
         "single quotes in the CREATE form, without quotes in a "
         "function's text argument";
}

/* Set up a named table or view; pIn->zName (and zSchema) are set. */
static int dsInputOpenName(sqlite3 *db, const char *zFunc,
                           const char *zSide, DsInput *pIn, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  int rc;
  char *zMissing;
  if( pIn->zSchema ){
    pIn->zBody = sqlite3_mprintf("SELECT * FROM \"%w\".\"%w\"",
                                 pIn->zSchema, pIn->zName);
    zMissing = sqlite3_mprintf("no such table: %s.%s",
                               pIn->zSchema, pIn->zName);
  }else{
    pIn->zBody = sqlite3_mprintf("SELECT * FROM \"%w\"", pIn->zName);
    zMissing = sqlite3_mprintf("no such table: %s", pIn->zName);
  }
  if( pIn->zBody==0 || zMissing==0 ){
    sqlite3_free(zMissing);
    return SQLITE_NOMEM;
  }
  rc = sqlite3_prepare_v2(db, pIn->zBody, -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    rc = dsInputColumns(db, pIn, pStmt);

  }else if( rc!=SQLITE_NOMEM ){
    if( sqlite3_stricmp(sqlite3_errmsg(db), zMissing)==0 ){
      dsInputSetErr(pzErr, sqlite3_mprintf(
          "%s: no such table or view for the %s dataset: '%s'; "
          DS_DATASET_HELP "%s", zFunc, zSide, pIn->zText,
          dsQuotedQueryHint(pIn)));
    }else{
      char *zWhy = dsPrepareError(db, zFunc, zSide, pIn->zText, pIn->zBody);
      dsInputSetErr(pzErr, zWhy ? zWhy : sqlite3_mprintf(
          "%s: the %s dataset '%s' cannot be read: %s",
          zFunc, zSide, pIn->zText, sqlite3_errmsg(db)));
    }
    rc = SQLITE_ERROR;
  }
  sqlite3_free(zMissing);
  sqlite3_finalize(pStmt);
  return rc;
}

void dsInputFree(DsInput *pIn){
  if( pIn ){
    int i;
    if( pIn->azCol ){
      for(i=0; i<pIn->nCol; i++){
        sqlite3_free(pIn->azCol[i]);
        sqlite3_free(pIn->azDecl[i]);
        sqlite3_free(pIn->azColl[i]);
      }
      sqlite3_free(pIn->azCol);
    }
    sqlite3_free(pIn->zText);
    sqlite3_free(pIn->zBody);
    sqlite3_free(pIn->zSchema);
    sqlite3_free(pIn->zName);
    sqlite3_free(pIn);
  }
}

/*
** Resolve dataset argument zText (the zSide input of zFunc).  On error,
** *pzErr gets a message in the extension's style.
*/
int dsInputOpen(sqlite3 *db, const char *zFunc, const char *zSide,
                const char *zText, DsInput **ppIn, char **pzErr){
  DsInput *pIn = sqlite3_malloc64(sizeof(DsInput));
  const char *z = dsSkipSpace(zText);
  int rc;
  *ppIn = 0;
  if( pIn==0 ) return SQLITE_NOMEM;
  memset(pIn, 0, sizeof(*pIn));
  pIn->zText = sqlite3_mprintf("%s", zText);
  if( pIn->zText==0 ){
    dsInputFree(pIn);
    return SQLITE_NOMEM;
  }
  if( dsIsQuery(z) && !dsIsBareQueryKeyword(z) ){
    pIn->zBody = dsUnwrapQuery(z);
    rc = pIn->zBody ? dsInputOpenQuery(db, zFunc, zSide, pIn, pzErr)
                    : SQLITE_NOMEM;
  }else{
    char *zTrim = dsTrimEnd(z, (int)strlen(z));
    if( zTrim==0 ){
      rc = SQLITE_NOMEM;
    }else{
      rc = dsParseName(zTrim, &pIn->zSchema, &pIn->zName);
      if( rc==SQLITE_NOTFOUND ){
        if( dsLooksLikeStatement(zTrim) || zTrim[0]==0 ){
          dsInputSetErr(pzErr, sqlite3_mprintf(
              "%s: the %s dataset '%s' is neither a table or view name nor "
              "a read-only query; " DS_DATASET_HELP, zFunc, zSide, zText));
          rc = SQLITE_ERROR;
        }else{
          /* Perhaps an unquoted name with odd characters: try it whole. */
          pIn->zName = zTrim;
          zTrim = 0;
          rc = SQLITE_OK;
        }
      }
      sqlite3_free(zTrim);
      if( rc==SQLITE_OK ) rc = dsInputOpenName(db, zFunc, zSide, pIn, pzErr);
    }
  }
  if( rc==SQLITE_OK ) rc = dsBodyIsPlainScan(db, pIn, &pIn->bPlainScan);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ) dsInputSetErr(pzErr, 0);
    dsInputFree(pIn);
    return rc;
  }
  *ppIn = pIn;
  return SQLITE_OK;
}

/* "id, name" or "0 id, 1 name": the columns of an input, for messages. */
static char *dsColumnsText(const DsInput *pIn, int bNumbered){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  for(i=0; i<pIn->nCol; i++){
    if( i ) sqlite3_str_append(pStr, ", ", 2);
    if( bNumbered ) sqlite3_str_appendf(pStr, "%d ", i);
    sqlite3_str_appendall(pStr, pIn->azCol[i]);
  }
  return sqlite3_str_finish(pStr);
}

char *dsInputColumnList(const DsInput *pIn){
  return dsColumnsText(pIn, 0);
}

/* Find column zName (case-insensitive) of pIn, or -1. */
static int dsFindColumn(const DsInput *pIn, const char *zName){
  int i;
  for(i=0; i<pIn->nCol; i++){
    if( sqlite3_stricmp(pIn->azCol[i], zName)==0 ) return i;
  }
  return -1;
}

/* Is z a minus sign and digits, like "-1"? */
static int dsIsNegativeNumber(const char *z){
  if( z[0]!='-' || !isdigit((unsigned char)z[1]) ) return 0;
  for(z++; isdigit((unsigned char)*z); z++){}
  return *z==0;
}

/* The error of a key position (the nPos bytes at zPos) out of range. */
static void dsPositionError(const char *zFunc, const char *zArg,
                            const DsInput *pIn, const char *zSide,
                            const char *zPos, int nPos, char **pzErr){
  char *zCols = dsColumnsText(pIn, 0);
  dsInputSetErr(pzErr, sqlite3_mprintf(
      "%s: %s: no column at position %.*s in the %s dataset; positions "
      "run from 0 to %d (%s)", zFunc, zArg, nPos, zPos, zSide,
      pIn->nCol - 1, zCols));
  sqlite3_free(zCols);
}

/* One key term: a position, a quoted name or a bare name.  Returns the
** column number, or -1 with *pzErr set. */
static int dsKeyTerm(const char *zFunc, const char *zArg, const DsInput *pIn,
                     const char *zSide, const char *zTerm, int nTerm,
                     char **pzErr){
  char *zName = 0;
  int iCol = -1;
  int i;
  int bDigits = nTerm>0;
  for(i=0; i<nTerm; i++) bDigits = bDigits && isdigit((unsigned char)zTerm[i]);
  if( bDigits ){
    i64 iPos = 0;
    for(i=0; i<nTerm && iPos<=pIn->nCol; i++) iPos = iPos*10 + (zTerm[i]-'0');
    if( iPos<pIn->nCol ) return (int)iPos;
    dsPositionError(zFunc, zArg, pIn, zSide, zTerm, nTerm, pzErr);
    return -1;
  }
  if( dsQuotedLength(zTerm)==nTerm && nTerm>=2 ){
    if( dsParseIdent(zTerm, &zName)<0 ) return -1;
  }else{
    zName = sqlite3_mprintf("%.*s", nTerm, zTerm);
  }
  if( zName==0 ) return -1;
  iCol = dsFindColumn(pIn, zName);
  if( iCol<0 && dsIsNegativeNumber(zName) ){
    /* Meant as a position, most likely (an integer argument of -1 comes
    ** here as text too): say where positions run. */
    dsPositionError(zFunc, zArg, pIn, zSide, zName, (int)strlen(zName),
                    pzErr);
  }else if( iCol<0 ){
    char *zCols = dsColumnsText(pIn, 0);
    dsInputSetErr(pzErr, sqlite3_mprintf(
        "%s: %s: no column '%s' in the %s dataset; its columns are: %s",
        zFunc, zArg, zName, zSide, zCols));
    sqlite3_free(zCols);
  }
  sqlite3_free(zName);
  return iCol;
}

/*
** Parse key argument zKeys (named zArg, "left_key" or "right_key") against
** input pIn: comma-separated names, quoted names or 0-based positions.
*/
int dsInputKeys(const char *zFunc, const char *zArg, const DsInput *pIn,
                const char *zSide, const char *zKeys, int *pnKey,
                int **paiKey, char **pzErr){
  int *aiKey = 0;
  int nKey = 0;
  const char *z = zKeys;
  *pnKey = 0;
  *paiKey = 0;
  for(;;){
    const char *zStart;
    int n;
    int iCol;
    int *aNew;
    z = dsSkipSpace(z);
    if( *z==0 && nKey==0 ) break;
    zStart = z;
    while( *z && *z!=',' ){
      int nQ = dsQuotedLength(z);
      z += nQ ? nQ : 1;
    }
    n = (int)(z - zStart);
    while( n>0 && isspace((unsigned char)zStart[n-1]) ) n--;
    if( n==0 ){
      /* 'id,' or ',id': an empty item is a slip, not a key to skip. */
      dsInputSetErr(pzErr, sqlite3_mprintf(
          "%s: %s '%s' has an empty item; give column names or 0-based "
          "positions, comma-separated", zFunc, zArg, zKeys));
      sqlite3_free(aiKey);
      return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    iCol = dsKeyTerm(zFunc, zArg, pIn, zSide, zStart, n, pzErr);
    if( iCol<0 ){
      sqlite3_free(aiKey);
      return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    aNew = sqlite3_realloc64(aiKey, sizeof(int) * (size_t)(nKey + 1));
    if( aNew==0 ){
      sqlite3_free(aiKey);
      return SQLITE_NOMEM;
    }
    aiKey = aNew;
    aiKey[nKey++] = iCol;
    if( *z==0 ) break;
    z++;                          /* the comma: an item must follow */
  }
  if( nKey==0 ){
    dsInputSetErr(pzErr, sqlite3_mprintf(
        "%s: %s names no column; give column names or 0-based positions, "
        "comma-separated", zFunc, zArg));
    return SQLITE_ERROR;
  }
  *pnKey = nKey;
  *paiKey = aiKey;
  return SQLITE_OK;
}

/*************************************************************************
** Arguments of the table-valued forms, as SQL values.
*/

/* A dataset argument: text naming a table or view, or a query. */
int dsInputFromValue(sqlite3 *db, const char *zFunc, const char *zSide,
                     sqlite3_value *pVal, DsInput **ppIn, char **pzErr){
  char *zArg;
  int rc;
  *ppIn = 0;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: the %s dataset must be text (a table or "
        "view name or a query), not %s", zFunc, zSide, dsTypeNoun(pVal));
    return SQLITE_ERROR;
  }
  zArg = sqlite3_mprintf("the %s dataset", zSide);
  if( zArg==0 ) return SQLITE_NOMEM;
  rc = dsArgRefuseNul(zFunc, zArg, pVal, pzErr);
  sqlite3_free(zArg);
  if( rc!=SQLITE_OK ) return rc;
  return dsInputOpen(db, zFunc, zSide, (const char *)sqlite3_value_text(pVal),
                     ppIn, pzErr);
}

/* A key argument: text (names or positions) or an integer position. */
int dsKeysFromValue(const char *zFunc, const char *zArg, const DsInput *pIn,
                    const char *zSide, sqlite3_value *pVal, int *pnKey,
                    int **paiKey, char **pzErr){
  const char *zKeys;
  char aNum[24];
  int rc;
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_TEXT:
      rc = dsArgRefuseNul(zFunc, zArg, pVal, pzErr);
      if( rc!=SQLITE_OK ) return rc;
      zKeys = (const char *)sqlite3_value_text(pVal);
      break;
    case SQLITE_INTEGER:
      sqlite3_snprintf(sizeof(aNum), aNum, "%lld", sqlite3_value_int64(pVal));
      zKeys = aNum;
      break;
    default:
      *pzErr = sqlite3_mprintf("%s: %s must be text (column names or 0-based "
          "positions) or an integer position, not %s", zFunc, zArg,
          dsTypeNoun(pVal));
      return SQLITE_ERROR;
  }
  return dsInputKeys(zFunc, zArg, pIn, zSide, zKeys, pnKey, paiKey, pzErr);
}

/*
** The four arguments every two-input keyed operator starts with: left
** and right datasets, then left_key and right_key, which must name as
** many columns each.  On error the caller frees whatever was set.
*/
int dsInputOpenPair(sqlite3 *db, const char *zFunc, sqlite3_value **apArg,
                    DsInput **apIn, int **aaiKey, int *pnKey, char **pzErr){
  static const char *const azArg[] = { "left_key", "right_key" };
  int anKey[2] = {0, 0};
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputFromValue(db, zFunc, dsSideName(i), apArg[i], &apIn[i], pzErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsKeysFromValue(zFunc, azArg[i], apIn[i], dsSideName(i), apArg[2+i],
                         &anKey[i], &aaiKey[i], pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsCheckKeyCounts(zFunc, anKey, pzErr);
  *pnKey = anKey[0];
  return rc;
}

/* Both sides must name as many key columns. */
int dsCheckKeyCounts(const char *zFunc, const int *anKey, char **pzErr){
  if( anKey[0]==anKey[1] ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: left_key names %d column%s but right_key "
      "names %d; both sides need the same number of key columns", zFunc,
      anKey[0], anKey[0]==1 ? "" : "s", anKey[1]);
  return SQLITE_ERROR;
}

/*************************************************************************
** Readers: DsSource over an input's SELECT.
**
** Stepping a statement once per row and fetching each value with
** sqlite3_column_value() costs more than everything else a join does with
** the row: each step and each column fetch takes the connection's mutex,
** and a step is a full trip into the VDBE and back.  So the reader's SQL
** hands rows over in batches instead:
**
**     SELECT 0 FROM (
**     WITH "ds:input"(c0, c1, ...) AS (
**     <body>
**     ) SELECT cK1 AS x0, ..., cP1 AS xN FROM "ds:input" LIMIT -1
**     ) WHERE ds_input_row(?1, x0, ..., xN)
**
** ds_input_row() gets the values of one row as its arguments, makes them
** into a DsRow in the arena of the batch being read, and returns true
** only when the batch is full: the WHERE clause then lets one row through
** and sqlite3_step() returns, once per batch rather than once per row.
** ?1 is the reader itself, bound with sqlite3_bind_pointer() (SQL text
** cannot forge such a pointer, so the function is useless outside a
** reader).  The LIMIT -1, which limits nothing, keeps SQLite from
** flattening the inner query into the outer one or pushing the WHERE
** term down into it (SQLite does neither with a LIMIT): ds_input_row()
** then sees each row of the input exactly once, whatever the body is (a
** DISTINCT view, a GROUP BY, a join with a WHERE of its own), while the
** inner query is still flattened as before, so only the columns needed
** are read.  A row filter (dsSourceBatch) lets the function skip rows
** that cannot match without making them.
**
** Keys first.  SQLite evaluates every argument of ds_input_row() before
** the call, so a row the filter turns away has still had all its columns
** decoded.  When most rows of an input are turned away (the probe side of
** a selective join), its plain scan is read instead with
**
**     ... WHERE ds_input_key(?1, k0, ..., kK) AND ds_input_row(?1, ...)
**
** ds_input_key() tests the key alone, and SQLite decodes the other
** columns only of the rows it lets through.  For a row that goes on to
** ds_input_row() that costs a second call and a second decode of the key,
** so the form is taken only when a sample of the input's first keys shows
** that the filter turns away more than half of them (dsReaderKeysFirst).
**
** A function takes at most SQLITE_LIMIT_FUNCTION_ARG arguments (127 in
** Debian's SQLite, fewer if the application lowers the limit at run
** time), while an input may have SQLITE_MAX_COLUMN (2000).  A reader of more
** columns than ds_input_row() could take reads a plain
**
**     WITH "ds:input"(c0, c1, ...) AS (
**     <body>
**     ) SELECT cK1, ..., cPN FROM "ds:input"
**
** instead, one sqlite3_step() per row, and makes each row from the
** statement's sqlite3_column_value()s with the same dsRowFromValues().
** That wide path is slower per row (a step, and a column fetch per
** value, rather than one call of the function), which matters little
** beside the hundred values and more each of its rows carries; narrow
** inputs take it only where the application lowered the limit.  The
** choice is made once per reader, so ds_input_row() does no more work.
*/
typedef struct DsReader DsReader;
struct DsReader {
  DsSource base;
  DsConn *pConn;
  sqlite3_stmt *pStmt;
  int nCol;               /* columns per row */
  int nKeyCol;            /* of which keys */
  const char *zFunc;
  DsValue *aVal;          /* scratch for one row's values */
  sqlite3_value **apCol;  /* the wide path's row, as the statement has it */
  int *aiRowCol;          /* value i of its row: the statement's column */
  int bEof;               /* the statement has run to its end */
  int bNoMem;             /* ds_input_row() or ds_input_key() ran out of
                          ** memory of the extension's own */
  /* The batch being read, while sqlite3_step() runs. */
  DsArena *pArena;        /* rows go here */
  DsRow **aOut;           /* and are listed here */
  int nOut;               /* rows listed */
  int nMax;               /* the batch is full at this many rows */
  i64 nMaxByte;           /* or when pArena holds this many bytes */
  DsRowFilter *pFilter;   /* rows that cannot match are skipped, or NULL */
  /* Keys first: ds_input_key() applies the batch's filter instead. */
  int bKeysFirst;         /* pStmt reads keys first */
  DsRowFilter *pKeyFilter;  /* the batch's filter, for ds_input_key() */
  char *zKeysFirst;       /* the SQL that would, or NULL: not a plain scan */
  char *zKeySample;       /* the SQL of a sample of the input's keys */
};

#define DS_READER_PTR "ds_reader"

/* Keys in the sample that decides whether a reader reads keys first. */
#define DS_KEY_SAMPLE 4096

/* The reader of a call of ds_input_row() or ds_input_key(): kept as the
** auxiliary data of argument 0, a bound parameter that stays the same for
** the whole run of the statement, which is cheaper than finding the
** pointer (a string compare) on every row. */
static inline DsReader *dsReaderOfCall(sqlite3_context *ctx,
                                       sqlite3_value **argv){
  DsReader *p = (DsReader *)sqlite3_get_auxdata(ctx, 0);
  if( p==0 ){
    p = (DsReader *)sqlite3_value_pointer(argv[0], DS_READER_PTR);
    if( p ) sqlite3_set_auxdata(ctx, 0, p, 0);
  }
  return p;
}

/* The error of ds_input_row() or ds_input_key() (zName) called other
** than by a reader. */
static void dsReaderMisuse(sqlite3_context *ctx, const char *zName){
  char *zErr = sqlite3_mprintf("%s() is the dataset extension's own: it "
                               "reads inputs", zName);
  if( zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_free(zErr);
  }
}

/*
** ds_input_row() or ds_input_key() of reader p ran out of memory: fail
** the reader's statement with SQLITE_ERROR, not SQLITE_NOMEM, which makes
** SQLite roll back the caller's transaction when a statement ends with it
** (dataset.c); the reader then reports the extension's own out-of-memory
** (dsReaderStopped).
*/
static void dsReaderNoMem(DsReader *p, sqlite3_context *ctx){
  p->bNoMem = 1;
  sqlite3_result_error(ctx, "out of memory", -1);
}

/*
** ds_input_row(READER, value, ...): add one row to the reader's batch;
** true when the batch is full, else NULL.
*/
DS_FLATTEN static void dsReaderRowFunc(sqlite3_context *ctx, int argc,
                                       sqlite3_value **argv){
  DsReader *p = dsReaderOfCall(ctx, argv);
  DsRow *pRow;
  int rc;
  if( p==0 || argc-1!=p->nCol || p->nOut>=p->nMax ){
    dsReaderMisuse(ctx, "ds_input_row");
    return;
  }
  p->base.nRow++;
  rc = dsRowFromValues(p->pArena, argv + 1, p->nCol, p->nKeyCol, p->aVal,
                       p->pFilter, &pRow);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ){
      dsReaderNoMem(p, ctx);
    }else{
      sqlite3_result_error_toobig(ctx);
    }
    return;
  }
  if( pRow ) p->aOut[p->nOut++] = pRow;
  /* Without a result the function returns NULL, which the WHERE clause
  ** takes as false: most rows need no call. */
  if( p->nOut>=p->nMax || (p->nOut>0 && p->pArena->nByte>=p->nMaxByte) ){
    sqlite3_result_int(ctx, 1);
  }
}

/*
** ds_input_key(READER, key, ...): in a reader that reads keys first, true
** when the row of this key may find a partner (ds_input_row() then makes
** it), else NULL: the row is dropped before SQLite decodes its other
** columns.  Rows dropped here are counted here; the others by
** ds_input_row().
*/
static void dsReaderKeyFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  DsReader *p = dsReaderOfCall(ctx, argv);
  int bOut = 0;
  if( p==0 || !p->bKeysFirst || argc-1!=p->nKeyCol || p->nOut>=p->nMax ){
    dsReaderMisuse(ctx, "ds_input_key");
    return;
  }
  if( p->pKeyFilter
   && dsKeyValuesFilteredOut(p->pKeyFilter, argv + 1, p->nKeyCol, &bOut) ){
    dsReaderNoMem(p, ctx);
    return;
  }
  if( bOut ){
    p->base.nRow++;
  }else{
    sqlite3_result_int(ctx, 1);
  }
}

int dsRegisterReader(sqlite3 *db){
  int rc = sqlite3_create_function(db, "ds_input_row", -1,
                                   SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                   dsReaderRowFunc, 0, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "ds_input_key", -1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dsReaderKeyFunc, 0, 0);
  }
  return rc;
}

/*
** Inputs being stepped, one inside another.  A view that reads itself
** through a dataset argument (CREATE VIEW v AS SELECT * FROM
** ds_cross('v', 't')) has no end: each step runs the operator again,
** until the stack overflows.  The virtual-table forms see such a cycle
** at their own table; the text arguments cannot, so the depth is bounded
** here instead, far beyond any nesting written on purpose.
**
** Counted per connection (DsConn.nNesting): the steps nested inside one
** another are all of one connection's statements (a reader prepares its
** statement on the operator's connection), run on the thread that runs
** the outermost, whose stack would overflow.  Not per thread: a
** thread-local variable in a library loaded with dlopen() lives in
** dynamic TLS, whose scan makes LeakSanitizer itself crash at exit.
*/
#define DS_MAX_NESTING 64

/* Would one more input step nest too deep (or is the way out failing)?
** Once the bound is reached every level on the way out fails at once,
** counts included, rather than trying again (a count and a read per
** level would be 2^64 tries), until the outermost step returns. */
static int dsNestingTooDeep(DsConn *pConn){
  if( pConn->nNesting>=DS_MAX_NESTING ) pConn->bNestingHit = 1;
  return pConn->bNestingHit;
}

/* sqlite3_step(pStmt) on an input, unless inputs are nested too deep. */
static int dsStepInput(DsConn *pConn, sqlite3_stmt *pStmt){
  int rc;
  if( dsNestingTooDeep(pConn) ) return SQLITE_ERROR;
  pConn->nNesting++;
  rc = sqlite3_step(pStmt);
  pConn->nNesting--;
  if( pConn->nNesting==0 ) pConn->bNestingHit = 0;
  /* SQLite's own error: its code is SQLite's to keep (dataset.c). */
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) dsSqliteError(pConn, rc);
  return rc;
}

/*
** Refuse to step p's statement once inputs are nested too deep: p ends,
** with a message that reaches the query.  SQLITE_OK if it may be stepped.
*/
static int dsReaderRefuseNesting(DsReader *p){
  if( !dsNestingTooDeep(p->pConn) ) return SQLITE_OK;
  p->bEof = 1;
  sqlite3_free(p->base.zErr);
  p->base.zErr = sqlite3_mprintf("%s: datasets are nested more than %d "
      "deep (does a view read itself through a dataset argument?)",
      p->zFunc, DS_MAX_NESTING);
  return p->base.zErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* p's statement stopped with rc, not SQLITE_ROW: the end of the input
** (SQLITE_OK) or an error, whose message p keeps. */
static int dsReaderStopped(DsReader *p, int rc){
  p->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( p->bNoMem ){
    /* ds_input_row() or ds_input_key() ran out of memory of the
    ** extension's own, and failed the statement with SQLITE_ERROR (not
    ** SQLITE_NOMEM, which would make SQLite roll back the transaction):
    ** it is the extension's out-of-memory, not SQLite's, unless SQLite
    ** ran out too (its step says SQLITE_NOMEM then). */
    p->bNoMem = 0;
    if( rc!=SQLITE_NOMEM ) return SQLITE_NOMEM;
  }
  if( rc!=SQLITE_NOMEM ){
    sqlite3_free(p->base.zErr);
    p->base.zErr = sqlite3_mprintf("%s", sqlite3_errmsg(p->pConn->db));
  }
  return rc;
}

/* Up to nMax rows (fewer once pArena holds nMaxByte bytes); *pnRow 0 at
** the end. */
static int dsReaderBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow,
                         int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                         int *pnRow){
  DsReader *p = (DsReader *)pSrc;
  int rc;
  *pnRow = 0;
  if( p->bEof ) return SQLITE_OK;
  p->pArena = pArena;
  p->aOut = aRow;
  p->nOut = 0;
  p->nMax = nMax;
  p->nMaxByte = nMaxByte;
  p->pFilter = p->bKeysFirst ? 0 : pFilter;
  p->pKeyFilter = pFilter;
  rc = dsReaderRefuseNesting(p);
  if( rc!=SQLITE_OK ) return rc;
  rc = dsStepInput(p->pConn, p->pStmt);
  *pnRow = p->nOut;
  if( p->pConn->pProgress ) dsProgressAdvance(p->pConn->pProgress);
  p->pArena = 0;
  p->aOut = 0;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  rc = dsReaderStopped(p, rc);
  if( rc!=SQLITE_OK ) *pnRow = 0;
  return rc;
}

/*
** The wide path's xBatch: the same batch as dsReaderBatch() gives, made
** one sqlite3_step() per row.  A row too big for a DsRow fails as
** ds_input_row() fails it, with SQLite's "string or blob too big".
*/
static int dsReaderWideBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow,
                             int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                             int *pnRow){
  DsReader *p = (DsReader *)pSrc;
  int n = 0;
  int rc;
  *pnRow = 0;
  if( p->bEof ) return SQLITE_OK;
  while( n<nMax && (n==0 || pArena->nByte<nMaxByte) ){
    DsRow *pRow;
    int i;
    rc = dsReaderRefuseNesting(p);
    if( rc!=SQLITE_OK ) return rc;
    rc = dsStepInput(p->pConn, p->pStmt);
    if( rc!=SQLITE_ROW ){
      rc = dsReaderStopped(p, rc);
      if( rc==SQLITE_OK ) *pnRow = n;   /* the last rows of the input */
      return rc;
    }
    for(i=0; i<p->nCol; i++){
      p->apCol[i] = sqlite3_column_value(p->pStmt, p->aiRowCol[i]);
    }
    p->base.nRow++;
    rc = dsRowFromValues(pArena, p->apCol, p->nCol, p->nKeyCol, p->aVal,
                         pFilter, &pRow);
    if( rc!=SQLITE_OK ){
      p->bEof = 1;
      if( rc==SQLITE_NOMEM ) return rc;
      sqlite3_free(p->base.zErr);
      p->base.zErr = sqlite3_mprintf("%s", sqlite3_errstr(rc));
      return p->base.zErr ? rc : SQLITE_NOMEM;
    }
    if( pRow ) aRow[n++] = pRow;
  }
  *pnRow = n;
  if( p->pConn->pProgress ) dsProgressAdvance(p->pConn->pProgress);
  return SQLITE_OK;
}

static int dsReaderNext(DsSource *pSrc, DsArena *pArena, DsRow **ppRow){
  int n;
  int rc = dsReaderBatch(pSrc, pArena, ppRow, 1, 0, 0, &n);
  if( rc!=SQLITE_OK ) return rc;
  return n ? SQLITE_ROW : SQLITE_DONE;
}

static int dsReaderWideNext(DsSource *pSrc, DsArena *pArena,
                            DsRow **ppRow){
  int n;
  int rc = dsReaderWideBatch(pSrc, pArena, ppRow, 1, 0, 0, &n);
  if( rc!=SQLITE_OK ) return rc;
  return n ? SQLITE_ROW : SQLITE_DONE;
}

static void dsReaderClose(DsSource *pSrc){
  DsReader *p = (DsReader *)pSrc;
  if( p ){
    sqlite3_finalize(p->pStmt);
    sqlite3_free(p->base.zErr);
    sqlite3_free(p->aVal);
    sqlite3_free(p->zKeysFirst);
    sqlite3_free(p->zKeySample);
    sqlite3_free(p->apCol);
    sqlite3_free(p->aiRowCol);
    sqlite3_free(p);
  }
}

/* Does z hold zPart, compared without regard to (ASCII) case? */
static int dsHoldsNoCase(const char *z, const char *zPart){
  int n = (int)strlen(zPart);
  for(; *z; z++){
    if( sqlite3_strnicmp(z, zPart, n)==0 ) return 1;
  }
  return 0;
}

/*
** The name of the reader's CTE: "ds:input", unless the body holds that
** text.  A table may have any name, and inside the CTE's own body its
** name would mean the CTE ("circular reference"); so then ds:input:2,
** ds:input:3, ... until a name the body cannot refer to.
*/
static char *dsReaderCteName(const char *zBody){
  char *zName = sqlite3_mprintf("ds:input");
  int i = 1;
  while( zName && dsHoldsNoCase(zBody, zName) ){
    sqlite3_free(zName);
    zName = sqlite3_mprintf("ds:input:%d", ++i);
  }
  return zName;
}

/*
** Up to nMax rows of pSrc at once, into aRow[], allocated in pArena; the
** batch also ends once pArena holds nMaxByte bytes (with at least one row
** in it).  With a filter, only rows that may find a partner are handed
** out (the others are read and dropped).  SQLITE_OK with *pnRow rows, 0
** only at the end of the source, or an error.
*/
int dsSourceBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow, int nMax,
                  i64 nMaxByte, DsRowFilter *pFilter, int *pnRow){
  int n = 0;
  if( pSrc->xBatch ){
    return pSrc->xBatch(pSrc, pArena, aRow, nMax, nMaxByte, pFilter, pnRow);
  }
  *pnRow = 0;
  while( n<nMax && (n==0 || pArena->nByte<nMaxByte) ){
    DsRow *pRow;
    int rc = pSrc->xNext(pSrc, pArena, &pRow);
    if( rc==SQLITE_DONE ) break;
    if( rc!=SQLITE_ROW ) return rc;
    if( pFilter && ((pRow->flags & DS_ROW_NULLKEY)
                    || !pFilter->xMayMatch(pFilter, pRow->hash)) ){
      dsArenaUndo(pArena, pRow);
      continue;
    }
    aRow[n++] = pRow;
  }
  *pnRow = n;
  return SQLITE_OK;
}

/* The name of column i of a reader's row: its key columns aiKey[], then
** the columns aiPay[], as numbered by the CTE's column list. */
static int dsReaderColumn(int i, int nKey, const int *aiKey,
                          const int *aiPay){
  return i<nKey ? aiKey[i] : aiPay[i-nKey];
}

/* The forms of a reader's SQL (dsReaderSql). */
#define DS_READ_ROWS       0    /* ds_input_row() of every row */
#define DS_READ_KEYS_FIRST 1    /* ds_input_key() first: plain scans only */
#define DS_READ_KEY_SAMPLE 2    /* the first keys alone: plain scans only */

/* The start every reader's SQL shares: the CTE that renames the body's
** columns by position, then SELECT. */
static void dsReaderCteSql(sqlite3_str *pSql, const DsInput *pIn,
                           const char *zCte){
  int i;
  sqlite3_str_appendf(pSql, "WITH \"%w\"(", zCte);
  for(i=0; i<pIn->nCol; i++){
    sqlite3_str_appendf(pSql, "%sc%d", i ? "," : "", i);
  }
  sqlite3_str_appendf(pSql, ") AS (\n%s\n) SELECT ", pIn->zBody);
}

/*
** The SQL of a reader (see above), in form eForm.  An input that is a
** plain scan of one table (dsBodyIsPlainScan) is read directly, with
** ds_input_row() in the WHERE clause of the flattened scan: such a body
** has no terms that it could be tested before or pushed into, and the
** co-routine of the general form costs as much per row as the rest of
** reading.
*/
static void dsReaderSql(sqlite3_str *pSql, const DsInput *pIn,
                        const char *zCte, int eForm, int nKey,
                        const int *aiKey, int nPay, const int *aiPay){
  int n = nKey + nPay;
  int i;
  if( !pIn->bPlainScan ) sqlite3_str_appendall(pSql, "SELECT 0 FROM (\n");
  dsReaderCteSql(pSql, pIn, zCte);
  if( eForm==DS_READ_KEY_SAMPLE ){
    for(i=0; i<nKey; i++){
      sqlite3_str_appendf(pSql, "%sc%d", i ? "," : "", aiKey[i]);
    }
    sqlite3_str_appendf(pSql, " FROM \"%w\" LIMIT %d", zCte, DS_KEY_SAMPLE);
    return;
  }
  if( pIn->bPlainScan ){
    sqlite3_str_appendf(pSql, "0 FROM \"%w\" WHERE ", zCte);
    if( eForm==DS_READ_KEYS_FIRST ){
      sqlite3_str_appendall(pSql, "ds_input_key(?1");
      for(i=0; i<nKey; i++) sqlite3_str_appendf(pSql, ",c%d", aiKey[i]);
      sqlite3_str_appendall(pSql, ") AND ");
    }
    sqlite3_str_appendall(pSql, "ds_input_row(?1");
    for(i=0; i<n; i++){
      sqlite3_str_appendf(pSql, ",c%d", dsReaderColumn(i, nKey, aiKey, aiPay));
    }
    sqlite3_str_appendall(pSql, ")");
    return;
  }
  for(i=0; i<n; i++){
    sqlite3_str_appendf(pSql, "%sc%d AS x%d", i ? "," : "",
                        dsReaderColumn(i, nKey, aiKey, aiPay), i);
  }
  if( n==0 ) sqlite3_str_appendall(pSql, "0");
  sqlite3_str_appendf(pSql, " FROM \"%w\" LIMIT -1\n)"
                           " WHERE ds_input_row(?1", zCte);
  for(i=0; i<n; i++) sqlite3_str_appendf(pSql, ",x%d", i);
  sqlite3_str_appendall(pSql, ")");
}

/* The SQL of a reader in form eForm (dsReaderSql), or NULL if memory ran
** out. */
static char *dsReaderSqlText(sqlite3 *db, const DsInput *pIn,
                             const char *zCte, int eForm, int nKey,
                             const int *aiKey, int nPay, const int *aiPay){
  sqlite3_str *pSql = sqlite3_str_new(db);
  dsReaderSql(pSql, pIn, zCte, eForm, nKey, aiKey, nPay, aiPay);
  return sqlite3_str_finish(pSql);
}

/*
** Test the first keys of the reader's input (zKeySample) against
** pFilter: *pnRead keys read, *pnOut of them turned away.  A sample that
** fails for another reason than memory decides nothing (*pnRead 0): the
** reading itself meets the same error and reports it.
*/
static int dsReaderSampleKeys(DsReader *p, DsRowFilter *pFilter,
                              int *pnRead, int *pnOut){
  sqlite3_stmt *pStmt = 0;
  sqlite3_value **apKey;
  int rc;
  *pnRead = *pnOut = 0;
  apKey = sqlite3_malloc64(sizeof(sqlite3_value *) * (size_t)p->nKeyCol);
  if( apKey==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->pConn->db, p->zKeySample, -1,
                          &pStmt, 0);
  while( rc==SQLITE_OK && (rc = dsStepInput(p->pConn, pStmt))==SQLITE_ROW ){
    int bOut = 0;
    int i;
    for(i=0; i<p->nKeyCol; i++) apKey[i] = sqlite3_column_value(pStmt, i);
    rc = dsKeyValuesFilteredOut(pFilter, apKey, p->nKeyCol, &bOut);
    (*pnRead)++;
    *pnOut += bOut;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(apKey);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  *pnRead = *pnOut = 0;
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** The rows of pSrc are about to be read through pFilter: a reader of a
** plain scan that has not been read from yet reads keys first from now
** on (see above) if a sample of its first keys shows that the filter
** turns away more than half of them.  Any other source reads on as it
** would.  *pbKeysFirst says whether pSrc reads keys first.
*/
int dsSourceKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                      int *pbKeysFirst){
  *pbKeysFirst = 0;
  if( pSrc->xKeysFirst==0 ) return SQLITE_OK;
  return pSrc->xKeysFirst(pSrc, pFilter, pbKeysFirst);
}

static int dsReaderKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                             int *pbKeysFirst){
  DsReader *p = (DsReader *)pSrc;
  sqlite3_stmt *pNew = 0;
  int nRead, nOut;
  int rc;
  *pbKeysFirst = p->bKeysFirst;
  if( p->zKeysFirst==0 || p->bKeysFirst || p->base.nRow>0 || p->bEof ){
    return SQLITE_OK;
  }
  rc = dsReaderSampleKeys(p, pFilter, &nRead, &nOut);
  if( rc!=SQLITE_OK || nOut*2<=nRead ) return rc;
  rc = sqlite3_prepare_v2(p->pConn->db, p->zKeysFirst, -1,
                          &pNew, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_pointer(pNew, 1, p, DS_READER_PTR, 0);
  if( rc!=SQLITE_OK ){
    /* The form only saves time: reading goes on in the one it had. */
    sqlite3_finalize(pNew);
    return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
  }
  sqlite3_finalize(p->pStmt);
  p->pStmt = pNew;
  p->bKeysFirst = *pbKeysFirst = 1;
  return SQLITE_OK;
}

/*
** The SQL of the wide path (see above): the row's columns, stepped one
** row at a time.  A key may name a column twice ('k,k'), and an input of
** 2000 columns read with one of them twice would be more columns than a
** statement may have: so each column is selected once, and aiRowCol[i]
** gets the statement's column that holds value i of a row.
*/
static void dsReaderWideSql(sqlite3_str *pSql, const DsInput *pIn,
                            const char *zCte, int nKey, const int *aiKey,
                            int nPay, const int *aiPay, int *aiRowCol){
  int n = nKey + nPay;
  int nSelect = 0;
  int i, j;
  dsReaderCteSql(pSql, pIn, zCte);
  for(i=0; i<n; i++){
    int iCol = dsReaderColumn(i, nKey, aiKey, aiPay);
    for(j=0; j<i && j<nKey && aiKey[j]!=iCol; j++){}
    if( j<i && j<nKey ){
      aiRowCol[i] = aiRowCol[j];
    }else{
      sqlite3_str_appendf(pSql, "%sc%d", nSelect ? "," : "", iCol);
      aiRowCol[i] = nSelect++;
    }
  }
  if( nSelect==0 ) sqlite3_str_appendall(pSql, "0");
  sqlite3_str_appendf(pSql, " FROM \"%w\"", zCte);
}

/* Would ds_input_row() need more arguments (the reader and n values)
** than db's functions may take now?  Then the reader takes the wide
** path.  The limit is read each time: an application may lower it. */
static int dsReaderIsWide(sqlite3 *db, int n){
  return n + 1 > sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, -1);
}

/*
** The SQL of reader p: the wide path's if p->aiRowCol is set for it.  A
** plain scan read through ds_input_row() also gets the SQL of its keys
** first form and of its sample of keys (p->zKeysFirst, p->zKeySample),
** and the means to switch (xKeysFirst).  NULL if memory ran out.
*/
static char *dsReaderMakeSql(DsReader *p, sqlite3 *db, const DsInput *pIn,
                             int nKey, const int *aiKey, int nPay,
                             const int *aiPay){
  char *zCte = dsReaderCteName(pIn->zBody);
  char *zSql;
  if( zCte==0 ) return 0;
  if( p->aiRowCol ){
    sqlite3_str *pSql = sqlite3_str_new(db);
    dsReaderWideSql(pSql, pIn, zCte, nKey, aiKey, nPay, aiPay, p->aiRowCol);
    zSql = sqlite3_str_finish(pSql);
  }else{
    zSql = dsReaderSqlText(db, pIn, zCte, DS_READ_ROWS, nKey, aiKey, nPay,
                           aiPay);
    if( zSql && pIn->bPlainScan && nKey>0 ){
      p->base.xKeysFirst = dsReaderKeysFirst;
      p->zKeysFirst = dsReaderSqlText(db, pIn, zCte, DS_READ_KEYS_FIRST,
                                      nKey, aiKey, nPay, aiPay);
      p->zKeySample = dsReaderSqlText(db, pIn, zCte, DS_READ_KEY_SAMPLE,
                                      nKey, aiKey, nPay, aiPay);
      if( p->zKeysFirst==0 || p->zKeySample==0 ){
        sqlite3_free(zSql);
        zSql = 0;
      }
    }
  }
  sqlite3_free(zCte);
  return zSql;
}

/*
** Open a reader of pIn returning rows of the key columns aiKey[] followed
** by the columns aiPay[].
*/
int dsReaderOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                 int nKey, const int *aiKey, int nPay, const int *aiPay,
                 DsSource **ppSrc, char **pzErr){
  DsReader *p;
  char *zSql = 0;
  int bWide = dsReaderIsWide(pConn->db, nKey + nPay);
  size_t nSlot;
  int rc;
  *ppSrc = 0;
  p = sqlite3_malloc64(sizeof(DsReader));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = bWide ? dsReaderWideNext : dsReaderNext;
  p->base.xBatch = bWide ? dsReaderWideBatch : dsReaderBatch;
  p->base.xClose = dsReaderClose;
  p->pConn = pConn;
  p->nCol = nKey + nPay;
  p->nKeyCol = nKey;
  p->zFunc = zFunc;
  nSlot = (size_t)(p->nCol + 1);
  p->aVal = sqlite3_malloc64(sizeof(DsValue) * nSlot);
  if( bWide ){
    p->apCol = sqlite3_malloc64(sizeof(sqlite3_value *) * nSlot);
    p->aiRowCol = sqlite3_malloc64(sizeof(int) * nSlot);
  }
  if( p->aVal && (!bWide || (p->apCol && p->aiRowCol)) ){
    zSql = dsReaderMakeSql(p, pConn->db, pIn, nKey, aiKey, nPay, aiPay);
  }
  if( zSql==0 ){
    dsReaderClose(&p->base);
    return SQLITE_NOMEM;
  }
  rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &p->pStmt, 0);
  if( rc==SQLITE_OK && !bWide ){
    rc = sqlite3_bind_pointer(p->pStmt, 1, p, DS_READER_PTR, 0);
  }
  if( rc!=SQLITE_OK ){
    if( rc!=SQLITE_NOMEM ){
      *pzErr = dsPrepareError(pConn->db, zFunc, 0, pIn->zText, zSql);
      if( *pzErr==0 ){
        *pzErr = sqlite3_mprintf("%s: cannot read the dataset '%s': %s",
            zFunc, pIn->zText, sqlite3_errmsg(pConn->db));
      }
    }
    sqlite3_free(zSql);
    dsReaderClose(&p->base);
    return rc;
  }
  sqlite3_free(zSql);
  *ppSrc = &p->base;
  return SQLITE_OK;
}

/* The row count sqlite_stat1 holds for a table (its first number), or -1
** in *pnRow.  SQLITE_OK or SQLITE_NOMEM. */
static int dsStat1Rows(sqlite3 *db, const DsInput *pIn, i64 *pnRow){
  sqlite3_stmt *pStmt = 0;
  int rc;
  char *zSql = sqlite3_mprintf(
      "SELECT stat FROM \"%w\".sqlite_stat1 WHERE tbl=%Q COLLATE NOCASE",
      pIn->zSchema ? pIn->zSchema : "main", pIn->zName);
  *pnRow = -1;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    const char *zStat = (const char *)sqlite3_column_text(pStmt, 0);
    if( zStat==0 && sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
      rc = SQLITE_NOMEM;
    }else if( zStat && isdigit((unsigned char)zStat[0]) ){
      *pnRow = 0;
      while( isdigit((unsigned char)*zStat) ){
        *pnRow = *pnRow*10 + (*zStat++ - '0');
      }
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* The rows sqlite_stat1 holds for pIn, a named table, else -1: what the
** progress line can know of an input without reading it. */
i64 dsInputStat1Count(sqlite3 *db, const DsInput *pIn){
  i64 n = -1;
  if( pIn->zName ) dsStat1Rows(db, pIn, &n);
  return n;
}

/* The count zSql (may be NULL: out of memory) gives, or -1. */
static int dsCountRows(DsConn *pConn, const char *zSql, i64 *pnRow){
  sqlite3_stmt *pStmt = 0;
  int rc;
  *pnRow = -1;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = dsStepInput(pConn, pStmt);
  if( rc==SQLITE_ROW ) *pnRow = sqlite3_column_int64(pStmt, 0);
  sqlite3_finalize(pStmt);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** The rows of pIn, found out cheaply: from sqlite_stat1 for an analyzed
** table; else counted, where a plain scan of one table (a table, or a
** view or query that only reads one) is counted whole (SQLite
** counts a b-tree without decoding its rows) but any other is read
** only up to nCap rows.  *pbAtLeast is set when the count stopped at nCap
** (the input has at least that many rows).  *pnRow is -1 if the size
** cannot be found out.  Returns SQLITE_NOMEM if memory ran out on the
** way (a size guessed for want of memory would steer the plan silently),
** else SQLITE_OK.
*/
int dsInputEstimateRows(DsConn *pConn, const DsInput *pIn, i64 nCap,
                        i64 *pnRow, int *pbAtLeast){
  char *zSql;
  int rc = SQLITE_OK;
  *pbAtLeast = 0;
  *pnRow = -1;
  if( pIn->zName ){
    rc = dsStat1Rows(pConn->db, pIn, pnRow);
    if( rc!=SQLITE_OK || *pnRow>=0 ) return rc;
  }
  if( pIn->bPlainScan ){
    zSql = sqlite3_mprintf("SELECT count(*) FROM (\n%s\n)", pIn->zBody);
    rc = dsCountRows(pConn, zSql, pnRow);
  }else{
    zSql = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM (\n%s\n) "
                           "LIMIT %lld)", pIn->zBody, nCap);
    rc = dsCountRows(pConn, zSql, pnRow);
    *pbAtLeast = *pnRow>=nCap;
  }
  sqlite3_free(zSql);
  return rc;
}

/* Rows sampled to measure an input's rows (dsInputSampleRowBytes). */
#define DS_WIDTH_SAMPLE 1024

/*
** The bytes the values of a row of pIn take in the row format, on
** average over its first DS_WIDTH_SAMPLE rows, counting only the columns
** carried: the key columns aiKey[] and the others aiPay[].  *pnBytes is
** 0 when the input is empty or could not be read.  For a plain scan of a
** table only (nothing runs but a scan of its first pages): a view or
** query is measured by reading it ahead, for the operator (plan.c).
** SQLITE_OK, or SQLITE_NOMEM.
*/
int dsInputSampleRowBytes(DsConn *pConn, const DsInput *pIn, int nKey,
                          const int *aiKey, int nPay, const int *aiPay,
                          i64 *pnBytes){
  sqlite3_str *pSql;
  sqlite3_stmt *pStmt = 0;
  char *zCte, *zSql;
  int i, rc;
  *pnBytes = 0;
  zCte = dsReaderCteName(pIn->zBody);
  if( zCte==0 ) return SQLITE_NOMEM;
  pSql = sqlite3_str_new(pConn->db);
  dsReaderCteSql(pSql, pIn, zCte);
  sqlite3_str_appendall(pSql, "count(*), sum(0");
  for(i=0; i<nKey+nPay; i++){
    sqlite3_str_appendf(pSql, "+CASE typeof(c%d) WHEN 'null' THEN 1 "
        "WHEN 'integer' THEN 9 WHEN 'real' THEN 9 "
        "ELSE 5+length(CAST(c%d AS BLOB)) END",
        dsReaderColumn(i, nKey, aiKey, aiPay),
        dsReaderColumn(i, nKey, aiKey, aiPay));
  }
  sqlite3_str_appendf(pSql, ") FROM (SELECT * FROM \"%w\" LIMIT %d)",
                      zCte, DS_WIDTH_SAMPLE);
  zSql = sqlite3_str_finish(pSql);
  sqlite3_free(zCte);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = dsStepInput(pConn, pStmt);
  if( rc==SQLITE_ROW && sqlite3_column_int64(pStmt, 0)>0 ){
    *pnBytes = sqlite3_column_int64(pStmt, 1) / sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* Rows of a plain scan counted one by one at most, for a quick estimate;
** past that, the table's rowids or its b-tree tell. */
#define DS_QUICK_COUNT 4096

/*
** The rows of pIn as far as SQLite can tell without running it, for a
** plan's cost, on every statement (inputs grow; nothing is kept): from
** sqlite_stat1 for an analyzed table; else, for a plain scan of one table
** (a table, or a view or query that only reads one), counted up to
** DS_QUICK_COUNT rows, and past that the span of the table's rowids (two
** b-tree descents; exact for a table whose rows were only appended) or,
** without rowids, SQLite's count of its b-tree.  A view or query that is
** not a plain scan is not run (running it is what the operator does,
** once): *pnRow is -1.  SQLITE_OK, or SQLITE_NOMEM.
*/
int dsInputQuickRows(DsConn *pConn, const DsInput *pIn, i64 *pnRow){
  char *zSql;
  int rc = SQLITE_OK;
  *pnRow = -1;
  if( pIn->zName ){
    rc = dsStat1Rows(pConn->db, pIn, pnRow);
    if( rc!=SQLITE_OK || *pnRow>=0 ) return rc;
  }
  if( !pIn->bPlainScan ) return SQLITE_OK;
  zSql = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM (\n%s\n) "
                         "LIMIT %d)", pIn->zBody, DS_QUICK_COUNT);
  rc = dsCountRows(pConn, zSql, pnRow);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK || *pnRow<DS_QUICK_COUNT ) return rc;
  if( pIn->zName ){
    i64 nSpan = -1;
    zSql = sqlite3_mprintf("SELECT (SELECT max(rowid) FROM \"%w\".\"%w\") "
                           "- (SELECT min(rowid) FROM \"%w\".\"%w\") + 1",
                           pIn->zSchema ? pIn->zSchema : "main", pIn->zName,
                           pIn->zSchema ? pIn->zSchema : "main", pIn->zName);
    /* A view, or a table without rowids, fails to prepare: no span. */
    rc = dsCountRows(pConn, zSql, &nSpan);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ) return rc;
    if( nSpan>*pnRow ){
      *pnRow = nSpan;
      return SQLITE_OK;
    }
    if( nSpan>=0 ) return SQLITE_OK;
  }
  zSql = sqlite3_mprintf("SELECT count(*) FROM (\n%s\n)", pIn->zBody);
  rc = dsCountRows(pConn, zSql, pnRow);
  sqlite3_free(zSql);
  return rc;
}

/*
** Decide the columns an operator carries from input pIn: the nKey key
** columns aiKey[] always, and the other columns that are wanted (all of
** them when bAll, else those with aWant[c] set; aWant may be NULL), in
** input order, as payload.  *paiPay gets those payload columns (*pnPay of
** them), *paiSlot maps each input column to its value's position in a
** row (-1 for a column not carried; a wanted key column is read from its
** key slot).  Both arrays are sqlite3_malloc'd.
*/
int dsInputPlanColumns(const DsInput *pIn, int nKey, const int *aiKey,
                       int bAll, const u8 *aWant, int **paiSlot,
                       int **paiPay, int *pnPay){
  int *aiSlot = sqlite3_malloc64(sizeof(int) * (size_t)(pIn->nCol + 1));
  int *aiPay = sqlite3_malloc64(sizeof(int) * (size_t)(pIn->nCol + 1));
  int nPay = 0;
  int c, k;
  *paiSlot = *paiPay = 0;
  *pnPay = 0;
  if( aiSlot==0 || aiPay==0 ){
    sqlite3_free(aiSlot);
    sqlite3_free(aiPay);
    return SQLITE_NOMEM;
  }
  for(c=0; c<pIn->nCol; c++){
    aiSlot[c] = -1;
    for(k=0; k<nKey; k++){
      if( aiKey[k]==c ){ aiSlot[c] = k; break; }
    }
    if( aiSlot[c]<0 && (bAll || (aWant && aWant[c])) ){
      aiSlot[c] = nKey + nPay;
      aiPay[nPay++] = c;
    }
  }
  *paiSlot = aiSlot;
  *paiPay = aiPay;
  *pnPay = nPay;
  return SQLITE_OK;
}
