/*
** dsdecode.h: a row's values decoded as they are asked for (DsRowDecoder),
** private to the xColumn callbacks that read rows value by value:
** join_vtab.c and cross_vtab.c.
*/
#ifndef DSDECODE_H
#define DSDECODE_H

#include "dataset_int.h"

/*
** The values of a row, decoded as they are asked for: a virtual table's
** xColumn often wants one or two values of a wide row, and decodes only
** up to the last of them.  aVal has room for every value of the row.
*/
typedef struct DsRowDecoder DsRowDecoder;
struct DsRowDecoder {
  const u8 *pNext;        /* the row's next undecoded value */
  int nDone;              /* values decoded into aVal[] */
  DsValue *aVal;
  const DsRow *pRow;      /* the row */
};

static inline void dsDecoderStart(DsRowDecoder *p, const DsRow *pRow){
  p->pNext = pRow ? pRow->aData : 0;
  p->nDone = 0;
  p->pRow = pRow;
}

/* Value i of the row (which has more than i values). */
static inline const DsValue *dsDecoderValue(DsRowDecoder *p, int i){
  assert( i>=0 && p->pRow!=0 );
  if( p->nDone<=i ){
    const u8 *z = p->pNext;
    int n = p->nDone;
    do{
      z = dsValueDecode(z, &p->aVal[n]);
    }while( ++n<=i );
    p->pNext = z;
    p->nDone = n;
  }
  return &p->aVal[i];
}

/*
** Value i of the row alone, for an xColumn that wants one value: a row of
** numbers only (DS_ROW_NUMBERS) has it at a known place, without decoding
** the values before it.  Unlike dsDecoderValue(), the values before i are
** not left decoded in aVal[].
*/
static inline const DsValue *dsDecoderOne(DsRowDecoder *p, int i){
  assert( i>=0 && p->pRow!=0 );
  if( p->nDone<=i && (p->pRow->flags & DS_ROW_NUMBERS) ){
    dsValueDecode(p->pRow->aData + DS_NUMBER_SIZE*(size_t)i, &p->aVal[i]);
    return &p->aVal[i];
  }
  return dsDecoderValue(p, i);
}

#endif /* DSDECODE_H */
