/*
** cogroup_vtab.c: the ds_cogroup module, the SQL face of coGroup.
**
** One module, two forms, as ds_join_hint: xCreate is xConnect, and
** dsVtabIsFunctionForm() tells the table-valued function from a CREATE
** VIRTUAL TABLE.
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
** columns (vtab_args.c); idxNum bits 8-10 record whether key, left and
** right are used, so that a side's JSON is made, and its non-key columns
** read, only when asked for.
**
** Virtual-table form:
**
**     CREATE VIRTUAL TABLE t USING ds_cogroup(left=..., right=...,
**                                             left_key=..., right_key=...);
**
** The key columns under the left input's names and with its declared
** types (all NULL for a NULL-key group), then `left`, `right`,
** `left_count`, `right_count`.  Arguments, reconnects, placeholders and
** input checks work as for ds_join_hint (vtab_args.c); each query runs
** the coGroup over the inputs as they are then.
**
** Order.  Groups come in key order, NULL-key groups first, which is what
** ORDER BY on the key columns asks for, ascending: SQLite hands
** xBestIndex only ORDER BY terms with the column's own collation (BINARY
** here) and without NULLS LAST.  The virtual-table form consumes an ORDER
** BY of its key columns in key order (or a prefix of them).  The
** table-valued form consumes `ORDER BY key` only for one key column:
** a composite key is JSON text, whose order is not the key's.  The
** number of key columns is known for sure only in xFilter, so xBestIndex
** claims the order only when both key arguments are literals that plainly
** name one column (an integer, or text without a comma).
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

/* idxNum bits for the output columns used (table-valued form) */
#define GUSE_SHIFT        8

/* idxNum bits of the virtual-table form */
#define GIDX_ORDERED      0x01  /* the plan consumes the ORDER BY */
#define GIDX_LEFT         0x02  /* `left` is used */
#define GIDX_RIGHT        0x04  /* `right` is used */

static const char *const azArgName[GROUP_N_ARG] = {
  "left", "right", "left_key", "right_key"
};
static const char *const azSide[2] = { "left", "right" };

static const DsVtabArgSpec dsCoGroupArgSpec = {
  DS_FUNC, GROUP_N_ARG, GROUP_N_ARG, azArgName
};

typedef struct DsCoGroupTable DsCoGroupTable;
struct DsCoGroupTable {
  sqlite3_vtab base;
  DsConn *pConn;
  int bTyped;             /* the CREATE VIRTUAL TABLE form */
  /* The rest is for the CREATE VIRTUAL TABLE form only. */
  DsVtabTyped typed;      /* name, inputs as declared, placeholder */
  int nKey;
  int *aaiKey[2];         /* key columns of each input */
};

typedef struct DsCoGroupCursor DsCoGroupCursor;
struct DsCoGroupCursor {
  sqlite3_vtab_cursor base;
  DsConn *pConn;
  DsCoGroupTable *pTab;
  sqlite3_value *apArg[GROUP_N_ARG];  /* the arguments, for hidden columns */
  DsInput *apIn[2];
  int nKey;
  int *aaiKey[2];
  DsCoGroup *pGroup;
  DsValue *aVal;          /* the current key, decoded */
  int bKeyDecoded;        /* aVal holds the current key */
  i64 iRowid;
  int bEof;
};

static void dsCoGroupTableFree(DsCoGroupTable *pTab){
  if( pTab ){
    dsVtabTypedClear(&pTab->typed);
    sqlite3_free(pTab->aaiKey[0]);
    sqlite3_free(pTab->aaiKey[1]);
    sqlite3_free(pTab);
  }
}

static DsCoGroupTable *dsCoGroupTableNew(DsConn *pConn){
  DsCoGroupTable *pTab = sqlite3_malloc64(sizeof(DsCoGroupTable));
  if( pTab ){
    memset(pTab, 0, sizeof(*pTab));
    pTab->pConn = pConn;
  }
  return pTab;
}

