/*
** cross_vtab.c: the ds_cross module, the SQL face of the cross product.
**
** One module, two forms, as ds_join_hint: xCreate is xConnect, and
** dsVtabIsFunctionForm() tells the table-valued function from a CREATE
** VIRTUAL TABLE.
**
** Table-valued form:
**
**     SELECT left, right FROM ds_cross(left, right [, hint]);
**
** Every pair of a left row and a right row (cross.c), each row as a JSON
** object.  The hint (OPTIMIZER_CHOOSES, FIRST_IS_SMALL, SECOND_IS_SMALL,
** any case) names the side to buffer.  The three arguments are HIDDEN
** columns (vtab_args.c); idxNum bits 8-9 record whether `left` and
** `right` are used: a side whose JSON is not used is read without any of
** its columns, so `SELECT count(*) FROM ds_cross(...)` carries nothing
** but the rows themselves.
**
** Virtual-table form:
**
**     CREATE VIRTUAL TABLE t USING ds_cross(left=..., right=...
**                                           [, hint=...]);
**
** The typed columns of both inputs, named as for joins (vtab_args.c:
** left_NAME and right_NAME for a name in both); only the columns a query
** uses are read (colUsed, passed to xFilter in idxStr).  Arguments,
** reconnects, placeholders and input checks work as for ds_join_hint.
** No order is claimed.
*/
#include "dataset_int.h"

#define DS_FUNC "ds_cross"

/* Columns of the table-valued form. */
#define XCOL_LEFT       0
#define XCOL_RIGHT      1
#define XCOL_ARG0       2     /* first hidden argument column */
#define CROSS_N_ARG     3

/* idxNum bits for the output columns used (table-valued form) */
#define XUSE_SHIFT      8

static const char *const azArgName[CROSS_N_ARG] = {
  "left", "right", "hint"
};
static const char *const azSide[2] = { "left", "right" };

static const DsVtabArgSpec dsCrossArgSpec = {
  DS_FUNC, CROSS_N_ARG, 2, azArgName
};

typedef struct DsCrossTable DsCrossTable;
struct DsCrossTable {
  sqlite3_vtab base;
  DsConn *pConn;
  int bTyped;             /* the CREATE VIRTUAL TABLE form */
  /* The rest is for the CREATE VIRTUAL TABLE form only. */
  DsVtabTyped typed;      /* name, inputs as declared, placeholder */
  int eHint;              /* DS_CROSS_* */
};

typedef struct DsCrossCursor DsCrossCursor;
struct DsCrossCursor {
  sqlite3_vtab_cursor base;
  DsConn *pConn;
  DsCrossTable *pTab;
  sqlite3_value *apArg[CROSS_N_ARG];  /* the arguments, for hidden columns */
  DsInput *apIn[2];
  int anCol[2];           /* columns carried from each side */
  int *aaiCol[2];         /* which */
  int *aaiSlot[2];        /* input column -> value index in a row, or -1 */
  DsCross *pCross;
  DsRow *apRow[2];        /* the current pair */
  DsRowDecoder aDec[2];   /* the values of apRow[i], as asked for */
  DsText text;            /* reused for the JSON of a row */
  i64 iRowid;
  int bEof;
};

static void dsCrossTableFree(DsCrossTable *pTab){
  if( pTab ){
    dsVtabTypedClear(&pTab->typed);
    sqlite3_free(pTab);
  }
}

static DsCrossTable *dsCrossTableNew(DsConn *pConn){
  DsCrossTable *pTab = sqlite3_malloc64(sizeof(DsCrossTable));
  if( pTab ){
    memset(pTab, 0, sizeof(*pTab));
    pTab->pConn = pConn;
  }
  return pTab;
}

