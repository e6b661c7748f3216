/*
** cogroup.c: the coGroup operator.
**
** Flink's coGroup hands a function, for every key found in either input,
** the group of rows each input has for that key (an empty group where one
** has none).  Here both inputs are sorted on the key by the core sorter
** in group order (sort.c, DS_ORDER_GROUP: every key with a NULL part
** first, as one group, then the keys ascending), and the two sorted
** streams are merged (groupmerge.c): the smaller head key starts the next
** group, and each side whose head has that key gives up its run of rows.
**
** A group's rows are never held: as each row streams past it is counted
** and, where the caller wants that side's JSON, appended to the group's
** JSON array at once.  So memory holds the sorter's buffers and the
** current JSON text, whatever the size of a group.  A JSON array that
** would pass SQLite's length limit fails with an error naming the key,
** never a truncated array.
**
** NULL keys match nothing, yet their rows must appear: the NULL-key rows
** of the left side form one group, those of the right side another, and
** the two are never merged (left first, then right, before every other
** key, as SQLite sorts NULL first).
**
** A group's key is the key of its first row on the left side if the left
** side has the group, else of its first row on the right side (1 and 1.0
** are the same key; the left one is shown, as in joins).
*/
#include "dataset_int.h"

struct DsCoGroup {
  DsOp op;
  int nKey;
  int abJson[2];          /* build the JSON of each side's groups */
  int anCol[2];           /* values per row of each side */
  const DsInput *apIn[2];
  int *aaiSlot[2];        /* input column -> value index in a row */
  int *aaiPay[2];
  DsGroupMerge merge;     /* both sides in group order; the next row of
                          ** each not yet grouped */
  DsRow *pKey;            /* copy of the current group's key */
  i64 nKeyAlloc;          /* bytes allocated at pKey */
  i64 anCount[2];         /* rows of each side in the current group */
  DsText aJson[2];        /* JSON arrays of the current group */
  i64 nJsonMax;           /* SQLite's length limit */
  DsValue *aVal;          /* room to decode the widest row */
  double tOut;            /* when the merge started */
};

/* Make the key of pRow the current group's key. */
static int dsCoGroupSetKey(DsCoGroup *p, const DsRow *pRow){
  i64 nByte = (i64)DS_ROW_SIZE(pRow->nKey);
  if( nByte > p->nKeyAlloc ){
    DsRow *pNew = dsRealloc(&p->op.mem, p->pKey, nByte);
    if( pNew==0 ) return SQLITE_NOMEM;
    p->pKey = pNew;
    p->nKeyAlloc = nByte;
  }
  p->pKey->pNext = 0;
  p->pKey->hash = pRow->hash;
  p->pKey->nData = pRow->nKey;
  p->pKey->nKey = pRow->nKey;
  p->pKey->flags = pRow->flags & DS_ROW_NULLKEY;
  memcpy(p->pKey->aData, pRow->aData, pRow->nKey);
  return SQLITE_OK;
}

/* The current key as text for a message: a value or a JSON array. */
static char *dsCoGroupKeyText(DsCoGroup *p){
  DsText txt;
  char *z;
  dsTextInit(&txt);
  if( p->pKey->flags & DS_ROW_NULLKEY ){
    dsTextAppendAll(&txt, "NULL");
  }else{
    dsRowValues(p->pKey, p->nKey, p->aVal);
    dsJsonKey(&txt, p->aVal, p->nKey);
  }
  z = dsTextFinish(&txt);
  if( z && strlen(z)>200 ){
    memcpy(&z[190], "...", 4);
  }
  return z;
}

