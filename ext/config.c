/*
** config.c: ds_config(), the settings of one connection.
**
**   ds_config(name)          the current value
**   ds_config(name, value)   set it; returns the new value
**   ds_config()              every setting, as one JSON object
**
** Settings (per connection, never shared):
**
**   memory_limit   bytes all operators of the connection may hold before
**                  they spill: an integer, or text such as '64MB', '1GB',
**                  '512K' (K, M, G, T are powers of 1024, with or without
**                  B or iB).  Read back as an integer.  Default 256 MiB.
**   temp_dir       directory for spill files.  Default: $TMPDIR, else the
**                  first writable of $SQLITE_TMPDIR, /var/tmp, /usr/tmp,
**                  /tmp, as SQLite chooses.  '' or NULL restores it.
**   threads        threads an operator may use, the calling thread
**                  included, 1 to 64.  Default: the online CPUs, at most
**                  8 (DS_DEFAULT_THREADS below); 1 starts no thread.
**   parallel_min_rows  a table input is read in rowid ranges on extra
**                  connections (rangeread.c) only if it has at least this
**                  many rows by the quick estimate; 0 to 2^63-1, default
**                  16384.  0 lets every eligible table be read so (tests).
**   strict_hints   1 refuses the hint and join type pairs Flink refuses.
**   progress       1 draws a progress line on standard error, when it is
**                  a terminal, for an operator running past about 2 s
**                  (progress.c).  Default 0: a library writes nothing.
*/
#include "dataset_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DS_DEFAULT_MEMORY_LIMIT (256 * (i64)1024 * 1024)
#define DS_MAX_MEMORY_LIMIT ((i64)1 << 62)
#define DS_MAX_THREADS 64
#define DS_DEFAULT_PARALLEL_MIN_ROWS 16384

/*
** The default of threads.  Unless the build fixes it (-DDS_DEFAULT_THREADS=N,
** 1 for a host that wants no threads started by the extension unless a
** connection asks with ds_config('threads', N)), it is the number of CPUs
** online as the connection loads the extension, at most
** DS_DEFAULT_THREADS_MAX: more rarely pays for one statement, and a
** server's connections would each take every core of a large machine.
*/
#define DS_DEFAULT_THREADS_MAX 8
#ifdef DS_DEFAULT_THREADS
# if DS_DEFAULT_THREADS<1 || DS_DEFAULT_THREADS>DS_MAX_THREADS
#  error "DS_DEFAULT_THREADS must be from 1 to 64"
# endif
#endif

static int dsIsWritableDir(const char *z){
  struct stat st;
  return z && z[0] && stat(z, &st)==0 && S_ISDIR(st.st_mode)
      && access(z, W_OK | X_OK)==0;
}

/* The directory spill files go to. */
const char *dsTempDir(DsConn *pConn){
  static const char *const azDir[] = { "/var/tmp", "/usr/tmp", "/tmp" };
  const char *z;
  size_t i;
  if( pConn->zTempDir ) return pConn->zTempDir;
  z = getenv("TMPDIR");
  if( dsIsWritableDir(z) ) return z;
  z = getenv("SQLITE_TMPDIR");
  if( dsIsWritableDir(z) ) return z;
  for(i=0; i<sizeof(azDir)/sizeof(azDir[0]); i++){
    if( dsIsWritableDir(azDir[i]) ) return azDir[i];
  }
  return ".";
}

/*
** Parse a size: digits, optional blanks, optional K/M/G/T with optional
** B or iB, any case.  -1 if z is not such a size or it is larger than
** DS_MAX_MEMORY_LIMIT bytes.
*/
static i64 dsParseSize(const char *z){
  i64 n = 0;
  int nShift = 0;
  while( isspace((unsigned char)*z) ) z++;
  if( !isdigit((unsigned char)*z) ) return -1;
  while( isdigit((unsigned char)*z) ){
    int d = *z++ - '0';
    /* No unit makes a number above the maximum smaller: refuse it as soon
    ** as n*10 + d would pass it, which is also before it could overflow. */
    if( n > (DS_MAX_MEMORY_LIMIT - d) / 10 ) return -1;
    n = n*10 + d;
  }
  while( isspace((unsigned char)*z) ) z++;
  switch( *z ){
    case 'k': case 'K': nShift = 10; z++; break;
    case 'm': case 'M': nShift = 20; z++; break;
    case 'g': case 'G': nShift = 30; z++; break;
    case 't': case 'T': nShift = 40; z++; break;
  }
  if( nShift && (*z=='i' || *z=='I') && (z[1]=='b' || z[1]=='B') ){
    z += 2;
  }else if( *z=='b' || *z=='B' ){
    z++;
  }
  while( isspace((unsigned char)*z) ) z++;
  if( *z ) return -1;
  if( n > (DS_MAX_MEMORY_LIMIT >> nShift) ) return -1;
  return n << nShift;
}

