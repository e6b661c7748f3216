/*
** testfixture.c: a tclsh with the dataset extension linked in, and the
** fault-injection commands its tests need.
**
** Built from the same sources as the shared library, with -DSQLITE_CORE,
** so the extension calls libsqlite3 directly and registers itself on every
** new connection through sqlite3_auto_extension().  Tcl's sqlite3 package
** (libsqlite3-tcl) uses the same libsqlite3, so the test suite runs
** unchanged under it: this is the program the sanitizers and the
** fault-injection tests run, with no dlopen() in the way.  It is also
** built with -DDS_TEST_HOOKS, which compiles the spill-file fault hooks of
** ext/spill.c and the thread-start fault of ext/rangeread.c in (the shared
** library never has them).
**
** Commands (tests/faults.test uses them; none does anything until asked):
**
**   ds_fault_malloc N ?PERSIST?
**       The N-th allocation SQLite makes from now on fails (every one
**       from the N-th on with PERSIST 1); N 0 turns failures off.
**       Returns the number of allocations failed under the previous
**       setting.  It works through an allocator wrapper installed with
**       sqlite3_config(SQLITE_CONFIG_MALLOC) before SQLite initialises,
**       so it sees every allocation of SQLite and of the extension
**       (sqlite3_malloc64), and none of Tcl's.
**   ds_fault_count
**       Allocations failed since the last ds_fault_malloc.
**       With DS_FAULT_BACKTRACE=1 in the environment (when armed), the
**       fault prints
**       the stack of the allocation to stderr: where a test finds an
**       allocation failure that changes a result, this says whose it is.
**   ds_memory_used
**       sqlite3_memory_used(): bytes SQLite and the extension hold now.
**   ds_fsize_limit BYTES|none
**       setrlimit(RLIMIT_FSIZE) on this process, with SIGXFSZ ignored, so
**       that writing past BYTES fails with EFBIG: a disk that is full.
**       `none` restores the limit the program started with.
**   ds_seteuid UID
**       seteuid(): root ignores file permissions, so a test of an
**       unwritable directory drops to another user and back (the real
**       uid stays 0, so `ds_seteuid 0` returns).  Returns the old euid.
**   ds_spill_fault read|write N KIND
**       The N-th read or write of a spill file from now on fails: KIND
**       is `short` (it and every later one moves only part of what was
**       asked, as the system may), `eof` (0 bytes: a file that ends too
**       soon, or a write that makes no progress), `eio` (EIO) or
**       `enospc` (ENOSPC).  N 0 turns it off.
**   ds_spill_calls read|write
**       {calls faults}: spill reads (or writes) made, and failed, since
**       the last ds_spill_fault of that kind.
**   ds_thread_fault N ?PERSIST?
**       The N-th thread a table reader (ext/rangeread.c) starts from now
**       on fails to start (pthread_create() gives EAGAIN; every one from
**       the N-th on with PERSIST 1); N 0 turns it off.  Returns the
**       number of thread starts failed under the previous setting.
**   ds_threading_mode singlethread|multithread|serialized
**       Restarts SQLite in that threading mode: sqlite3_shutdown(),
**       sqlite3_config(), sqlite3_initialize(), and the extension
**       registered again (the shutdown forgets sqlite3_auto_extension()'s
**       list).  Every connection must be closed first.  A host may choose
**       single-thread mode at run time, which sqlite3_threadsafe() does
**       not tell; faults.test (9.x) checks that the extension notices.
**   ds_spill_files
**       {created opened}: spill files created in temp_dir, and spill files
**       opened (created or reused from the operator's pool), since the
**       process started.
**   ds_split_helpers ?MAX?
**       {full short}: work split between the caller and helper threads
**       (ext/threads.c: making a hash table) since the process started,
**       with every helper wanted started, and with fewer.  MAX N lets at
**       most N helpers of a split start from now on (a start past it
**       fails as if pthread_create() had); -1 lifts the limit.
**   ds_count_ahead ?NOTHREAD?
**       The tables of OPTIMIZER_CHOOSES counted ahead, each on a thread of
**       its reader (ext/rangeread.c, "Counting ahead"), since the process
**       started.  NOTHREAD 1 makes every such thread fail to start from
**       now on (as if pthread_create() failed), 0 lets them start again.
**   ds_stage_ahead ?NOTHREAD?
**       {worker caller}: sources read through a stage run ahead on a
**       worker (ext/stageahead.c: a hash join's task probing its probe file, a
**       view probed) since the process started, with a worker thread, and
**       by the caller alone where no worker could run.  NOTHREAD 1 makes
**       every such worker fail to start from now on (as if
**       pthread_create() failed), 0 lets them start again.
*/
#include <tcl.h>
#include <sqlite3.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "dataset.h"

