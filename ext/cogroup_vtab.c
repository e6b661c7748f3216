/*
** cogroup_vtab.c: the ds_cogroup module, the SQL face of coGroup.
**
** Table-valued form:
**
**     SELECT key, left, right, left_count, right_count
**     FROM ds_cogroup(left, right, left_key, right_key);
**
** One row per distinct key of either input (cogroup.c): `key` is the key
** (a JSON array for a composite key; NULL for the NULL-key group of each
** side), `left` and `right` the JSON arrays of each side's rows with that
** key ('[]' for none), and the counts.  The four arguments are HIDDEN
** columns (vtab_common.c); idxNum bits 8-10 record whether key, left and
** right are used, so that a side's JSON is made, and its non-key columns
** read, only when asked for.
**
** Rows come in key order, so for a single key column xBestIndex tells
** SQLite that `ORDER BY key` needs no sort.  The number of key columns is
** known for sure only in xFilter; xBestIndex claims the order only when
** both key arguments are literals that plainly name one column (an
** integer, or text without a comma).  SQLite hands ORDER BY terms to
** xBestIndex only with the column's own collation (BINARY here) and
** without NULLS LAST, which is the order of the groups.
*/
#include "dataset_int.h"

#define DS_FUNC "ds_cogroup"

/* Columns of the table-valued form. */
#define GCOL_KEY          0
#define GCOL_LEFT         1
#define GCOL_RIGHT        2
#define GCOL_LEFT_COUNT   3
#define GCOL_RIGHT_COUNT  4
#define GCOL_ARG0         5     /* first hidden argument column */
#define GROUP_N_ARG       4

/* idxNum bits for the output columns used */
#define GUSE_SHIFT        8

static const char *const azArgName[GROUP_N_ARG] = {
  "left", "right", "left_key", "right_key"
};

static const DsTvf dsCoGroupTvf = {
  .zFunc = DS_FUNC,
  .zUsage = DS_FUNC "(left, right, left_key, right_key)",
  .iArg0 = GCOL_ARG0,
  .nArg = GROUP_N_ARG,
  .nRequired = GROUP_N_ARG,
  .azArg = azArgName,
};

typedef struct DsCoGroupTable DsCoGroupTable;
struct DsCoGroupTable {
  sqlite3_vtab base;
  DsConn *pConn;
};

typedef struct DsCoGroupCursor DsCoGroupCursor;
struct DsCoGroupCursor {
  sqlite3_vtab_cursor base;
  DsConn *pConn;
  sqlite3_value *apArg[GROUP_N_ARG];  /* the arguments, for hidden columns */
  DsInput *apIn[2];
  int nKey;
  int *aaiKey[2];
  DsCoGroup *pGroup;
  DsValue *aVal;          /* room to decode a key */
  sqlite3_str *pStr;      /* for a composite key's JSON */
  i64 iRowid;
  int bEof;
};

