/*
** vtab_args.c: what the CREATE VIRTUAL TABLE forms of the modules share.
**
**     CREATE VIRTUAL TABLE [schema.]name USING module(name=value, ...)
**
** SQLite hands xConnect each argument as raw text (quotes kept, commas
** inside quotes and parentheses respected).  This file turns them into
** values, decides whether xConnect runs for a CREATE, builds and declares
** the typed columns of two inputs, and checks at query time that an input
** still has the columns the table was declared with (dsVtabInputCheck()).
**
** Arguments.  Each is `name=value`; the name is matched without regard to
** case against the module's list, and unknown, repeated and missing names
** are errors that name the argument.  A value is read exactly like the
** table-valued function's text argument once one level of single quotes
** is removed: left='SELECT ...' is a query, left="odd name" (identifier
** quotes kept) names the table "odd name".  A query must be quoted, as
** an unquoted one would be cut at its first comma by SQLite's argument
** splitting: one that is not is refused with a message saying so.  That
** splitting also hands two arguments written without a comma between
** them over as one, "left=a right=b": a value that holds white space and
** then name= outside quotes is refused as such, not read as a name.
**
** CREATE or reconnect.  A module usable both as a table-valued function
** and with CREATE VIRTUAL TABLE must have xCreate == xConnect, so SQLite
** does not say which one runs.  It matters: a CREATE whose inputs cannot
** be read must fail, but a reconnect (a new connection opening a file
** whose table's input was dropped since) must succeed, or the table could
** be neither queried nor dropped (the pivot_vtab trap).  A CREATE runs its
** xCreate while its own statement is being stepped, so dsVtabIsCreating()
** looks among the connection's running statements for a CREATE VIRTUAL
** TABLE of this very name.
**
** Columns.  Two inputs give the left input's columns, then the right's,
** with their declared types.  A name repeated inside one input is already
** made unique by the input (id, id_2); a name found in both inputs,
** compared without regard to case, then becomes left_NAME and right_NAME.
** Names and types are quoted in the schema text, so no input can inject
** anything into it; a type that SQLite would read as hiding the column
** (the word HIDDEN between spaces) is dropped, lest the column vanish
** from SELECT *.  If sqlite3_declare_vtab() fails (two names
** still clash, say left_id from the left input and from the renaming), the
** error says why, not just "vtable constructor failed".
**
** Placeholder.  When a reconnect cannot read its inputs, the module
** declares a one-column placeholder and reports the stored error when the
** table is queried; DROP TABLE works.  The table stays so until SQLite
** reads the schema again (any schema change does, as does a new
** connection), which connects it afresh.
**
** Query time.  Every query of a CREATE form opens its inputs again
** (dsVtabTypedReopen()), so it sees their current contents, and checks
** that their columns are still those declared; the colUsed mask that
** xBestIndex passes in idxStr says which columns of each input to read
** (dsVtabTypedWanted()).  DsVtabTyped holds what these need, the same for
** every module.
*/
#include "dataset_int.h"

#include <ctype.h>
#include <stdlib.h>

/* "left, right, left_key": the argument names, for messages. */
static char *dsVtabArgNames(const DsVtabArgSpec *pSpec){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  for(i=0; i<pSpec->nName; i++){
    sqlite3_str_appendf(pStr, "%s%s", i ? ", " : "", pSpec->azName[i]);
  }
  return sqlite3_str_finish(pStr);
}

/* "name=value [, opt=value ...]": how the module's CREATE form is used. */
static char *dsVtabUsage(const DsVtabArgSpec *pSpec){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  sqlite3_str_appendf(pStr, "CREATE VIRTUAL TABLE name USING %s(",
                      pSpec->zFunc);
  for(i=0; i<pSpec->nName; i++){
    if( i<pSpec->nRequired ){
      sqlite3_str_appendf(pStr, "%s%s=...", i ? ", " : "", pSpec->azName[i]);
    }else{
      sqlite3_str_appendf(pStr, " [, %s=...]", pSpec->azName[i]);
    }
  }
  sqlite3_str_appendchar(pStr, 1, ')');
  return sqlite3_str_finish(pStr);
}

