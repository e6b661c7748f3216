/*
** join_vtab.c: the ds_join_hint module, the SQL face of the equi-join.
**
** One module, two forms, served by the virtual-table skeleton (vtab.c)
** from the descriptor at the end of this file.
**
** Table-valued form (argc 3, the table named as the module):
**
**     SELECT key, left, right
**     FROM ds_join_hint(left, right, left_key, right_key [, hint [, type]]);
**
** The six arguments are HIDDEN columns; xBestIndex hands their equality
** constraints to xFilter in argument order, and idxNum records which of
** them are present (bits 0-5) and which output columns the statement uses
** (bits 8-10), so that a row's JSON is made only when it is asked for and
** a side's non-key columns are not even read when its JSON is not used.
** `key` is the join key (a JSON array for a composite key), `left` and
** `right` the rows as JSON objects, NULL for the missing side of an
** outer-join row.
**
** Virtual-table form (CREATE VIRTUAL TABLE t USING ds_join_hint(left=...,
** right=..., left_key=..., right_key=... [, hint=...] [, join_type=...])):
** the arguments are parsed and the typed columns of both inputs declared
** by vtab_args.c.  The table is a view with a pinned strategy: each query
** resolves the inputs afresh, checks that their columns are still those
** the table was declared with, and runs the join.  xBestIndex passes the
** columns the statement uses (colUsed) to xFilter in idxStr, and only
** those are read from the inputs and carried through the hash table or
** sort; an output column that is a key column is read from its key slot,
** so SELECT count(*) reads the keys alone.  bit 0 of idxNum says that the
** plan consumes the ORDER BY, which asks for sort-merge (see
** dsJoinOrderHolds for when that order truly holds).
**
** Either way, each xFilter resolves the inputs afresh, so every query sees
** the inputs' current contents.
*/
#include "dataset_int.h"
#include "dsdecode.h"

#define DS_FUNC "ds_join_hint"

/* Columns of the table-valued form. */
#define JCOL_KEY        0
#define JCOL_LEFT       1
#define JCOL_RIGHT      2
#define JCOL_ARG0       3     /* first hidden argument column */
#define DS_N_ARG        6
#define DS_N_REQUIRED   4

/* idxNum bit of the virtual-table form: the plan consumes the ORDER BY */
#define JIDX_ORDERED    0x01
/* idxNum bit of the virtual-table form: the statement has a LIMIT that
** SQLite passed down (no ORDER BY, no other constraint): a plan that
** streams its first rows is worth more than one that is cheapest whole */
#define JIDX_LIMIT      0x02

/* Rows assumed for an input whose size cannot be found out. */
#define DS_DEFAULT_ROWS 1000000

static const char *const azArgName[DS_N_ARG] = {
  "left", "right", "left_key", "right_key", "hint", "join_type"
};

typedef struct DsJoinTable DsJoinTable;
struct DsJoinTable {
  DsVtab vt;
  /* The CREATE VIRTUAL TABLE form only. */
  int nKey;
  int *aaiKey[2];         /* key columns of each input */
  int eHint;              /* DS_HINT_* */
  int eType;              /* DS_JOIN_* */
};

/*
** The JSON object of a side's row is kept with a copy of the row's values
** it was made from: a join often produces one row of a side many times in
** a row (each probe row with every build row of its key), and the same
** values give the same text, so it is made once.  The same text also lets
** SQLite's JSON functions reuse their parse of it.
*/
typedef struct DsJsonCache DsJsonCache;
struct DsJsonCache {
  DsText json;            /* the object */
  u8 *aImg;               /* the row's packed values it was made from */
  u32 nImg;               /* bytes in aImg; valid only if bValid */
  u32 nAlloc;             /* bytes allocated for aImg */
  int bValid;
};

typedef struct DsJoinCursor DsJoinCursor;
struct DsJoinCursor {
  DsVtabCursor vc;        /* arguments, inputs, rowid */
  int nKey;
  int *aaiKey[2];
  int anPay[2];
  int *aaiPay[2];
  int *aaiSlot[2];        /* input column -> value index in a row, or -1 */
  int *aColSlot;          /* typed column -> 2*value index + side, or -1 */
  int nColSlot;           /* entries in aColSlot */
  int bWantKey;
  DsJoin *pJoin;
  DsRow *apRow[2];        /* the current pair */
  DsRowDecoder aDec[2];   /* the values of apRow[i], as asked for */
  DsText text;            /* reused for JSON text */
  DsJsonCache aJson[2];   /* the last JSON object made of each side */
};