/* The default of threads (see DS_DEFAULT_THREADS). */
static int dsDefaultThreads(void){
#ifdef DS_DEFAULT_THREADS
  return DS_DEFAULT_THREADS;
#else
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if( n<1 ) return 1;          /* unknown: -1 */
  return n>DS_DEFAULT_THREADS_MAX ? DS_DEFAULT_THREADS_MAX : (int)n;
#endif
}

/* A non-negative integer argument, given as an integer or as integer
** text of at most 2^63-1; or -1. */
static i64 dsIntArg(sqlite3_value *pVal){
  if( sqlite3_value_type(pVal)==SQLITE_INTEGER ){
    return sqlite3_value_int64(pVal);
  }
  if( sqlite3_value_type(pVal)==SQLITE_TEXT ){
    const char *z = (const char *)sqlite3_value_text(pVal);
    i64 n = 0;
    if( !isdigit((unsigned char)z[0]) ) return -1;
    while( isdigit((unsigned char)*z) ){
      int d = *z++ - '0';
      if( n > (INT64_MAX - d) / 10 ) return -1;   /* would overflow */
      n = n*10 + d;
    }
    return *z ? -1 : n;
  }
  return -1;
}

/* 'text' or NULL: how a bad value is shown in a message. */
static char *dsShowValue(sqlite3_value *pVal){
  if( sqlite3_value_type(pVal)==SQLITE_NULL ) return sqlite3_mprintf("NULL");
  return sqlite3_mprintf("'%s'", (const char *)sqlite3_value_text(pVal));
}

static void dsConfigError(sqlite3_context *ctx, const char *zWhat,
                          sqlite3_value *pVal){
  char *zVal = dsShowValue(pVal);
  char *zMsg = zVal ? sqlite3_mprintf("ds_config: %s, not %s", zWhat, zVal)
                    : 0;
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
  }else{
    dsResultNoMem(ctx, "ds_config");
  }
  sqlite3_free(zVal);
  sqlite3_free(zMsg);
}

static int dsSetMemoryLimit(sqlite3_context *ctx, DsConn *pConn,
                            sqlite3_value *pVal){
  i64 n = -1;
  if( sqlite3_value_type(pVal)==SQLITE_INTEGER ){
    n = sqlite3_value_int64(pVal);
  }else if( sqlite3_value_type(pVal)==SQLITE_TEXT ){
    n = dsParseSize((const char *)sqlite3_value_text(pVal));
  }
  if( n<=0 || n>DS_MAX_MEMORY_LIMIT ){
    dsConfigError(ctx, "memory_limit must be a whole number of bytes from 1 "
                  "to 2^62, or text like '64MB' or '1GB' (K, M, G, T are "
                  "powers of 1024)", pVal);
    return SQLITE_ERROR;
  }
  pConn->nMemLimit = n;
  return SQLITE_OK;
}

