/*
** input.c: dataset arguments and key arguments.
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
** Reading an input, and finding out its size, are reader.c's.
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
char *dsPrepareError(sqlite3 *db, const char *zFunc, const char *zSide,
                     const char *zText, const char *zSql){
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
int dsIsNoMem(int rc){
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