/* Index of argument zName in the module's list, or -1. */
static int dsVtabFindArg(const DsVtabArgSpec *pSpec, const char *zName){
  int i;
  for(i=0; i<pSpec->nName; i++){
    if( sqlite3_stricmp(pSpec->azName[i], zName)==0 ) return i;
  }
  return -1;
}

/* Copy of the n bytes at z, without white space at either end. */
static char *dsVtabTrim(const char *z, int n){
  while( n>0 && isspace((unsigned char)z[0]) ){ z++; n--; }
  while( n>0 && isspace((unsigned char)z[n-1]) ) n--;
  return sqlite3_mprintf("%.*s", n, z);
}

/*
** The name=value after white space in unquoted value z, as in "users
** right=orders": SQLite hands over two arguments written without the
** comma between them as one.  Blanks that no name= follows (main . users,
** an unquoted name with a blank) do not make one.  *pn gets the length
** of the name as written; NULL if there is none, with *pn -1 if memory
** ran out.
*/
static const char *dsVtabValueHoldsArg(const char *z, int *pn){
  int i = 0;
  *pn = 0;
  while( z[i] ){
    int nQ = dsQuotedLength(z + i);
    if( nQ ){
      i += nQ;
    }else if( isspace((unsigned char)z[i]) ){
      const char *zName = dsSkipSpace(z + i);
      char *zIgnored = 0;
      int n = dsParseIdent(zName, &zIgnored);
      sqlite3_free(zIgnored);
      if( n<0 ){
        *pn = -1;
        return 0;
      }
      if( n>0 && *dsSkipSpace(zName + n)=='=' ){
        *pn = n;
        return zName;
      }
      i = (int)(zName - z) + n;
    }else{
      i++;
    }
  }
  return 0;
}

/*
** The value of argument zArg (as SQLite gave it), named zName: zRaw with
** one level of single quotes removed when the quotes enclose all of it.
** *pzOut gets the value; SQLITE_ERROR with *pzErr set for an empty value,
** an unquoted query, or a value that holds the next argument.
*/
static int dsVtabArgValue(const DsVtabArgSpec *pSpec, const char *zArg,
                          const char *zName, const char *zRaw,
                          char **pzOut, char **pzErr){
  int n = (int)strlen(zRaw);
  const char *zNext;
  int nNext;
  *pzOut = 0;
  if( n==0 ){
    *pzErr = sqlite3_mprintf("%s: argument %s has no value; write %s=...",
                             pSpec->zFunc, zName, zName);
    return SQLITE_ERROR;
  }
  if( zRaw[0]=='\'' && dsQuotedLength(zRaw)==n ){
    return dsParseIdent(zRaw, pzOut)<0 ? SQLITE_NOMEM : SQLITE_OK;
  }
  if( dsIsQuery(zRaw) ){
    *pzErr = sqlite3_mprintf("%s: the query given as %s must be quoted: "
                             "%s='SELECT ...'", pSpec->zFunc, zName, zName);
    return SQLITE_ERROR;
  }
  zNext = dsVtabValueHoldsArg(zRaw, &nNext);
  if( nNext<0 ) return SQLITE_NOMEM;
  if( zNext ){
    /* zRaw, so zNext too, ends as the argument does: the text before
    ** zNext's copy in it, with a comma, is what was meant. */
    char *zText = dsVtabTrim(zArg, (int)strlen(zArg));
    char *zFirst = zText ? dsVtabTrim(zText,
        (int)(strlen(zText) - strlen(zNext))) : 0;
    char *zMsg = zFirst ? sqlite3_mprintf("%s: argument '%s' has a space "
        "in its value before %.*s=: arguments are separated by commas (%s, "
        "%s), and a value that holds spaces must be quoted ('...')",
        pSpec->zFunc, zText, nNext, zNext, zFirst, zNext) : 0;
    sqlite3_free(zText);
    sqlite3_free(zFirst);
    if( zMsg==0 ) return SQLITE_NOMEM;
    *pzErr = zMsg;
    return SQLITE_ERROR;
  }
  *pzOut = sqlite3_mprintf("%s", zRaw);
  return *pzOut ? SQLITE_OK : SQLITE_NOMEM;
}