static int dsSetTempDir(sqlite3_context *ctx, DsConn *pConn,
                        sqlite3_value *pVal){
  const char *z = (const char *)sqlite3_value_text(pVal);
  char *zNew = 0;
  if( sqlite3_value_type(pVal)!=SQLITE_NULL
   && sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    dsConfigError(ctx, "temp_dir must be a directory name", pVal);
    return SQLITE_ERROR;
  }
  if( z && z[0] ){
    char *zMsg = 0;
    int bBad = 0;
    if( !dsIsWritableDir(z) ){
      bBad = 1;
      zMsg = sqlite3_mprintf(
          "ds_config: temp_dir '%s' is not a writable directory", z);
    }else{
      /* Permission bits do not prove that a file can be made there (/proc
      ** passes access() as root): make one and remove it, now, so that
      ** the cause is seen here and not at the first spill. */
      char *zPath = sqlite3_mprintf("%s/ds_probe_XXXXXX", z);
      int fd;
      if( zPath==0 ){
        sqlite3_result_error_nomem(ctx);
        return SQLITE_NOMEM;
      }
      fd = mkstemp(zPath);
      if( fd<0 ){
        bBad = 1;
        zMsg = sqlite3_mprintf("ds_config: temp_dir '%s' cannot hold a "
            "file: %s", z, strerror(errno));
      }else{
        close(fd);
        unlink(zPath);
      }
      sqlite3_free(zPath);
    }
    if( bBad ){
      sqlite3_result_error(ctx, zMsg ? zMsg : "out of memory", -1);
      sqlite3_free(zMsg);
      return SQLITE_ERROR;
    }
    zNew = sqlite3_mprintf("%s", z);
    if( zNew==0 ){
      dsResultNoMem(ctx, "ds_config");
      return SQLITE_NOMEM;
    }
  }
  sqlite3_free(pConn->zTempDir);
  pConn->zTempDir = zNew;
  return SQLITE_OK;
}

static int dsSetThreads(sqlite3_context *ctx, DsConn *pConn,
                        sqlite3_value *pVal){
  i64 n = dsIntArg(pVal);
  if( n<1 || n>DS_MAX_THREADS ){
    dsConfigError(ctx, "threads must be an integer from 1 to 64", pVal);
    return SQLITE_ERROR;
  }
  pConn->nThread = (int)n;
  return SQLITE_OK;
}

static int dsSetParallelMinRows(sqlite3_context *ctx, DsConn *pConn,
                                sqlite3_value *pVal){
  i64 n = dsIntArg(pVal);
  if( n<0 ){
    dsConfigError(ctx, "parallel_min_rows must be an integer from 0 to "
                  "9223372036854775807", pVal);
    return SQLITE_ERROR;
  }
  pConn->nParallelMinRows = n;
  return SQLITE_OK;
}

static int dsSetStrictHints(sqlite3_context *ctx, DsConn *pConn,
                            sqlite3_value *pVal){
  i64 n = dsIntArg(pVal);
  if( n!=0 && n!=1 ){
    dsConfigError(ctx, "strict_hints must be 0 or 1", pVal);
    return SQLITE_ERROR;
  }
  pConn->bStrictHints = (int)n;
  return SQLITE_OK;
}

static int dsSetProgress(sqlite3_context *ctx, DsConn *pConn,
                         sqlite3_value *pVal){
  i64 n = dsIntArg(pVal);
  if( n!=0 && n!=1 ){
    dsConfigError(ctx, "progress must be 0 or 1", pVal);
    return SQLITE_ERROR;
  }
  /* The delay is read from the environment as the setting is turned on
  ** (DS_PROGRESS_DELAY_MS, for tests), never while an operator runs. */
  if( n ) pConn->msProgressDelay = dsProgressDelayMs();
  pConn->bProgress = (int)n;
  return SQLITE_OK;
}

/* Return the value of setting i. */
static void dsConfigResult(sqlite3_context *ctx, DsConn *pConn, int i){
  switch( i ){
    case 0: sqlite3_result_int64(ctx, pConn->nMemLimit); break;
    case 1: {
      const char *zDir = dsTempDir(pConn);
      dsResultText(ctx, "ds_config", "temp_dir", zDir, (i64)strlen(zDir), 0);
      break;
    }
    case 2: sqlite3_result_int(ctx, pConn->nThread); break;
    case 3: sqlite3_result_int64(ctx, pConn->nParallelMinRows); break;
    case 4: sqlite3_result_int(ctx, pConn->bStrictHints); break;
    default: sqlite3_result_int(ctx, pConn->bProgress); break;
  }
}

static const struct DsSetting {
  const char *zName;
  int (*xSet)(sqlite3_context *, DsConn *, sqlite3_value *);
} aSetting[] = {
  { "memory_limit", dsSetMemoryLimit },
  { "temp_dir",     dsSetTempDir },
  { "threads",      dsSetThreads },
  { "parallel_min_rows", dsSetParallelMinRows },
  { "strict_hints", dsSetStrictHints },
  { "progress",     dsSetProgress },
};
#define DS_N_SETTING ((int)(sizeof(aSetting)/sizeof(aSetting[0])))

