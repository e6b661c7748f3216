/*
** join_vtab.c: the ds_join_hint module, the SQL face of the equi-join.
**
** Table-valued form:
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
  for(i=0; i<DS_N_ARG; i++){
    sqlite3_value_free(pCur->apArg[i]);
    pCur->apArg[i] = 0;
  }
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

static void dsSetVtabError(sqlite3_vtab *pVtab, char *zMsg){
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = zMsg;
}

/* "an integer", ...: the type of a bad argument, for messages. */
static const char *dsArgTypeNoun(sqlite3_value *pVal){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT:   return "a real";
    case SQLITE_BLOB:    return "a blob";
    case SQLITE_NULL:    return "NULL";
    default:             return "text";
  }
}

/* Resolve dataset argument pVal, the zSide input. */
static int dsJoinOpenInput(DsJoinCursor *pCur, int iSide,
                           sqlite3_value *pVal, char **pzErr){
  static const char *const azSide[] = { "left", "right" };
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: the %s dataset must be text (a table or "
        "view name or a query), not %s", DS_FUNC, azSide[iSide],
        dsArgTypeNoun(pVal));
    return SQLITE_ERROR;
  }
  return dsInputOpen(pCur->pConn->db, DS_FUNC, azSide[iSide],
                     (const char *)sqlite3_value_text(pVal),
                     &pCur->apIn[iSide], pzErr);
}

/* Parse key argument pVal of side iSide. */
static int dsJoinParseKeys(DsJoinCursor *pCur, int iSide,
                           sqlite3_value *pVal, int *pnKey, char **pzErr){
  static const char *const azSide[] = { "left", "right" };
  static const char *const azArg[] = { "left_key", "right_key" };
  const char *zKeys;
  char aNum[24];
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_TEXT:
      zKeys = (const char *)sqlite3_value_text(pVal);
      break;
    case SQLITE_INTEGER:
      sqlite3_snprintf(sizeof(aNum), aNum, "%lld", sqlite3_value_int64(pVal));
      zKeys = aNum;
      break;
    default:
      *pzErr = sqlite3_mprintf("%s: %s must be text (column names or 0-based "
          "positions) or an integer position, not %s", DS_FUNC,
          azArg[iSide], dsArgTypeNoun(pVal));
      return SQLITE_ERROR;
  }
  return dsInputKeys(DS_FUNC, azArg[iSide], pCur->apIn[iSide], azSide[iSide],
                     zKeys, pnKey, &pCur->aaiKey[iSide], pzErr);
}

/*
** Decide the columns side iSide carries: the key columns always, all the
** others when its JSON is wanted.  aaiSlot maps each input column to its
** value in the row.
*/
static int dsJoinPlanColumns(DsJoinCursor *pCur, int iSide, int bWantRow){
  const DsInput *pIn = pCur->apIn[iSide];
  int *aiSlot = sqlite3_malloc64(sizeof(int) * (size_t)(pIn->nCol + 1));
  int *aiPay = sqlite3_malloc64(sizeof(int) * (size_t)(pIn->nCol + 1));
  int nPay = 0;
  int c, k;
  if( aiSlot==0 || aiPay==0 ){
    sqlite3_free(aiSlot);
    sqlite3_free(aiPay);
    return SQLITE_NOMEM;
  }
  for(c=0; c<pIn->nCol; c++){
    aiSlot[c] = -1;
    for(k=0; k<pCur->nKey; k++){
      if( pCur->aaiKey[iSide][k]==c ){ aiSlot[c] = k; break; }
    }
    if( aiSlot[c]<0 && bWantRow ){
      aiSlot[c] = pCur->nKey + nPay;
      aiPay[nPay++] = c;
    }
  }
  pCur->aaiSlot[iSide] = aiSlot;
  pCur->aaiPay[iSide] = aiPay;
  pCur->anPay[iSide] = nPay;
  return SQLITE_OK;
}