static int dsCoGroupConnect(sqlite3 *db, void *pAux, int argc,
                            const char *const *argv, sqlite3_vtab **ppVtab,
                            char **pzErr){
  DsCoGroupTable *pTab;
  int rc;
  (void)argc;
  (void)argv;
  (void)pzErr;
  rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key, \"left\", \"right\", left_count, right_count, "
      "ds_left HIDDEN, ds_right HIDDEN, left_key HIDDEN, right_key HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc64(sizeof(DsCoGroupTable));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = (DsConn *)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsCoGroupDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int dsCoGroupOpenCursor(sqlite3_vtab *pVtab,
                               sqlite3_vtab_cursor **ppCur){
  DsCoGroupTable *pTab = (DsCoGroupTable *)pVtab;
  DsCoGroupCursor *pCur = sqlite3_malloc64(sizeof(DsCoGroupCursor));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->pConn = pTab->pConn;
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Release what one xFilter set up. */
static void dsCoGroupCursorReset(DsCoGroupCursor *pCur){
  int i;
  dsCoGroupClose(pCur->pGroup);
  pCur->pGroup = 0;
  for(i=0; i<2; i++){
    dsInputFree(pCur->apIn[i]);
    pCur->apIn[i] = 0;
    sqlite3_free(pCur->aaiKey[i]);
    pCur->aaiKey[i] = 0;
  }
  dsTvfArgsFree(GROUP_N_ARG, pCur->apArg);
  sqlite3_free(pCur->aVal);
  pCur->aVal = 0;
  pCur->nKey = 0;
  pCur->bEof = 1;
  pCur->iRowid = 0;
}

static int dsCoGroupCloseCursor(sqlite3_vtab_cursor *pCursor){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  dsCoGroupCursorReset(pCur);
  if( pCur->pStr ) sqlite3_free(sqlite3_str_finish(pCur->pStr));
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int dsCoGroupFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                           const char *idxStr, int argc,
                           sqlite3_value **argv){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  sqlite3 *db = pCur->pConn->db;
  DsCoGroupSpec spec;
  char *zErr = 0;
  int anKey[2] = {0, 0};
  int i, rc;
  (void)idxStr;

  dsCoGroupCursorReset(pCur);
  rc = dsTvfArgs(&dsCoGroupTvf, idxNum, argc, argv, pCur->apArg);
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsTvfInput(db, DS_FUNC, i, pCur->apArg[i], &pCur->apIn[i], &zErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsTvfKeys(DS_FUNC, i, pCur->apArg[2+i], pCur->apIn[i], &anKey[i],
                   &pCur->aaiKey[i], &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsTvfCheckKeyCounts(DS_FUNC, anKey[0], anKey[1], &zErr);
  }
  if( rc==SQLITE_OK ){
    pCur->nKey = anKey[0];
    pCur->aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)pCur->nKey);
    if( pCur->aVal==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    memset(&spec, 0, sizeof(spec));
    spec.zFunc = DS_FUNC;
    spec.nKey = pCur->nKey;
    for(i=0; i<2; i++){
      spec.apIn[i] = pCur->apIn[i];
      spec.aaiKey[i] = pCur->aaiKey[i];
      spec.abJson[i] = (idxNum >> (GUSE_SHIFT + GCOL_LEFT + i)) & 1;
    }
    rc = dsCoGroupOpen(pCur->pConn, &spec, &pCur->pGroup, &zErr);
  }
  if( rc==SQLITE_OK ){
    pCur->bEof = 0;
    rc = dsCoGroupNext(pCur->pGroup, &zErr);
    if( rc==SQLITE_ROW || rc==SQLITE_DONE ){
      pCur->bEof = rc==SQLITE_DONE;
      rc = SQLITE_OK;
    }
  }
  if( rc!=SQLITE_OK ) dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsCoGroupNextRow(sqlite3_vtab_cursor *pCursor){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  char *zErr = 0;
  int rc = dsCoGroupNext(pCur->pGroup, &zErr);
  pCur->iRowid++;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsCoGroupEof(sqlite3_vtab_cursor *pCursor){
  return ((DsCoGroupCursor *)pCursor)->bEof;
}

/* The key: one value, a JSON array of the parts, or NULL. */
static void dsCoGroupKeyResult(DsCoGroupCursor *pCur, sqlite3_context *ctx){
  const DsRow *pKey = dsCoGroupKey(pCur->pGroup);
  if( pKey->flags & DS_ROW_NULLKEY ) return;
  dsRowValues(pKey, pCur->nKey, pCur->aVal);
  if( pCur->nKey==1 ){
    dsValueResult(ctx, &pCur->aVal[0]);
    return;
  }
  if( pCur->pStr==0 ) pCur->pStr = sqlite3_str_new(pCur->pConn->db);
  dsJsonArray(pCur->pStr, pCur->aVal, pCur->nKey);
  dsTvfResultStr(ctx, pCur->pStr, 1);
}

static int dsCoGroupColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                           int iCol){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  switch( iCol ){
    case GCOL_KEY:
      dsCoGroupKeyResult(pCur, ctx);
      break;
    case GCOL_LEFT:
    case GCOL_RIGHT: {
      sqlite3_str *pJson = dsCoGroupJson(pCur->pGroup, iCol - GCOL_LEFT);
      if( pJson ){
        sqlite3_result_text(ctx, sqlite3_str_value(pJson),
                            sqlite3_str_length(pJson), SQLITE_TRANSIENT);
        sqlite3_result_subtype(ctx, 'J');
      }
      break;
    }
    case GCOL_LEFT_COUNT:
    case GCOL_RIGHT_COUNT:
      sqlite3_result_int64(ctx,
          dsCoGroupCount(pCur->pGroup, iCol - GCOL_LEFT_COUNT));
      break;
    default: {
      sqlite3_value *pArg = pCur->apArg[iCol - GCOL_ARG0];
      if( pArg ) sqlite3_result_value(ctx, pArg);
      break;
    }
  }
  return SQLITE_OK;
}

static int dsCoGroupRowid(sqlite3_vtab_cursor *pCursor,
                          sqlite_int64 *pRowid){
  *pRowid = ((DsCoGroupCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

/* Does constraint iCons plainly name one key column (a literal integer,
** or literal text without a comma)?  Bound parameters are not seen. */
static int dsIsSingleKeyLiteral(sqlite3_index_info *pInfo, int iCons){
  sqlite3_value *pVal = 0;
  if( iCons<0 || sqlite3_vtab_rhs_value(pInfo, iCons, &pVal)!=SQLITE_OK ){
    return 0;
  }
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER:
      return 1;
    case SQLITE_TEXT:
      return strchr((const char *)sqlite3_value_text(pVal), ',')==0;
    default:
      return 0;
  }
}

static int dsCoGroupBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aiCons[GROUP_N_ARG];
  int idxNum = 0;
  int rc = dsTvfBestIndex(pVtab, pInfo, &dsCoGroupTvf, aiCons, &idxNum);
  if( rc!=SQLITE_OK ) return rc;
  idxNum |= (int)(pInfo->colUsed & 0x7) << GUSE_SHIFT;
  if( pInfo->nOrderBy==1
   && pInfo->aOrderBy[0].iColumn==GCOL_KEY
   && !pInfo->aOrderBy[0].desc
   && dsIsSingleKeyLiteral(pInfo, aiCons[2])
   && dsIsSingleKeyLiteral(pInfo, aiCons[3]) ){
    pInfo->orderByConsumed = 1;
  }
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

static const sqlite3_module dsCoGroupModule = {
  .iVersion = 0,
  .xCreate = 0,
  .xConnect = dsCoGroupConnect,
  .xBestIndex = dsCoGroupBestIndex,
  .xDisconnect = dsCoGroupDisconnect,
  .xDestroy = 0,
  .xOpen = dsCoGroupOpenCursor,
  .xClose = dsCoGroupCloseCursor,
  .xFilter = dsCoGroupFilter,
  .xNext = dsCoGroupNextRow,
  .xEof = dsCoGroupEof,
  .xColumn = dsCoGroupColumn,
  .xRowid = dsCoGroupRowid,
};

int dsRegisterCoGroupVtab(sqlite3 *db, DsConn *pConn){
  return sqlite3_create_module(db, DS_FUNC, &dsCoGroupModule, pConn);
}
