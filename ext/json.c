/*
** json.c: JSON text of values, keys and rows, as the table-valued forms
** return them, written into a DsText (text.c).
**
** The text is what SQLite's own json_object() writes for the same values,
** so that a user can compare the two: integers in decimal, strings
** escaped as SQLite escapes them, reals with 15 significant digits
** ("%!.15g": 1.0 stays 1.0, 0.1 stays 0.1) when those read back as the
** same number and with 17 when they do not, as newer SQLite writes them
** (3.40 always stops at 15 and so can change a value on its trip through
** JSON; the extension never does).  The digits come from SQLite's printf,
** except where its 17 do not read back, which happens only beyond the
** range where that printf is exact (dsPrintf17IsExact): then from the C
** library's, correctly rounded.  Past the 15th digit SQLite releases may
** differ in the 17th, all of them reading back the same.  Deliberate
** differences: a BLOB becomes a string of upper-case hex digits, as hex()
** writes it (json_object() refuses blobs); an infinite real becomes
** 9.0e+999, as newer SQLite writes it.
**
** Whether 15 digits read back is decided, in the common case, without
** strtod(): the 15 digits make an integer below 2^53 and, when the
** decimal exponent is within 22, one IEEE multiplication or division by
** an exact power of ten rebuilds the correctly rounded double (Clinger's
** fast path).  17 correctly rounded digits always read back.
*/
#include "dataset_int.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/*************************************************************************
** JSON.
*/

void dsJsonString(DsText *pOut, const char *z, int n){
  static const char aShort[32] = {
    0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,   0,   0,   0, 0,   0,   0, 0, 0
  };
  static const char aHex[] = "0123456789abcdef";
  int i;
  int iStart = 0;
  dsTextChar(pOut, '"');
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
    if( i>iStart ) dsTextAppend(pOut, z + iStart, i - iStart);
    dsTextAppend(pOut, aEsc, nEsc);
    iStart = i + 1;
  }
  if( n>iStart ) dsTextAppend(pOut, z + iStart, n - iStart);
  dsTextChar(pOut, '"');
}

static void dsJsonHex(DsText *pOut, const u8 *z, int n){
  static const char aHex[] = "0123456789ABCDEF";
  char *zOut;
  int i;
  if( pOut->n + 2 + 2*(i64)n > pOut->nAlloc && dsTextGrow(pOut, 2 + 2*(i64)n) ){
    return;
  }
  zOut = pOut->z + pOut->n;
  *zOut++ = '"';
  for(i=0; i<n; i++){
    *zOut++ = aHex[z[i]>>4];
    *zOut++ = aHex[z[i]&0xf];
  }
  *zOut++ = '"';
  pOut->n = zOut - pOut->z;
}

static void dsJsonInt(DsText *pOut, i64 v){
  char aBuf[24];
  int i = (int)sizeof(aBuf);
  u64 u = v<0 ? (u64)0 - (u64)v : (u64)v;
  do{
    aBuf[--i] = (char)('0' + (u % 10));
    u /= 10;
  }while( u );
  if( v<0 ) aBuf[--i] = '-';
  dsTextAppend(pOut, aBuf + i, (int)sizeof(aBuf) - i);
}

/*
** Does the decimal text z (as %g writes it: digits, an optional '.', an
** optional exponent) read back as r?  Exact either way: the fast check
** where it applies, strtod() where it does not (large exponents).
*/
static int dsReadsBackAs(const char *z, double r){
  static const double aPow10[] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
  };
  const char *zStart = z;
  u64 m = 0;
  int e = 0;
  int bNeg = 0;
  int bFrac = 0;
  double v;
  if( *z=='-' ){ bNeg = 1; z++; }
  for(; *z; z++){
    if( *z>='0' && *z<='9' ){
      m = m*10 + (u64)(*z - '0');
      if( bFrac ) e--;
    }else if( *z=='.' ){
      bFrac = 1;
    }else if( *z=='e' ){
      int x = 0, bExpNeg = 0;
      z++;
      if( *z=='-' ){ bExpNeg = 1; z++; }else if( *z=='+' ){ z++; }
      while( *z>='0' && *z<='9' ) x = x*10 + (*z++ - '0');
      e += bExpNeg ? -x : x;
      break;
    }else{
      return 0;
    }
  }
  if( m >= ((u64)1 << 53) || e < -22 || e > 22 ) return strtod(zStart, 0)==r;
  v = e<0 ? (double)m / aPow10[-e] : (double)m * aPow10[e];
  return (bNeg ? -v : v)==r;
}

