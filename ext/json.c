/*
** json.c: JSON text of values, as the table-valued forms return rows.
**
** The text is what SQLite's own json_object() writes for the same values,
** so that a user can compare the two: integers in decimal, strings
** escaped as SQLite escapes them, reals as SQLite 3.40 writes them
** ("%!.15g": 1.0 stays 1.0) whenever that reads back as the same number.
** Deliberate differences: a real that 15 digits cannot carry gets 16 or
** 17 (newer SQLite writes 17 digits always), so no value is changed by the
** trip through JSON; a BLOB becomes a string of upper-case hex digits, as
** hex() writes it (json_object() refuses blobs); an infinite real becomes
** 9.0e+999, as newer SQLite writes it.
*/
#include "dataset_int.h"

#include <stdlib.h>

void dsJsonString(sqlite3_str *pOut, const char *z, int n){
  static const char aShort[32] = {
    0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,   0,   0,   0, 0,   0,   0, 0, 0
  };
  static const char aHex[] = "0123456789abcdef";
  int i;
  int iStart = 0;
  sqlite3_str_appendchar(pOut, 1, '"');
  for(i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    char aEsc[6];
    int nEsc;
    if( c=='"' || c=='\\' ){
      aEsc[0] = '\\'; aEsc[1] = (char)c; nEsc = 2;
    }else if( c<=0x1f ){
      aEsc[0] = '\\';
      if( aShort[c] ){
        aEsc[1] = aShort[c]; nEsc = 2;
      }else{
        aEsc[1] = 'u'; aEsc[2] = '0'; aEsc[3] = '0';
        aEsc[4] = aHex[c>>4]; aEsc[5] = aHex[c&0xf]; nEsc = 6;
      }
    }else{
      continue;
    }
    if( i>iStart ) sqlite3_str_append(pOut, z + iStart, i - iStart);
    sqlite3_str_append(pOut, aEsc, nEsc);
    iStart = i + 1;
  }
  if( n>iStart ) sqlite3_str_append(pOut, z + iStart, n - iStart);
  sqlite3_str_appendchar(pOut, 1, '"');
}

static void dsJsonHex(sqlite3_str *pOut, const u8 *z, int n){
  static const char aHex[] = "0123456789ABCDEF";
  char aBuf[128];
  int i, j = 0;
  sqlite3_str_appendchar(pOut, 1, '"');
  for(i=0; i<n; i++){
    aBuf[j++] = aHex[z[i]>>4];
    aBuf[j++] = aHex[z[i]&0xf];
    if( j==(int)sizeof(aBuf) ){
      sqlite3_str_append(pOut, aBuf, j);
      j = 0;
    }
  }
  sqlite3_str_append(pOut, aBuf, j);
  sqlite3_str_appendchar(pOut, 1, '"');
}

static void dsJsonInt(sqlite3_str *pOut, i64 v){
  char aBuf[24];
  int i = (int)sizeof(aBuf);
  u64 u = v<0 ? (u64)0 - (u64)v : (u64)v;
  do{
    aBuf[--i] = (char)('0' + (u % 10));
    u /= 10;
  }while( u );
  if( v<0 ) aBuf[--i] = '-';
  sqlite3_str_append(pOut, aBuf + i, (int)sizeof(aBuf) - i);
}

/*
** A real as the shortest of %!.15g, %!.16g and %!.17g that reads back as
** the same double: 0.1 stays 0.1, yet 0.1+0.2 keeps its last digits.
*/
static void dsJsonReal(sqlite3_str *pOut, double r){
  char aBuf[40];
  int nDigit;
  for(nDigit=15; nDigit<17; nDigit++){
    sqlite3_snprintf(sizeof(aBuf), aBuf, "%!.*g", nDigit, r);
    if( strtod(aBuf, 0)==r ) break;
  }
  if( nDigit==17 ) sqlite3_snprintf(sizeof(aBuf), aBuf, "%!.17g", r);
  sqlite3_str_appendall(pOut, aBuf);
}

void dsJsonValue(sqlite3_str *pOut, const DsValue *pVal){
  switch( pVal->eType ){
    case DS_INT:
      dsJsonInt(pOut, pVal->i);
      break;
    case DS_REAL:
      if( pVal->r > 1.7976931348623157e308 ){
        sqlite3_str_append(pOut, "9.0e+999", 8);
      }else if( pVal->r < -1.7976931348623157e308 ){
        sqlite3_str_append(pOut, "-9.0e+999", 9);
      }else{
        dsJsonReal(pOut, pVal->r);
      }
      break;
    case DS_TEXT:
      dsJsonString(pOut, (const char *)pVal->z, pVal->n);
      break;
    case DS_BLOB:
      dsJsonHex(pOut, pVal->z, pVal->n);
      break;
    default:
      sqlite3_str_append(pOut, "null", 4);
      break;
  }
}

/* A JSON array of n values: a composite key. */
void dsJsonArray(sqlite3_str *pOut, const DsValue *aVal, int n){
  int i;
  sqlite3_str_appendchar(pOut, 1, '[');
  for(i=0; i<n; i++){
    if( i ) sqlite3_str_appendchar(pOut, 1, ',');
    dsJsonValue(pOut, &aVal[i]);
  }
  sqlite3_str_appendchar(pOut, 1, ']');
}

/*
** A row of input pIn as a JSON object, column name to value, in the
** input's column order: column c is aVal[aiSlot[c]] (see
** dsInputPlanColumns()).
*/
void dsJsonObject(sqlite3_str *pOut, const DsInput *pIn, const int *aiSlot,
                  const DsValue *aVal){
  int c;
  sqlite3_str_appendchar(pOut, 1, '{');
  for(c=0; c<pIn->nCol; c++){
    if( c ) sqlite3_str_appendchar(pOut, 1, ',');
    dsJsonString(pOut, pIn->azCol[c], (int)strlen(pIn->azCol[c]));
    sqlite3_str_appendchar(pOut, 1, ':');
    dsJsonValue(pOut, &aVal[aiSlot[c]]);
  }
  sqlite3_str_appendchar(pOut, 1, '}');
}

/*
** Make the JSON text built in pOut the result of an SQL function, with
** the subtype SQLite's JSON functions give JSON ('J'), so that json_*()
** and json_group_array() take it as JSON, not as a string.  Frees pOut.
** Fails with SQLITE_NOMEM or SQLITE_TOOBIG as pOut did.
*/
void dsResultJson(sqlite3_context *ctx, sqlite3_str *pOut){
  int rc = sqlite3_str_errcode(pOut);
  int n = sqlite3_str_length(pOut);
  char *z = sqlite3_str_finish(pOut);
  if( rc==SQLITE_OK && z ){
    sqlite3_result_text(ctx, z, n, sqlite3_free);
    sqlite3_result_subtype(ctx, DS_JSON_SUBTYPE);
    return;
  }
  sqlite3_free(z);
  if( rc==SQLITE_TOOBIG ){
    sqlite3_result_error_toobig(ctx);
  }else{
    sqlite3_result_error_nomem(ctx);
  }
}
