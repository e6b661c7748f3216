/*
** groupmerge.c: the merge of two sorted inputs by key, the one that the
** sort-merge join (mergejoin.c), coGroup (cogroup.c) and the counting of
** ds_join_plan (plan.c) share.
**
** Each side of an operator goes through the sorter (sort.c), in key order
** (DS_ORDER_KEY) or in group order (DS_ORDER_GROUP), and the two sorted
** streams are read side by side, a key at a time.  The merge keeps the
** next row of each side, its head; dsGroupMergeSides() says which heads
** hold the smallest key, so which sides have the next key group, and
** dsGroupMergeInGroup() whether a side's head still belongs to a group.
** What is done with a group's rows (paired, counted, written as JSON) and
** when a side reads its next row are the caller's: a join streams one
** side's rows against the other's group, coGroup takes the left side's
** group before the right's, and each ticks its own interrupt checks.
**
** Keys with a NULL part match nothing: two heads of equal keys with a
** NULL part never form one group, the left one comes first.  In group
** order every key with a NULL part is equal to every other, so the
** left side's NULL-key rows are one group and the right side's the next,
** before every other key, as SQLite sorts NULL first.
**
** Reading a side's next row and the comparisons, once or more per row,
** are inlines of dsexec.h; this file starts, sorts and closes the sides.
*/
#include "dataset_int.h"

/* Start a merge of the two sides of pOp, in order eOrder (DS_ORDER_*). */
void dsGroupMergeInit(DsGroupMerge *p, DsOp *pOp, int eOrder){
  assert( eOrder==DS_ORDER_KEY || eOrder==DS_ORDER_GROUP );
  memset(p, 0, sizeof(*p));
  p->pOp = pOp;
  p->eOrder = eOrder;
}

/*
** Sort side s: read all of pOp->apSrc[s] into its sorter.  The caller
** chooses when each side is sorted and when its first row is read
** (dsGroupMergeFetch): what the first side's sort still holds when the
** second side is read changes what the second one spills.
*/
int dsGroupMergeSort(DsGroupMerge *p, int s){
  assert( s==0 || s==1 );
  assert( p->apSorter[s]==0 );
  return dsSorterOpen(p->pOp, p->pOp->apSrc[s], p->eOrder, &p->apSorter[s]);
}

void dsGroupMergeClose(DsGroupMerge *p){
  dsSorterClose(p->apSorter[0]);
  dsSorterClose(p->apSorter[1]);
  p->apSorter[0] = p->apSorter[1] = 0;
  p->apHead[0] = p->apHead[1] = 0;
}