/* After appending to side iSide's JSON: an error if it became too long
** (naming the key), or failed for want of memory. */
static int dsCoGroupCheckJson(DsCoGroup *p, int iSide){
  int rc = p->aJson[iSide].rc;
  if( rc==SQLITE_TOOBIG
   || (rc==SQLITE_OK && p->aJson[iSide].n > p->nJsonMax) ){
    char *zKey = dsCoGroupKeyText(p);
    char *zWhat = zKey ? sqlite3_mprintf("the JSON array of the %s group of "
                                         "key %s", dsSideName(iSide), zKey) : 0;
    char *zWhy = zWhat ? dsTooLongText(zWhat, p->nJsonMax) : 0;
    rc = zWhy ? dsOpError(&p->op, SQLITE_TOOBIG, "%s", zWhy) : SQLITE_NOMEM;
    sqlite3_free(zKey);
    sqlite3_free(zWhat);
    sqlite3_free(zWhy);
  }
  return rc;
}

/* Append pRow, of side iSide, to that side's JSON array; the work ticks
** by the bytes written (a wide row's JSON takes a while). */
static int dsCoGroupAppendJson(DsCoGroup *p, int iSide, const DsRow *pRow){
  DsText *pOut = &p->aJson[iSide];
  i64 nWas = pOut->n;
  int rc;
  if( p->anCount[iSide] ) dsTextChar(pOut, ',');
  dsRowValues(pRow, p->anCol[iSide], p->aVal);
  dsJsonObject(pOut, p->apIn[iSide], p->aaiSlot[iSide], p->aVal);
  rc = dsCoGroupCheckJson(p, iSide);
  if( rc==SQLITE_OK ) rc = dsOpTickN(&p->op, (u32)((pOut->n - nWas)/4));
  return rc;
}

/* Take the run of rows of side iSide with the current key. */
static int dsCoGroupTake(DsCoGroup *p, int iSide){
  while( dsGroupMergeInGroup(&p->merge, iSide, p->pKey) ){
    int rc;
    if( p->abJson[iSide] ){
      rc = dsCoGroupAppendJson(p, iSide, p->merge.apHead[iSide]);
      if( rc!=SQLITE_OK ) return rc;
    }
    p->anCount[iSide]++;
    rc = dsGroupMergeFetch(&p->merge, iSide);
    if( rc!=SQLITE_OK ) return rc;
    if( (rc = dsOpTick(&p->op))!=SQLITE_OK ) return rc;
  }
  return SQLITE_OK;
}

/* Form the next group: SQLITE_ROW, SQLITE_DONE, or an error. */
static int dsCoGroupStep(DsCoGroup *p){
  int eSides, i, rc;
  dsOpStep(&p->op, "cogroup");
  /* Two NULL-key groups never meet: the left one comes first. */
  eSides = dsGroupMergeSides(&p->merge);
  if( eSides==0 ) return SQLITE_DONE;
  rc = dsCoGroupSetKey(p, p->merge.apHead[eSides & DS_MERGE_LEFT ? 0 : 1]);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<2; i++){
    p->anCount[i] = 0;
    if( p->abJson[i] ){
      dsTextReset(&p->aJson[i]);
      dsTextChar(&p->aJson[i], '[');
    }
  }
  if( eSides & DS_MERGE_LEFT ) rc = dsCoGroupTake(p, 0);
  if( rc==SQLITE_OK && (eSides & DS_MERGE_RIGHT) ) rc = dsCoGroupTake(p, 1);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<2; i++){
    if( p->abJson[i] ){
      dsTextChar(&p->aJson[i], ']');
      if( (rc = dsCoGroupCheckJson(p, i))!=SQLITE_OK ) return rc;
    }
  }
  return SQLITE_ROW;
}

/* Open side iSide: a reader of the columns it needs, and its sorter. */
static int dsCoGroupOpenSide(DsCoGroup *p, const DsCoGroupSpec *pSpec,
                             int iSide, char **pzErr){
  DsOp *pOp = &p->op;
  int nPay = 0;
  int rc;
  rc = dsInputPlanColumns(pSpec->apIn[iSide], pSpec->nKey,
                          pSpec->aaiKey[iSide], pSpec->abJson[iSide], 0,
                          &p->aaiSlot[iSide], &p->aaiPay[iSide], &nPay);
  if( rc!=SQLITE_OK ) return rc;
  p->anCol[iSide] = pSpec->nKey + nPay;
  rc = dsReaderOpen(pOp->pConn, pSpec->zFunc, pSpec->apIn[iSide],
                    pSpec->nKey, pSpec->aaiKey[iSide], nPay,
                    p->aaiPay[iSide], &pOp->apSrc[iSide], pzErr);
  if( rc!=SQLITE_OK ) return rc;
  p->nJsonMax = dsLengthLimit(pOp->pConn->db);
  return SQLITE_OK;
}

