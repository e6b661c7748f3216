/*
** vtab.c: the one virtual-table skeleton that serves every module.
**
** ds_join_hint, ds_cogroup, ds_cross and ds_join_plan are one module
** each, with the methods below; what differs between them is a
** descriptor, DsVtabModule (dataset_int.h), as SQLite's pragma.c serves
** every pragma_* table-valued function from its table of pragmas:
**
**   - the arguments (names, how many are required), which are the hidden
**     columns of the table-valued form and the name=value arguments of the
**     CREATE VIRTUAL TABLE form;
**   - the fixed schema of the table-valued form and its first hidden
**     column, and how many of its output columns are recorded as used in
**     idxNum (bits DS_VTAB_USE_SHIFT and up; bits 0-5 say which arguments
**     are given, dsVtabFunctionBestIndex);
**   - for modules that have a CREATE form (xSetup set): the set-up of a
**     table from its arguments, its own xBestIndex work (cost, order, the
**     columns used: in idxNum bits of its own or, with bColUsedIdxStr, the
**     colUsed mask in idxStr as hex), and the clearing of its fields;
**   - the run: xStart opens the operator over the cursor's inputs (for the
**     table-valued form, from the arguments), xStep moves it to its next
**     row (the first one too), xReset releases what a run set up;
**   - the columns: xFunctionColumn for the table-valued form's output
**     columns (the hidden ones are answered here), xTableColumn for the
**     CREATE form's.
**
** Module-specific tables and cursors start with a DsVtab and a
** DsVtabCursor, and are allocated here at the sizes the descriptor gives.
**
** One module, two forms: xCreate is xConnect, which makes a module both an
** eponymous table-valued function and a CREATE VIRTUAL TABLE module, and
** dsVtabIsFunctionForm() tells the two apart (vtab_args.c).  A module
** without a CREATE form (ds_join_plan) registers no xCreate.
**
** nActive of the table (vtab_args.c) counts the xFilter and xNext calls
** running: more than one can only come from tables that read each other.
** Every error they and xCreate end with passes dsStatementError()
** (dataset.c): a failure of the extension's own resources must not cost
** the caller's transaction.
*/
#include "dataset_int.h"

/* What SQLite hands xConnect: the descriptor and the connection's state. */
typedef struct DsVtabAux DsVtabAux;
struct DsVtabAux {
  const DsVtabModule *pMod;
  DsConn *pConn;
  void (*xFreeConn)(void *);  /* frees pConn with the module, or NULL */
};

static void dsVtabAuxFree(void *p){
  DsVtabAux *pAux = (DsVtabAux *)p;
  if( pAux->xFreeConn ) pAux->xFreeConn(pAux->pConn);
  sqlite3_free(pAux);
}

/*************************************************************************
** Tables.
*/
static void dsVtabTableFree(DsVtab *pTab){
  if( pTab ){
    if( pTab->pMod->xTableClear ) pTab->pMod->xTableClear(pTab);
    dsVtabTypedClear(&pTab->typed);
    sqlite3_free(pTab);
  }
}

static DsVtab *dsVtabTableNew(const DsVtabAux *pAux){
  DsVtab *pTab = sqlite3_malloc64(pAux->pMod->szTab);
  if( pTab ){
    memset(pTab, 0, pAux->pMod->szTab);
    pTab->pMod = pAux->pMod;
    pTab->pConn = pAux->pConn;
  }
  return pTab;
}

