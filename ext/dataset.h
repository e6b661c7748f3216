/*
** dataset.h: the public interface of the `dataset` SQLite extension, for
** programs that link its sources in rather than load the shared library:
**
**     #include "dataset.h"
**     sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init);
**
** after which every new connection has the extension's functions and
** modules.  Programs that load build/dataset.so need no header.
*/
#ifndef DATASET_H
#define DATASET_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

int sqlite3_dataset_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif

#endif /* DATASET_H */
