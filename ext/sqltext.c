/*
** sqltext.c: reading SQL text without compiling it, and the checks of
** text given as an argument.
**
** Dataset arguments (input.c) and the CREATE VIRTUAL TABLE forms
** (vtab_args.c) both read names, keywords and quoted strings in SQL text
** given by the user: they skip blanks and comments, take an identifier
** apart from its quotes, tell a query from a name and a name from a
** statement of another kind.  None of this compiles anything; what is
** compiled is compiled by SQLite (input.c).
*/
#include "dataset_int.h"

#include <ctype.h>

static int dsIsIdChar(int c){
  return isalnum(c) || c=='_' || c=='$' || c>=0x80;
}

/* Skip white space and SQL comments. */
const char *dsSkipSpace(const char *z){
  for(;;){
    while( isspace((unsigned char)*z) ) z++;
    if( z[0]=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( z[0]=='/' && z[1]=='*' ){
      const char *zEnd = strstr(z + 2, "*/");
      z = zEnd ? zEnd + 2 : z + strlen(z);
    }else{
      return z;
    }
  }
}

/* If z starts with keyword zKw (any case) as a whole word, return its
** length, else 0. */
int dsKeyword(const char *z, const char *zKw){
  int n = (int)strlen(zKw);
  if( sqlite3_strnicmp(z, zKw, n)==0 && !dsIsIdChar((unsigned char)z[n]) ){
    return n;
  }
  return 0;
}

/*
** If z starts with a quote or bracket, return the index just past the
** matching close (doubled quotes stay inside), or 0 if there is none.
*/
int dsQuotedLength(const char *z){
  char cEnd;
  int i;
  switch( z[0] ){
    case '"': case '\'': case '`': cEnd = z[0]; break;
    case '[': cEnd = ']'; break;
    default: return 0;
  }
  for(i=1; z[i]; i++){
    if( z[i]==cEnd ){
      if( cEnd!=']' && z[i+1]==cEnd ){ i++; continue; }
      return i + 1;
    }
  }
  return 0;
}

/* Index of the parenthesis closing the one at z[0], or -1. */
static int dsMatchParen(const char *z){
  int nDepth = 0;
  int i = 0;
  while( z[i] ){
    const char *zNext = dsSkipSpace(z + i);
    int nQ;
    if( zNext!=z + i ){ i = (int)(zNext - z); continue; }
    nQ = dsQuotedLength(z + i);
    if( nQ ){ i += nQ; continue; }
    if( z[i]=='(' ) nDepth++;
    if( z[i]==')' && --nDepth==0 ) return i;
    i++;
  }
  return -1;
}

/* One identifier at z, dequoted into *pzOut; returns its length or 0. */
int dsParseIdent(const char *z, char **pzOut){
  int n = dsQuotedLength(z);
  if( n>=2 ){
    char *zOut = sqlite3_malloc64((sqlite3_uint64)n);
    int i, j = 0;
    char cEnd = z[0]=='[' ? ']' : z[0];
    if( zOut==0 ) return -1;
    for(i=1; i<n-1; i++){
      zOut[j++] = z[i];
      if( z[i]==cEnd && cEnd!=']' ) i++;
    }
    zOut[j] = 0;
    *pzOut = zOut;
    return n;
  }
  if( isalpha((unsigned char)z[0]) || z[0]=='_' || (unsigned char)z[0]>=0x80 ){
    for(n=1; dsIsIdChar((unsigned char)z[n]); n++){}
    *pzOut = sqlite3_mprintf("%.*s", n, z);
    return *pzOut ? n : -1;
  }
  return 0;
}

/* Is the rest of a statement text only space, comments and semicolons? */
int dsTailIsEmpty(const char *z){
  for(;;){
    z = dsSkipSpace(z);
    if( *z!=';' ) return *z==0;
    z++;
  }
}

/*
** Parse "name" or "schema.name" filling all of z but for a statement's
** tail (blanks, comments, semicolons: harmless after a name as after a
** query).  SQLITE_OK with both outputs set (zSchema may be NULL),
** SQLITE_NOTFOUND if z is not a name, SQLITE_NOMEM.
*/
int dsParseName(const char *z, char **pzSchema, char **pzName){
  char *zA = 0, *zB = 0;
  int n = dsParseIdent(z, &zA);
  if( n<0 ) return SQLITE_NOMEM;
  if( n==0 ) return SQLITE_NOTFOUND;
  z = dsSkipSpace(z + n);
  if( *z=='.' ){
    z = dsSkipSpace(z + 1);
    n = dsParseIdent(z, &zB);
    if( n<=0 ){
      sqlite3_free(zA);
      return n<0 ? SQLITE_NOMEM : SQLITE_NOTFOUND;
    }
    z = dsSkipSpace(z + n);
  }
  if( !dsTailIsEmpty(z) ){
    sqlite3_free(zA);
    sqlite3_free(zB);
    return SQLITE_NOTFOUND;
  }
  if( zB ){
    *pzSchema = zA;
    *pzName = zB;
  }else{
    *pzSchema = 0;
    *pzName = zA;
  }
  return SQLITE_OK;
}

/* Does the text start with the keyword of a statement other than a query? */
int dsLooksLikeStatement(const char *z){
  static const char *const azKw[] = {
    "INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER",
    "PRAGMA", "ATTACH", "DETACH", "BEGIN", "COMMIT", "END", "ROLLBACK",
    "SAVEPOINT", "RELEASE", "VACUUM", "ANALYZE", "REINDEX", "EXPLAIN"
  };
  size_t i;
  for(i=0; i<sizeof(azKw)/sizeof(azKw[0]); i++){
    int n = dsKeyword(z, azKw[i]);
    if( n && *dsSkipSpace(z + n) ) return 1;
  }
  return 0;
}

/* Is z (after any opening parentheses) a SELECT, WITH or VALUES query? */
int dsIsQuery(const char *z){
  while( *z=='(' ) z = dsSkipSpace(z + 1);
  return dsKeyword(z, "SELECT") || dsKeyword(z, "WITH")
      || dsKeyword(z, "VALUES");
}

/* Is z one of those keywords and nothing more?  No query is that short,
** so it can only name a table or view called "select" (say). */
int dsIsBareQueryKeyword(const char *z){
  int n = dsKeyword(z, "SELECT");
  if( n==0 ) n = dsKeyword(z, "WITH");
  if( n==0 ) n = dsKeyword(z, "VALUES");
  return n>0 && dsTailIsEmpty(z + n);
}

/* Copy of the n bytes at z without white space and semicolons at the
** end: a name tried whole ends where a statement's tail starts. */
char *dsTrimEnd(const char *z, int n){
  while( n>0 && (isspace((unsigned char)z[n-1]) || z[n-1]==';') ) n--;
  return sqlite3_mprintf("%.*s", n, z);
}

/*
** Blank out parentheses that enclose the whole query, and drop blanks at
** the end.  A pair encloses the query when what follows its closing
** parenthesis is a statement's tail (blanks, comments, semicolons) or
** starts with a semicolon: "(SELECT 1); -- all" is the query SELECT 1.
** The parentheses become blanks rather than being cut off, so that what
** follows them stays in the text: "(SELECT 1); DELETE FROM t" must still
** be refused as more than one statement when it is compiled.
*/
char *dsUnwrapQuery(const char *zText){
  char *zCopy = sqlite3_mprintf("%s", zText);
  char *z = zCopy;
  char *zOut;
  int n;
  if( zCopy==0 ) return 0;
  while( z[0]=='(' ){
    int iClose = dsMatchParen(z);
    const char *zAfter;
    if( iClose<0 ) break;
    zAfter = dsSkipSpace(z + iClose + 1);
    if( *zAfter!=0 && *zAfter!=';' ) break;
    z[0] = ' ';
    z[iClose] = ' ';
    z = (char *)dsSkipSpace(z);
  }
  n = (int)strlen(z);
  while( n>0 && isspace((unsigned char)z[n-1]) ) n--;
  zOut = sqlite3_mprintf("%.*s", n, z);
  sqlite3_free(zCopy);
  return zOut;
}

/*************************************************************************
** Text arguments, as SQL values.
*/

/* "an integer", "a real", ...: the type of a value, for messages. */
const char *dsTypeNoun(sqlite3_value *pVal){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT:   return "a real";
    case SQLITE_BLOB:    return "a blob";
    case SQLITE_NULL:    return "NULL";
    default:             return "text";
  }
}