/* The table-valued form: a fixed schema, the arguments hidden. */
static int dsVtabConnectFunction(sqlite3 *db, const DsVtabAux *pAux,
                                 sqlite3_vtab **ppVtab){
  DsVtab *pTab;
  int rc = sqlite3_declare_vtab(db, pAux->pMod->zSchema);
  if( rc!=SQLITE_OK ) return rc;
  pTab = dsVtabTableNew(pAux);
  if( pTab==0 ) return SQLITE_NOMEM;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

/*
** The CREATE VIRTUAL TABLE form.  While the table is being created, any
** error fails the CREATE.  When an existing table is reconnected, an
** error (an input dropped since, say) must not fail: the table could then
** not even be dropped.  It gets a placeholder schema instead, and its
** queries report the error (vtab_args.c).
*/
static int dsVtabConnectTable(sqlite3 *db, const DsVtabAux *pAux, int argc,
                              const char *const *argv,
                              sqlite3_vtab **ppVtab, char **pzErr){
  const DsVtabModule *pMod = pAux->pMod;
  char *azValue[DS_VTAB_MAX_ARG];
  char *zErr = 0;
  int bCreating = dsVtabIsCreating(db, argv[1], argv[2]);
  DsVtab *pTab = dsVtabTableNew(pAux);
  int rc;
  if( pTab==0 ) return SQLITE_NOMEM;
  pTab->bTyped = 1;
  rc = dsVtabTypedInit(&pTab->typed, pMod->args.zFunc, argv[1], argv[2]);
  if( rc==SQLITE_OK ){
    rc = dsVtabArgsParse(&pMod->args, argc - 3, argv + 3, azValue, &zErr);
  }
  if( rc==SQLITE_OK ){
    rc = pMod->xSetup(db, pTab, azValue, bCreating, &zErr);
    dsVtabArgsFree(&pMod->args, azValue);
  }
  rc = dsVtabTypedConnected(db, &pTab->typed, rc, bCreating, &zErr);
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pAux->pConn, pMod->args.zFunc, rc, &zErr);
    dsVtabTableFree(pTab);
    *pzErr = zErr;
    return rc;
  }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int dsVtabConnect(sqlite3 *db, void *pAux, int argc,
                         const char *const *argv, sqlite3_vtab **ppVtab,
                         char **pzErr){
  const DsVtabAux *p = (const DsVtabAux *)pAux;
  if( p->pMod->xSetup==0 || dsVtabIsFunctionForm(db, argc, argv) ){
    return dsVtabConnectFunction(db, p, ppVtab);
  }
  return dsVtabConnectTable(db, p, argc, argv, ppVtab, pzErr);
}

static int dsVtabDisconnect(sqlite3_vtab *pVtab){
  dsVtabTableFree((DsVtab *)pVtab);
  return SQLITE_OK;
}

/*************************************************************************
** Planning.
*/

/*
** The table-valued form: the arguments must arrive as equality
** constraints on the hidden columns (dsVtabFunctionBestIndex); idxNum
** records which are given and which output columns are used.
*/
static int dsVtabBestIndexFunction(DsVtab *pTab, sqlite3_index_info *pInfo){
  const DsVtabModule *pMod = pTab->pMod;
  int mArg;
  int rc = dsVtabFunctionBestIndex(&pTab->base, pInfo, &pMod->args,
                                   pMod->iArg0, &mArg);
  if( rc!=SQLITE_OK ) return rc;
  if( pMod->xFunctionOrder ) pMod->xFunctionOrder(pTab, pInfo);
  pInfo->idxNum = mArg | (int)(pInfo->colUsed & ((1u << pMod->nUse) - 1))
                           << DS_VTAB_USE_SHIFT;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = pMod->nFunctionRows;
  return SQLITE_OK;
}

/*
** The CREATE form takes no constraints: a query of it is the whole
** operator, the same whatever the constraints.  The module sets idxNum,
** the order and the cost where it knows better than the default.
*/
static int dsVtabBestIndexTable(DsVtab *pTab, sqlite3_index_info *pInfo){
  const DsVtabModule *pMod = pTab->pMod;
  int rc;
  if( dsVtabTypedUsable(&pTab->base, &pTab->typed) ) return SQLITE_ERROR;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000000;
  if( pMod->xTableBestIndex ){
    rc = pMod->xTableBestIndex(pTab, pInfo);
    if( rc!=SQLITE_OK ) return rc;
  }
  if( pMod->bColUsedIdxStr ){
    pInfo->idxStr = sqlite3_mprintf("%llx",
                                    (unsigned long long)pInfo->colUsed);
    if( pInfo->idxStr==0 ) return SQLITE_NOMEM;
    pInfo->needToFreeIdxStr = 1;
  }
  return SQLITE_OK;
}

