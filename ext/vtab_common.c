/*
** vtab_common.c: the plumbing every table-valued form shares
** (ds_join_hint, ds_cogroup, ds_cross).
**
** A table-valued function takes its arguments as HIDDEN columns after its
** output columns.  dsTvfBestIndex() asks for equality constraints on them,
** hands them to xFilter in argument order and records in idxNum which are
** present; dsTvfArgs() then picks them out of xFilter's argv again.  A
** required argument that SQLite offers only as an unusable constraint
** makes the plan impossible (SQLITE_CONSTRAINT, so SQLite tries another
** join order); one that is absent altogether is the user's mistake and
** gets a usage message.
**
** The dataset and key arguments are checked here too, so that every
** function words its type errors alike: "ds_cross: the left dataset must
** be text (a table or view name or a query), not an integer".
*/
#include "dataset_int.h"

static const char *const azSide[2] = { "left", "right" };

/* "an integer", "a real", ...: the type of an argument, for messages. */
const char *dsValueTypeNoun(sqlite3_value *pVal){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT:   return "a real";
    case SQLITE_BLOB:    return "a blob";
    case SQLITE_NULL:    return "NULL";
    default:             return "text";
  }
}

/* Make zMsg (sqlite3_malloc'd, may be NULL) the table's error message. */
void dsVtabSetError(sqlite3_vtab *pVtab, char *zMsg){
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = zMsg;
}

/*
** Take the argument constraints of pInfo for the function described by
** pTvf.  On success *pidxNum has bit i set for each argument present, and
** aiCons[i] (room for pTvf->nArg) is the constraint that carries argument
** i, or -1.
*/
int dsTvfBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo,
                   const DsTvf *pTvf, int *aiCons, int *pidxNum){
  int abUnusable[DS_TVF_MAX_ARG];
  int i, nArg = 0;
  int idxNum = 0;
  for(i=0; i<pTvf->nArg; i++){ aiCons[i] = -1; abUnusable[i] = 0; }
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pCons = &pInfo->aConstraint[i];
    int iArg = pCons->iColumn - pTvf->iArg0;
    if( iArg<0 || iArg>=pTvf->nArg ) continue;
    if( pCons->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !pCons->usable ){
      abUnusable[iArg] = 1;
    }else if( aiCons[iArg]<0 ){
      aiCons[iArg] = i;
    }
  }
  for(i=0; i<pTvf->nRequired; i++){
    if( aiCons[i]>=0 ) continue;
    if( abUnusable[i] ) return SQLITE_CONSTRAINT;
    dsVtabSetError(pVtab, sqlite3_mprintf("%s: missing argument %s; usage: "
        "%s", pTvf->zFunc, pTvf->azArg[i], pTvf->zUsage));
    return SQLITE_ERROR;
  }
  for(i=0; i<pTvf->nArg; i++){
    if( aiCons[i]<0 ){
      if( abUnusable[i] ) return SQLITE_CONSTRAINT;
      continue;
    }
    pInfo->aConstraintUsage[aiCons[i]].argvIndex = ++nArg;
    pInfo->aConstraintUsage[aiCons[i]].omit = 1;
    idxNum |= 1<<i;
  }
  *pidxNum = idxNum;
  return SQLITE_OK;
}

/*
** Copy the arguments of an xFilter call into apArg[0..nArg-1] (NULL for
** those absent), in argument order.  SQLITE_NOMEM leaves the copies made
** so far for dsTvfArgsFree().
*/
int dsTvfArgs(const DsTvf *pTvf, int idxNum, int argc, sqlite3_value **argv,
              sqlite3_value **apArg){
  int i, j;
  for(i=j=0; i<pTvf->nArg; i++){
    apArg[i] = 0;
    if( (idxNum & (1<<i)) && j<argc ){
      apArg[i] = sqlite3_value_dup(argv[j++]);
      if( apArg[i]==0 ) return SQLITE_NOMEM;
    }
  }
  return SQLITE_OK;
}

void dsTvfArgsFree(int nArg, sqlite3_value **apArg){
  int i;
  for(i=0; i<nArg; i++){
    sqlite3_value_free(apArg[i]);
    apArg[i] = 0;
  }
}

/* Resolve pVal, the dataset argument of side iSide (0 left, 1 right). */
int dsTvfInput(sqlite3 *db, const char *zFunc, int iSide, sqlite3_value *pVal,
               DsInput **ppIn, char **pzErr){
  *ppIn = 0;
  if( pVal==0 || sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    *pzErr = sqlite3_mprintf("%s: the %s dataset must be text (a table or "
        "view name or a query), not %s", zFunc, azSide[iSide],
        pVal ? dsValueTypeNoun(pVal) : "NULL");
    return SQLITE_ERROR;
  }
  return dsInputOpen(db, zFunc, azSide[iSide],
                     (const char *)sqlite3_value_text(pVal), ppIn, pzErr);
}

/* Parse pVal, the key argument of side iSide, against input pIn. */
int dsTvfKeys(const char *zFunc, int iSide, sqlite3_value *pVal,
              const DsInput *pIn, int *pnKey, int **paiKey, char **pzErr){
  static const char *const azArg[] = { "left_key", "right_key" };
  const char *zKeys;
  char aNum[24];
  *pnKey = 0;
  *paiKey = 0;
  switch( pVal ? sqlite3_value_type(pVal) : SQLITE_NULL ){
    case SQLITE_TEXT:
      zKeys = (const char *)sqlite3_value_text(pVal);
      break;
    case SQLITE_INTEGER:
      sqlite3_snprintf(sizeof(aNum), aNum, "%lld", sqlite3_value_int64(pVal));
      zKeys = aNum;
      break;
    default:
      *pzErr = sqlite3_mprintf("%s: %s must be text (column names or 0-based "
          "positions) or an integer position, not %s", zFunc, azArg[iSide],
          pVal ? dsValueTypeNoun(pVal) : "NULL");
      return SQLITE_ERROR;
  }
  return dsInputKeys(zFunc, azArg[iSide], pIn, azSide[iSide], zKeys, pnKey,
                     paiKey, pzErr);
}

/* Both sides must name the same number of key columns. */
int dsTvfCheckKeyCounts(const char *zFunc, int nLeft, int nRight,
                        char **pzErr){
  if( nLeft==nRight ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: left_key names %d column%s but right_key "
      "names %d; both sides need the same number of key columns", zFunc,
      nLeft, nLeft==1 ? "" : "s", nRight);
  return SQLITE_ERROR;
}

/*
** Make the text built in pStr the result of ctx, as JSON when bJson; an
** error result if building it failed (too long, or out of memory).  pStr
** is left empty for reuse.
*/
void dsTvfResultStr(sqlite3_context *ctx, sqlite3_str *pStr, int bJson){
  int rc = sqlite3_str_errcode(pStr);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ){
      sqlite3_result_error_nomem(ctx);
    }else{
      sqlite3_result_error_toobig(ctx);
    }
  }else{
    sqlite3_result_text(ctx, sqlite3_str_value(pStr), sqlite3_str_length(pStr),
                        SQLITE_TRANSIENT);
    if( bJson ) sqlite3_result_subtype(ctx, 'J');
  }
  sqlite3_str_reset(pStr);
}