/* From ext/spill.c, compiled in with -DDS_TEST_HOOKS. */
void dsSpillTestFault(int bWrite, int nCountdown, int eKind);
void dsSpillTestCalls(int bWrite, int *pnCall, int *pnFault);
void dsSpillTestFiles(int *pnNew, int *pnOpen);
/* From ext/stageahead.c, likewise. */
void dsStageAheadTest(int bNoThread, int *pnWorker, int *pnCaller);
/* From ext/rangeread.c, likewise. */
int dsRangeTestFault(int nCountdown, int bPersist);
void dsRangeCountTest(int bNoThread, int *pnCounted);
/* From ext/threads.c, likewise. */
void dsSplitTest(int nAllow, int *pnFull, int *pnShort);

/*************************************************************************
** Allocation failure.  The counters are atomic because operators may sort
** on worker threads (which do not allocate, but the rule is cheap), and a
** test may run connections in threads.
*/
static sqlite3_mem_methods dsOrigMem;     /* SQLite's own allocator */
static atomic_int dsFaultCountdown;       /* allocations until the fault */
static atomic_int dsFaultPersist;         /* keep failing after it */
static atomic_int dsFaultFailing;         /* persisting: fail everything */
static atomic_int dsFaultFailed;          /* failures since armed */
static int dsFaultBacktrace;              /* DS_FAULT_BACKTRACE is set */

/* The stack of a failing allocation, on stderr. */
static void dsFaultShowStack(void){
  void *aFrame[32];
  int n = backtrace(aFrame, 32);
  fprintf(stderr, "ds_fault_malloc: allocation failed at:\n");
  backtrace_symbols_fd(aFrame, n, 2);
}

/* Should this allocation fail? */
static int dsFaultNow(void){
  if( atomic_load(&dsFaultFailing) ){
    atomic_fetch_add(&dsFaultFailed, 1);
    return 1;
  }
  if( atomic_load(&dsFaultCountdown)>0
   && atomic_fetch_sub(&dsFaultCountdown, 1)==1 ){
    if( atomic_load(&dsFaultPersist) ) atomic_store(&dsFaultFailing, 1);
    atomic_fetch_add(&dsFaultFailed, 1);
    if( dsFaultBacktrace ) dsFaultShowStack();
    return 1;
  }
  return 0;
}

static void *dsFaultMalloc(int n){
  return dsFaultNow() ? 0 : dsOrigMem.xMalloc(n);
}

static void *dsFaultRealloc(void *p, int n){
  return dsFaultNow() ? 0 : dsOrigMem.xRealloc(p, n);
}

static void dsFaultFree(void *p){ dsOrigMem.xFree(p); }
static int dsFaultSize(void *p){ return dsOrigMem.xSize(p); }
static int dsFaultRoundup(int n){ return dsOrigMem.xRoundup(n); }
static int dsFaultInit(void *p){ return dsOrigMem.xInit(p); }
static void dsFaultShutdown(void *p){ dsOrigMem.xShutdown(p); }

/* Wrap SQLite's allocator; must run before anything initialises SQLite. */
static int dsFaultInstall(void){
  static sqlite3_mem_methods wrap = {
    dsFaultMalloc, dsFaultFree, dsFaultRealloc, dsFaultSize,
    dsFaultRoundup, dsFaultInit, dsFaultShutdown, 0
  };
  int rc = sqlite3_config(SQLITE_CONFIG_GETMALLOC, &dsOrigMem);
  if( rc==SQLITE_OK ){
    wrap.pAppData = dsOrigMem.pAppData;
    rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &wrap);
  }
  return rc;
}

static int dsIntArg(Tcl_Interp *interp, Tcl_Obj *pObj, int *pN){
  return Tcl_GetIntFromObj(interp, pObj, pN);
}