/*
** Parse one argument "name=value" into azValue[]; *pmGiven has a bit for
** each argument seen.  An optional argument given as an unquoted NULL
** (hint=NULL) stays absent: the default, as a NULL argument of the
** table-valued form is; hint='NULL' is the text NULL.
*/
static int dsVtabArgParseOne(const DsVtabArgSpec *pSpec, const char *zArg,
                             char **azValue, u32 *pmGiven, char **pzErr){
  const char *z = dsSkipSpace(zArg);
  char *zName = 0;
  char *zRaw = 0;
  int n, iArg, rc;
  n = dsParseIdent(z, &zName);
  if( n<0 ) return SQLITE_NOMEM;
  if( n==0 || *dsSkipSpace(z + n)!='=' ){
    char *zNames = dsVtabArgNames(pSpec);
    *pzErr = sqlite3_mprintf("%s: argument '%s' is not of the form "
        "name=value; arguments are %s", pSpec->zFunc, zArg,
        zNames ? zNames : "");
    sqlite3_free(zNames);
    sqlite3_free(zName);
    return SQLITE_ERROR;
  }
  iArg = dsVtabFindArg(pSpec, zName);
  if( iArg<0 ){
    char *zNames = dsVtabArgNames(pSpec);
    *pzErr = sqlite3_mprintf("%s: unknown argument '%s'; arguments are %s",
                             pSpec->zFunc, zName, zNames ? zNames : "");
    sqlite3_free(zNames);
    sqlite3_free(zName);
    return SQLITE_ERROR;
  }
  sqlite3_free(zName);
  if( *pmGiven & ((u32)1 << iArg) ){
    *pzErr = sqlite3_mprintf("%s: argument %s given twice", pSpec->zFunc,
                             pSpec->azName[iArg]);
    return SQLITE_ERROR;
  }
  *pmGiven |= (u32)1 << iArg;
  z = dsSkipSpace(z + n) + 1;
  zRaw = dsVtabTrim(z, (int)strlen(z));
  if( zRaw==0 ) return SQLITE_NOMEM;
  if( iArg>=pSpec->nRequired && sqlite3_stricmp(zRaw, "NULL")==0 ){
    sqlite3_free(zRaw);
    return SQLITE_OK;
  }
  rc = dsVtabArgValue(pSpec, zArg, pSpec->azName[iArg], zRaw,
                      &azValue[iArg], pzErr);
  sqlite3_free(zRaw);
  return rc;
}

/*
** Parse the CREATE arguments argv[0..argc-1] (xConnect's argv + 3) into
** azValue[] (pSpec->nName entries, NULL where an optional argument is
** absent).  On error *pzErr names the argument and azValue[] is freed.
*/
int dsVtabArgsParse(const DsVtabArgSpec *pSpec, int argc,
                    const char *const *argv, char **azValue, char **pzErr){
  int i, rc = SQLITE_OK;
  u32 mGiven = 0;
  memset(azValue, 0, sizeof(char *) * (size_t)pSpec->nName);
  for(i=0; i<argc && rc==SQLITE_OK; i++){
    rc = dsVtabArgParseOne(pSpec, argv[i], azValue, &mGiven, pzErr);
  }
  for(i=0; i<pSpec->nRequired && rc==SQLITE_OK; i++){
    if( azValue[i]==0 ){
      char *zUsage = dsVtabUsage(pSpec);
      *pzErr = sqlite3_mprintf("%s: missing argument %s; usage: %s",
                               pSpec->zFunc, pSpec->azName[i],
                               zUsage ? zUsage : "");
      sqlite3_free(zUsage);
      rc = SQLITE_ERROR;
    }
  }
  if( rc!=SQLITE_OK ) dsVtabArgsFree(pSpec, azValue);
  return rc;
}

