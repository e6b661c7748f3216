/*
** cross_vtab.c: the ds_cross module, the SQL face of the cross product.
**
** Table-valued form:
**
**     SELECT left, right FROM ds_cross(left, right [, hint]);
**
** Every pair of a left row and a right row (cross.c), each row as a JSON
** object.  The hint (OPTIMIZER_CHOOSES, FIRST_IS_SMALL, SECOND_IS_SMALL,
** any case) names the side to buffer.  The three arguments are HIDDEN
** columns (vtab_common.c); idxNum bits 8-9 record whether `left` and
** `right` are used: a side whose JSON is not used is read without any of
** its columns, so `SELECT count(*) FROM ds_cross(...)` carries nothing
** but the rows themselves.
*/
#include "dataset_int.h"

#define DS_FUNC "ds_cross"

/* Columns of the table-valued form. */
#define XCOL_LEFT       0
#define XCOL_RIGHT      1
#define XCOL_ARG0       2     /* first hidden argument column */
#define CROSS_N_ARG     3

/* idxNum bits for the output columns used */
#define XUSE_SHIFT      8

static const char *const azArgName[CROSS_N_ARG] = {
  "left", "right", "hint"
};

static const DsTvf dsCrossTvf = {
  .zFunc = DS_FUNC,
  .zUsage = DS_FUNC "(left, right [, hint])",
  .iArg0 = XCOL_ARG0,
  .nArg = CROSS_N_ARG,
  .nRequired = 2,
  .azArg = azArgName,
};

typedef struct DsCrossTable DsCrossTable;
struct DsCrossTable {
  sqlite3_vtab base;
  DsConn *pConn;
};

typedef struct DsCrossCursor DsCrossCursor;
struct DsCrossCursor {
  sqlite3_vtab_cursor base;
  DsConn *pConn;
  sqlite3_value *apArg[CROSS_N_ARG];  /* the arguments, for hidden columns */
  DsInput *apIn[2];
  int anCol[2];           /* columns carried from each side */
  int *aaiCol[2];         /* which */
  int *aaiSlot[2];        /* input column -> value index in a row */
  DsCross *pCross;
  DsRow *apRow[2];        /* the current pair */
  DsValue *aVal;          /* room to decode the widest row */
  sqlite3_str *pStr;      /* reused for JSON text */
  i64 iRowid;
  int bEof;
};

static int dsCrossConnect(sqlite3 *db, void *pAux, int argc,
                          const char *const *argv, sqlite3_vtab **ppVtab,
                          char **pzErr){
  DsCrossTable *pTab;
  int rc;
  (void)argc;
  (void)argv;
  (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(\"left\", \"right\", ds_left HIDDEN, ds_right HIDDEN, "
      "hint HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc64(sizeof(DsCrossTable));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = (DsConn *)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsCrossDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int dsCrossOpenCursor(sqlite3_vtab *pVtab,
                             sqlite3_vtab_cursor **ppCur){
  DsCrossTable *pTab = (DsCrossTable *)pVtab;
  DsCrossCursor *pCur = sqlite3_malloc64(sizeof(DsCrossCursor));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->pConn = pTab->pConn;
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
    pCur->aaiCol[i] = pCur->aaiSlot[i] = 0;
    pCur->anCol[i] = 0;
    pCur->apRow[i] = 0;
  }
  dsTvfArgsFree(CROSS_N_ARG, pCur->apArg);
  sqlite3_free(pCur->aVal);
  pCur->aVal = 0;
  pCur->bEof = 1;
  pCur->iRowid = 0;
}

static int dsCrossCloseCursor(sqlite3_vtab_cursor *pCursor){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  dsCrossCursorReset(pCur);
  if( pCur->pStr ) sqlite3_free(sqlite3_str_finish(pCur->pStr));
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int dsCrossFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  sqlite3 *db = pCur->pConn->db;
  DsCrossSpec spec;
  char *zErr = 0;
  int i, rc;
  int nMaxCol = 0;
  (void)idxStr;

  dsCrossCursorReset(pCur);
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  rc = dsTvfArgs(&dsCrossTvf, idxNum, argc, argv, pCur->apArg);
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsTvfInput(db, DS_FUNC, i, pCur->apArg[i], &pCur->apIn[i], &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsParseCrossHint(DS_FUNC, pCur->apArg[2], &spec.eHint, &zErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    int bWant = (idxNum >> (XUSE_SHIFT + i)) & 1;
    rc = dsInputPlanColumns(pCur->apIn[i], 0, 0, bWant, &pCur->aaiSlot[i],
                            &pCur->aaiCol[i], &pCur->anCol[i]);
    if( pCur->anCol[i] > nMaxCol ) nMaxCol = pCur->anCol[i];
  }
  if( rc==SQLITE_OK ){
    pCur->aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)(nMaxCol + 1));
    if( pCur->aVal==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<2; i++){
      spec.apIn[i] = pCur->apIn[i];
      spec.anCol[i] = pCur->anCol[i];
      spec.aaiCol[i] = pCur->aaiCol[i];
    }
    rc = dsCrossOpen(pCur->pConn, &spec, &pCur->pCross, &zErr);
  }
  if( rc==SQLITE_OK ){
    pCur->bEof = 0;
    rc = dsCrossNext(pCur->pCross, pCur->apRow, &zErr);
    if( rc==SQLITE_ROW || rc==SQLITE_DONE ){
      pCur->bEof = rc==SQLITE_DONE;
      rc = SQLITE_OK;
    }
  }
  if( rc!=SQLITE_OK ) dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsCrossNextRow(sqlite3_vtab_cursor *pCursor){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  char *zErr = 0;
  int rc = dsCrossNext(pCur->pCross, pCur->apRow, &zErr);
  pCur->iRowid++;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsCrossEof(sqlite3_vtab_cursor *pCursor){
  return ((DsCrossCursor *)pCursor)->bEof;
}

static int dsCrossColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                         int iCol){
  DsCrossCursor *pCur = (DsCrossCursor *)pCursor;
  if( iCol>=XCOL_ARG0 ){
    sqlite3_value *pArg = pCur->apArg[iCol - XCOL_ARG0];
    if( pArg ) sqlite3_result_value(ctx, pArg);
  }else{
    int iSide = iCol - XCOL_LEFT;
    if( pCur->pStr==0 ) pCur->pStr = sqlite3_str_new(pCur->pConn->db);
    dsRowValues(pCur->apRow[iSide], pCur->anCol[iSide], pCur->aVal);
    dsJsonObject(pCur->pStr, pCur->apIn[iSide], pCur->aaiSlot[iSide],
                 pCur->aVal);
    dsTvfResultStr(ctx, pCur->pStr, 1);
  }
  return SQLITE_OK;
}

static int dsCrossRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((DsCrossCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

static int dsCrossBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aiCons[CROSS_N_ARG];
  int idxNum = 0;
  int rc = dsTvfBestIndex(pVtab, pInfo, &dsCrossTvf, aiCons, &idxNum);
  if( rc!=SQLITE_OK ) return rc;
  idxNum |= (int)(pInfo->colUsed & 0x3) << XUSE_SHIFT;
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

static const sqlite3_module dsCrossModule = {
  .iVersion = 0,
  .xCreate = 0,
  .xConnect = dsCrossConnect,
  .xBestIndex = dsCrossBestIndex,
  .xDisconnect = dsCrossDisconnect,
  .xDestroy = 0,
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