/* The arguments "N ?PERSIST?" of a fault command: non-zero on an error,
** left in interp. */
static int dsFaultArgs(Tcl_Interp *interp, int objc, Tcl_Obj *const *objv,
                       int *pN, int *pbPersist){
  *pbPersist = 0;
  if( objc!=2 && objc!=3 ){
    Tcl_WrongNumArgs(interp, 1, objv, "N ?PERSIST?");
    return TCL_ERROR;
  }
  if( dsIntArg(interp, objv[1], pN) ) return TCL_ERROR;
  if( objc==3 && Tcl_GetBooleanFromObj(interp, objv[2], pbPersist) ){
    return TCL_ERROR;
  }
  return TCL_OK;
}

static int dsFaultMallocCmd(void *pUnused, Tcl_Interp *interp, int objc,
                            Tcl_Obj *const *objv){
  int n, bPersist, nPrev;
  (void)pUnused;
  if( dsFaultArgs(interp, objc, objv, &n, &bPersist) ) return TCL_ERROR;
  /* Off first, so that no allocation sees a half-made setting. */
  atomic_store(&dsFaultCountdown, 0);
  atomic_store(&dsFaultFailing, 0);
  nPrev = atomic_exchange(&dsFaultFailed, 0);
  atomic_store(&dsFaultPersist, bPersist);
  dsFaultBacktrace = getenv("DS_FAULT_BACKTRACE")!=0
                  && strcmp(getenv("DS_FAULT_BACKTRACE"), "1")==0;
  if( n>0 ) atomic_store(&dsFaultCountdown, n);
  Tcl_SetObjResult(interp, Tcl_NewIntObj(nPrev));
  return TCL_OK;
}

static int dsFaultCountCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  (void)pUnused;
  if( objc!=1 ){
    Tcl_WrongNumArgs(interp, 1, objv, "");
    return TCL_ERROR;
  }
  Tcl_SetObjResult(interp, Tcl_NewIntObj(atomic_load(&dsFaultFailed)));
  return TCL_OK;
}

static int dsMemoryUsedCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  (void)pUnused;
  if( objc!=1 ){
    Tcl_WrongNumArgs(interp, 1, objv, "");
    return TCL_ERROR;
  }
  Tcl_SetObjResult(interp, Tcl_NewWideIntObj(sqlite3_memory_used()));
  return TCL_OK;
}

/*************************************************************************
** Disk faults.
*/
static struct rlimit dsFsizeOrig;         /* RLIMIT_FSIZE at start-up */

static int dsFsizeLimitCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  struct rlimit lim = dsFsizeOrig;
  Tcl_WideInt n;
  (void)pUnused;
  if( objc!=2 ){
    Tcl_WrongNumArgs(interp, 1, objv, "BYTES|none");
    return TCL_ERROR;
  }
  if( strcmp(Tcl_GetString(objv[1]), "none")!=0 ){
    if( Tcl_GetWideIntFromObj(interp, objv[1], &n) ) return TCL_ERROR;
    if( n<0 ){
      Tcl_SetResult(interp, "ds_fsize_limit: BYTES must not be negative",
                    TCL_STATIC);
      return TCL_ERROR;
    }
    lim.rlim_cur = (rlim_t)n;
  }
  /* Past the limit a write would raise SIGXFSZ and end the process;
  ** ignored, the write fails with EFBIG instead. */
  signal(SIGXFSZ, SIG_IGN);
  if( setrlimit(RLIMIT_FSIZE, &lim)!=0 ){
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("ds_fsize_limit: setrlimit: %s",
                                           strerror(errno)));
    return TCL_ERROR;
  }
  return TCL_OK;
}

static int dsSetEuidCmd(void *pUnused, Tcl_Interp *interp, int objc,
                        Tcl_Obj *const *objv){
  int uid;
  uid_t old = geteuid();
  (void)pUnused;
  if( objc!=2 ){
    Tcl_WrongNumArgs(interp, 1, objv, "UID");
    return TCL_ERROR;
  }
  if( dsIntArg(interp, objv[1], &uid) ) return TCL_ERROR;
  if( seteuid((uid_t)uid)!=0 ){
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("ds_seteuid: %s", strerror(errno)));
    return TCL_ERROR;
  }
  Tcl_SetObjResult(interp, Tcl_NewIntObj((int)old));
  return TCL_OK;
}