void dsVtabArgsFree(const DsVtabArgSpec *pSpec, char **azValue){
  int i;
  for(i=0; i<pSpec->nName; i++){
    sqlite3_free(azValue[i]);
    azValue[i] = 0;
  }
}

/*
** A keyword value (a hint, a join type): also without identifier quotes,
** so hint="REPARTITION_SORT_MERGE" works as hint=REPARTITION_SORT_MERGE.
*/
int dsVtabArgWord(const char *zValue, char **pzOut){
  int n = dsQuotedLength(zValue);
  if( n>=2 && zValue[n]==0 ){
    return dsParseIdent(zValue, pzOut)<0 ? SQLITE_NOMEM : SQLITE_OK;
  }
  *pzOut = sqlite3_mprintf("%s", zValue);
  return *pzOut ? SQLITE_OK : SQLITE_NOMEM;
}

/* Does statement text z create virtual table zSchema.zTab? */
static int dsVtabSqlCreates(const char *z, const char *zSchema,
                            const char *zTab){
  static const char *const azKw[] = { "CREATE", "VIRTUAL", "TABLE" };
  char *zA = 0, *zB = 0;
  int i, n, bMatch = 0;
  for(i=0; i<3; i++){
    z = dsSkipSpace(z);
    n = dsKeyword(z, azKw[i]);
    if( n==0 ) return 0;
    z += n;
  }
  z = dsSkipSpace(z);
  if( (n = dsKeyword(z, "IF"))!=0 ){
    z = dsSkipSpace(z + n);
    z = dsSkipSpace(z + dsKeyword(z, "NOT"));
    z += dsKeyword(z, "EXISTS");
    z = dsSkipSpace(z);
  }
  n = dsParseIdent(z, &zA);
  if( n<=0 ) return 0;
  z = dsSkipSpace(z + n);
  if( *z=='.' ){
    z = dsSkipSpace(z + 1);
    if( dsParseIdent(z, &zB)>0 ){
      bMatch = sqlite3_stricmp(zA, zSchema)==0 && sqlite3_stricmp(zB, zTab)==0;
    }
  }else{
    bMatch = sqlite3_stricmp(zA, zTab)==0;
  }
  sqlite3_free(zA);
  sqlite3_free(zB);
  return bMatch;
}

/*
** Is xConnect running for a CREATE VIRTUAL TABLE of zSchema.zTab (rather
** than to reconnect an existing table)?  See the header comment.
*/
int dsVtabIsCreating(sqlite3 *db, const char *zSchema, const char *zTab){
  sqlite3_stmt *pStmt = 0;
  while( (pStmt = sqlite3_next_stmt(db, pStmt))!=0 ){
    const char *zSql;
    if( !sqlite3_stmt_busy(pStmt) ) continue;
    zSql = sqlite3_sql(pStmt);
    if( zSql && dsVtabSqlCreates(zSql, zSchema, zTab) ) return 1;
  }
  return 0;
}

/*
** Is this xConnect the table-valued form's?  SQLite connects the
** eponymous table with three arguments, the table named as the module.
** So does `CREATE VIRTUAL TABLE ds_cross USING ds_cross`, with no
** arguments: a CREATE, whose missing arguments must be reported rather
** than a table-valued form made permanent under the module's name.
*/
int dsVtabIsFunctionForm(sqlite3 *db, int argc, const char *const *argv){
  return argc==3 && sqlite3_stricmp(argv[0], argv[2])==0
      && !dsVtabIsCreating(db, argv[1], argv[2]);
}

/*************************************************************************
** Inputs as declared.
*/

/* "id, name": the column names of an input, for messages. */
static char *dsVtabColumnNames(const DsInput *pIn){
  char *z = dsInputColumnList(pIn);
  return z ? z : sqlite3_mprintf("");
}