/*
** Refuse text argument pVal (zArg of function zFunc) if it holds a NUL
** character: text is read as a C string, which ends there, so the rest
** would be ignored without a word ('users' || char(0) || 'junk' read as
** users).  SQLITE_OK if it holds none, else SQLITE_ERROR with *pzErr set
** (SQLITE_NOMEM without).
*/
int dsArgRefuseNul(const char *zFunc, const char *zArg, sqlite3_value *pVal,
                   char **pzErr){
  const char *z = (const char *)sqlite3_value_text(pVal);
  if( z==0 || (int)strlen(z)==sqlite3_value_bytes(pVal) ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: %s holds a NUL character (char(0)); give "
                           "it as text without one", zFunc, zArg);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/*
** An optional text argument zArg of function zFunc (a hint, a join
** type): *pz is its text, or NULL when the argument is NULL or absent
** (pVal NULL), for the caller's default.  Any other type, or text that
** holds a NUL, is an error that says what is valid.
*/
int dsOptionalTextArg(const char *zFunc, const char *zArg,
                      sqlite3_value *pVal, const char **pz, char **pzErr){
  int rc;
  *pz = 0;
  if( pVal==0 || sqlite3_value_type(pVal)==SQLITE_NULL ) return SQLITE_OK;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: %s must be text or NULL, not %s",
                             zFunc, zArg, dsTypeNoun(pVal));
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  rc = dsArgRefuseNul(zFunc, zArg, pVal, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  *pz = (const char *)sqlite3_value_text(pVal);
  return *pz ? SQLITE_OK : SQLITE_NOMEM;
}