/* The table-valued form: a fixed schema, the arguments hidden. */
static int dsCrossConnectFunction(sqlite3 *db, DsConn *pConn,
                                  sqlite3_vtab **ppVtab){
  DsCrossTable *pTab;
  int rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(\"left\", \"right\", ds_left HIDDEN, ds_right HIDDEN, "
      "hint HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = dsCrossTableNew(pConn);
  if( pTab==0 ) return SQLITE_NOMEM;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

/* Set up table pTab of the CREATE form from its arguments azValue[]. */
static int dsCrossTableSetup(sqlite3 *db, DsCrossTable *pTab,
                             char **azValue, char **pzErr){
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputOpen(db, DS_FUNC, azSide[i], azValue[i], &pTab->typed.apIn[i],
                     pzErr);
  }
  if( rc==SQLITE_OK && azValue[2] ){
    char *zWord = 0;
    rc = dsVtabArgWord(azValue[2], &zWord);
    if( rc==SQLITE_OK ){
      rc = dsParseCrossHintText(DS_FUNC, zWord, &pTab->eHint, pzErr);
    }
    sqlite3_free(zWord);
  }
  if( rc==SQLITE_OK ){
    rc = dsVtabDeclarePair(db, DS_FUNC, pTab->typed.zName, pTab->typed.apIn, pzErr);
  }
  return rc;
}

/*
** The CREATE VIRTUAL TABLE form.  An error fails a CREATE; a reconnect
** that fails gets a placeholder schema instead, so that the table can
** still be dropped, and its queries report the error (see vtab_args.c).
*/
static int dsCrossConnectTable(sqlite3 *db, DsConn *pConn, int argc,
                               const char *const *argv,
                               sqlite3_vtab **ppVtab, char **pzErr){
  char *azValue[CROSS_N_ARG];
  char *zErr = 0;
  int bCreating = dsVtabIsCreating(db, argv[1], argv[2]);
  DsCrossTable *pTab = dsCrossTableNew(pConn);
  int rc;
  if( pTab==0 ) return SQLITE_NOMEM;
  pTab->bTyped = 1;
  rc = dsVtabTypedInit(&pTab->typed, DS_FUNC, argv[1], argv[2]);
  if( rc==SQLITE_OK ){
    rc = dsVtabArgsParse(&dsCrossArgSpec, argc - 3, argv + 3, azValue, &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsCrossTableSetup(db, pTab, azValue, &zErr);
    dsVtabArgsFree(&dsCrossArgSpec, azValue);
  }
  rc = dsVtabTypedConnected(db, &pTab->typed, rc, bCreating, &zErr);
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pConn, DS_FUNC, rc, &zErr);
    dsCrossTableFree(pTab);
    *pzErr = zErr;
    return rc;
  }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsCrossConnect(sqlite3 *db, void *pAux, int argc,
                          const char *const *argv, sqlite3_vtab **ppVtab,
                          char **pzErr){
  DsConn *pConn = (DsConn *)pAux;
  if( dsVtabIsFunctionForm(db, argc, argv) ){
    return dsCrossConnectFunction(db, pConn, ppVtab);
  }
  return dsCrossConnectTable(db, pConn, argc, argv, ppVtab, pzErr);
}

static int dsCrossDisconnect(sqlite3_vtab *pVtab){
  dsCrossTableFree((DsCrossTable *)pVtab);
  return SQLITE_OK;
}

static int dsCrossOpenCursor(sqlite3_vtab *pVtab,
                             sqlite3_vtab_cursor **ppCur){
  DsCrossTable *pTab = (DsCrossTable *)pVtab;
  DsCrossCursor *pCur = sqlite3_malloc64(sizeof(DsCrossCursor));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->pConn = pTab->pConn;
  pCur->pTab = pTab;
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Release what one xFilter set up. */
static void dsCrossCursorReset(DsCrossCursor *pCur){
  int i;
  dsCrossClose(pCur->pCross);
  pCur->pCross = 0;
  for(i=0; i<2; i++){
    dsInputFree(pCur->apIn[i]);
    pCur->apIn[i] = 0;
    sqlite3_free(pCur->aaiCol[i]);
    sqlite3_free(pCur->aaiSlot[i]);
    sqlite3_free(pCur->aDec[i].aVal);
    pCur->aaiCol[i] = pCur->aaiSlot[i] = 0;
    memset(&pCur->aDec[i], 0, sizeof(pCur->aDec[i]));
    pCur->anCol[i] = 0;
    pCur->apRow[i] = 0;
  }
  for(i=0; i<CROSS_N_ARG; i++){
    sqlite3_value_free(pCur->apArg[i]);
    pCur->apArg[i] = 0;
  }
  pCur->bEof = 1;
  pCur->iRowid = 0;
}

static int dsCrossCloseCursor(sqlite3_vtab_cursor *pCursor){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  dsCrossCursorReset(pCur);
  dsTextFree(&pCur->text);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** With the inputs set up: carry the columns of side i that are wanted
** (all of them when abAll[i], else those aaWant[i] marks), start the
** cross product and move to its first pair.
*/
static int dsCrossCursorRun(DsCrossCursor *pCur, int eHint, const int *abAll,
                            u8 *const *aaWant, char **pzErr){
  DsCrossSpec spec;
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputPlanColumns(pCur->apIn[i], 0, 0, abAll[i], aaWant[i],
                            &pCur->aaiSlot[i], &pCur->aaiCol[i],
                            &pCur->anCol[i]);
    if( rc==SQLITE_OK ){
      pCur->aDec[i].aVal = sqlite3_malloc64(
          sizeof(DsValue) * (size_t)(pCur->anCol[i] + 1));
      if( pCur->aDec[i].aVal==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc!=SQLITE_OK ) return rc;
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  spec.eHint = eHint;
  for(i=0; i<2; i++){
    spec.apIn[i] = pCur->apIn[i];
    spec.anCol[i] = pCur->anCol[i];
    spec.aaiCol[i] = pCur->aaiCol[i];
  }
  rc = dsCrossOpen(pCur->pConn, &spec, &pCur->pCross, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  pCur->bEof = 0;
  rc = dsCrossNext(pCur->pCross, pCur->apRow, pzErr);
  if( rc==SQLITE_ROW ){
    dsDecoderStart(&pCur->aDec[0], pCur->apRow[0]);
    dsDecoderStart(&pCur->aDec[1], pCur->apRow[1]);
    return SQLITE_OK;
  }
  if( rc==SQLITE_DONE ){
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  return rc;
}

/* xFilter of the table-valued form: the arguments come in argv. */
static int dsCrossFunctionFilter(DsCrossCursor *pCur, int idxNum, int argc,
                                 sqlite3_value **argv, char **pzErr){
  sqlite3_value *aArg[CROSS_N_ARG];
  u8 *aaWant[2] = {0, 0};
  int abAll[2];
  int eHint = 0;
  int i, rc = SQLITE_OK;
  dsVtabFunctionArgs(idxNum, argc, argv, CROSS_N_ARG, aArg);
  for(i=0; i<CROSS_N_ARG; i++){
    if( aArg[i] ){
      pCur->apArg[i] = sqlite3_value_dup(aArg[i]);
      if( pCur->apArg[i]==0 ) return SQLITE_NOMEM;
    }
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputFromValue(pCur->pConn->db, DS_FUNC, azSide[i], aArg[i],
                          &pCur->apIn[i], pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsParseCrossHint(DS_FUNC, aArg[2], &eHint, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<2; i++) abAll[i] = (idxNum >> (XUSE_SHIFT + i)) & 1;
  return dsCrossCursorRun(pCur, eHint, abAll, aaWant, pzErr);
}

/*
** xFilter of the CREATE form: resolve the inputs as they are now, check
** that their columns are still those declared, carry the columns the
** statement uses (the colUsed mask in idxStr), run.
*/
static int dsCrossTableFilter(DsCrossCursor *pCur, const char *idxStr,
                              char **pzErr){
  DsCrossTable *pTab = pCur->pTab;
  u8 *aaWant[2] = {0, 0};
  int abAll[2] = {0, 0};
  int rc;
  rc = dsVtabTypedReopen(&pTab->typed, pCur->pConn->db, pCur->apIn, pzErr);
  if( rc==SQLITE_OK ) rc = dsVtabTypedWanted(&pTab->typed, idxStr, aaWant);
  if( rc==SQLITE_OK ){
    rc = dsCrossCursorRun(pCur, pTab->eHint, abAll, aaWant, pzErr);
  }
  sqlite3_free(aaWant[0]);
  sqlite3_free(aaWant[1]);
  return rc;
}

static int dsCrossFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  char *zErr = 0;
  int rc;
  dsCrossCursorReset(pCur);
  pCur->pTab->typed.nActive++;
  if( pCur->pTab->bTyped ){
    rc = dsCrossTableFilter(pCur, idxStr, &zErr);
  }else{
    rc = dsCrossFunctionFilter(pCur, idxNum, argc, argv, &zErr);
  }
  pCur->pTab->typed.nActive--;
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pCur->pConn, DS_FUNC, rc, &zErr);
    dsVtabSetError(pCursor->pVtab, zErr);
  }
  return rc;
}

static int dsCrossNextRow(sqlite3_vtab_cursor *pCursor){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  char *zErr = 0;
  int rc;
  pCur->pTab->typed.nActive++;
  rc = dsCrossNext(pCur->pCross, pCur->apRow, &zErr);
  pCur->pTab->typed.nActive--;
  pCur->iRowid++;
  if( rc==SQLITE_ROW ){
    dsDecoderStart(&pCur->aDec[0], pCur->apRow[0]);
    dsDecoderStart(&pCur->aDec[1], pCur->apRow[1]);
    return SQLITE_OK;
  }
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  rc = dsStatementError(pCur->pConn, DS_FUNC, rc, &zErr);
  dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsCrossEof(sqlite3_vtab_cursor *pCursor){
  return ((DsCrossCursor *)pCursor)->bEof;
}

/* Every value of the current row of side iSide, decoded once per row. */
static DsValue *dsCrossValues(DsCrossCursor *pCur, int iSide){
  DsRowDecoder *pDec = &pCur->aDec[iSide];
  if( pCur->anCol[iSide]>0 ) dsDecoderValue(pDec, pCur->anCol[iSide] - 1);
  return pDec->aVal;
}

static int dsCrossColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                         int iCol){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  if( pCur->pTab->bTyped ){
    /* The left input's columns, then the right's. */
    int nLeft = pCur->apIn[0]->nCol;
    int iSide = iCol<nLeft ? 0 : 1;
    int c = iSide ? iCol - nLeft : iCol;
    int iSlot;
    if( c>=pCur->apIn[iSide]->nCol ) return SQLITE_OK;
    iSlot = pCur->aaiSlot[iSide][c];
    if( iSlot>=0 ){
      dsValueResult(ctx, dsDecoderOne(&pCur->aDec[iSide], iSlot));
    }
  }else if( iCol>=XCOL_ARG0 ){
    sqlite3_value *pArg = pCur->apArg[iCol - XCOL_ARG0];
    if( pArg ) sqlite3_result_value(ctx, pArg);
  }else{
    int iSide = iCol - XCOL_LEFT;
    DsText *pTxt = &pCur->text;
    dsTextReset(pTxt);
    dsJsonObject(pTxt, pCur->apIn[iSide], pCur->aaiSlot[iSide],
                 dsCrossValues(pCur, iSide));
    dsTextResult(ctx, pTxt, 1, DS_FUNC, iSide ? "the JSON object of a right "
                 "row" : "the JSON object of a left row");
  }
  return SQLITE_OK;
}

static int dsCrossRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((DsCrossCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

static int dsCrossFunctionBestIndex(sqlite3_vtab *pVtab,
                                    sqlite3_index_info *pInfo){
  int mArg;
  int rc = dsVtabFunctionBestIndex(pVtab, pInfo, &dsCrossArgSpec, XCOL_ARG0,
                                   &mArg);
  if( rc!=SQLITE_OK ) return rc;
  pInfo->idxNum = mArg | (int)(pInfo->colUsed & 0x3) << XUSE_SHIFT;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

/*
** The CREATE form takes no constraints: a query of it is the whole cross
** product, the same whatever the constraints.  The columns used go to
** xFilter in idxStr.
*/
static int dsCrossTableBestIndex(sqlite3_vtab *pVtab,
                                 sqlite3_index_info *pInfo){
  DsCrossTable *pTab = (DsCrossTable *)pVtab;
  if( dsVtabTypedUsable(pVtab, &pTab->typed) ) return SQLITE_ERROR;
  pInfo->idxStr = sqlite3_mprintf("%llx", (unsigned long long)pInfo->colUsed);
  if( pInfo->idxStr==0 ) return SQLITE_NOMEM;
  pInfo->needToFreeIdxStr = 1;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

static int dsCrossBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  if( ((DsCrossTable *)pVtab)->bTyped ){
    return dsCrossTableBestIndex(pVtab, pInfo);
  }
  return dsCrossFunctionBestIndex(pVtab, pInfo);
}

static const sqlite3_module dsCrossModule = {
  .iVersion = 0,
  .xCreate = dsCrossConnect,
  .xConnect = dsCrossConnect,
  .xBestIndex = dsCrossBestIndex,
  .xDisconnect = dsCrossDisconnect,
  .xDestroy = dsCrossDisconnect,
  .xOpen = dsCrossOpenCursor,
  .xClose = dsCrossCloseCursor,
  .xFilter = dsCrossFilter,
  .xNext = dsCrossNextRow,
  .xEof = dsCrossEof,
  .xColumn = dsCrossColumn,
  .xRowid = dsCrossRowid,
};

int dsRegisterCrossVtab(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_module(db, DS_FUNC, &dsCrossModule, pConn);
}
