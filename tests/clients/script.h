/*
** script.h: what the C clients of tests/clients/ share.
**
** dsRunScript() reads SQL statements from a stream, one statement per
** line (blank lines and lines starting with `--` are skipped), runs each
** on the connection and prints what it returns as the sqlite3 shell's list
** mode does: one line per row, the values joined by `|`.  NULL prints as
** the word NULL, a BLOB as x'HEX', a number or text as SQLite's text
** conversion of it.  A statement that fails prints `error: MESSAGE` and
** the script goes on, so that errors are part of the output too.
**
** client.py and client.js do the same in Python and Node, so the four
** clients print the same for the same script (REAL values aside: each
** language writes them its own way, so the scripts of tests/clients.test
** return none).
*/
#ifndef DS_CLIENT_SCRIPT_H
#define DS_CLIENT_SCRIPT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

static void dsPrintValue(sqlite3_stmt *pStmt, int i){
  switch( sqlite3_column_type(pStmt, i) ){
    case SQLITE_NULL:
      fputs("NULL", stdout);
      break;
    case SQLITE_BLOB: {
      const unsigned char *a = sqlite3_column_blob(pStmt, i);
      int n = sqlite3_column_bytes(pStmt, i);
      int j;
      fputs("x'", stdout);
      for(j=0; j<n; j++) printf("%02X", a[j]);
      fputs("'", stdout);
      break;
    }
    default:
      fputs((const char *)sqlite3_column_text(pStmt, i), stdout);
      break;
  }
}

/* Run one statement and print its rows, or its error. */
static void dsRunStatement(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK && pStmt ){
    int nCol = sqlite3_column_count(pStmt);
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      int i;
      for(i=0; i<nCol; i++){
        if( i ) fputs("|", stdout);
        dsPrintValue(pStmt, i);
      }
      fputs("\n", stdout);
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( rc!=SQLITE_OK ) printf("error: %s\n", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
}

/* Run every statement of stream `in`.  Returns 0, or 1 on a read error. */
static int dsRunScript(sqlite3 *db, FILE *in){
  char *zLine = 0;
  size_t nAlloc = 0;
  ssize_t n;
  while( (n = getline(&zLine, &nAlloc, in))>=0 ){
    while( n>0 && (zLine[n-1]=='\n' || zLine[n-1]=='\r') ) zLine[--n] = 0;
    if( n==0 || strncmp(zLine, "--", 2)==0 ) continue;
    dsRunStatement(db, zLine);
    fflush(stdout);
  }
  free(zLine);
  return ferror(in) ? 1 : 0;
}

#endif /* DS_CLIENT_SCRIPT_H */
