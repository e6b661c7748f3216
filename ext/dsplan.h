/*
** dsplan.h: the plan of a join as ds_join_plan() shows it (DsJoinPlan),
** private to plan.c, which computes it, and plan_vtab.c, which shows it.
*/
#ifndef DSPLAN_H
#define DSPLAN_H

#include "dataset_int.h"

/* The plan of a join, as ds_join_plan() shows it (plan.c). */
typedef struct DsJoinPlan DsJoinPlan;
struct DsJoinPlan {
  int eStrategy;          /* DS_HINT_*, never OPTIMIZER_CHOOSES */
  int iBuild;             /* the side built on; -1 for sort-merge */
  i64 anRow[2];           /* rows of each input */
  i64 nOutput;            /* rows the join would produce */
  char *zTopKeys;         /* JSON: the keys producing the most rows */
  i64 nMemory;            /* bytes the strategy would want */
  char *zReason;          /* why, in words */
};
int dsJoinPlanCompute(DsConn *pConn, const DsJoinSpec *pSpec, DsJoinPlan *p,
                      char **pzErr);
void dsJoinPlanClear(DsJoinPlan *p);

#endif /* DSPLAN_H */