/*
** What makes this connection read its schema again, and so connect table
** p anew from its inputs as they are then: the one remedy both a changed
** input and a placeholder have short of remaking the table.  A change of
** the schema by another connection is not offered: it is noticed only by
** a statement that reads the database, and a query of the placeholder
** fails in its prepare, before it reads anything.  A TEMP table is not in
** a new connection at all.
*/
static const char *dsVtabSchemaRereads(const DsVtabTyped *p){
  return p->bTemp ? "an ALTER TABLE or a VACUUM"
                  : "an ALTER TABLE, a VACUUM or a new connection";
}

/*
** Has input pNow (opened for this query) the columns that table p was
** declared with, those of pWas?  Names are compared by position and
** without regard to case, as SQLite names columns.  If not, *pzErr says
** which input changed and how.
*/
static int dsVtabInputCheck(const DsVtabTyped *p, const char *zSide,
                            const DsInput *pWas, const DsInput *pNow,
                            char **pzErr){
  char *zWas, *zNow;
  int i;
  if( pWas->nCol==pNow->nCol ){
    for(i=0; i<pWas->nCol; i++){
      if( sqlite3_stricmp(pWas->azCol[i], pNow->azCol[i]) ) break;
    }
    if( i==pWas->nCol ) return SQLITE_OK;
  }
  zWas = dsVtabColumnNames(pWas);
  zNow = dsVtabColumnNames(pNow);
  if( zWas && zNow ){
    *pzErr = sqlite3_mprintf("%s: the columns of the %s dataset '%s' have "
        "changed since table %s was declared (then: %s; now: %s); drop the "
        "table and create it again, or make the connection read the schema "
        "again: %s does so", p->zFunc, zSide, pWas->zText, p->zName, zWas,
        zNow, dsVtabSchemaRereads(p));
  }
  sqlite3_free(zWas);
  sqlite3_free(zNow);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/*************************************************************************
** Schemas.
*/

/* Does column name zName of one input also name a column of pOther? */
static int dsVtabNameIn(const char *zName, const DsInput *pOther){
  int i;
  for(i=0; i<pOther->nCol; i++){
    if( sqlite3_stricmp(zName, pOther->azCol[i])==0 ) return 1;
  }
  return 0;
}

/*
** The name of column iCol of input iSide (0 left, 1 right) among the
** columns of both: its own, or left_NAME / right_NAME when the other input
** has a column of the same name.  NULL on out of memory.
*/
char *dsVtabPairName(DsInput *const apIn[2], int iSide, int iCol){
  const char *zName = apIn[iSide]->azCol[iCol];
  if( dsVtabNameIn(zName, apIn[1 - iSide]) ){
    return sqlite3_mprintf("%s_%s", iSide ? "right" : "left", zName);
  }
  return sqlite3_mprintf("%s", zName);
}

/* Would SQLite take declared type zDecl as hiding the column?  As its
** vtab.c does: HIDDEN, in any case, between spaces or the ends. */
static int dsVtabDeclIsHidden(const char *zDecl){
  const char *z;
  for(z=zDecl; *z; z++){
    if( (z==zDecl || z[-1]==' ') && sqlite3_strnicmp(z, "hidden", 6)==0
     && (z[6]==0 || z[6]==' ') ){
      return 1;
    }
  }
  return 0;
}

/* Append column zName of declared type zDecl (or none) and collation
** zColl (or none, BINARY) to pSql, a list being built for
** dsVtabDeclare().  The collation makes GROUP BY, ORDER BY, DISTINCT and
** comparisons of the column behave as over a view of the same join. */
void dsVtabSchemaColumn(sqlite3_str *pSql, const char *zName,
                        const char *zDecl, const char *zColl){
  if( sqlite3_str_length(pSql)>0 ) sqlite3_str_append(pSql, ", ", 2);
  sqlite3_str_appendf(pSql, "\"%w\"", zName);
  if( zDecl && zDecl[0] && !dsVtabDeclIsHidden(zDecl) ){
    sqlite3_str_appendf(pSql, " \"%w\"", zDecl);
  }
  if( zColl ) sqlite3_str_appendf(pSql, " COLLATE \"%w\"", zColl);
}

/*
** Declare the columns in pSql (which this frees) as the table's schema.
** On failure *pzErr says why, naming the table.
*/
int dsVtabDeclare(sqlite3 *db, const char *zFunc, const char *zTab,
                  sqlite3_str *pSql, char **pzErr){
  char *zCols = sqlite3_str_finish(pSql);
  char *zSchema;
  int rc;
  if( zCols==0 ) return SQLITE_NOMEM;
  zSchema = sqlite3_mprintf("CREATE TABLE x(%s)", zCols);
  sqlite3_free(zCols);
  if( zSchema==0 ) return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, zSchema);
  sqlite3_free(zSchema);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("%s: cannot declare the columns of table %s: "
        "%s; give an input as a query that renames its columns",
        zFunc, zTab, sqlite3_errmsg(db));
    rc = SQLITE_ERROR;
  }
  return rc;
}