static void dsJoinTableClear(DsVtab *pVt){
  DsJoinTable *pTab = (DsJoinTable *)pVt;
  sqlite3_free(pTab->aaiKey[0]);
  sqlite3_free(pTab->aaiKey[1]);
}

/*
** Set up table pTab of the CREATE form from its arguments azValue[]:
** resolve the inputs and keys, parse hint and join type, declare the
** columns.  *pzErr says what is wrong.
*/
static int dsJoinSetup(sqlite3 *db, DsVtab *pVt, char **azValue,
                       int bCreating, char **pzErr){
  DsJoinTable *pTab = (DsJoinTable *)pVt;
  int anKey[2] = {0, 0};
  char *zWord = 0;
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputOpen(db, DS_FUNC, dsSideName(i), azValue[i],
                     &pVt->typed.apIn[i], pzErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputKeys(DS_FUNC, azArgName[2+i], pVt->typed.apIn[i],
                     dsSideName(i), azValue[2+i], &anKey[i], &pTab->aaiKey[i],
                     pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsCheckKeyCounts(DS_FUNC, anKey, pzErr);
  pTab->nKey = anKey[0];
  if( rc==SQLITE_OK && azValue[4] ){
    rc = dsVtabArgWord(azValue[4], &zWord);
    if( rc==SQLITE_OK ){
      rc = dsParseHintText(DS_FUNC, zWord, &pTab->eHint, pzErr);
    }
    sqlite3_free(zWord);
    zWord = 0;
  }
  if( rc==SQLITE_OK && azValue[5] ){
    rc = dsVtabArgWord(azValue[5], &zWord);
    if( rc==SQLITE_OK ){
      rc = dsParseJoinTypeText(DS_FUNC, zWord, &pTab->eType, pzErr);
    }
    sqlite3_free(zWord);
  }
  /* strict_hints is checked again by every query; a CREATE that it would
  ** refuse is refused at once. */
  if( rc==SQLITE_OK && bCreating ){
    rc = dsCheckStrictHint(pVt->pConn, DS_FUNC, pTab->eHint, pTab->eType,
                           pzErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsVtabDeclarePair(db, DS_FUNC, pVt->typed.zName, pVt->typed.apIn,
                           pzErr);
  }
  return rc;
}

/* Release what one run set up. */
static void dsJoinReset(DsVtabCursor *pVc){
  DsJoinCursor *pCur = (DsJoinCursor *)pVc;
  int i;
  dsJoinClose(pCur->pJoin);
  pCur->pJoin = 0;
  for(i=0; i<2; i++){
    sqlite3_free(pCur->aaiKey[i]);
    sqlite3_free(pCur->aaiPay[i]);
    sqlite3_free(pCur->aaiSlot[i]);
    sqlite3_free(pCur->aDec[i].aVal);
    pCur->aaiKey[i] = pCur->aaiPay[i] = pCur->aaiSlot[i] = 0;
    memset(&pCur->aDec[i], 0, sizeof(pCur->aDec[i]));
    pCur->anPay[i] = 0;
    pCur->apRow[i] = 0;
  }
  sqlite3_free(pCur->aColSlot);
  pCur->aColSlot = 0;
  pCur->nColSlot = 0;
  pCur->aJson[0].bValid = pCur->aJson[1].bValid = 0;
  pCur->nKey = 0;
}

static void dsJoinCursorClear(DsVtabCursor *pVc){
  DsJoinCursor *pCur = (DsJoinCursor *)pVc;
  int i;
  dsTextFree(&pCur->text);
  for(i=0; i<2; i++){
    dsTextFree(&pCur->aJson[i].json);
    sqlite3_free(pCur->aJson[i].aImg);
  }
}

/*
** Decide the columns side iSide carries (dsInputPlanColumns): the key
** columns always, and the others when bAll or aWant[c] is set.
*/
static int dsJoinPlanColumns(DsJoinCursor *pCur, int iSide, int bAll,
                             const u8 *aWant){
  return dsInputPlanColumns(pCur->vc.apIn[iSide], pCur->nKey,
                            pCur->aaiKey[iSide], bAll, aWant,
                            &pCur->aaiSlot[iSide], &pCur->aaiPay[iSide],
                            &pCur->anPay[iSide]);
}

/*
** The typed form's map from its columns to the values of the pair's rows,
** made once per run so that xColumn, called for every value of every
** output row, is one lookup.
*/
static int dsJoinMapColumns(DsJoinCursor *pCur){
  int nLeft = pCur->vc.apIn[0]->nCol;
  int n = nLeft + pCur->vc.apIn[1]->nCol;
  int iCol;
  pCur->aColSlot = sqlite3_malloc64(sizeof(int) * (size_t)n);
  if( pCur->aColSlot==0 ) return SQLITE_NOMEM;
  for(iCol=0; iCol<n; iCol++){
    int iSide = iCol>=nLeft;
    int iSlot = pCur->aaiSlot[iSide][iCol - (iSide ? nLeft : 0)];
    pCur->aColSlot[iCol] = iSlot<0 ? -1 : 2*iSlot + iSide;
  }
  pCur->nColSlot = n;
  return SQLITE_OK;
}

/* With inputs, keys and carried columns set up: start the join. */
static int dsJoinCursorRun(DsJoinCursor *pCur, int eHint, int eType,
                           int bWantOrder, int bLimit, char **pzErr){
  DsJoinSpec spec;
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    pCur->aDec[i].aVal = sqlite3_malloc64(
        sizeof(DsValue) * (size_t)(pCur->nKey + pCur->anPay[i] + 1));
    if( pCur->aDec[i].aVal==0 ) rc = SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK ) return rc;
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  for(i=0; i<2; i++){
    spec.apIn[i] = pCur->vc.apIn[i];
    spec.aaiKey[i] = pCur->aaiKey[i];
    spec.anPay[i] = pCur->anPay[i];
    spec.aaiPay[i] = pCur->aaiPay[i];
  }
  spec.nKey = pCur->nKey;
  spec.eHint = eHint;
  spec.eType = eType;
  spec.bWantOrder = bWantOrder;
  spec.bLimit = bLimit;
  /* No row counts: the join counts the inputs as they are now, reading a
  ** view or query ahead (plan.c), for either form. */
  spec.anRowHint[0] = spec.anRowHint[1] = -1;
  return dsJoinOpen(pCur->vc.pConn, &spec, &pCur->pJoin, pzErr);
}

/*
** Start a run.  The table-valued form's inputs, keys, hint and join type
** come from its arguments aArg, and idxNum says which output columns are
** used.  The CREATE form's inputs are set up; it carries the columns the
** statement uses (the colUsed mask in idxStr), and idxNum says whether
** the plan consumes the ORDER BY.
*/
static int dsJoinStartRun(DsVtabCursor *pVc, int idxNum, const char *idxStr,
                          sqlite3_value **aArg, char **pzErr){
  DsJoinCursor *pCur = (DsJoinCursor *)pVc;
  DsJoinTable *pTab = (DsJoinTable *)pVc->pTab;
  u8 *aaWant[2];
  int eHint = 0, eType = 0;
  int i, rc = SQLITE_OK;

  if( aArg ){
    rc = dsInputOpenPair(pVc->pConn->db, DS_FUNC, aArg, pVc->apIn,
                         pCur->aaiKey, &pCur->nKey, pzErr);
    if( rc==SQLITE_OK ) rc = dsParseHint(DS_FUNC, aArg[4], &eHint, pzErr);
    if( rc==SQLITE_OK ) rc = dsParseJoinType(DS_FUNC, aArg[5], &eType, pzErr);
    if( rc!=SQLITE_OK ) return rc;
    pCur->bWantKey = (idxNum >> DS_VTAB_USE_SHIFT) & 1;
    for(i=0; i<2 && rc==SQLITE_OK; i++){
      rc = dsJoinPlanColumns(pCur, i,
                             (idxNum >> (DS_VTAB_USE_SHIFT + 1 + i)) & 1, 0);
    }
    if( rc!=SQLITE_OK ) return rc;
    return dsJoinCursorRun(pCur, eHint, eType, 0, 0, pzErr);
  }

  pCur->nKey = pTab->nKey;
  for(i=0; i<2; i++){
    size_t nByte = sizeof(int) * (size_t)pTab->nKey;
    pCur->aaiKey[i] = sqlite3_malloc64(nByte);
    if( pCur->aaiKey[i]==0 ) return SQLITE_NOMEM;
    memcpy(pCur->aaiKey[i], pTab->aaiKey[i], nByte);
  }
  rc = dsVtabTypedWanted(&pTab->vt.typed, idxStr, aaWant);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsJoinPlanColumns(pCur, i, 0, aaWant[i]);
  }
  sqlite3_free(aaWant[0]);
  sqlite3_free(aaWant[1]);
  if( rc==SQLITE_OK ) rc = dsJoinMapColumns(pCur);
  if( rc!=SQLITE_OK ) return rc;
  return dsJoinCursorRun(pCur, pTab->eHint, pTab->eType,
                         (idxNum & JIDX_ORDERED)!=0,
                         (idxNum & JIDX_LIMIT)!=0, pzErr);
}

static int dsJoinStep(DsVtabCursor *pVc, char **pzErr){
  DsJoinCursor *pCur = (DsJoinCursor *)pVc;
  int rc = dsJoinNext(pCur->pJoin, pCur->apRow, pzErr);
  if( rc==SQLITE_ROW ){
    dsDecoderStart(&pCur->aDec[0], pCur->apRow[0]);
    dsDecoderStart(&pCur->aDec[1], pCur->apRow[1]);
  }
  return rc;
}

/*
** The JSON object of the current row of side iSide: the one made last
** time if the row holds the same values, else a new one.  NULL if the
** row's image cannot be kept; a text that failed is returned with its rc.
*/
static DsText *dsJoinRowJson(DsJoinCursor *pCur, int iSide){
  const DsRow *pRow = pCur->apRow[iSide];
  DsJsonCache *pCache = &pCur->aJson[iSide];
  DsRowDecoder *pDec = &pCur->aDec[iSide];
  if( pCache->bValid && pCache->nImg==pRow->nData
   && memcmp(pCache->aImg, pRow->aData, pRow->nData)==0 ){
    return &pCache->json;
  }
  pCache->bValid = 0;
  if( pRow->nData > pCache->nAlloc ){
    u8 *aNew = sqlite3_realloc64(pCache->aImg, pRow->nData);
    if( aNew==0 ) return 0;
    pCache->aImg = aNew;
    pCache->nAlloc = pRow->nData;
  }
  dsDecoderValue(pDec, pCur->nKey + pCur->anPay[iSide] - 1);
  dsTextReset(&pCache->json);
  dsJsonObject(&pCache->json, pCur->vc.apIn[iSide], pCur->aaiSlot[iSide],
               pDec->aVal);
  /* A failed text is returned as it is: dsTextResult() reports its error
  ** (too big or out of memory); bValid stays 0, so it is made again. */
  if( pCache->json.rc ) return &pCache->json;
  if( pRow->nData ) memcpy(pCache->aImg, pRow->aData, pRow->nData);
  pCache->nImg = pRow->nData;
  pCache->bValid = 1;
  return &pCache->json;
}

/* Column iCol of the table-valued form (the arguments are the skeleton's). */
static int dsJoinFunctionColumn(DsVtabCursor *pVc, sqlite3_context *ctx,
                                int iCol){
  DsJoinCursor *pCur = (DsJoinCursor *)pVc;
  if( iCol==JCOL_KEY ){
    /* The key of either side's row: one value, or a JSON array. */
    int iSide = pCur->apRow[0] ? 0 : 1;
    if( pCur->apRow[iSide]==0 ) return SQLITE_OK;
    dsDecoderValue(&pCur->aDec[iSide], pCur->nKey - 1);
    dsKeyResult(ctx, pCur->aDec[iSide].aVal, pCur->nKey, &pCur->text,
                DS_FUNC);
  }else{
    int iSide = iCol - JCOL_LEFT;
    DsText *pJson;
    if( pCur->apRow[iSide]==0 ) return SQLITE_OK;
    pJson = dsJoinRowJson(pCur, iSide);
    if( pJson==0 ){
      dsResultNoMem(ctx, DS_FUNC);
    }else{
      dsTextResult(ctx, pJson, 1, DS_FUNC, iSide ? "the JSON object of a "
                   "right row" : "the JSON object of a left row");
    }
  }
  return SQLITE_OK;
}

/*
** Column iCol of the CREATE form: the value itself, NULL for the missing
** side of an outer-join row.  A row's values are decoded only as far as
** the columns asked for, each once.
*/
static int dsJoinTableColumn(DsVtabCursor *pVc, sqlite3_context *ctx,
                             int iCol){
  DsJoinCursor *pCur = (DsJoinCursor *)pVc;
  int m = iCol<pCur->nColSlot ? pCur->aColSlot[iCol] : -1;
  if( m>=0 && pCur->apRow[m & 1] ){
    dsValueResult(ctx, dsDecoderOne(&pCur->aDec[m & 1], m >> 1));
  }
  return SQLITE_OK;
}

/*
** Does the join's output come in the order aOrderBy asks for?
**
** Sort-merge produces pairs in SQLite's ORDER BY order of the key columns
** in key order (dsRowKeyCompare: NULL first, BINARY), ascending.  The
** order is that of the left key columns for INNER and LEFT_OUTER, of the
** right key columns for RIGHT_OUTER; for INNER the right key columns too,
** as each part of a matched pair compares equal.  Outer rows have NULL in
** the missing side's columns, so a FULL_OUTER join has no order that an
** ORDER BY on columns could name.
**
** So each ORDER BY term must be ascending and name key part k of an
** ordered side, where k is the next key part not yet named (or one named
** before: a repeated term changes nothing).  After all key parts, rows of
** equal key come in no particular order: any other term fails.  SQLite
** passes no term with a COLLATE other than the column's own, nor NULLS
** LAST: such an ORDER BY arrives as nOrderBy 0.  A term passed is thus in
** the column's declared collation, the input's (`k TEXT COLLATE NOCASE`),
** and the key order is BINARY's: a term on a column with another
** collation fails, and SQLite sorts.
*/
static int dsJoinOrderHolds(const DsJoinTable *pTab,
                            const sqlite3_index_info *pInfo){
  int abSide[2];
  int nLeft = pTab->vt.typed.apIn[0]->nCol;
  int nDone = 0;
  int i, k, s;
  if( pInfo->nOrderBy<=0 ) return 0;
  if( pTab->eHint!=DS_HINT_SORT_MERGE && pTab->eHint!=DS_HINT_OPTIMIZER ){
    return 0;
  }
  abSide[0] = pTab->eType==DS_JOIN_INNER || pTab->eType==DS_JOIN_LEFT;
  abSide[1] = pTab->eType==DS_JOIN_INNER || pTab->eType==DS_JOIN_RIGHT;
  if( !abSide[0] && !abSide[1] ) return 0;
  for(i=0; i<pInfo->nOrderBy; i++){
    int iCol = pInfo->aOrderBy[i].iColumn;
    int iPart = -1;
    if( pInfo->aOrderBy[i].desc ) return 0;
    for(s=0; s<2 && iPart<0; s++){
      if( !abSide[s] ) continue;
      for(k=0; k<pTab->nKey; k++){
        int iOut = pTab->aaiKey[s][k] + (s ? nLeft : 0);
        if( iOut!=iCol ) continue;
        if( k==nDone ){ iPart = k; break; }
        if( k<nDone ) iPart = k;
      }
    }
    if( iPart<0 ) return 0;
    s = iCol<nLeft ? 0 : 1;
    if( pTab->vt.typed.apIn[s]->azColl[iCol - (s ? nLeft : 0)] ) return 0;
    if( iPart==nDone ) nDone++;
  }
  return 1;
}

/*
** Estimated rows of both inputs, found afresh for each plan (inputs grow:
** an estimate kept from a query of an empty table told SQLite that the
** join was tiny long after it was not), cheaply: dsInputQuickRows()
** reads sqlite_stat1, counts a small table, or takes a large one's span
** of rowids.  A view or query that is not a plain scan is not run for a
** plan (the join runs it, once): it is taken as DS_DEFAULT_ROWS.
*/
static int dsJoinEstimate(DsJoinTable *pTab, i64 *anRow){
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputQuickRows(pTab->vt.pConn, pTab->vt.typed.apIn[i], &anRow[i]);
    if( anRow[i]<0 ) anRow[i] = DS_DEFAULT_ROWS;
  }
  return rc;
}