/*
** Can no 15-digit decimal read back as the positive finite real a?  Most
** reals need 17 digits, and finding that out without writing the 15
** first halves the cost of their JSON.  Exact where it answers 1: with
** the decimal exponent e of a in the range where 10^|14-e| is exact, the
** 15-digit mantissa m = a * 10^(14-e) is computed with one rounding (so
** the true one is m-1, m or m+1, all below 2^53), and each candidate is
** tried with one correctly rounded division or multiplication, as in
** dsReadsBackAs().  Elsewhere (and near powers of ten) it answers 0:
** "perhaps", and the caller writes the 15 digits and checks them.
*/
static int dsRealNeeds17(double a){
  static const double aPow10[] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
  };
  int e = 0;
  int k;
  double m;
  i64 c;
  /* The decimal exponent: 10^e <= a < 10^(e+1), for 1e-8 <= a < 1e22. */
  if( a<1e-8 || a>=1e22 ) return 0;
  if( a>=1.0 ){
    while( e<22 && a>=aPow10[e+1] ) e++;
  }else{
    /* 10^e is not exact here: leave values near it to the caller. */
    while( a*aPow10[-e] < 1.0 ) e--;
    if( a*aPow10[-e]<1.000001 || a*aPow10[-e]>=9.999999 ) return 0;
  }
  k = 14 - e;                     /* m = a * 10^k, k in -7 .. 22 */
  if( k<-22 || k>22 ) return 0;
  m = k>=0 ? a * aPow10[k] : a / aPow10[-k];
  if( m<1e14 || m>=1e15 ) return 0;
  for(c=(i64)m - 1; c<=(i64)m + 1; c++){
    double v = k>=0 ? (double)c / aPow10[k] : (double)c * aPow10[-k];
    if( v==a ) return 0;
  }
  return 1;
}

/*
** Are SQLite's 17 significant digits of the positive real a sure to read
** back as a, so that checking them would be wasted?  17 correctly rounded
** digits are off by at most half their spacing, 5e-17 of the value,
** where half an ulp is at least 5.55e-17:
** digits within 5e-18 more of the value still read back.  SQLite 3.40's
** printf scales a into [1, 10) in long double.  From 1e-8 to 1e22 it does
** so with powers of ten that a 64-bit mantissa holds exactly and a dozen
** roundings of 2^-64 at most, far inside that margin.  Past 1e100 it
** multiplies by a rounded 1e100, and about 0.3% of reals there come out
** with a 17th digit that reads back as the next double (1.797...57e308
** as 1.797...56e308).  Without a 64-bit long double, nowhere.
*/
static int dsPrintf17IsExact(double a){
#if LDBL_MANT_DIG >= 64
  return a>=1e-8 && a<1e22;
#else
  (void)a;
  return 0;
#endif
}

/*
** The 17 significant digits of the finite non-zero real r, written as
** SQLite's "%!.17g" writes them ("-1.7976931348623157e+308", "0.1000...",
** "12345678901234568.0") but correctly rounded: the digits and the
** exponent come from the C library's "%.16e", exact in glibc, musl and
** the BSDs.  Only digits, signs and 'e' are read from it, so the locale's
** decimal point does not matter.
*/
static void dsReal17Exact(char *zOut, double r){
  char aLib[64];
  char aDig[17];
  const char *z = aLib;
  char *p = zOut;
  int nDig = 0, e = 0, bExpNeg = 0, i;
  snprintf(aLib, sizeof(aLib), "%.16e", r);
  if( *z=='-' ) z++;
  for(; *z && *z!='e' && *z!='E'; z++){
    if( *z>='0' && *z<='9' && nDig<17 ) aDig[nDig++] = *z;
  }
  if( *z ) z++;
  if( *z=='-' ){ bExpNeg = 1; z++; }else if( *z=='+' ){ z++; }
  while( *z>='0' && *z<='9' ) e = e*10 + (*z++ - '0');
  if( bExpNeg ) e = -e;
  while( nDig>1 && aDig[nDig-1]=='0' ) nDig--;
  if( r<0.0 ) *p++ = '-';
  if( e<-4 || e>=17 ){            /* d.ddde+XX, as %g past its precision */
    int a = e<0 ? -e : e;
    *p++ = aDig[0];
    *p++ = '.';
    if( nDig==1 ) *p++ = '0';
    for(i=1; i<nDig; i++) *p++ = aDig[i];
    *p++ = 'e';
    *p++ = e<0 ? '-' : '+';
    if( a>=100 ){ *p++ = (char)('0' + a/100); a %= 100; }
    *p++ = (char)('0' + a/10);
    *p++ = (char)('0' + a%10);
  }else if( e<0 ){                /* 0.000ddd */
    *p++ = '0';
    *p++ = '.';
    for(i=e+1; i<0; i++) *p++ = '0';
    for(i=0; i<nDig; i++) *p++ = aDig[i];
  }else{                          /* ddd.ddd, at least one digit after */
    for(i=0; i<=e; i++) *p++ = i<nDig ? aDig[i] : '0';
    *p++ = '.';
    if( nDig<=e+1 ) *p++ = '0';
    for(i=e+1; i<nDig; i++) *p++ = aDig[i];
  }
  *p = 0;
}

