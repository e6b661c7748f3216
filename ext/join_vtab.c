/*
** join_vtab.c: the ds_join_hint module, the SQL face of the equi-join.
**
** Table-valued form:
**
**     SELECT key, left, right
**     FROM ds_join_hint(left, right, left_key, right_key [, hint [, type]]);
**
** The six arguments are HIDDEN columns; xBestIndex hands their equality
** constraints to xFilter in argument order (vtab_common.c), and idxNum
** records which of them are present (bits 0-5) and which output columns
** the statement uses (bits 8-10), so that a row's JSON is made only when
** it is asked for and a side's non-key columns are not even read when its
** JSON is not used.
** `key` is the join key (a JSON array for a composite key), `left` and
** `right` the rows as JSON objects, NULL for the missing side of an
** outer-join row.
**
** Each xFilter resolves the inputs afresh, so every query sees the inputs'
** current contents and schema.
*/
#include "dataset_int.h"

#define DS_FUNC "ds_join_hint"

/* Columns of the table-valued form. */
#define JCOL_KEY        0
#define JCOL_LEFT       1
#define JCOL_RIGHT      2
#define JCOL_ARG0       3     /* first hidden argument column */
#define DS_N_ARG        6
#define DS_N_REQUIRED   4

/* idxNum bits for the output columns used */
#define JUSE_SHIFT      8

static const char *const azArgName[DS_N_ARG] = {
  "left", "right", "left_key", "right_key", "hint", "join_type"
};

static const DsTvf dsJoinTvf = {
  .zFunc = DS_FUNC,
  .zUsage = DS_FUNC "(left, right, left_key, right_key [, hint [, "
            "join_type]])",
  .iArg0 = JCOL_ARG0,
  .nArg = DS_N_ARG,
  .nRequired = DS_N_REQUIRED,
  .azArg = azArgName,
};

typedef struct DsJoinTable DsJoinTable;
struct DsJoinTable {
  sqlite3_vtab base;
  DsConn *pConn;
};

typedef struct DsJoinCursor DsJoinCursor;
struct DsJoinCursor {
  sqlite3_vtab_cursor base;
  DsConn *pConn;
  sqlite3_value *apArg[DS_N_ARG];   /* the arguments, for hidden columns */
  DsInput *apIn[2];
  int nKey;
  int *aaiKey[2];
  int anPay[2];
  int *aaiPay[2];
  int *aaiSlot[2];        /* input column -> value index in a row */
  int bWantKey;
  DsJoin *pJoin;
  DsRow *apRow[2];        /* the current pair */
  DsValue *aVal;          /* room to decode the widest row */
  sqlite3_str *pStr;      /* reused for JSON text */
  i64 iRowid;
  int bEof;
};