static void dsConfigAll(sqlite3_context *ctx, DsConn *pConn){
  const char *zDir = dsTempDir(pConn);
  DsText out;
  dsTextInit(&out);
  dsTextAppendf(&out, "{\"memory_limit\":%lld,\"temp_dir\":",
                pConn->nMemLimit);
  dsJsonString(&out, zDir, (int)strlen(zDir));
  dsTextAppendf(&out, ",\"threads\":%d,\"parallel_min_rows\":%lld,"
                "\"strict_hints\":%d,\"progress\":%d}",
                pConn->nThread, pConn->nParallelMinRows, pConn->bStrictHints,
                pConn->bProgress);
  dsTextResult(ctx, &out, 1, "ds_config", "the JSON object of the settings");
  dsTextFree(&out);
}

/*
** Is the name not text, or the value a blob?  Then the error is set and 1
** returned.  Every setting's value is text or a number; each setting
** checks which it takes.
*/
static int dsConfigRefuseType(sqlite3_context *ctx, sqlite3_value *pName,
                              sqlite3_value *pVal){
  char *zMsg = 0;
  if( sqlite3_value_type(pName)!=SQLITE_TEXT ){
    zMsg = sqlite3_mprintf("ds_config: the name of a setting must be text "
        "(memory_limit, temp_dir, threads, parallel_min_rows, strict_hints, "
        "progress), "
        "not %s",
        dsTypeNoun(pName));
  }else if( pVal && sqlite3_value_type(pVal)==SQLITE_BLOB ){
    zMsg = sqlite3_mprintf("ds_config: the value of a setting must be text, "
        "a number or NULL, not a blob");
  }else{
    return 0;
  }
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
    sqlite3_free(zMsg);
  }else{
    dsResultNoMem(ctx, "ds_config");
  }
  return 1;
}

static void dsConfigFunc(sqlite3_context *ctx, int argc,
                         sqlite3_value **argv){
  DsConn *pConn = (DsConn *)sqlite3_user_data(ctx);
  const char *zName;
  int i;
  if( argc==0 ){
    dsConfigAll(ctx, pConn);
    return;
  }
  /* The types first: reading a blob as text (as the NUL check does) makes
  ** SQLite report it as text afterwards. */
  if( dsConfigRefuseType(ctx, argv[0], argc==2 ? argv[1] : 0) ) return;
  for(i=0; i<argc; i++){
    char *zMsg = 0;
    if( dsArgRefuseNul("ds_config", i ? "the value" : "the name", argv[i],
                       &zMsg) ){
      if( zMsg ){
        sqlite3_result_error(ctx, zMsg, -1);
        sqlite3_free(zMsg);
      }else{
        dsResultNoMem(ctx, "ds_config");
      }
      return;
    }
  }
  zName = (const char *)sqlite3_value_text(argv[0]);
  for(i=0; zName && i<DS_N_SETTING; i++){
    if( sqlite3_stricmp(zName, aSetting[i].zName)==0 ) break;
  }
  if( zName==0 || i==DS_N_SETTING ){
    char *zMsg = sqlite3_mprintf("ds_config: unknown setting '%s'; settings: "
        "memory_limit, temp_dir, threads, parallel_min_rows, strict_hints, "
        "progress",
        zName ? zName : "NULL");
    sqlite3_result_error(ctx, zMsg ? zMsg : "out of memory", -1);
    sqlite3_free(zMsg);
    return;
  }
  if( argc==2 && aSetting[i].xSet(ctx, pConn, argv[1])!=SQLITE_OK ) return;
  dsConfigResult(ctx, pConn, i);
}

int dsRegisterConfig(sqlite3 *db, DsConn *pConn){
  int rc = SQLITE_OK;
  int nArg;
  pConn->nMemLimit = DS_DEFAULT_MEMORY_LIMIT;
  pConn->nThread = dsDefaultThreads();
  pConn->nParallelMinRows = DS_DEFAULT_PARALLEL_MIN_ROWS;
  pConn->bStrictHints = 0;
  pConn->bProgress = 0;
  pConn->msProgressDelay = 2000;
  for(nArg=0; nArg<=2 && rc==SQLITE_OK; nArg++){
    rc = sqlite3_create_function(db, "ds_config", nArg,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY | SQLITE_RESULT_SUBTYPE,
                                 pConn,
                                 dsConfigFunc, 0, 0);
  }
  return rc;
}
