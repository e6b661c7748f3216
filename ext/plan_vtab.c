/*
** plan_vtab.c: the ds_join_plan module, the SQL face of a join's plan.
**
**     SELECT * FROM ds_join_plan(left, right, left_key, right_key
**                                [, hint [, join_type]]);
**
** One row describing the join without forming it (plan.c):
**
**     strategy, build_side, left_rows, right_rows, output_rows,
**     top_keys, memory_bytes, reason
**
** A table-valued function only (no CREATE form, so no xCreate), served by
** the virtual-table skeleton (vtab.c) from the descriptor at the end of
** this file.  Its one row has rowid 1.
*/
#include "dataset_int.h"
#include "dsplan.h"

#define DS_FUNC_PLAN "ds_join_plan"

#define PCOL_STRATEGY   0
#define PCOL_BUILD      1
#define PCOL_LEFT_ROWS  2
#define PCOL_RIGHT_ROWS 3
#define PCOL_OUTPUT     4
#define PCOL_TOP_KEYS   5
#define PCOL_MEMORY     6
#define PCOL_REASON     7
#define PCOL_ARG0       8
#define PLAN_N_ARG      6

static const char *const azPlanArg[PLAN_N_ARG] = {
  "left", "right", "left_key", "right_key", "hint", "join_type"
};

typedef struct DsPlanCursor DsPlanCursor;
struct DsPlanCursor {
  DsVtabCursor vc;        /* arguments, inputs, rowid */
  int *aaiKey[2];
  int nStep;              /* xStep calls of the run */
  DsJoinPlan plan;        /* the row */
};

static void dsPlanReset(DsVtabCursor *pVc){
  DsPlanCursor *pCur = (DsPlanCursor *)pVc;
  dsJoinPlanClear(&pCur->plan);
  sqlite3_free(pCur->aaiKey[0]);
  sqlite3_free(pCur->aaiKey[1]);
  pCur->aaiKey[0] = pCur->aaiKey[1] = 0;
  pCur->nStep = 0;
}

/* Read the arguments and compute the plan, the run's one row. */
static int dsPlanStart(DsVtabCursor *pVc, int idxNum, const char *idxStr,
                       sqlite3_value **aArg, char **pzErr){
  DsPlanCursor *pCur = (DsPlanCursor *)pVc;
  DsJoinSpec spec;
  int i, rc;
  (void)idxNum;
  (void)idxStr;
  memset(&spec, 0, sizeof(spec));
  memset(&pCur->plan, 0, sizeof(pCur->plan));
  spec.zFunc = DS_FUNC_PLAN;
  spec.anRowHint[0] = spec.anRowHint[1] = -1;
  rc = dsInputOpenPair(pVc->pConn->db, DS_FUNC_PLAN, aArg, pVc->apIn,
                       pCur->aaiKey, &spec.nKey, pzErr);
  if( rc==SQLITE_OK ){
    rc = dsParseHint(DS_FUNC_PLAN, aArg[4], &spec.eHint, pzErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsParseJoinType(DS_FUNC_PLAN, aArg[5], &spec.eType, pzErr);
  }
  if( rc==SQLITE_OK ){
    rc = dsCheckStrictHint(pVc->pConn, DS_FUNC_PLAN, spec.eHint, spec.eType,
                           pzErr);
  }
  if( rc!=SQLITE_OK ) return rc;
  for(i=0; i<2; i++){
    spec.apIn[i] = pVc->apIn[i];
    spec.aaiKey[i] = pCur->aaiKey[i];
    /* The table-valued join carries every column. */
    spec.anPay[i] = pVc->apIn[i]->nCol - spec.nKey > 0
                  ? pVc->apIn[i]->nCol - spec.nKey : 0;
  }
  return dsJoinPlanCompute(pVc->pConn, &spec, &pCur->plan, pzErr);
}

/* The one row, then the end. */
static int dsPlanStep(DsVtabCursor *pVc, char **pzErr){
  DsPlanCursor *pCur = (DsPlanCursor *)pVc;
  (void)pzErr;
  return pCur->nStep++ ? SQLITE_DONE : SQLITE_ROW;
}

static int dsPlanColumn(DsVtabCursor *pVc, sqlite3_context *ctx, int iCol){
  const DsJoinPlan *p = &((DsPlanCursor *)pVc)->plan;
  switch( iCol ){
    case PCOL_STRATEGY:
      sqlite3_result_text(ctx, dsHintName[p->eStrategy], -1, SQLITE_STATIC);
      break;
    case PCOL_BUILD:
      if( p->iBuild>=0 ){
        sqlite3_result_text(ctx, dsSideName(p->iBuild), -1, SQLITE_STATIC);
      }
      break;
    case PCOL_LEFT_ROWS:  sqlite3_result_int64(ctx, p->anRow[0]); break;
    case PCOL_RIGHT_ROWS: sqlite3_result_int64(ctx, p->anRow[1]); break;
    case PCOL_OUTPUT:     sqlite3_result_int64(ctx, p->nOutput); break;
    case PCOL_TOP_KEYS:
      dsResultText(ctx, DS_FUNC_PLAN, "top_keys", p->zTopKeys,
                   (i64)strlen(p->zTopKeys), 1);
      break;
    case PCOL_MEMORY:     sqlite3_result_int64(ctx, p->nMemory); break;
    default:
      dsResultText(ctx, DS_FUNC_PLAN, "the reason", p->zReason,
                   (i64)strlen(p->zReason), 0);
      break;
  }
  return SQLITE_OK;
}

static const DsVtabModule dsPlanModule = {
  .args = { DS_FUNC_PLAN, PLAN_N_ARG, 4, azPlanArg },
  .zSchema = "CREATE TABLE x(strategy TEXT, build_side TEXT, "
             "left_rows INTEGER, right_rows INTEGER, output_rows INTEGER, "
             "top_keys TEXT, memory_bytes INTEGER, reason TEXT, "
             "ds_left HIDDEN, ds_right HIDDEN, left_key HIDDEN, "
             "right_key HIDDEN, hint HIDDEN, join_type HIDDEN)",
  .iArg0 = PCOL_ARG0,
  .nUse = 0,
  .nFunctionRows = 1,
  .iRowid0 = 1,
  .szTab = sizeof(DsVtab),
  .szCur = sizeof(DsPlanCursor),
  .xStart = dsPlanStart,
  .xStep = dsPlanStep,
  .xReset = dsPlanReset,
  .xFunctionColumn = dsPlanColumn,
};

int dsRegisterPlan(sqlite3 *db, DsConn *pConn){
  return dsVtabRegister(db, &dsPlanModule, pConn, 0);
}
