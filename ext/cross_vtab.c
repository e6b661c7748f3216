/*
** cross_vtab.c: the ds_cross module, the SQL face of the cross product.
**
** One module, two forms, served by the virtual-table skeleton (vtab.c)
** from the descriptor at the end of this file.
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
#include "dsdecode.h"

#define DS_FUNC "ds_cross"

/* Columns of the table-valued form. */
#define XCOL_LEFT       0
#define XCOL_RIGHT      1
#define XCOL_ARG0       2     /* first hidden argument column */
#define CROSS_N_ARG     3

static const char *const azArgName[CROSS_N_ARG] = {
  "left", "right", "hint"
};

typedef struct DsCrossTable DsCrossTable;
struct DsCrossTable {
  DsVtab vt;
  int eHint;              /* DS_CROSS_* (CREATE form) */
};

typedef struct DsCrossCursor DsCrossCursor;
struct DsCrossCursor {
  DsVtabCursor vc;        /* arguments, inputs, rowid */
  int anCol[2];           /* columns carried from each side */
  int *aaiCol[2];         /* which */
  int *aaiSlot[2];        /* input column -> value index in a row, or -1 */
  DsCross *pCross;
  DsRow *apRow[2];        /* the current pair */
  DsRowDecoder aDec[2];   /* the values of apRow[i], as asked for */
  DsText text;            /* reused for the JSON of a row */
};

/* Set up table pTab of the CREATE form from its arguments azValue[]. */
static int dsCrossSetup(sqlite3 *db, DsVtab *pVt, char **azValue,
                        int bCreating, char **pzErr){
  DsCrossTable *pTab = (DsCrossTable *)pVt;
  int i, rc = SQLITE_OK;
  (void)bCreating;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputOpen(db, DS_FUNC, dsSideName(i), azValue[i],
                     &pVt->typed.apIn[i], pzErr);
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
    rc = dsVtabDeclarePair(db, DS_FUNC, pVt->typed.zName, pVt->typed.apIn,
                           pzErr);
  }
  return rc;
}

/* Release what one run set up. */
static void dsCrossReset(DsVtabCursor *pVc){
  DsCrossCursor *pCur = (DsCrossCursor *)pVc;
  int i;
  dsCrossClose(pCur->pCross);
  pCur->pCross = 0;
  for(i=0; i<2; i++){
    sqlite3_free(pCur->aaiCol[i]);
    sqlite3_free(pCur->aaiSlot[i]);
    sqlite3_free(pCur->aDec[i].aVal);
    pCur->aaiCol[i] = pCur->aaiSlot[i] = 0;
    memset(&pCur->aDec[i], 0, sizeof(pCur->aDec[i]));
    pCur->anCol[i] = 0;
    pCur->apRow[i] = 0;
  }
}

static void dsCrossCursorClear(DsVtabCursor *pVc){
  dsTextFree(&((DsCrossCursor *)pVc)->text);
}