static int dsJoinConnect(sqlite3 *db, void *pAux, int argc,
                         const char *const *argv, sqlite3_vtab **ppVtab,
                         char **pzErr){
  DsJoinTable *pTab;
  int rc;
  (void)argc;
  (void)argv;
  (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key, \"left\", \"right\", ds_left HIDDEN, "
      "ds_right HIDDEN, left_key HIDDEN, right_key HIDDEN, hint HIDDEN, "
      "join_type HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc64(sizeof(DsJoinTable));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = (DsConn *)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsJoinDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int dsJoinOpenCursor(sqlite3_vtab *pVtab,
                            sqlite3_vtab_cursor **ppCur){
  DsJoinTable *pTab = (DsJoinTable *)pVtab;
  DsJoinCursor *pCur = sqlite3_malloc64(sizeof(DsJoinCursor));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->pConn = pTab->pConn;
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Release what one xFilter set up. */
static void dsJoinCursorReset(DsJoinCursor *pCur){
  int i;
  dsJoinClose(pCur->pJoin);
  pCur->pJoin = 0;
  for(i=0; i<2; i++){
    dsInputFree(pCur->apIn[i]);
    pCur->apIn[i] = 0;
    sqlite3_free(pCur->aaiKey[i]);
    sqlite3_free(pCur->aaiPay[i]);
    sqlite3_free(pCur->aaiSlot[i]);
    pCur->aaiKey[i] = pCur->aaiPay[i] = pCur->aaiSlot[i] = 0;
    pCur->anPay[i] = 0;
    pCur->apRow[i] = 0;
  }
  dsTvfArgsFree(DS_N_ARG, pCur->apArg);
  sqlite3_free(pCur->aVal);
  pCur->aVal = 0;
  pCur->nKey = 0;
  pCur->bEof = 1;
  pCur->iRowid = 0;
}

static int dsJoinCloseCursor(sqlite3_vtab_cursor *pCursor){
  DsJoinCursor *pCur = (DsJoinCursor *)pCursor;
  dsJoinCursorReset(pCur);
  if( pCur->pStr ) sqlite3_free(sqlite3_str_finish(pCur->pStr));
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int dsJoinFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                        const char *idxStr, int argc, sqlite3_value **argv){
  DsJoinCursor *pCur = (DsJoinCursor *)pCursor;
  sqlite3_vtab *pVtab = pCursor->pVtab;
  sqlite3_value **aArg = pCur->apArg;
  DsJoinSpec spec;
  char *zErr = 0;
  int anKey[2] = {0, 0};
  int i, rc;
  int nMaxCol = 0;
  (void)idxStr;

  dsJoinCursorReset(pCur);
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  rc = dsTvfArgs(&dsJoinTvf, idxNum, argc, argv, pCur->apArg);
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsTvfInput(pCur->pConn->db, DS_FUNC, i, aArg[i], &pCur->apIn[i],
                    &zErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsTvfKeys(DS_FUNC, i, aArg[2+i], pCur->apIn[i], &anKey[i],
                   &pCur->aaiKey[i], &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsTvfCheckKeyCounts(DS_FUNC, anKey[0], anKey[1], &zErr);
  }
  if( rc==SQLITE_OK ) rc = dsParseHint(DS_FUNC, aArg[4], &spec.eHint, &zErr);
  if( rc==SQLITE_OK ){
    rc = dsParseJoinType(DS_FUNC, aArg[5], &spec.eType, &zErr);
  }
  if( rc==SQLITE_OK ){
    pCur->nKey = anKey[0];
    pCur->bWantKey = (idxNum >> JUSE_SHIFT) & 1;
    for(i=0; i<2 && rc==SQLITE_OK; i++){
      rc = dsInputPlanColumns(pCur->apIn[i], pCur->nKey, pCur->aaiKey[i],
                              (idxNum >> (JUSE_SHIFT + 1 + i)) & 1,
                              &pCur->aaiSlot[i], &pCur->aaiPay[i],
                              &pCur->anPay[i]);
      if( pCur->apIn[i]->nCol + pCur->nKey > nMaxCol ){
        nMaxCol = pCur->apIn[i]->nCol + pCur->nKey;
      }
    }
  }
  if( rc==SQLITE_OK ){
    pCur->aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)(nMaxCol + 1));
    if( pCur->aVal==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<2; i++){
      spec.apIn[i] = pCur->apIn[i];
      spec.aaiKey[i] = pCur->aaiKey[i];
      spec.anPay[i] = pCur->anPay[i];
      spec.aaiPay[i] = pCur->aaiPay[i];
    }
    spec.nKey = pCur->nKey;
    rc = dsJoinOpen(pCur->pConn, &spec, &pCur->pJoin, &zErr);
  }
  if( rc==SQLITE_OK ){
    pCur->bEof = 0;
    rc = dsJoinNext(pCur->pJoin, pCur->apRow, &zErr);
    if( rc==SQLITE_ROW ){
      rc = SQLITE_OK;
    }else if( rc==SQLITE_DONE ){
      pCur->bEof = 1;
      rc = SQLITE_OK;
    }
  }
  if( rc!=SQLITE_OK ){
    dsVtabSetError(pVtab, zErr);
    return rc;
  }
  return SQLITE_OK;
}

static int dsJoinNextRow(sqlite3_vtab_cursor *pCursor){
  DsJoinCursor *pCur = (DsJoinCursor *)pCursor;
  char *zErr = 0;
  int rc = dsJoinNext(pCur->pJoin, pCur->apRow, &zErr);
  pCur->iRowid++;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsJoinEof(sqlite3_vtab_cursor *pCursor){
  return ((DsJoinCursor *)pCursor)->bEof;
}

/* The JSON object of row pRow of side iSide, into pCur->pStr. */
static void dsJoinRowJson(DsJoinCursor *pCur, int iSide, const DsRow *pRow){
  dsRowValues(pRow, pCur->nKey + pCur->anPay[iSide], pCur->aVal);
  dsJsonObject(pCur->pStr, pCur->apIn[iSide], pCur->aaiSlot[iSide],
               pCur->aVal);
}

/* The key: one value, or a JSON array of the parts. */
static void dsJoinKeyResult(DsJoinCursor *pCur, sqlite3_context *ctx,
                            const DsRow *pRow){
  dsRowValues(pRow, pCur->nKey, pCur->aVal);
  if( pCur->nKey==1 ){
    dsValueResult(ctx, &pCur->aVal[0]);
    return;
  }
  dsJsonArray(pCur->pStr, pCur->aVal, pCur->nKey);
}

static int dsJoinColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                        int iCol){
  DsJoinCursor *pCur = (DsJoinCursor *)pCursor;
  const DsRow *pRow;
  if( iCol>=JCOL_ARG0 ){
    sqlite3_value *pArg = pCur->apArg[iCol - JCOL_ARG0];
    if( pArg ) sqlite3_result_value(ctx, pArg);
    return SQLITE_OK;
  }
  if( pCur->pStr==0 ){
    pCur->pStr = sqlite3_str_new(pCur->pConn->db);
  }
  sqlite3_str_reset(pCur->pStr);
  if( iCol==JCOL_KEY ){
    pRow = pCur->apRow[0] ? pCur->apRow[0] : pCur->apRow[1];
    if( pRow==0 ) return SQLITE_OK;
    dsJoinKeyResult(pCur, ctx, pRow);
    if( pCur->nKey==1 ) return SQLITE_OK;
  }else{
    int iSide = iCol - JCOL_LEFT;
    pRow = pCur->apRow[iSide];
    if( pRow==0 ) return SQLITE_OK;
    dsJoinRowJson(pCur, iSide, pRow);
  }
  dsTvfResultStr(ctx, pCur->pStr, 1);
  return SQLITE_OK;
}

static int dsJoinRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((DsJoinCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

static int dsJoinBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aiCons[DS_N_ARG];
  int idxNum = 0;
  int rc = dsTvfBestIndex(pVtab, pInfo, &dsJoinTvf, aiCons, &idxNum);
  if( rc!=SQLITE_OK ) return rc;
  idxNum |= (int)(pInfo->colUsed & 0x7) << JUSE_SHIFT;
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

static const sqlite3_module dsJoinModule = {
  .iVersion = 0,
  .xCreate = 0,
  .xConnect = dsJoinConnect,
  .xBestIndex = dsJoinBestIndex,
  .xDisconnect = dsJoinDisconnect,
  .xDestroy = 0,
  .xOpen = dsJoinOpenCursor,
  .xClose = dsJoinCloseCursor,
  .xFilter = dsJoinFilter,
  .xNext = dsJoinNextRow,
  .xEof = dsJoinEof,
  .xColumn = dsJoinColumn,
  .xRowid = dsJoinRowid,
};

int dsRegisterJoinVtab(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_module_v2(db, DS_FUNC, &dsJoinModule, pConn,
                                  dsConnFree);
}
