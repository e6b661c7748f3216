/*
** testfixture.c: a tclsh with the dataset extension linked in.
**
** Built from the same sources as the shared library, with -DSQLITE_CORE,
** so the extension calls libsqlite3 directly and registers itself on every
** new connection through sqlite3_auto_extension().  Tcl's sqlite3 package
** (libsqlite3-tcl) uses the same libsqlite3, so the test suite runs
** unchanged under it: this is the program the sanitizers and the
** fault-injection tests run, with no dlopen() in the way.
*/
#include <tcl.h>
#include <sqlite3.h>
#include "dataset.h"

static int dsAppInit(Tcl_Interp *interp){
  return Tcl_Init(interp);
}

int main(int argc, char **argv){
  sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init);
  Tcl_Main(argc, argv, dsAppInit);
  return 0;
}