/* Does the statement pass a LIMIT down (SQLite 3.38 and later, only for
** a scan of this table alone, without an ORDER BY it keeps)? */
static int dsJoinHasLimit(const sqlite3_index_info *pInfo){
  int i;
  for(i=0; i<pInfo->nConstraint; i++){
    if( pInfo->aConstraint[i].usable
     && pInfo->aConstraint[i].op==SQLITE_INDEX_CONSTRAINT_LIMIT ){
      return 1;
    }
  }
  return 0;
}

/* About log2(x), without libm: the cost of sorting grows with it. */
static double dsLog2(double x){
  double n = 0;
  while( x>=2 ){ x /= 2; n++; }
  return n;
}

/*
** The CREATE form takes no constraints: it is a whole join, run once per
** xFilter.  Its cost is that of reading both inputs and building on one,
** plus a sort of both for sort-merge, and it is the same whatever the
** constraints, so SQLite gains nothing by putting it in an inner loop,
** where each outer row would run the join again: it goes outside.  The
** rows estimate is the larger input (at least every row of a kept side,
** and what a key/foreign-key join gives).  The columns used go to
** xFilter in idxStr (bColUsedIdxStr).
*/
static int dsJoinTableBestIndex(DsVtab *pVt, sqlite3_index_info *pInfo){
  DsJoinTable *pTab = (DsJoinTable *)pVt;
  double nIn, nOut, rCost;
  i64 anRow[2];
  int bOrdered;
  if( dsJoinEstimate(pTab, anRow)!=SQLITE_OK ) return SQLITE_NOMEM;
  nIn = (double)anRow[0] + (double)anRow[1];
  nOut = (double)(anRow[0]>anRow[1] ? anRow[0] : anRow[1]);
  if( nOut<1 ) nOut = 1;
  bOrdered = dsJoinOrderHolds(pTab, pInfo)
          && dsTextOrderIsBinary(pVt->pConn->db);
  rCost = 2*nIn + nOut;
  if( bOrdered || pTab->eHint==DS_HINT_SORT_MERGE ){
    rCost += nIn * dsLog2(nIn + 2);
  }
  pInfo->idxNum = bOrdered ? JIDX_ORDERED : 0;
  if( dsJoinHasLimit(pInfo) ) pInfo->idxNum |= JIDX_LIMIT;
  pInfo->orderByConsumed = bOrdered;
  pInfo->estimatedCost = rCost;
  pInfo->estimatedRows = (sqlite3_int64)nOut;
  return SQLITE_OK;
}