/*
** Can table zTab have nCol columns?  SQLite refuses a table of more than
** SQLITE_LIMIT_COLUMN (2000 in Debian's SQLite) with just "too many
** columns on x"; so when it would, *pzErr says how many and where from
** (zFrom), names the limit and says what would do (zFix).
*/
int dsVtabCheckWidth(sqlite3 *db, const char *zFunc, const char *zTab,
                     int nCol, const char *zFrom, const char *zFix,
                     char **pzErr){
  int nMax = sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1);
  if( nCol<=nMax ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: table %s would have %d columns (%s), more "
      "than SQLite's limit of %d columns in a table (SQLITE_LIMIT_COLUMN); "
      "%s", zFunc, zTab, nCol, zFrom, nMax, zFix);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Declare the typed columns of two inputs, left then right. */
int dsVtabDeclarePair(sqlite3 *db, const char *zFunc, const char *zTab,
                      DsInput *const apIn[2], char **pzErr){
  sqlite3_str *pSql;
  int iSide, i;
  char *zFrom = sqlite3_mprintf("%d of the left dataset and %d of the "
      "right", apIn[0]->nCol, apIn[1]->nCol);
  int rc = zFrom ? SQLITE_OK : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    rc = dsVtabCheckWidth(db, zFunc, zTab, apIn[0]->nCol + apIn[1]->nCol,
                          zFrom, "give an input as a query that selects "
                          "fewer of its columns", pzErr);
  }
  sqlite3_free(zFrom);
  if( rc!=SQLITE_OK ) return rc;
  pSql = sqlite3_str_new(0);
  for(iSide=0; iSide<2; iSide++){
    for(i=0; i<apIn[iSide]->nCol; i++){
      char *zName = dsVtabPairName(apIn, iSide, i);
      if( zName==0 ){
        sqlite3_free(sqlite3_str_finish(pSql));
        return SQLITE_NOMEM;
      }
      dsVtabSchemaColumn(pSql, zName, apIn[iSide]->azDecl[i],
                         apIn[iSide]->azColl[i]);
      sqlite3_free(zName);
    }
  }
  return dsVtabDeclare(db, zFunc, zTab, pSql, pzErr);
}

/* The schema of a table whose inputs could not be read when connecting. */
int dsVtabDeclarePlaceholder(sqlite3 *db){
  return sqlite3_declare_vtab(db, "CREATE TABLE x(unavailable)");
}

/*************************************************************************
** The table of a CREATE form (DsVtabTyped).
*/

/*
** Start *p for table zSchema.zName of module zFunc.  SQLITE_NOMEM or
** SQLITE_OK.
*/
int dsVtabTypedInit(DsVtabTyped *p, const char *zFunc, const char *zSchema,
                    const char *zName){
  memset(p, 0, sizeof(*p));
  p->zFunc = zFunc;
  p->bTemp = sqlite3_stricmp(zSchema, "temp")==0;
  p->zName = sqlite3_mprintf("%s", zName);
  return p->zName ? SQLITE_OK : SQLITE_NOMEM;
}