/*
** With the inputs set up: carry the columns of side i that are wanted
** (all of them when abAll[i], else those aaWant[i] marks) and start the
** cross product.
*/
static int dsCrossCursorRun(DsCrossCursor *pCur, int eHint, const int *abAll,
                            u8 *const *aaWant, char **pzErr){
  DsCrossSpec spec;
  int i, rc = SQLITE_OK;
  for(i=0; i<2 && rc==SQLITE_OK; i++){
    rc = dsInputPlanColumns(pCur->vc.apIn[i], 0, 0, abAll[i], aaWant[i],
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
    spec.apIn[i] = pCur->vc.apIn[i];
    spec.anCol[i] = pCur->anCol[i];
    spec.aaiCol[i] = pCur->aaiCol[i];
  }
  return dsCrossOpen(pCur->vc.pConn, &spec, &pCur->pCross, pzErr);
}

/*
** Start a run.  The table-valued form's arguments are in aArg; a side
** whose JSON is not used (idxNum) is read without any of its columns.
** The CREATE form's inputs are set up; it carries the columns the
** statement uses (the colUsed mask in idxStr).
*/
static int dsCrossStart(DsVtabCursor *pVc, int idxNum, const char *idxStr,
                        sqlite3_value **aArg, char **pzErr){
  DsCrossCursor *pCur = (DsCrossCursor *)pVc;
  u8 *aaWant[2] = {0, 0};
  int abAll[2] = {0, 0};
  int eHint = 0;
  int i, rc = SQLITE_OK;
  if( aArg ){
    for(i=0; i<2 && rc==SQLITE_OK; i++){
      rc = dsInputFromValue(pVc->pConn->db, DS_FUNC, dsSideName(i), aArg[i],
                            &pVc->apIn[i], pzErr);
    }
    if( rc==SQLITE_OK ) rc = dsParseCrossHint(DS_FUNC, aArg[2], &eHint, pzErr);
    if( rc!=SQLITE_OK ) return rc;
    for(i=0; i<2; i++) abAll[i] = (idxNum >> (DS_VTAB_USE_SHIFT + i)) & 1;
    return dsCrossCursorRun(pCur, eHint, abAll, aaWant, pzErr);
  }
  rc = dsVtabTypedWanted(&pVc->pTab->typed, idxStr, aaWant);
  if( rc==SQLITE_OK ){
    rc = dsCrossCursorRun(pCur, ((DsCrossTable *)pVc->pTab)->eHint, abAll,
                          aaWant, pzErr);
  }
  sqlite3_free(aaWant[0]);
  sqlite3_free(aaWant[1]);
  return rc;
}

static int dsCrossStep(DsVtabCursor *pVc, char **pzErr){
  DsCrossCursor *pCur = (DsCrossCursor *)pVc;
  int rc = dsCrossNext(pCur->pCross, pCur->apRow, pzErr);
  if( rc==SQLITE_ROW ){
    dsDecoderStart(&pCur->aDec[0], pCur->apRow[0]);
    dsDecoderStart(&pCur->aDec[1], pCur->apRow[1]);
  }
  return rc;
}

/* Every value of the current row of side iSide, decoded once per row. */
static DsValue *dsCrossValues(DsCrossCursor *pCur, int iSide){
  DsRowDecoder *pDec = &pCur->aDec[iSide];
  if( pCur->anCol[iSide]>0 ) dsDecoderValue(pDec, pCur->anCol[iSide] - 1);
  return pDec->aVal;
}

/* `left` or `right` of the table-valued form: the row as a JSON object. */
static int dsCrossFunctionColumn(DsVtabCursor *pVc, sqlite3_context *ctx,
                                 int iCol){
  DsCrossCursor *pCur = (DsCrossCursor *)pVc;
  int iSide = iCol - XCOL_LEFT;
  DsText *pTxt = &pCur->text;
  dsTextReset(pTxt);
  dsJsonObject(pTxt, pVc->apIn[iSide], pCur->aaiSlot[iSide],
               dsCrossValues(pCur, iSide));
  dsTextResult(ctx, pTxt, 1, DS_FUNC, iSide ? "the JSON object of a right "
               "row" : "the JSON object of a left row");
  return SQLITE_OK;
}

/* A column of the CREATE form: the left input's columns, then the
** right's. */
static int dsCrossTableColumn(DsVtabCursor *pVc, sqlite3_context *ctx,
                              int iCol){
  DsCrossCursor *pCur = (DsCrossCursor *)pVc;
  int nLeft = pVc->apIn[0]->nCol;
  int iSide = iCol<nLeft ? 0 : 1;
  int c = iSide ? iCol - nLeft : iCol;
  int iSlot;
  if( c>=pVc->apIn[iSide]->nCol ) return SQLITE_OK;
  iSlot = pCur->aaiSlot[iSide][c];
  if( iSlot>=0 ){
    dsValueResult(ctx, dsDecoderOne(&pCur->aDec[iSide], iSlot));
  }
  return SQLITE_OK;
}

/* The CREATE form is the whole cross product whatever the constraints;
** the columns used go to xFilter in idxStr.  No order is claimed. */
static const DsVtabModule dsCrossModule = {
  .args = { DS_FUNC, CROSS_N_ARG, 2, azArgName },
  .zSchema = "CREATE TABLE x(\"left\", \"right\", ds_left HIDDEN, "
             "ds_right HIDDEN, hint HIDDEN)",
  .iArg0 = XCOL_ARG0,
  .nUse = 2,
  .nFunctionRows = 1000000,
  .szTab = sizeof(DsCrossTable),
  .szCur = sizeof(DsCrossCursor),
  .bColUsedIdxStr = 1,
  .xSetup = dsCrossSetup,
  .xStart = dsCrossStart,
  .xStep = dsCrossStep,
  .xReset = dsCrossReset,
  .xCursorClear = dsCrossCursorClear,
  .xFunctionColumn = dsCrossFunctionColumn,
  .xTableColumn = dsCrossTableColumn,
};

int dsRegisterCrossVtab(sqlite3 *db, DsConn *pConn){
  return dsVtabRegister(db, &dsCrossModule, pConn, 0);
}
