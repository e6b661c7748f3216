/*
** cogroup_vtab.c: the ds_cogroup module, the SQL face of coGroup.
**
** One module, two forms, served by the virtual-table skeleton (vtab.c)
** from the descriptor at the end of this file.
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

/* idxNum bits of the virtual-table form */
#define GIDX_ORDERED      0x01  /* the plan consumes the ORDER BY */
#define GIDX_LEFT         0x02  /* `left` is used */
#define GIDX_RIGHT        0x04  /* `right` is used */

static const char *const azArgName[GROUP_N_ARG] = {
  "left", "right", "left_key", "right_key"
};

typedef struct DsCoGroupTable DsCoGroupTable;
struct DsCoGroupTable {
  DsVtab vt;
  /* The CREATE VIRTUAL TABLE form only. */
  int nKey;
  int *aaiKey[2];         /* key columns of each input */
};

typedef struct DsCoGroupCursor DsCoGroupCursor;
struct DsCoGroupCursor {
  DsVtabCursor vc;        /* arguments, inputs, rowid */
  int nKey;
  int *aaiKey[2];
  DsCoGroup *pGroup;
  DsValue *aVal;          /* the current key, decoded */
  int bKeyDecoded;        /* aVal holds the current key */
};

static void dsCoGroupTableClear(DsVtab *pVt){
  DsCoGroupTable *pTab = (DsCoGroupTable *)pVt;
  sqlite3_free(pTab->aaiKey[0]);
  sqlite3_free(pTab->aaiKey[1]);
}