/* The table-valued form: a fixed schema, the arguments hidden. */
static int dsCoGroupConnectFunction(sqlite3 *db, DsConn *pConn,
                                    sqlite3_vtab **ppVtab){
  DsCoGroupTable *pTab;
  int rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(key, \"left\", \"right\", left_count, right_count, "
      "ds_left HIDDEN, ds_right HIDDEN, left_key HIDDEN, right_key HIDDEN)");
  if( rc!=SQLITE_OK ) return rc;
  pTab = dsCoGroupTableNew(pConn);
  if( pTab==0 ) return SQLITE_NOMEM;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

/* Declare the CREATE form's columns: the key columns, then the groups. */
static int dsCoGroupDeclare(sqlite3 *db, DsCoGroupTable *pTab,
                            char **pzErr){
  const DsInput *pLeft = pTab->typed.apIn[0];
  sqlite3_str *pSql;
  char *zFrom = sqlite3_mprintf("%d key columns, then left, right, "
                                "left_count and right_count", pTab->nKey);
  int rc = zFrom ? SQLITE_OK : SQLITE_NOMEM;
  int k;
  if( rc==SQLITE_OK ){
    rc = dsVtabCheckWidth(db, DS_FUNC, pTab->typed.zName, pTab->nKey + 4,
                          zFrom, "name fewer key columns", pzErr);
  }
  sqlite3_free(zFrom);
  if( rc!=SQLITE_OK ) return rc;
  pSql = sqlite3_str_new(0);
  for(k=0; k<pTab->nKey; k++){
    int iCol = pTab->aaiKey[0][k];
    dsVtabSchemaColumn(pSql, pLeft->azCol[iCol], pLeft->azDecl[iCol],
                       pLeft->azColl[iCol]);
  }
  dsVtabSchemaColumn(pSql, "left", "TEXT", 0);
  dsVtabSchemaColumn(pSql, "right", "TEXT", 0);
  dsVtabSchemaColumn(pSql, "left_count", "INTEGER", 0);
  dsVtabSchemaColumn(pSql, "right_count", "INTEGER", 0);
  return dsVtabDeclare(db, DS_FUNC, pTab->typed.zName, pSql, pzErr);
}

/*
** Set up table pTab of the CREATE form from its arguments azValue[]:
** resolve the inputs and keys, declare the columns.
*/
static int dsCoGroupTableSetup(sqlite3 *db, DsCoGroupTable *pTab,
                               char **azValue, char **pzErr){
  int anKey[2] = {0, 0};
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputOpen(db, DS_FUNC, azSide[i], azValue[i], &pTab->typed.apIn[i],
                     pzErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputKeys(DS_FUNC, azArgName[2+i], pTab->typed.apIn[i], azSide[i],
                     azValue[2+i], &anKey[i], &pTab->aaiKey[i], pzErr);
  }
  if( rc==SQLITE_OK ) rc = dsCheckKeyCounts(DS_FUNC, anKey, pzErr);
  pTab->nKey = anKey[0];
  if( rc==SQLITE_OK ) rc = dsCoGroupDeclare(db, pTab, pzErr);
  return rc;
}

/*
** The CREATE VIRTUAL TABLE form.  An error fails a CREATE; a reconnect
** that fails gets a placeholder schema instead, so that the table can
** still be dropped, and its queries report the error (see vtab_args.c).
*/
static int dsCoGroupConnectTable(sqlite3 *db, DsConn *pConn, int argc,
                                 const char *const *argv,
                                 sqlite3_vtab **ppVtab, char **pzErr){
  char *azValue[GROUP_N_ARG];
  char *zErr = 0;
  int bCreating = dsVtabIsCreating(db, argv[1], argv[2]);
  DsCoGroupTable *pTab = dsCoGroupTableNew(pConn);
  int rc;
  if( pTab==0 ) return SQLITE_NOMEM;
  pTab->bTyped = 1;
  rc = dsVtabTypedInit(&pTab->typed, DS_FUNC, argv[1], argv[2]);
  if( rc==SQLITE_OK ){
    rc = dsVtabArgsParse(&dsCoGroupArgSpec, argc - 3, argv + 3, azValue, &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsCoGroupTableSetup(db, pTab, azValue, &zErr);
    dsVtabArgsFree(&dsCoGroupArgSpec, azValue);
  }
  rc = dsVtabTypedConnected(db, &pTab->typed, rc, bCreating, &zErr);
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pConn, DS_FUNC, rc, &zErr);
    dsCoGroupTableFree(pTab);
    *pzErr = zErr;
    return rc;
  }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsCoGroupConnect(sqlite3 *db, void *pAux, int argc,
                            const char *const *argv, sqlite3_vtab **ppVtab,
                            char **pzErr){
  DsConn *pConn = (DsConn *)pAux;
  if( dsVtabIsFunctionForm(db, argc, argv) ){
    return dsCoGroupConnectFunction(db, pConn, ppVtab);
  }
  return dsCoGroupConnectTable(db, pConn, argc, argv, ppVtab, pzErr);
}

static int dsCoGroupDisconnect(sqlite3_vtab *pVtab){
  dsCoGroupTableFree((DsCoGroupTable *)pVtab);
  return SQLITE_OK;
}

static int dsCoGroupOpenCursor(sqlite3_vtab *pVtab,
                               sqlite3_vtab_cursor **ppCur){
  DsCoGroupTable *pTab = (DsCoGroupTable *)pVtab;
  DsCoGroupCursor *pCur = sqlite3_malloc64(sizeof(DsCoGroupCursor));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->pConn = pTab->pConn;
  pCur->pTab = pTab;
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
  for(i=0; i<GROUP_N_ARG; i++){
    sqlite3_value_free(pCur->apArg[i]);
    pCur->apArg[i] = 0;
  }
  sqlite3_free(pCur->aVal);
  pCur->aVal = 0;
  pCur->bKeyDecoded = 0;
  pCur->nKey = 0;
  pCur->bEof = 1;
  pCur->iRowid = 0;
}

static int dsCoGroupCloseCursor(sqlite3_vtab_cursor *pCursor){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  dsCoGroupCursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** With inputs and keys set up: start the coGroup, making the JSON of the
** sides in abJson[], and move to its first group.
*/
static int dsCoGroupCursorRun(DsCoGroupCursor *pCur, const int *abJson,
                              char **pzErr){
  DsCoGroupSpec spec;
  int i, rc;
  pCur->aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)pCur->nKey);
  if( pCur->aVal==0 ) return SQLITE_NOMEM;
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  spec.nKey = pCur->nKey;
  for(i=0; i<2; i++){
    spec.apIn[i] = pCur->apIn[i];
    spec.aaiKey[i] = pCur->aaiKey[i];
    spec.abJson[i] = abJson[i];
  }
  rc = dsCoGroupOpen(pCur->pConn, &spec, &pCur->pGroup, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  pCur->bEof = 0;
  rc = dsCoGroupNext(pCur->pGroup, pzErr);
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  if( rc==SQLITE_DONE ){
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  return rc;
}

/* xFilter of the table-valued form: the arguments come in argv. */
static int dsCoGroupFunctionFilter(DsCoGroupCursor *pCur, int idxNum,
                                   int argc, sqlite3_value **argv,
                                   char **pzErr){
  sqlite3_value *aArg[GROUP_N_ARG];
  int abJson[2];
  int i, rc;
  dsVtabFunctionArgs(idxNum, argc, argv, GROUP_N_ARG, aArg);
  for(i=0; i<GROUP_N_ARG; i++){
    if( aArg[i] ){
      pCur->apArg[i] = sqlite3_value_dup(aArg[i]);
      if( pCur->apArg[i]==0 ) return SQLITE_NOMEM;
    }
  }
  rc = dsInputOpenPair(pCur->pConn->db, DS_FUNC, aArg, pCur->apIn,
                       pCur->aaiKey, &pCur->nKey, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<2; i++){
    abJson[i] = (idxNum >> (GUSE_SHIFT + GCOL_LEFT + i)) & 1;
  }
  return dsCoGroupCursorRun(pCur, abJson, pzErr);
}

/*
** xFilter of the CREATE form: resolve the inputs as they are now, check
** that their columns are still those declared, run.
*/
static int dsCoGroupTableFilter(DsCoGroupCursor *pCur, int idxNum,
                                char **pzErr){
  DsCoGroupTable *pTab = pCur->pTab;
  int abJson[2];
  int i, rc;
  rc = dsVtabTypedReopen(&pTab->typed, pCur->pConn->db, pCur->apIn, pzErr);
  pCur->nKey = pTab->nKey;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    size_t nByte = sizeof(int) * (size_t)pTab->nKey;
    pCur->aaiKey[i] = sqlite3_malloc64(nByte);
    if( pCur->aaiKey[i]==0 ) return SQLITE_NOMEM;
    memcpy(pCur->aaiKey[i], pTab->aaiKey[i], nByte);
  }
  if( rc!=SQLITE_OK ) return rc;
  abJson[0] = (idxNum & GIDX_LEFT)!=0;
  abJson[1] = (idxNum & GIDX_RIGHT)!=0;
  return dsCoGroupCursorRun(pCur, abJson, pzErr);
}

static int dsCoGroupFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                           const char *idxStr, int argc,
                           sqlite3_value **argv){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  char *zErr = 0;
  int rc;
  (void)idxStr;
  dsCoGroupCursorReset(pCur);
  pCur->pTab->typed.nActive++;
  if( pCur->pTab->bTyped ){
    rc = dsCoGroupTableFilter(pCur, idxNum, &zErr);
  }else{
    rc = dsCoGroupFunctionFilter(pCur, idxNum, argc, argv, &zErr);
  }
  pCur->pTab->typed.nActive--;
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pCur->pConn, DS_FUNC, rc, &zErr);
    dsVtabSetError(pCursor->pVtab, zErr);
  }
  return rc;
}