/* read or write: 0 or 1. */
static int dsSpillOpArg(Tcl_Interp *interp, Tcl_Obj *pObj, int *pbWrite){
  static const char *const azOp[] = { "read", "write", 0 };
  return Tcl_GetIndexFromObj(interp, pObj, azOp, "operation", 0, pbWrite);
}

static int dsSpillFaultCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  /* The order of ext/spill.c's DS_SPILL_FAULT_* values, from 1. */
  static const char *const azKind[] = { "short", "eof", "eio", "enospc", 0 };
  int bWrite, n, eKind;
  (void)pUnused;
  if( objc!=4 ){
    Tcl_WrongNumArgs(interp, 1, objv, "read|write N KIND");
    return TCL_ERROR;
  }
  if( dsSpillOpArg(interp, objv[1], &bWrite)
   || dsIntArg(interp, objv[2], &n)
   || Tcl_GetIndexFromObj(interp, objv[3], azKind, "kind", 0, &eKind) ){
    return TCL_ERROR;
  }
  dsSpillTestFault(bWrite, n, eKind + 1);
  return TCL_OK;
}

static int dsSpillCallsCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  int bWrite, nCall, nFault;
  Tcl_Obj *pRes;
  (void)pUnused;
  if( objc!=2 ){
    Tcl_WrongNumArgs(interp, 1, objv, "read|write");
    return TCL_ERROR;
  }
  if( dsSpillOpArg(interp, objv[1], &bWrite) ) return TCL_ERROR;
  dsSpillTestCalls(bWrite, &nCall, &nFault);
  pRes = Tcl_NewListObj(0, 0);
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nCall));
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nFault));
  Tcl_SetObjResult(interp, pRes);
  return TCL_OK;
}

static int dsSpillFilesCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  int nNew, nOpen;
  Tcl_Obj *pRes;
  (void)pUnused;
  if( objc!=1 ){
    Tcl_WrongNumArgs(interp, 1, objv, "");
    return TCL_ERROR;
  }
  dsSpillTestFiles(&nNew, &nOpen);
  pRes = Tcl_NewListObj(0, 0);
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nNew));
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nOpen));
  Tcl_SetObjResult(interp, pRes);
  return TCL_OK;
}

static int dsSplitHelpersCmd(void *pUnused, Tcl_Interp *interp, int objc,
                             Tcl_Obj *const *objv){
  int nFull, nShort, nAllow = -2;
  Tcl_Obj *pRes;
  (void)pUnused;
  if( objc>2 ){
    Tcl_WrongNumArgs(interp, 1, objv, "?MAX?");
    return TCL_ERROR;
  }
  if( objc==2 && Tcl_GetIntFromObj(interp, objv[1], &nAllow) ){
    return TCL_ERROR;
  }
  if( objc==2 && nAllow<-1 ){
    Tcl_SetObjResult(interp, Tcl_NewStringObj("MAX must be -1 or more", -1));
    return TCL_ERROR;
  }
  dsSplitTest(nAllow, &nFull, &nShort);
  pRes = Tcl_NewListObj(0, 0);
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nFull));
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nShort));
  Tcl_SetObjResult(interp, pRes);
  return TCL_OK;
}

/* The optional NOTHREAD argument of the commands below: -1 if absent. */
static int dsNoThreadArg(Tcl_Interp *interp, int objc, Tcl_Obj *const *objv,
                         int *pbNoThread){
  *pbNoThread = -1;
  if( objc>2 ){
    Tcl_WrongNumArgs(interp, 1, objv, "?NOTHREAD?");
    return TCL_ERROR;
  }
  if( objc==2 && Tcl_GetBooleanFromObj(interp, objv[1], pbNoThread) ){
    return TCL_ERROR;
  }
  return TCL_OK;
}

static int dsCountAheadCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  int nCounted, bNoThread;
  (void)pUnused;
  if( dsNoThreadArg(interp, objc, objv, &bNoThread) ) return TCL_ERROR;
  dsRangeCountTest(bNoThread, &nCounted);
  Tcl_SetObjResult(interp, Tcl_NewIntObj(nCounted));
  return TCL_OK;
}