/*
** The end of a CREATE form's xConnect, where rc and *pzErr are what
** setting the table up gave.  While the table is being created
** (bCreating), an error fails the CREATE.  When an existing table is
** connected again, an error (an input dropped since, say) must not fail:
** the table could then not even be dropped.  It gets the placeholder
** schema instead, and its queries report the error.
*/
int dsVtabTypedConnected(sqlite3 *db, DsVtabTyped *p, int rc, int bCreating,
                         char **pzErr){
  if( rc==SQLITE_OK || rc==SQLITE_NOMEM || bCreating ) return rc;
  rc = dsVtabDeclarePlaceholder(db);
  /* SQLite connects a table again only when it reads the whole schema
  ** again; a CREATE TABLE or VIEW in this connection only adds to it, so
  ** creating the missing input again does not make the table usable. */
  p->zUnusable = sqlite3_mprintf("%s (found when the connection read the "
      "schema of table %s, which stays unusable until the connection reads "
      "the schema again with that fixed: %s makes it do so, creating a "
      "table or view does not; it can be dropped)",
      *pzErr ? *pzErr : "", p->zName, dsVtabSchemaRereads(p));
  sqlite3_free(*pzErr);
  *pzErr = 0;
  if( p->zUnusable==0 && rc==SQLITE_OK ) rc = SQLITE_NOMEM;
  return rc;
}

/* For xBestIndex: SQLITE_ERROR, with the stored reason, for a placeholder. */
int dsVtabTypedUsable(sqlite3_vtab *pVtab, const DsVtabTyped *p){
  if( p->zUnusable==0 ) return SQLITE_OK;
  dsVtabSetError(pVtab, sqlite3_mprintf("%s", p->zUnusable));
  return SQLITE_ERROR;
}

/*
** For xFilter: open both inputs again, as they are now, into apIn[], and
** check that their columns are still those the table was declared with.
*/
int dsVtabTypedReopen(DsVtabTyped *p, sqlite3 *db, DsInput **apIn,
                      char **pzErr){
  int i, rc = SQLITE_OK;
  if( p->zUnusable ){
    *pzErr = sqlite3_mprintf("%s", p->zUnusable);
    return SQLITE_ERROR;
  }
  /* Tables and views can be made to read each other in a cycle (j1 reads
  ** a view of j2, which reads j1); each turn would nest a query deeper
  ** until the stack gave out.  A query of this table that starts while
  ** this table is producing rows can only come from such a cycle. */
  if( p->nActive>1 ){
    *pzErr = sqlite3_mprintf("%s: table %s reads itself through its inputs "
        "(a cycle of tables and views)", p->zFunc, p->zName);
    return SQLITE_ERROR;
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputOpen(db, p->zFunc, dsSideName(i), p->apIn[i]->zText, &apIn[i],
                     pzErr);
    if( rc==SQLITE_OK ){
      rc = dsVtabInputCheck(p, dsSideName(i), p->apIn[i], apIn[i], pzErr);
    }
  }
  return rc;
}

/*
** The columns of each input that a statement uses: the colUsed mask that
** xBestIndex passed in idxStr (hexadecimal; none means all) numbers the
** left input's columns, then the right's.  aaWant[i] gets an array of one
** flag per column of input i, to be freed with sqlite3_free().
*/
int dsVtabTypedWanted(const DsVtabTyped *p, const char *idxStr,
                      u8 **aaWant){
  u64 mUsed = idxStr ? strtoull(idxStr, 0, 16) : ~(u64)0;
  int iFirst = 0;
  int i, c;
  aaWant[0] = aaWant[1] = 0;
  for(i=0; i<2; i++){
    int nCol = p->apIn[i]->nCol;
    aaWant[i] = sqlite3_malloc64((size_t)nCol + 1);
    if( aaWant[i]==0 ){
      sqlite3_free(aaWant[0]);
      aaWant[0] = 0;
      return SQLITE_NOMEM;
    }
    for(c=0; c<nCol; c++) aaWant[i][c] = (u8)dsVtabColUsed(mUsed, iFirst + c);
    iFirst += nCol;
  }
  return SQLITE_OK;
}