/* A finite real: 15 significant digits when they read back, else 17. */
static void dsJsonReal(DsText *pOut, double r){
  char aBuf[48];
  int n;
  double a = r<0.0 ? -r : r;
  if( r==0.0 ){                   /* SQLite writes -0.0 as 0.0 too */
    dsTextAppend(pOut, "0.0", 3);
    return;
  }
  if( dsRealNeeds17(a)
   || (sqlite3_snprintf(sizeof(aBuf), aBuf, "%!.15g", r),
       !dsReadsBackAs(aBuf, r)) ){
    sqlite3_snprintf(sizeof(aBuf), aBuf, "%!.17g", r);
    if( !dsPrintf17IsExact(a) && !dsReadsBackAs(aBuf, r) ){
      dsReal17Exact(aBuf, r);
    }
  }
  n = (int)strlen(aBuf);
  dsTextAppend(pOut, aBuf, n);
}

void dsJsonValue(DsText *pOut, const DsValue *pVal){
  switch( pVal->eType ){
    case DS_INT:
      dsJsonInt(pOut, pVal->i);
      break;
    case DS_REAL:
      if( pVal->r > 1.7976931348623157e308 ){
        dsTextAppend(pOut, "9.0e+999", 8);
      }else if( pVal->r < -1.7976931348623157e308 ){
        dsTextAppend(pOut, "-9.0e+999", 9);
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
      dsTextAppend(pOut, "null", 4);
      break;
  }
}

/* A JSON array of n values: a composite key. */
void dsJsonArray(DsText *pOut, const DsValue *aVal, int n){
  int i;
  dsTextChar(pOut, '[');
  for(i=0; i<n; i++){
    if( i ) dsTextChar(pOut, ',');
    dsJsonValue(pOut, &aVal[i]);
  }
  dsTextChar(pOut, ']');
}

/*
** A key as JSON: the value itself for a one-column key, else the array
** of its values.  The one renderer of keys: the `key` columns
** (dsKeyResult), ds_join_plan()'s top_keys and coGroup's messages.
*/
void dsJsonKey(DsText *pOut, const DsValue *aVal, int nKey){
  if( nKey==1 ){
    dsJsonValue(pOut, &aVal[0]);
  }else{
    dsJsonArray(pOut, aVal, nKey);
  }
}

/*
** A key as the `key` column of the table-valued forms shows it: the value
** itself (any type) for a one-column key, else the JSON array of its
** values, made in pText.
*/
void dsKeyResult(sqlite3_context *ctx, const DsValue *aVal, int nKey,
                 DsText *pText, const char *zFunc){
  if( nKey==1 ){
    dsValueResult(ctx, &aVal[0]);
    return;
  }
  dsTextReset(pText);
  dsJsonArray(pText, aVal, nKey);
  dsTextResult(ctx, pText, 1, zFunc, "the JSON array of a key");
}

/*
** A row of input pIn as a JSON object, column name to value, in the
** input's column order: column c is aVal[aiSlot[c]] (see
** dsInputPlanColumns()).
*/
void dsJsonObject(DsText *pOut, const DsInput *pIn, const int *aiSlot,
                  const DsValue *aVal){
  int c;
  dsTextChar(pOut, '{');
  for(c=0; c<pIn->nCol; c++){
    if( c ) dsTextChar(pOut, ',');
    dsJsonString(pOut, pIn->azCol[c], (int)strlen(pIn->azCol[c]));
    dsTextChar(pOut, ':');
    dsJsonValue(pOut, &aVal[aiSlot[c]]);
  }
  dsTextChar(pOut, '}');
}