static int dsVtabBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  DsVtab *pTab = (DsVtab *)pVtab;
  if( pTab->bTyped ) return dsVtabBestIndexTable(pTab, pInfo);
  return dsVtabBestIndexFunction(pTab, pInfo);
}

/*************************************************************************
** Cursors.
*/

/* Column iCol of the table-valued form: an argument, or the module's. */
static int dsVtabFunctionColumn(DsVtabCursor *pCur, sqlite3_context *ctx,
                                int iCol){
  const DsVtabModule *pMod = pCur->pTab->pMod;
  if( iCol>=pMod->iArg0 ){
    sqlite3_value *pArg;
    assert( iCol - pMod->iArg0 < pMod->args.nName );
    pArg = pCur->apArg[iCol - pMod->iArg0];
    if( pArg ) sqlite3_result_value(ctx, pArg);
    return SQLITE_OK;
  }
  return pMod->xFunctionColumn(pCur, ctx, iCol);
}

static int dsVtabOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  DsVtab *pTab = (DsVtab *)pVtab;
  const DsVtabModule *pMod = pTab->pMod;
  DsVtabCursor *pCur = sqlite3_malloc64(pMod->szCur);
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, pMod->szCur);
  pCur->pConn = pTab->pConn;
  pCur->pTab = pTab;
  pCur->xColumn = pTab->bTyped ? pMod->xTableColumn : dsVtabFunctionColumn;
  pCur->iRowid = pMod->iRowid0;
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Release what one xFilter set up: the module's run, then the inputs and
** the arguments (the operator may read its inputs until it is closed). */
static void dsVtabCursorReset(DsVtabCursor *pCur){
  int i;
  pCur->pTab->pMod->xReset(pCur);
  for(i=0; i<2; i++){
    dsInputFree(pCur->apIn[i]);
    pCur->apIn[i] = 0;
  }
  for(i=0; i<DS_VTAB_MAX_ARG; i++){
    sqlite3_value_free(pCur->apArg[i]);
    pCur->apArg[i] = 0;
  }
  pCur->bEof = 1;
  pCur->iRowid = pCur->pTab->pMod->iRowid0;
}