int dsCoGroupOpen(DsConn *pConn, const DsCoGroupSpec *pSpec,
                  DsCoGroup **ppGroup, char **pzErr){
  DsCoGroup *p;
  DsOp *pOp;
  int rc = SQLITE_OK;
  int i, nMaxCol = pSpec->nKey;
  double t = dsNowMs();

  *ppGroup = 0;
  p = sqlite3_malloc64(sizeof(DsCoGroup));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  pOp = &p->op;
  dsOpInit(pOp, pConn, pSpec->zFunc, "cogroup");
  dsGroupMergeInit(&p->merge, pOp, DS_ORDER_GROUP);
  p->nKey = pSpec->nKey;
  pOp->stats.zStrategy = dsHintName[DS_HINT_SORT_MERGE];
  pOp->stats.zReason = sqlite3_mprintf("coGroup sorts both inputs on the "
      "key and merges them into groups");
  if( pOp->stats.zReason==0 ) rc = SQLITE_NOMEM;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    p->abJson[i] = pSpec->abJson[i];
    p->apIn[i] = pSpec->apIn[i];
    rc = dsCoGroupOpenSide(p, pSpec, i, pzErr);
    if( p->anCol[i] > nMaxCol ) nMaxCol = p->anCol[i];
  }
  if( rc==SQLITE_OK ){
    p->aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)(nMaxCol + 1));
    if( p->aVal==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) dsOpProgressInputs(pOp, pSpec->apIn);
  dsStatsPhase(&pOp->stats, DS_PHASE_PLAN, &t);
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsGroupMergeSort(&p->merge, i);
    if( rc==SQLITE_OK ) rc = dsGroupMergeFetch(&p->merge, i);
  }
  dsStatsPhase(&pOp->stats, DS_PHASE_SORT, &t);
  p->tOut = t;
  if( rc!=SQLITE_OK ){
    dsOpOpenFailed(pOp, rc, pzErr);
    dsCoGroupClose(p);
    return rc;
  }
  *ppGroup = p;
  return SQLITE_OK;
}

/* The next group: SQLITE_ROW, SQLITE_DONE, or an error with *pzErr set. */
int dsCoGroupNext(DsCoGroup *p, char **pzErr){
  int rc;
  if( p->op.bDone ) return SQLITE_DONE;
  rc = dsCoGroupStep(p);
  return dsOpNextTail(&p->op, rc, pzErr);
}

/* The current group's key: a row of the nKey key values only. */
const DsRow *dsCoGroupKey(const DsCoGroup *p){
  return p->pKey;
}

i64 dsCoGroupCount(const DsCoGroup *p, int iSide){
  return p->anCount[iSide];
}

/* The JSON array of side iSide's group; NULL if it was not asked for. */
DsText *dsCoGroupJson(DsCoGroup *p, int iSide){
  return p->abJson[iSide] ? &p->aJson[iSide] : 0;
}

void dsCoGroupClose(DsCoGroup *p){
  if( p ){
    int i;
    dsStatsPhase(&p->op.stats, DS_PHASE_MERGE, &p->tOut);
    dsGroupMergeClose(&p->merge);
    for(i=0; i<2; i++){
      dsTextFree(&p->aJson[i]);
      sqlite3_free(p->aaiSlot[i]);
      sqlite3_free(p->aaiPay[i]);
    }
    dsFree(&p->op.mem, p->pKey);
    sqlite3_free(p->aVal);
    dsOpFinish(&p->op);
    sqlite3_free(p);
  }
}