static int dsJoinFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                        const char *idxStr, int argc, sqlite3_value **argv){
  DsJoinCursor *pCur = (DsJoinCursor *)pCursor;
  sqlite3_vtab *pVtab = pCursor->pVtab;
  sqlite3_value *aArg[DS_N_ARG];
  DsJoinSpec spec;
  char *zErr = 0;
  int anKey[2] = {0, 0};
  int i, j, rc = SQLITE_OK;
  int nMaxCol = 0;
  (void)idxStr;

  dsJoinCursorReset(pCur);
  for(i=j=0; i<DS_N_ARG; i++){
    aArg[i] = (idxNum & (1<<i)) && j<argc ? argv[j++] : 0;
    if( aArg[i] ){
      pCur->apArg[i] = sqlite3_value_dup(aArg[i]);
      if( pCur->apArg[i]==0 ) return SQLITE_NOMEM;
    }
  }
  memset(&spec, 0, sizeof(spec));
  spec.zFunc = DS_FUNC;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsJoinOpenInput(pCur, i, aArg[i], &zErr);
  }
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsJoinParseKeys(pCur, i, aArg[2+i], &anKey[i], &zErr);
  }
  if( rc==SQLITE_OK && anKey[0]!=anKey[1] ){
    zErr = sqlite3_mprintf("%s: left_key names %d column%s but right_key "
        "names %d; both sides need the same number of key columns", DS_FUNC,
        anKey[0], anKey[0]==1 ? "" : "s", anKey[1]);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = dsParseHint(DS_FUNC, aArg[4], &spec.eHint, &zErr);
  if( rc==SQLITE_OK ){
    rc = dsParseJoinType(DS_FUNC, aArg[5], &spec.eType, &zErr);
  }
  if( rc==SQLITE_OK ){
    pCur->nKey = anKey[0];
    pCur->bWantKey = (idxNum >> JUSE_SHIFT) & 1;
    for(i=0; i<2 && rc==SQLITE_OK; i++){
      rc = dsJoinPlanColumns(pCur, i, (idxNum >> (JUSE_SHIFT + 1 + i)) & 1);
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
    dsSetVtabError(pVtab, zErr);
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
  dsSetVtabError(pCursor->pVtab, zErr);
  return rc;
}

static int dsJoinEof(sqlite3_vtab_cursor *pCursor){
  return ((DsJoinCursor *)pCursor)->bEof;
}

/* The JSON object of row pRow of side iSide, into pCur->pStr. */
static void dsJoinRowJson(DsJoinCursor *pCur, int iSide, const DsRow *pRow){
  const DsInput *pIn = pCur->apIn[iSide];
  const int *aiSlot = pCur->aaiSlot[iSide];
  sqlite3_str *pOut = pCur->pStr;
  int c;
  dsRowValues(pRow, pCur->nKey + pCur->anPay[iSide], pCur->aVal);
  sqlite3_str_appendchar(pOut, 1, '{');
  for(c=0; c<pIn->nCol; c++){
    if( c ) sqlite3_str_appendchar(pOut, 1, ',');
    dsJsonString(pOut, pIn->azCol[c], (int)strlen(pIn->azCol[c]));
    sqlite3_str_appendchar(pOut, 1, ':');
    dsJsonValue(pOut, &pCur->aVal[aiSlot[c]]);
  }
  sqlite3_str_appendchar(pOut, 1, '}');
}

/* The key: one value, or a JSON array of the parts. */
static void dsJoinKeyResult(DsJoinCursor *pCur, sqlite3_context *ctx,
                            const DsRow *pRow){
  int k;
  dsRowValues(pRow, pCur->nKey, pCur->aVal);
  if( pCur->nKey==1 ){
    dsValueResult(ctx, &pCur->aVal[0]);
    return;
  }
  sqlite3_str_appendchar(pCur->pStr, 1, '[');
  for(k=0; k<pCur->nKey; k++){
    if( k ) sqlite3_str_appendchar(pCur->pStr, 1, ',');
    dsJsonValue(pCur->pStr, &pCur->aVal[k]);
  }
  sqlite3_str_appendchar(pCur->pStr, 1, ']');
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
  if( sqlite3_str_errcode(pCur->pStr) ){
    int rc = sqlite3_str_errcode(pCur->pStr);
    sqlite3_str_reset(pCur->pStr);
    if( rc==SQLITE_NOMEM ){
      sqlite3_result_error_nomem(ctx);
    }else{
      sqlite3_result_error_toobig(ctx);
    }
    return SQLITE_OK;
  }
  sqlite3_result_text(ctx, sqlite3_str_value(pCur->pStr),
                      sqlite3_str_length(pCur->pStr), SQLITE_TRANSIENT);
  sqlite3_result_subtype(ctx, 'J');
  return SQLITE_OK;
}

static int dsJoinRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((DsJoinCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

/*
** The arguments must arrive as equality constraints on the hidden
** columns; the first four are required.  A required argument that is
** constrained but not usable in this plan makes the plan impossible
** (SQLITE_CONSTRAINT); one that is absent is the user's error.
*/
static int dsJoinBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aiCons[DS_N_ARG];
  int abUnusable[DS_N_ARG];
  int i, nArg = 0;
  int idxNum = 0;
  for(i=0; i<DS_N_ARG; i++){ aiCons[i] = -1; abUnusable[i] = 0; }
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pCons = &pInfo->aConstraint[i];
    int iArg = pCons->iColumn - JCOL_ARG0;
    if( iArg<0 || pCons->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !pCons->usable ){
      abUnusable[iArg] = 1;
    }else if( aiCons[iArg]<0 ){
      aiCons[iArg] = i;
    }
  }
  for(i=0; i<DS_N_REQUIRED; i++){
    if( aiCons[i]>=0 ) continue;
    if( abUnusable[i] ) return SQLITE_CONSTRAINT;
    dsSetVtabError(pVtab, sqlite3_mprintf("%s: missing argument %s; usage: "
        "%s(left, right, left_key, right_key [, hint [, join_type]])",
        DS_FUNC, azArgName[i], DS_FUNC));
    return SQLITE_ERROR;
  }
  for(i=0; i<DS_N_ARG; i++){
    if( aiCons[i]<0 ){
      if( abUnusable[i] ) return SQLITE_CONSTRAINT;
      continue;
    }
    pInfo->aConstraintUsage[aiCons[i]].argvIndex = ++nArg;
    pInfo->aConstraintUsage[aiCons[i]].omit = 1;
    idxNum |= 1<<i;
  }
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