static const DsVtabModule dsJoinModule = {
  .args = { DS_FUNC, DS_N_ARG, DS_N_REQUIRED, azArgName },
  .zSchema = "CREATE TABLE x(key, \"left\", \"right\", ds_left HIDDEN, "
             "ds_right HIDDEN, left_key HIDDEN, right_key HIDDEN, "
             "hint HIDDEN, join_type HIDDEN)",
  .iArg0 = JCOL_ARG0,
  .nUse = 3,
  .nFunctionRows = 1000000,
  .szTab = sizeof(DsJoinTable),
  .szCur = sizeof(DsJoinCursor),
  .bColUsedIdxStr = 1,
  .xSetup = dsJoinSetup,
  .xTableClear = dsJoinTableClear,
  .xTableBestIndex = dsJoinTableBestIndex,
  .xStart = dsJoinStartRun,
  .xStep = dsJoinStep,
  .xReset = dsJoinReset,
  .xCursorClear = dsJoinCursorClear,
  .xFunctionColumn = dsJoinFunctionColumn,
  .xTableColumn = dsJoinTableColumn,
};

/* xFreeConn frees pConn with the module (dataset.c decides who owns it). */
int dsRegisterJoinVtab(sqlite3 *db, DsConn *pConn,
                       void (*xFreeConn)(void *)){
  return dsVtabRegister(db, &dsJoinModule, pConn, xFreeConn);
}