static int dsCoGroupNextRow(sqlite3_vtab_cursor *pCursor){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  char *zErr = 0;
  int rc;
  pCur->pTab->typed.nActive++;
  rc = dsCoGroupNext(pCur->pGroup, &zErr);
  pCur->pTab->typed.nActive--;
  pCur->iRowid++;
  pCur->bKeyDecoded = 0;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  rc = dsStatementError(pCur->pConn, DS_FUNC, rc, &zErr);
  dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsCoGroupEof(sqlite3_vtab_cursor *pCursor){
  return ((DsCoGroupCursor *)pCursor)->bEof;
}

/* The current key decoded into pCur->aVal; 0 for a NULL-key group. */
static int dsCoGroupKeyValues(DsCoGroupCursor *pCur){
  const DsRow *pKey = dsCoGroupKey(pCur->pGroup);
  if( pKey->flags & DS_ROW_NULLKEY ) return 0;
  if( !pCur->bKeyDecoded ){
    dsRowValues(pKey, pCur->nKey, pCur->aVal);
    pCur->bKeyDecoded = 1;
  }
  return 1;
}

/* `key` of the table-valued form: one value, or a JSON array, or NULL. */
static void dsCoGroupKeyResult(DsCoGroupCursor *pCur, sqlite3_context *ctx){
  DsText txt;
  if( !dsCoGroupKeyValues(pCur) ) return;
  if( pCur->nKey==1 ){
    dsValueResult(ctx, &pCur->aVal[0]);
    return;
  }
  dsTextInit(&txt);
  dsJsonArray(&txt, pCur->aVal, pCur->nKey);
  dsTextResult(ctx, &txt, 1, DS_FUNC, "the JSON array of a key");
  dsTextFree(&txt);
}

/* The JSON array of side iSide's group, if it was made. */
static void dsCoGroupJsonResult(DsCoGroupCursor *pCur, sqlite3_context *ctx,
                                int iSide){
  DsText *pJson = dsCoGroupJson(pCur->pGroup, iSide);
  if( pJson ){
    dsTextResult(ctx, pJson, 1, DS_FUNC, iSide ? "the JSON array of a right "
                 "group" : "the JSON array of a left group");
  }
}

static int dsCoGroupColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                           int iCol){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pCursor;
  if( pCur->pTab->bTyped ){
    /* Key columns, then the four group columns, as in the table-valued
    ** form from GCOL_LEFT on. */
    if( iCol<pCur->nKey ){
      if( dsCoGroupKeyValues(pCur) ) dsValueResult(ctx, &pCur->aVal[iCol]);
      return SQLITE_OK;
    }
    iCol = iCol - pCur->nKey + GCOL_LEFT;
  }
  switch( iCol ){
    case GCOL_KEY:
      dsCoGroupKeyResult(pCur, ctx);
      break;
    case GCOL_LEFT:
    case GCOL_RIGHT:
      dsCoGroupJsonResult(pCur, ctx, iCol - GCOL_LEFT);
      break;
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

/* Does the argument constraint on column iCol plainly name one key column
** (a literal integer, or literal text without a comma)?  Bound parameters
** are not seen. */
static int dsIsSingleKeyLiteral(sqlite3_index_info *pInfo, int iCol){
  int i;
  for(i=0; i<pInfo->nConstraint; i++){
    sqlite3_value *pVal = 0;
    if( pInfo->aConstraint[i].iColumn!=iCol ) continue;
    if( pInfo->aConstraintUsage[i].argvIndex<=0 ) continue;
    if( sqlite3_vtab_rhs_value(pInfo, i, &pVal)!=SQLITE_OK ) return 0;
    switch( sqlite3_value_type(pVal) ){
      case SQLITE_INTEGER:
        return 1;
      case SQLITE_TEXT:
        return strchr((const char *)sqlite3_value_text(pVal), ',')==0;
      default:
        return 0;
    }
  }
  return 0;
}

static int dsCoGroupFunctionBestIndex(sqlite3_vtab *pVtab,
                                      sqlite3_index_info *pInfo){
  int mArg;
  int rc = dsVtabFunctionBestIndex(pVtab, pInfo, &dsCoGroupArgSpec,
                                   GCOL_ARG0, &mArg);
  if( rc!=SQLITE_OK ) return rc;
  if( pInfo->nOrderBy==1
   && pInfo->aOrderBy[0].iColumn==GCOL_KEY
   && !pInfo->aOrderBy[0].desc
   && dsIsSingleKeyLiteral(pInfo, GCOL_ARG0 + 2)
   && dsIsSingleKeyLiteral(pInfo, GCOL_ARG0 + 3)
   && dsTextOrderIsBinary(((DsCoGroupTable *)pVtab)->pConn->db) ){
    pInfo->orderByConsumed = 1;
  }
  pInfo->idxNum = mArg | (int)(pInfo->colUsed & 0x7) << GUSE_SHIFT;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

/*
** Does an ORDER BY of the CREATE form ask for the order of the groups?
** Each term must be ascending and name key column k, the next one not yet
** named (or one named before: a repeated term changes nothing).  Any
** other column fails: the two NULL-key groups tie on every key column.
** So does a key column declared with a collation other than BINARY (the
** left input's, as `k TEXT COLLATE NOCASE`): SQLite passes a term in the
** column's own collation, and the groups come in BINARY order.
*/
static int dsCoGroupOrderHolds(const DsCoGroupTable *pTab,
                               const sqlite3_index_info *pInfo){
  int nDone = 0;
  int i;
  if( pInfo->nOrderBy<=0 ) return 0;
  for(i=0; i<pInfo->nOrderBy; i++){
    int iCol = pInfo->aOrderBy[i].iColumn;
    if( pInfo->aOrderBy[i].desc || iCol<0 || iCol>=pTab->nKey ) return 0;
    if( iCol>nDone ) return 0;
    if( pTab->typed.apIn[0]->azColl[pTab->aaiKey[0][iCol]] ) return 0;
    if( iCol==nDone ) nDone++;
  }
  return 1;
}

/*
** The CREATE form takes no constraints: a query of it is the whole
** coGroup, the same whatever the constraints.
*/
static int dsCoGroupTableBestIndex(sqlite3_vtab *pVtab,
                                   sqlite3_index_info *pInfo){
  DsCoGroupTable *pTab = (DsCoGroupTable *)pVtab;
  int idxNum = 0;
  if( dsVtabTypedUsable(pVtab, &pTab->typed) ) return SQLITE_ERROR;
  if( dsCoGroupOrderHolds(pTab, pInfo)
   && dsTextOrderIsBinary(pTab->pConn->db) ){
    idxNum |= GIDX_ORDERED;
    pInfo->orderByConsumed = 1;
  }
  if( dsVtabColUsed(pInfo->colUsed, pTab->nKey) ) idxNum |= GIDX_LEFT;
  if( dsVtabColUsed(pInfo->colUsed, pTab->nKey + 1) ) idxNum |= GIDX_RIGHT;
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  return SQLITE_OK;
}

static int dsCoGroupBestIndex(sqlite3_vtab *pVtab,
                              sqlite3_index_info *pInfo){
  if( ((DsCoGroupTable *)pVtab)->bTyped ){
    return dsCoGroupTableBestIndex(pVtab, pInfo);
  }
  return dsCoGroupFunctionBestIndex(pVtab, pInfo);
}

static const sqlite3_module dsCoGroupModule = {
  .iVersion = 0,
  .xCreate = dsCoGroupConnect,
  .xConnect = dsCoGroupConnect,
  .xBestIndex = dsCoGroupBestIndex,
  .xDisconnect = dsCoGroupDisconnect,
  .xDestroy = dsCoGroupDisconnect,
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