static int dsStageAheadCmd(void *pUnused, Tcl_Interp *interp, int objc,
                           Tcl_Obj *const *objv){
  int nWorker, nCaller, bNoThread;
  Tcl_Obj *pRes;
  (void)pUnused;
  if( dsNoThreadArg(interp, objc, objv, &bNoThread) ) return TCL_ERROR;
  dsStageAheadTest(bNoThread, &nWorker, &nCaller);
  pRes = Tcl_NewListObj(0, 0);
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nWorker));
  Tcl_ListObjAppendElement(interp, pRes, Tcl_NewIntObj(nCaller));
  Tcl_SetObjResult(interp, pRes);
  return TCL_OK;
}

/*************************************************************************
** Threads that cannot be started.
*/
static int dsThreadFaultCmd(void *pUnused, Tcl_Interp *interp, int objc,
                            Tcl_Obj *const *objv){
  int n, bPersist;
  (void)pUnused;
  if( dsFaultArgs(interp, objc, objv, &n, &bPersist) ) return TCL_ERROR;
  Tcl_SetObjResult(interp, Tcl_NewIntObj(dsRangeTestFault(n, bPersist)));
  return TCL_OK;
}

static int dsThreadingModeCmd(void *pUnused, Tcl_Interp *interp, int objc,
                              Tcl_Obj *const objv[]){
  static const char *const azMode[] = {
    "singlethread", "multithread", "serialized", 0
  };
  static const int aeMode[] = {
    SQLITE_CONFIG_SINGLETHREAD, SQLITE_CONFIG_MULTITHREAD,
    SQLITE_CONFIG_SERIALIZED
  };
  int iMode, rc;
  (void)pUnused;
  if( objc!=2 ){
    Tcl_WrongNumArgs(interp, 1, objv, "singlethread|multithread|serialized");
    return TCL_ERROR;
  }
  if( Tcl_GetIndexFromObj(interp, objv[1], azMode, "mode", 0, &iMode) ){
    return TCL_ERROR;
  }
  rc = sqlite3_shutdown();
  if( rc==SQLITE_OK ) rc = sqlite3_config(aeMode[iMode]);
  if( rc==SQLITE_OK ) rc = sqlite3_initialize();
  if( rc==SQLITE_OK ){
    rc = sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init);
  }
  if( rc!=SQLITE_OK ){
    Tcl_SetObjResult(interp, Tcl_NewStringObj(sqlite3_errstr(rc), -1));
    return TCL_ERROR;
  }
  return TCL_OK;
}

static int dsAppInit(Tcl_Interp *interp){
  static const struct {
    const char *zName;
    Tcl_ObjCmdProc *xProc;
  } aCmd[] = {
    { "ds_fault_malloc", dsFaultMallocCmd },
    { "ds_fault_count",  dsFaultCountCmd },
    { "ds_memory_used",  dsMemoryUsedCmd },
    { "ds_fsize_limit",  dsFsizeLimitCmd },
    { "ds_seteuid",      dsSetEuidCmd },
    { "ds_spill_fault",  dsSpillFaultCmd },
    { "ds_spill_calls",  dsSpillCallsCmd },
    { "ds_spill_files",  dsSpillFilesCmd },
    { "ds_count_ahead",        dsCountAheadCmd },
    { "ds_stage_ahead",        dsStageAheadCmd },
    { "ds_split_helpers",      dsSplitHelpersCmd },
    { "ds_thread_fault", dsThreadFaultCmd },
    { "ds_threading_mode", dsThreadingModeCmd },
  };
  size_t i;
  if( Tcl_Init(interp)!=TCL_OK ) return TCL_ERROR;
  for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++){
    Tcl_CreateObjCommand(interp, aCmd[i].zName, aCmd[i].xProc, 0, 0);
  }
  return TCL_OK;
}

int main(int argc, char **argv){
  /* sqlite3_auto_extension() initialises SQLite: the wrapper goes first. */
  if( dsFaultInstall()!=SQLITE_OK ){
    fprintf(stderr, "testfixture: cannot install the allocator wrapper\n");
    return 1;
  }
  getrlimit(RLIMIT_FSIZE, &dsFsizeOrig);
  sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init);
  Tcl_Main(argc, argv, dsAppInit);
  return 0;
}