/* Declare the CREATE form's columns: the key columns, then the groups. */
static int dsCoGroupDeclare(sqlite3 *db, DsCoGroupTable *pTab,
                            char **pzErr){
  const DsInput *pLeft = pTab->vt.typed.apIn[0];
  sqlite3_str *pSql;
  char *zFrom = sqlite3_mprintf("%d key columns, then left, right, "
                                "left_count and right_count", pTab->nKey);
  int rc = zFrom ? SQLITE_OK : SQLITE_NOMEM;
  int k;
  if( rc==SQLITE_OK ){
    rc = dsVtabCheckWidth(db, DS_FUNC, pTab->vt.typed.zName, pTab->nKey + 4,
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
  return dsVtabDeclare(db, DS_FUNC, pTab->vt.typed.zName, pSql, pzErr);
}

/*
** Set up table pTab of the CREATE form from its arguments azValue[]:
** resolve the inputs and keys, declare the columns.
*/
static int dsCoGroupSetup(sqlite3 *db, DsVtab *pVt, char **azValue,
                          int bCreating, char **pzErr){
  DsCoGroupTable *pTab = (DsCoGroupTable *)pVt;
  int anKey[2] = {0, 0};
  int i, rc = SQLITE_OK;
  (void)bCreating;
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
  if( rc==SQLITE_OK ) rc = dsCoGroupDeclare(db, pTab, pzErr);
  return rc;
}

/* Release what one run set up. */
static void dsCoGroupReset(DsVtabCursor *pVc){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pVc;
  int i;
  dsCoGroupClose(pCur->pGroup);
  pCur->pGroup = 0;
  for(i=0; i<2; i++){
    sqlite3_free(pCur->aaiKey[i]);
    pCur->aaiKey[i] = 0;
  }
  sqlite3_free(pCur->aVal);
  pCur->aVal = 0;
  pCur->bKeyDecoded = 0;
  pCur->nKey = 0;
}

/*
** Start a run.  The table-valued form's inputs and keys come from its
** arguments aArg, and idxNum says which sides' JSON is used; the CREATE
** form's inputs are set up, its keys are the table's, and idxNum says
** whether `left` and `right` are used.
*/
static int dsCoGroupStart(DsVtabCursor *pVc, int idxNum, const char *idxStr,
                          sqlite3_value **aArg, char **pzErr){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pVc;
  DsCoGroupSpec spec;
  int abJson[2];
  int i, rc;
  (void)idxStr;
  if( aArg ){
    rc = dsInputOpenPair(pVc->pConn->db, DS_FUNC, aArg, pVc->apIn,
                         pCur->aaiKey, &pCur->nKey, pzErr);
    if( rc!=SQLITE_OK ) return rc;
    for(i=0; i<2; i++){
      abJson[i] = (idxNum >> (DS_VTAB_USE_SHIFT + GCOL_LEFT + i)) & 1;
    }
  }else{
    DsCoGroupTable *pTab = (DsCoGroupTable *)pVc->pTab;
    pCur->nKey = pTab->nKey;
    for(i=0; i<2; i++){
      size_t nByte = sizeof(int) * (size_t)pTab->nKey;
      pCur->aaiKey[i] = sqlite3_malloc64(nByte);
      if( pCur->aaiKey[i]==0 ) return SQLITE_NOMEM;
      memcpy(pCur->aaiKey[i], pTab->aaiKey[i], nByte);
    }
    abJson[0] = (idxNum & GIDX_LEFT)!=0;
    abJson[1] = (idxNum & GIDX_RIGHT)!=0;
  }
  pCur->aVal = sqlite3_malloc64(sizeof(DsValue) * (size_t)pCur->nKey);
  if( pCur->aVal==0 ) return SQLITE_NOMEM;
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  spec.nKey = pCur->nKey;
  for(i=0; i<2; i++){
    spec.apIn[i] = pVc->apIn[i];
    spec.aaiKey[i] = pCur->aaiKey[i];
    spec.abJson[i] = abJson[i];
  }
  return dsCoGroupOpen(pVc->pConn, &spec, &pCur->pGroup, pzErr);
}

static int dsCoGroupStep(DsVtabCursor *pVc, char **pzErr){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pVc;
  pCur->bKeyDecoded = 0;
  return dsCoGroupNext(pCur->pGroup, pzErr);
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
  dsTextInit(&txt);
  dsKeyResult(ctx, pCur->aVal, pCur->nKey, &txt, DS_FUNC);
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

/* A column of the table-valued form (the arguments are the skeleton's). */
static int dsCoGroupFunctionColumn(DsVtabCursor *pVc, sqlite3_context *ctx,
                                   int iCol){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pVc;
  switch( iCol ){
    case GCOL_KEY:
      dsCoGroupKeyResult(pCur, ctx);
      break;
    case GCOL_LEFT:
    case GCOL_RIGHT:
      dsCoGroupJsonResult(pCur, ctx, iCol - GCOL_LEFT);
      break;
    default:
      sqlite3_result_int64(ctx,
          dsCoGroupCount(pCur->pGroup, iCol - GCOL_LEFT_COUNT));
      break;
  }
  return SQLITE_OK;
}

/* A column of the CREATE form: the key columns, then the four group
** columns, as in the table-valued form from GCOL_LEFT on. */
static int dsCoGroupTableColumn(DsVtabCursor *pVc, sqlite3_context *ctx,
                                int iCol){
  DsCoGroupCursor *pCur = (DsCoGroupCursor *)pVc;
  if( iCol<pCur->nKey ){
    if( dsCoGroupKeyValues(pCur) ) dsValueResult(ctx, &pCur->aVal[iCol]);
    return SQLITE_OK;
  }
  return dsCoGroupFunctionColumn(pVc, ctx, iCol - pCur->nKey + GCOL_LEFT);
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

/* The table-valued form claims `ORDER BY key` for a single key column. */
static void dsCoGroupFunctionOrder(DsVtab *pVt, sqlite3_index_info *pInfo){
  if( pInfo->nOrderBy==1
   && pInfo->aOrderBy[0].iColumn==GCOL_KEY
   && !pInfo->aOrderBy[0].desc
   && dsIsSingleKeyLiteral(pInfo, GCOL_ARG0 + 2)
   && dsIsSingleKeyLiteral(pInfo, GCOL_ARG0 + 3)
   && dsTextOrderIsBinary(pVt->pConn->db) ){
    pInfo->orderByConsumed = 1;
  }
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
    if( pTab->vt.typed.apIn[0]->azColl[pTab->aaiKey[0][iCol]] ) return 0;
    if( iCol==nDone ) nDone++;
  }
  return 1;
}

/* The CREATE form: the order of the groups, and whether `left` and
** `right` are used, in idxNum. */
static int dsCoGroupTableBestIndex(DsVtab *pVt, sqlite3_index_info *pInfo){
  DsCoGroupTable *pTab = (DsCoGroupTable *)pVt;
  int idxNum = 0;
  if( dsCoGroupOrderHolds(pTab, pInfo)
   && dsTextOrderIsBinary(pVt->pConn->db) ){
    idxNum |= GIDX_ORDERED;
    pInfo->orderByConsumed = 1;
  }
  if( dsVtabColUsed(pInfo->colUsed, pTab->nKey) ) idxNum |= GIDX_LEFT;
  if( dsVtabColUsed(pInfo->colUsed, pTab->nKey + 1) ) idxNum |= GIDX_RIGHT;
  pInfo->idxNum = idxNum;
  return SQLITE_OK;
}

static const DsVtabModule dsCoGroupModule = {
  .args = { DS_FUNC, GROUP_N_ARG, GROUP_N_ARG, azArgName },
  .zSchema = "CREATE TABLE x(key, \"left\", \"right\", left_count, "
             "right_count, ds_left HIDDEN, ds_right HIDDEN, left_key HIDDEN, "
             "right_key HIDDEN)",
  .iArg0 = GCOL_ARG0,
  .nUse = 3,
  .nFunctionRows = 1000000,
  .szTab = sizeof(DsCoGroupTable),
  .szCur = sizeof(DsCoGroupCursor),
  .xSetup = dsCoGroupSetup,
  .xTableClear = dsCoGroupTableClear,
  .xTableBestIndex = dsCoGroupTableBestIndex,
  .xFunctionOrder = dsCoGroupFunctionOrder,
  .xStart = dsCoGroupStart,
  .xStep = dsCoGroupStep,
  .xReset = dsCoGroupReset,
  .xFunctionColumn = dsCoGroupFunctionColumn,
  .xTableColumn = dsCoGroupTableColumn,
};

int dsRegisterCoGroupVtab(sqlite3 *db, DsConn *pConn){
  return dsVtabRegister(db, &dsCoGroupModule, pConn, 0);
}