static int dsVtabClose(sqlite3_vtab_cursor *pCursor){
  DsVtabCursor *pCur = (DsVtabCursor *)pCursor;
  dsVtabCursorReset(pCur);
  if( pCur->pTab->pMod->xCursorClear ) pCur->pTab->pMod->xCursorClear(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/*
** Set up a run and move to its first row.  The CREATE form resolves its
** inputs as they are now and checks that their columns are still those
** declared; the table-valued form's arguments come in argv, in the order
** idxNum records, and are kept for the hidden columns.
*/
static int dsVtabRun(DsVtabCursor *pCur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv, char **pzErr){
  DsVtab *pTab = pCur->pTab;
  const DsVtabModule *pMod = pTab->pMod;
  sqlite3_value *aArg[DS_VTAB_MAX_ARG];
  int i, rc;
  if( pTab->bTyped ){
    rc = dsVtabTypedReopen(&pTab->typed, pCur->pConn->db, pCur->apIn, pzErr);
    if( rc!=SQLITE_OK ) return rc;
    rc = pMod->xStart(pCur, idxNum, idxStr, 0, pzErr);
  }else{
    dsVtabFunctionArgs(idxNum, argc, argv, pMod->args.nName, aArg);
    for(i=0; i<pMod->args.nName; i++){
      if( aArg[i] ){
        pCur->apArg[i] = sqlite3_value_dup(aArg[i]);
        if( pCur->apArg[i]==0 ) return SQLITE_NOMEM;
      }
    }
    rc = pMod->xStart(pCur, idxNum, idxStr, aArg, pzErr);
  }
  if( rc!=SQLITE_OK ) return rc;
  pCur->bEof = 0;
  rc = pMod->xStep(pCur, pzErr);
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  if( rc==SQLITE_DONE ){
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  return rc;
}

static int dsVtabFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                        const char *idxStr, int argc, sqlite3_value **argv){
  DsVtabCursor *pCur = (DsVtabCursor *)pCursor;
  char *zErr = 0;
  int rc;
  dsVtabCursorReset(pCur);
  pCur->pTab->typed.nActive++;
  rc = dsVtabRun(pCur, idxNum, idxStr, argc, argv, &zErr);
  pCur->pTab->typed.nActive--;
  if( rc!=SQLITE_OK ){
    rc = dsStatementError(pCur->pConn, pCur->pTab->pMod->args.zFunc, rc,
                          &zErr);
    dsVtabSetError(pCursor->pVtab, zErr);
  }
  return rc;
}

static int dsVtabNext(sqlite3_vtab_cursor *pCursor){
  DsVtabCursor *pCur = (DsVtabCursor *)pCursor;
  char *zErr = 0;
  int rc;
  assert( !pCur->bEof );
  pCur->pTab->typed.nActive++;
  rc = pCur->pTab->pMod->xStep(pCur, &zErr);
  pCur->pTab->typed.nActive--;
  pCur->iRowid++;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  rc = dsStatementError(pCur->pConn, pCur->pTab->pMod->args.zFunc, rc,
                        &zErr);
  dsVtabSetError(pCursor->pVtab, zErr);
  return rc;
}

static int dsVtabEof(sqlite3_vtab_cursor *pCursor){
  return ((DsVtabCursor *)pCursor)->bEof;
}

static int dsVtabColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                        int iCol){
  DsVtabCursor *pCur = (DsVtabCursor *)pCursor;
  return pCur->xColumn(pCur, ctx, iCol);
}

static int dsVtabRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid){
  *pRowid = ((DsVtabCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

/* Modules with a CREATE form, and modules with the table-valued form only
** (no xCreate: eponymous only). */
static const sqlite3_module dsVtabModuleTyped = {
  .iVersion = 0,
  .xCreate = dsVtabConnect,
  .xConnect = dsVtabConnect,
  .xBestIndex = dsVtabBestIndex,
  .xDisconnect = dsVtabDisconnect,
  .xDestroy = dsVtabDisconnect,
  .xOpen = dsVtabOpen,
  .xClose = dsVtabClose,
  .xFilter = dsVtabFilter,
  .xNext = dsVtabNext,
  .xEof = dsVtabEof,
  .xColumn = dsVtabColumn,
  .xRowid = dsVtabRowid,
};
static const sqlite3_module dsVtabModuleFunction = {
  .iVersion = 0,
  .xConnect = dsVtabConnect,
  .xBestIndex = dsVtabBestIndex,
  .xDisconnect = dsVtabDisconnect,
  .xOpen = dsVtabOpen,
  .xClose = dsVtabClose,
  .xFilter = dsVtabFilter,
  .xNext = dsVtabNext,
  .xEof = dsVtabEof,
  .xColumn = dsVtabColumn,
  .xRowid = dsVtabRowid,
};

/*
** Register module pMod on db.  xFreeConn, if not NULL, frees pConn with
** the module when the connection closes, or at once if the registration
** fails (dataset.c hands it to the first module it registers).
*/
int dsVtabRegister(sqlite3 *db, const DsVtabModule *pMod, DsConn *pConn,
                   void (*xFreeConn)(void *)){
  DsVtabAux *pAux;
  assert( pMod->args.nName<=DS_VTAB_MAX_ARG );
  assert( pMod->nUse>=0 && pMod->nUse<=pMod->iArg0 );
  assert( pMod->szTab>=sizeof(DsVtab) && pMod->szCur>=sizeof(DsVtabCursor) );
  assert( pMod->xStart && pMod->xStep && pMod->xReset );
  assert( pMod->xFunctionColumn );
  assert( pMod->xSetup==0 || pMod->xTableColumn );
  pAux = sqlite3_malloc64(sizeof(DsVtabAux));
  if( pAux==0 ){
    if( xFreeConn ) xFreeConn(pConn);
    return SQLITE_NOMEM;
  }
  pAux->pMod = pMod;
  pAux->pConn = pConn;
  pAux->xFreeConn = xFreeConn;
  return sqlite3_create_module_v2(db, pMod->args.zFunc,
                                  pMod->xSetup ? &dsVtabModuleTyped
                                               : &dsVtabModuleFunction,
                                  pAux, dsVtabAuxFree);
}