void dsVtabTypedClear(DsVtabTyped *p){
  dsInputFree(p->apIn[0]);
  dsInputFree(p->apIn[1]);
  sqlite3_free(p->zName);
  sqlite3_free(p->zUnusable);
  memset(p, 0, sizeof(*p));
}

/*************************************************************************
** The table-valued forms.
**
** A module's arguments are HIDDEN columns, iFirst onwards, in the order of
** pSpec->azName; SQLite passes each given argument as an equality
** constraint.  xBestIndex hands them to xFilter in argument order, with a
** bitmask of those present; a required argument that is constrained but
** not usable in this plan makes the plan impossible (SQLITE_CONSTRAINT),
** one that is absent is the user's error.
*/

/* "f(a, b [, c [, d]])": how the table-valued form is called. */
static char *dsVtabFunctionUsage(const DsVtabArgSpec *pSpec){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  sqlite3_str_appendf(pStr, "%s(", pSpec->zFunc);
  for(i=0; i<pSpec->nName; i++){
    if( i<pSpec->nRequired ){
      sqlite3_str_appendf(pStr, "%s%s", i ? ", " : "", pSpec->azName[i]);
    }else{
      sqlite3_str_appendf(pStr, " [, %s", pSpec->azName[i]);
    }
  }
  for(i=pSpec->nRequired; i<pSpec->nName; i++){
    sqlite3_str_appendchar(pStr, 1, ']');
  }
  sqlite3_str_appendchar(pStr, 1, ')');
  return sqlite3_str_finish(pStr);
}

int dsVtabFunctionBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo,
                            const DsVtabArgSpec *pSpec, int iFirst,
                            int *pmArg){
  int aiCons[32];
  u32 mUnusable = 0;
  int i, nArg = 0;
  *pmArg = 0;
  for(i=0; i<pSpec->nName; i++) aiCons[i] = -1;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pCons = &pInfo->aConstraint[i];
    int iArg = pCons->iColumn - iFirst;
    if( iArg<0 || iArg>=pSpec->nName ) continue;
    if( pCons->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !pCons->usable ){
      mUnusable |= 1u << iArg;
    }else if( aiCons[iArg]<0 ){
      aiCons[iArg] = i;
    }
  }
  for(i=0; i<pSpec->nName; i++){
    if( aiCons[i]>=0 ){
      pInfo->aConstraintUsage[aiCons[i]].argvIndex = ++nArg;
      pInfo->aConstraintUsage[aiCons[i]].omit = 1;
      *pmArg |= 1 << i;
    }else if( mUnusable & (1u << i) ){
      return SQLITE_CONSTRAINT;
    }else if( i<pSpec->nRequired ){
      char *zUsage = dsVtabFunctionUsage(pSpec);
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = sqlite3_mprintf("%s: missing argument %s; usage: %s",
                                       pSpec->zFunc, pSpec->azName[i], zUsage);
      sqlite3_free(zUsage);
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

/* In xFilter: aArg[i] is argument i, or NULL where it was not given. */
void dsVtabFunctionArgs(int mArg, int argc, sqlite3_value **argv, int nArg,
                        sqlite3_value **aArg){
  int i, j;
  for(i=j=0; i<nArg; i++){
    aArg[i] = (mArg & (1<<i)) && j<argc ? argv[j++] : 0;
  }
}

/* Make zMsg (sqlite3_malloc'd, or NULL) the message of the table's error. */
void dsVtabSetError(sqlite3_vtab *pVtab, char *zMsg){
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = zMsg;
}

/* Is column iCol used, by SQLite's colUsed mask mUsed?  Bit 63 stands for
** every column from the 64th on. */
int dsVtabColUsed(u64 mUsed, int iCol){
  return iCol<63 ? (int)((mUsed >> iCol) & 1) : (int)((mUsed >> 63) & 1);
}
