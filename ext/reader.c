/*
** reader.c: reading the rows of an input, and finding out its size.
**
** A reader reads
**
**     WITH "ds:input"(c0, c1, ...) AS (<body>) SELECT cK1, ..., cP1, ...
**
** (under another name, ds:input:2 and so on, when the body holds the text
** ds:input: a table of that name would otherwise mean the CTE itself)
**
** naming exactly the columns an operator needs, key columns first: the
** CTE's column list renames the input's columns by position, so inputs
** whose result repeats a name (a query's `a.id, b.id`) are read correctly,
** and SQLite's flattener reduces this to reading just those columns.  The
** rows come out in batches, through a function in a WHERE clause around
** that query (see "Readers" below), not one sqlite3_step() per row;
** except for a reader of more columns than a function takes arguments,
** which steps its query row by row (the wide path).
**
** The size of an input (dsInputEstimateRows, dsInputQuickRows,
** dsInputSpanRows, dsInputSampleRowBytes, dsInputStat1Count) is found
** here too: from sqlite_stat1, SQLite's count of a table, the span of
** its rowids, or a count that reads the input through the reader's own
** SQL.
*/
#include "dataset_int.h"

#include <ctype.h>
#include <stdlib.h>

/*************************************************************************
** Readers: DsSource over an input's SELECT.
**
** Stepping a statement once per row and fetching each value with
** sqlite3_column_value() costs more than everything else a join does with
** the row: each step and each column fetch takes the connection's mutex,
** and a step is a full trip into the VDBE and back.  So the reader's SQL
** hands rows over in batches instead:
**
**     SELECT 0 FROM (
**     WITH "ds:input"(c0, c1, ...) AS (
**     <body>
**     ) SELECT cK1 AS x0, ..., cP1 AS xN FROM "ds:input" LIMIT -1
**     ) WHERE ds_input_row(?1, x0, ..., xN)
**
** ds_input_row() gets the values of one row as its arguments, makes them
** into a DsRow in the arena of the batch being read, and returns true
** only when the batch is full: the WHERE clause then lets one row through
** and sqlite3_step() returns, once per batch rather than once per row.
** ?1 is the reader itself, bound with sqlite3_bind_pointer() (SQL text
** cannot forge such a pointer, so the function is useless outside a
** reader).  The LIMIT -1, which limits nothing, keeps SQLite from
** flattening the inner query into the outer one or pushing the WHERE
** term down into it (SQLite does neither with a LIMIT): ds_input_row()
** then sees each row of the input exactly once, whatever the body is (a
** DISTINCT view, a GROUP BY, a join with a WHERE of its own), while the
** inner query is still flattened as before, so only the columns needed
** are read.  A row filter (dsSourceBatch) lets the function skip rows
** that cannot match without making them.
**
** Keys first.  SQLite evaluates every argument of ds_input_row() before
** the call, so a row the filter turns away has still had all its columns
** decoded.  When most rows of an input are turned away (the probe side of
** a selective join), its plain scan is read instead with
**
**     ... WHERE ds_input_key(?1, k0, ..., kK) AND ds_input_row(?1, ...)
**
** ds_input_key() tests the key alone, and SQLite decodes the other
** columns only of the rows it lets through.  For a row that goes on to
** ds_input_row() that costs a second call and a second decode of the key,
** so the form is taken only when a sample of the input's first keys shows
** that the filter turns away more than half of them (dsReaderKeysFirst).
**
** A function takes at most SQLITE_LIMIT_FUNCTION_ARG arguments (127 in
** Debian's SQLite, fewer if the application lowers the limit at run
** time), while an input may have SQLITE_MAX_COLUMN (2000).  A reader of more
** columns than ds_input_row() could take reads a plain
**
**     WITH "ds:input"(c0, c1, ...) AS (
**     <body>
**     ) SELECT cK1, ..., cPN FROM "ds:input"
**
** instead, one sqlite3_step() per row, and makes each row from the
** statement's sqlite3_column_value()s with the same dsRowFromValues().
** That wide path is slower per row (a step, and a column fetch per
** value, rather than one call of the function), which matters little
** beside the hundred values and more each of its rows carries; narrow
** inputs take it only where the application lowered the limit.  The
** choice is made once per reader, so ds_input_row() does no more work.
*/
typedef struct DsReader DsReader;
struct DsReader {
  DsSource base;
  DsConn *pConn;
  sqlite3_stmt *pStmt;
  int nCol;               /* columns per row */
  int nKeyCol;            /* of which keys */
  const char *zFunc;
  DsValue *aVal;          /* scratch for one row's values */
  sqlite3_value **apCol;  /* the wide path's row, as the statement has it */
  int *aiRowCol;          /* value i of its row: the statement's column */
  int bEof;               /* the statement has run to its end */
  int bNoMem;             /* ds_input_row() or ds_input_key() ran out of
                          ** memory of the extension's own */
  /* The batch being read, while sqlite3_step() runs. */
  DsArena *pArena;        /* rows go here */
  DsRow **aOut;           /* and are listed here */
  int nOut;               /* rows listed */
  int nMax;               /* the batch is full at this many rows */
  i64 nMaxByte;           /* or when pArena holds this many bytes */
  DsRowFilter *pFilter;   /* rows that cannot match are skipped, or NULL */
  /* Keys first: ds_input_key() applies the batch's filter instead. */
  int bKeysFirst;         /* pStmt reads keys first */
  DsRowFilter *pKeyFilter;  /* the batch's filter, for ds_input_key() */
  char *zKeysFirst;       /* the SQL that would, or NULL: not a plain scan */
  char *zKeySample;       /* the SQL of a sample of the input's keys */
  i64 *aRowAt;            /* or NULL: aRowAt[i] gets base.nRow as row i of
                          ** a batch is made (dsReaderCountRows) */
  DsStageAhead *pAhead;   /* batches staged on a worker, or NULL */
  const DsRowStage *pStage;  /* what the worker runs on them */
};

#define DS_READER_PTR "ds_reader"

/* Keys in the sample that decides whether a reader reads keys first. */
#define DS_KEY_SAMPLE 4096

/* The reader of a call of ds_input_row() or ds_input_key(): kept as the
** auxiliary data of argument 0, a bound parameter that stays the same for
** the whole run of the statement, which is cheaper than finding the
** pointer (a string compare) on every row. */
static inline DsReader *dsReaderOfCall(sqlite3_context *ctx,
                                       sqlite3_value **argv){
  DsReader *p = (DsReader *)sqlite3_get_auxdata(ctx, 0);
  if( p==0 ){
    p = (DsReader *)sqlite3_value_pointer(argv[0], DS_READER_PTR);
    if( p ) sqlite3_set_auxdata(ctx, 0, p, 0);
  }
  return p;
}

/* The error of ds_input_row() or ds_input_key() (zName) called other
** than by a reader. */
static void dsReaderMisuse(sqlite3_context *ctx, const char *zName){
  char *zErr = sqlite3_mprintf("%s() is the dataset extension's own: it "
                               "reads inputs", zName);
  if( zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_free(zErr);
  }
}

/*
** ds_input_row() or ds_input_key() of reader p ran out of memory: fail
** the reader's statement with SQLITE_ERROR, not SQLITE_NOMEM, which makes
** SQLite roll back the caller's transaction when a statement ends with it
** (dataset.c); the reader then reports the extension's own out-of-memory
** (dsReaderStopped).
*/
static void dsReaderNoMem(DsReader *p, sqlite3_context *ctx){
  p->bNoMem = 1;
  sqlite3_result_error(ctx, "out of memory", -1);
}

/*
** ds_input_row(READER, value, ...): add one row to the reader's batch;
** true when the batch is full, else NULL.
*/
DS_FLATTEN static void dsReaderRowFunc(sqlite3_context *ctx, int argc,
                                       sqlite3_value **argv){
  DsReader *p = dsReaderOfCall(ctx, argv);
  DsRow *pRow;
  int rc;
  if( p==0 || argc-1!=p->nCol || p->nOut>=p->nMax ){
    dsReaderMisuse(ctx, "ds_input_row");
    return;
  }
  p->base.nRow++;
  rc = dsRowFromValues(p->pArena, argv + 1, p->nCol, p->nKeyCol, p->aVal,
                       p->pFilter, &pRow);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ){
      dsReaderNoMem(p, ctx);
    }else{
      sqlite3_result_error_toobig(ctx);
    }
    return;
  }
  if( pRow ){
    if( p->aRowAt ) p->aRowAt[p->nOut] = p->base.nRow;
    p->aOut[p->nOut++] = pRow;
  }
  /* Without a result the function returns NULL, which the WHERE clause
  ** takes as false: most rows need no call. */
  if( p->nOut>=p->nMax || (p->nOut>0 && dsArenaUsed(p->pArena)>=p->nMaxByte) ){
    sqlite3_result_int(ctx, 1);
  }
}

/*
** ds_input_key(READER, key, ...): in a reader that reads keys first, true
** when the row of this key may find a partner (ds_input_row() then makes
** it), else NULL: the row is dropped before SQLite decodes its other
** columns.  Rows dropped here are counted here; the others by
** ds_input_row().
*/
static void dsReaderKeyFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  DsReader *p = dsReaderOfCall(ctx, argv);
  int bOut = 0;
  if( p==0 || !p->bKeysFirst || argc-1!=p->nKeyCol || p->nOut>=p->nMax ){
    dsReaderMisuse(ctx, "ds_input_key");
    return;
  }
  if( p->pKeyFilter
   && dsKeyValuesFilteredOut(p->pKeyFilter, argv + 1, p->nKeyCol, &bOut) ){
    dsReaderNoMem(p, ctx);
    return;
  }
  if( bOut ){
    p->base.nRow++;
  }else{
    sqlite3_result_int(ctx, 1);
  }
}

int dsRegisterReader(sqlite3 *db){
  int rc = sqlite3_create_function(db, "ds_input_row", -1,
                                   SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                   dsReaderRowFunc, 0, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "ds_input_key", -1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dsReaderKeyFunc, 0, 0);
  }
  return rc;
}

/*
** Inputs being stepped, one inside another.  A view that reads itself
** through a dataset argument (CREATE VIEW v AS SELECT * FROM
** ds_cross('v', 't')) has no end: each step runs the operator again,
** until the stack overflows.  The virtual-table forms see such a cycle
** at their own table; the text arguments cannot, so the depth is bounded
** here instead, far beyond any nesting written on purpose.
**
** Counted per connection (DsConn.nNesting): the steps nested inside one
** another are all of one connection's statements (a reader prepares its
** statement on the operator's connection), run on the thread that runs
** the outermost, whose stack would overflow.  Not per thread: a
** thread-local variable in a library loaded with dlopen() lives in
** dynamic TLS, whose scan makes LeakSanitizer itself crash at exit.
*/
#define DS_MAX_NESTING 64

/* Would one more input step nest too deep (or is the way out failing)?
** Once the bound is reached every level on the way out fails at once,
** counts included, rather than trying again (a count and a read per
** level would be 2^64 tries), until the outermost step returns. */
static int dsNestingTooDeep(DsConn *pConn){
  if( pConn->nNesting>=DS_MAX_NESTING ) pConn->bNestingHit = 1;
  return pConn->bNestingHit;
}

/* sqlite3_step(pStmt) on an input, unless inputs are nested too deep. */
static int dsStepInput(DsConn *pConn, sqlite3_stmt *pStmt){
  int rc;
  if( dsNestingTooDeep(pConn) ) return SQLITE_ERROR;
  pConn->nNesting++;
  rc = sqlite3_step(pStmt);
  pConn->nNesting--;
  if( pConn->nNesting==0 ) pConn->bNestingHit = 0;
  /* SQLite's own error: its code is SQLite's to keep (dataset.c). */
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) dsSqliteError(pConn, rc);
  return rc;
}

/*
** Refuse to step p's statement once inputs are nested too deep: p ends,
** with a message that reaches the query.  SQLITE_OK if it may be stepped.
*/
static int dsReaderRefuseNesting(DsReader *p){
  if( !dsNestingTooDeep(p->pConn) ) return SQLITE_OK;
  p->bEof = 1;
  sqlite3_free(p->base.zErr);
  p->base.zErr = sqlite3_mprintf("%s: datasets are nested more than %d "
      "deep (does a view read itself through a dataset argument?)",
      p->zFunc, DS_MAX_NESTING);
  return p->base.zErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* p's statement stopped with rc, not SQLITE_ROW: the end of the input
** (SQLITE_OK) or an error, whose message p keeps. */
static int dsReaderStopped(DsReader *p, int rc){
  p->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( p->bNoMem ){
    /* ds_input_row() or ds_input_key() ran out of memory of the
    ** extension's own, and failed the statement with SQLITE_ERROR (not
    ** SQLITE_NOMEM, which would make SQLite roll back the transaction):
    ** it is the extension's out-of-memory, not SQLite's, unless SQLite
    ** ran out too (its step says SQLITE_NOMEM then). */
    p->bNoMem = 0;
    if( rc!=SQLITE_NOMEM ) return SQLITE_NOMEM;
  }
  if( rc!=SQLITE_NOMEM ){
    sqlite3_free(p->base.zErr);
    p->base.zErr = sqlite3_mprintf("%s", sqlite3_errmsg(p->pConn->db));
  }
  return rc;
}

/* Up to nMax rows (fewer once pArena holds nMaxByte bytes); *pnRow 0 at
** the end. */
static int dsReaderBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow,
                         int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                         int *pnRow){
  DsReader *p = (DsReader *)pSrc;
  int rc;
  *pnRow = 0;
  if( p->bEof ) return SQLITE_OK;
  p->pArena = pArena;
  p->aOut = aRow;
  p->nOut = 0;
  p->nMax = nMax;
  p->nMaxByte = nMaxByte;
  p->pFilter = p->bKeysFirst ? 0 : pFilter;
  p->pKeyFilter = pFilter;
  rc = dsReaderRefuseNesting(p);
  if( rc!=SQLITE_OK ) return rc;
  rc = dsStepInput(p->pConn, p->pStmt);
  *pnRow = p->nOut;
  if( p->pConn->pProgress ) dsProgressAdvance(p->pConn->pProgress);
  p->pArena = 0;
  p->aOut = 0;
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  rc = dsReaderStopped(p, rc);
  if( rc!=SQLITE_OK ) *pnRow = 0;
  return rc;
}

/*
** The wide path's xBatch: the same batch as dsReaderBatch() gives, made
** one sqlite3_step() per row.  A row too big for a DsRow fails as
** ds_input_row() fails it, with SQLite's "string or blob too big".
*/
static int dsReaderWideBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow,
                             int nMax, i64 nMaxByte, DsRowFilter *pFilter,
                             int *pnRow){
  DsReader *p = (DsReader *)pSrc;
  int n = 0;
  int rc;
  *pnRow = 0;
  if( p->bEof ) return SQLITE_OK;
  while( n<nMax && (n==0 || dsArenaUsed(pArena)<nMaxByte) ){
    DsRow *pRow;
    int i;
    rc = dsReaderRefuseNesting(p);
    if( rc!=SQLITE_OK ) return rc;
    rc = dsStepInput(p->pConn, p->pStmt);
    if( rc!=SQLITE_ROW ){
      rc = dsReaderStopped(p, rc);
      if( rc==SQLITE_OK ) *pnRow = n;   /* the last rows of the input */
      return rc;
    }
    for(i=0; i<p->nCol; i++){
      p->apCol[i] = sqlite3_column_value(p->pStmt, p->aiRowCol[i]);
    }
    p->base.nRow++;
    rc = dsRowFromValues(pArena, p->apCol, p->nCol, p->nKeyCol, p->aVal,
                         pFilter, &pRow);
    if( rc!=SQLITE_OK ){
      p->bEof = 1;
      if( rc==SQLITE_NOMEM ) return rc;
      sqlite3_free(p->base.zErr);
      p->base.zErr = sqlite3_mprintf("%s", sqlite3_errstr(rc));
      return p->base.zErr ? rc : SQLITE_NOMEM;
    }
    if( pRow ){
      if( p->aRowAt ) p->aRowAt[n] = p->base.nRow;
      aRow[n++] = pRow;
    }
  }
  *pnRow = n;
  if( p->pConn->pProgress ) dsProgressAdvance(p->pConn->pProgress);
  return SQLITE_OK;
}

/*
** The xNext of every source whose xBatch does the work: a batch of one
** row.  SQLITE_ROW with *ppRow, SQLITE_DONE at the end, or an error.
*/
int dsSourceNextOfBatch(DsSource *pSrc, DsArena *pArena, DsRow **ppRow){
  int n;
  int rc = pSrc->xBatch(pSrc, pArena, ppRow, 1, 0, 0, &n);
  if( rc!=SQLITE_OK ) return rc;
  return n ? SQLITE_ROW : SQLITE_DONE;
}

static void dsReaderClose(DsSource *pSrc){
  DsReader *p = (DsReader *)pSrc;
  if( p ){
    dsStageAheadFree(p->pAhead);
    sqlite3_finalize(p->pStmt);
    sqlite3_free(p->base.zErr);
    sqlite3_free(p->base.zRead);
    sqlite3_free(p->aVal);
    sqlite3_free(p->zKeysFirst);
    sqlite3_free(p->zKeySample);
    sqlite3_free(p->apCol);
    sqlite3_free(p->aiRowCol);
    sqlite3_free(p);
  }
}

/*************************************************************************
** Staged on a worker.
**
** Only the caller's thread may step the reader's statement, but what an
** operator's stage does with the rows (a hash join's probe: hashing, the
** table's directory, its rows) may run on another (stageahead.c, where the
** caller fills).  The caller reads a batch, passes it to a worker and
** reads the next while the worker stages the one before; it is handed
** the batches in order, with what the stage kept of them.  This is how a
** view, a query, or a table that is not read in rowid ranges is probed
** with threads above 1 (dsReaderStageAhead, from dsReaderOpen).  The
** rows are read through the filter the operator would have read them
** with (the stage's xFilter).  The rows read are counted as they are
** read, up to a few batches ahead of the caller.
*/

/* DsStageFill of a reader: the next batch, read by the caller, through
** the stage's filter if it has one. */
static int dsReaderFillAhead(void *pArg, DsArena *pArena, DsRow **aRow,
                             int nMax, i64 nMaxByte, int *pnRow){
  DsReader *p = (DsReader *)pArg;
  const DsRowStage *pStage = p->pStage;
  DsRowFilter *pFilter = pStage->xFilter ? pStage->xFilter(pStage) : 0;
  i64 nBefore = p->base.nRow;
  int rc = dsSourceBatch(&p->base, pArena, aRow, nMax, nMaxByte, pFilter,
                         pnRow);
  if( rc!=SQLITE_OK ) return rc;
  if( pStage->xFiltered ){
    pStage->xFiltered(pStage, pFilter, p->base.nRow - nBefore, *pnRow);
  }
  /* The last rows say so: an input of one batch never starts a worker. */
  return *pnRow==0 || p->bEof ? SQLITE_DONE : SQLITE_OK;
}

/* The interrupt check of the caller's waits for the worker: a wait lasts
** about a batch's stage, and the reads between them check for themselves
** (SQLite steps the statement). */
static int dsReaderAheadCheck(void *pArg){
  DsConn *pConn = (DsConn *)pArg;
  if( pConn->xIsInterrupted && pConn->xIsInterrupted(pConn->db) ){
    return SQLITE_INTERRUPT;
  }
  return SQLITE_OK;
}

/* xStaged of a reader staged on a worker (see above). */
static int dsReaderStaged(DsSource *pSrc, const DsRowStage *pStage,
                          DsStaged **paOut, int *pnOut){
  DsReader *p = (DsReader *)pSrc;
  int nRow, rc;
  *pnOut = 0;
  if( p->pAhead==0 ){
    p->pStage = pStage;
    rc = dsStageAheadOpen(p->pConn, pStage, dsReaderFillAhead, p, 0, 0,
                          dsReaderAheadCheck, p->pConn, &p->pAhead);
    if( rc!=SQLITE_OK ) return rc;
  }
  rc = dsStageAheadNext(p->pAhead, paOut, pnOut, &nRow);
  if( rc==SQLITE_OK && dsStageAheadHasWorker(p->pAhead) ){
    p->base.nStager = 1;
  }
  return rc;
}

/* xStop of a reader staged on a worker: the worker stops now. */
static void dsReaderStop(DsSource *pSrc){
  dsStageAheadStop(((DsReader *)pSrc)->pAhead);
}

/* Let pSrc, a reader the caller reads itself, be read through a stage run
** on a worker (see above). */
void dsReaderStageAhead(DsSource *pSrc){
  pSrc->xStaged = dsReaderStaged;
  pSrc->xStop = dsReaderStop;
}

/*
** Read the rows of pSrc, a reader whose input's body takes the first and
** last rowid of a range as ?2 and ?3 (rangeread.c), from the range
** iFirst..iLast, from its start.
*/
int dsReaderSetRange(DsSource *pSrc, i64 iFirst, i64 iLast){
  DsReader *p = (DsReader *)pSrc;
  int rc;
  sqlite3_reset(p->pStmt);
  rc = sqlite3_bind_int64(p->pStmt, 2, iFirst);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(p->pStmt, 3, iLast);
  p->bEof = rc!=SQLITE_OK;
  return rc;
}

/* Does z hold zPart, compared without regard to (ASCII) case? */
static int dsHoldsNoCase(const char *z, const char *zPart){
  int n = (int)strlen(zPart);
  for(; *z; z++){
    if( sqlite3_strnicmp(z, zPart, n)==0 ) return 1;
  }
  return 0;
}

/*
** The name of the reader's CTE: "ds:input", unless the body holds that
** text.  A table may have any name, and inside the CTE's own body its
** name would mean the CTE ("circular reference"); so then ds:input:2,
** ds:input:3, ... until a name the body cannot refer to.
*/
static char *dsReaderCteName(const char *zBody){
  char *zName = sqlite3_mprintf("ds:input");
  int i = 1;
  while( zName && dsHoldsNoCase(zBody, zName) ){
    sqlite3_free(zName);
    zName = sqlite3_mprintf("ds:input:%d", ++i);
  }
  return zName;
}

/*
** Up to nMax rows of pSrc at once, into aRow[], allocated in pArena; the
** batch also ends once pArena holds nMaxByte bytes (with at least one row
** in it).  With a filter, only rows that may find a partner are handed
** out (the others are read and dropped).  SQLITE_OK with *pnRow rows, 0
** only at the end of the source, or an error.
*/
int dsSourceBatch(DsSource *pSrc, DsArena *pArena, DsRow **aRow, int nMax,
                  i64 nMaxByte, DsRowFilter *pFilter, int *pnRow){
  int n = 0;
  if( pSrc->xBatch ){
    return pSrc->xBatch(pSrc, pArena, aRow, nMax, nMaxByte, pFilter, pnRow);
  }
  *pnRow = 0;
  while( n<nMax && (n==0 || dsArenaUsed(pArena)<nMaxByte) ){
    DsRow *pRow;
    int rc = pSrc->xNext(pSrc, pArena, &pRow);
    if( rc==SQLITE_DONE ) break;
    if( rc!=SQLITE_ROW ) return rc;
    if( !dsRowPasses(pFilter, pRow) ){
      dsArenaUndo(pArena, pRow);
      continue;
    }
    aRow[n++] = pRow;
  }
  *pnRow = n;
  return SQLITE_OK;
}

/* The name of column i of a reader's row: its key columns aiKey[], then
** the columns aiPay[], as numbered by the CTE's column list. */
static int dsReaderColumn(int i, int nKey, const int *aiKey,
                          const int *aiPay){
  return i<nKey ? aiKey[i] : aiPay[i-nKey];
}

/* The forms of a reader's SQL (dsReaderSql). */
#define DS_READ_ROWS       0    /* ds_input_row() of every row */
#define DS_READ_KEYS_FIRST 1    /* ds_input_key() first: plain scans only */
#define DS_READ_KEY_SAMPLE 2    /* the first keys alone: plain scans only */

/* The start every reader's SQL shares: the CTE that renames the body's
** columns by position, then SELECT. */
static void dsReaderCteSql(sqlite3_str *pSql, const DsInput *pIn,
                           const char *zCte){
  int i;
  sqlite3_str_appendf(pSql, "WITH \"%w\"(", zCte);
  for(i=0; i<pIn->nCol; i++){
    sqlite3_str_appendf(pSql, "%sc%d", i ? "," : "", i);
  }
  sqlite3_str_appendf(pSql, ") AS (\n%s\n) SELECT ", pIn->zBody);
}

/*
** The SQL of a reader (see above), in form eForm.  An input that is a
** plain scan of one table (dsBodyIsPlainScan) is read directly, with
** ds_input_row() in the WHERE clause of the flattened scan: such a body
** has no terms that it could be tested before or pushed into, and the
** co-routine of the general form costs as much per row as the rest of
** reading.
*/
static void dsReaderSql(sqlite3_str *pSql, const DsInput *pIn,
                        const char *zCte, int eForm, int nKey,
                        const int *aiKey, int nPay, const int *aiPay){
  int n = nKey + nPay;
  int i;
  if( !pIn->bPlainScan ) sqlite3_str_appendall(pSql, "SELECT 0 FROM (\n");
  dsReaderCteSql(pSql, pIn, zCte);
  if( eForm==DS_READ_KEY_SAMPLE ){
    for(i=0; i<nKey; i++){
      sqlite3_str_appendf(pSql, "%sc%d", i ? "," : "", aiKey[i]);
    }
    sqlite3_str_appendf(pSql, " FROM \"%w\" LIMIT %d", zCte, DS_KEY_SAMPLE);
    return;
  }
  if( pIn->bPlainScan ){
    sqlite3_str_appendf(pSql, "0 FROM \"%w\" WHERE ", zCte);
    if( eForm==DS_READ_KEYS_FIRST ){
      sqlite3_str_appendall(pSql, "ds_input_key(?1");
      for(i=0; i<nKey; i++) sqlite3_str_appendf(pSql, ",c%d", aiKey[i]);
      sqlite3_str_appendall(pSql, ") AND ");
    }
    sqlite3_str_appendall(pSql, "ds_input_row(?1");
    for(i=0; i<n; i++){
      sqlite3_str_appendf(pSql, ",c%d", dsReaderColumn(i, nKey, aiKey, aiPay));
    }
    sqlite3_str_appendall(pSql, ")");
    return;
  }
  for(i=0; i<n; i++){
    sqlite3_str_appendf(pSql, "%sc%d AS x%d", i ? "," : "",
                        dsReaderColumn(i, nKey, aiKey, aiPay), i);
  }
  if( n==0 ) sqlite3_str_appendall(pSql, "0");
  sqlite3_str_appendf(pSql, " FROM \"%w\" LIMIT -1\n)"
                           " WHERE ds_input_row(?1", zCte);
  for(i=0; i<n; i++) sqlite3_str_appendf(pSql, ",x%d", i);
  sqlite3_str_appendall(pSql, ")");
}

/* The SQL of a reader in form eForm (dsReaderSql), or NULL if memory ran
** out. */
static char *dsReaderSqlText(sqlite3 *db, const DsInput *pIn,
                             const char *zCte, int eForm, int nKey,
                             const int *aiKey, int nPay, const int *aiPay){
  sqlite3_str *pSql = sqlite3_str_new(db);
  dsReaderSql(pSql, pIn, zCte, eForm, nKey, aiKey, nPay, aiPay);
  return sqlite3_str_finish(pSql);
}

/*
** Test the first keys of the reader's input (zKeySample) against
** pFilter: *pnRead keys read, *pnOut of them turned away.  A sample that
** fails for another reason than memory decides nothing (*pnRead 0): the
** reading itself meets the same error and reports it.
*/
static int dsReaderSampleKeys(DsReader *p, DsRowFilter *pFilter,
                              int *pnRead, int *pnOut){
  sqlite3_stmt *pStmt = 0;
  sqlite3_value **apKey;
  int rc;
  *pnRead = *pnOut = 0;
  apKey = sqlite3_malloc64(sizeof(sqlite3_value *) * (size_t)p->nKeyCol);
  if( apKey==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(p->pConn->db, p->zKeySample, -1,
                          &pStmt, 0);
  while( rc==SQLITE_OK && (rc = dsStepInput(p->pConn, pStmt))==SQLITE_ROW ){
    int bOut = 0;
    int i;
    for(i=0; i<p->nKeyCol; i++) apKey[i] = sqlite3_column_value(pStmt, i);
    rc = dsKeyValuesFilteredOut(pFilter, apKey, p->nKeyCol, &bOut);
    (*pnRead)++;
    *pnOut += bOut;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(apKey);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  *pnRead = *pnOut = 0;
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

static int dsReaderUseKeysFirst(DsSource *pSrc);

/*
** The rows of pSrc are about to be read through pFilter: a reader of a
** plain scan that has not been read from yet reads keys first from now
** on (see above) if a sample of its first keys shows that the filter
** turns away more than half of them.  Any other source reads on as it
** would.  *pbKeysFirst says whether pSrc reads keys first.
*/
int dsSourceKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                      int *pbKeysFirst){
  *pbKeysFirst = 0;
  if( pSrc->xKeysFirst==0 ) return SQLITE_OK;
  return pSrc->xKeysFirst(pSrc, pFilter, pbKeysFirst);
}

/*
** What pStage kept of the next batch of pSrc's rows, with what it found
** for them, in *paOut (*pnOut of them, perhaps none): SQLITE_OK, valid
** until the next call; SQLITE_DONE at the end; or an error.  Only a
** source that threads read (rangeread.c) has xStaged; an operator that
** reads a source this way does from its first row to its end.
*/
int dsSourceStaged(DsSource *pSrc, const DsRowStage *pStage,
                   DsStaged **paOut, int *pnOut){
  assert( pSrc->xStaged!=0 );
  return pSrc->xStaged(pSrc, pStage, paOut, pnOut);
}

static int dsReaderKeysFirst(DsSource *pSrc, DsRowFilter *pFilter,
                             int *pbKeysFirst){
  DsReader *p = (DsReader *)pSrc;
  int nRead, nOut;
  int rc;
  *pbKeysFirst = p->bKeysFirst;
  if( p->zKeysFirst==0 || p->bKeysFirst || p->base.nRow>0 || p->bEof ){
    return SQLITE_OK;
  }
  rc = dsReaderSampleKeys(p, pFilter, &nRead, &nOut);
  if( rc!=SQLITE_OK || nOut*2<=nRead ) return rc;
  rc = dsReaderUseKeysFirst(pSrc);
  *pbKeysFirst = p->bKeysFirst;
  return rc;
}

/*
** Read pSrc, a reader of a plain scan that has not read yet, keys first
** from now on.  SQLITE_OK (also when it stays as it was: the form only
** saves time) or SQLITE_NOMEM.
*/
static int dsReaderUseKeysFirst(DsSource *pSrc){
  DsReader *p = (DsReader *)pSrc;
  sqlite3_stmt *pNew = 0;
  int rc;
  if( p->zKeysFirst==0 || p->bKeysFirst ) return SQLITE_OK;
  rc = sqlite3_prepare_v2(p->pConn->db, p->zKeysFirst, -1, &pNew, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_pointer(pNew, 1, p, DS_READER_PTR, 0);
  if( rc!=SQLITE_OK ){
    sqlite3_finalize(pNew);
    return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
  }
  sqlite3_finalize(p->pStmt);
  p->pStmt = pNew;
  p->bKeysFirst = 1;
  return SQLITE_OK;
}

/* The SQL a reader reads its input with (rangeread.c asks SQLite's plan
** of it). */
const char *dsReaderSqlOf(DsSource *pSrc){
  return sqlite3_sql(((DsReader *)pSrc)->pStmt);
}

/* Have the rows of pSrc, a reader, counted as they are made: aRowAt[i]
** gets the count of rows read (those a filter dropped too) as row i of
** each batch is made, until called with NULL. */
void dsReaderCountRows(DsSource *pSrc, i64 *aRowAt){
  ((DsReader *)pSrc)->aRowAt = aRowAt;
}

/*
** The SQL of the wide path (see above): the row's columns, stepped one
** row at a time.  A key may name a column twice ('k,k'), and an input of
** 2000 columns read with one of them twice would be more columns than a
** statement may have: so each column is selected once, and aiRowCol[i]
** gets the statement's column that holds value i of a row.
*/
static void dsReaderWideSql(sqlite3_str *pSql, const DsInput *pIn,
                            const char *zCte, int nKey, const int *aiKey,
                            int nPay, const int *aiPay, int *aiRowCol){
  int n = nKey + nPay;
  int nSelect = 0;
  int i, j;
  dsReaderCteSql(pSql, pIn, zCte);
  for(i=0; i<n; i++){
    int iCol = dsReaderColumn(i, nKey, aiKey, aiPay);
    for(j=0; j<i && j<nKey && aiKey[j]!=iCol; j++){}
    if( j<i && j<nKey ){
      aiRowCol[i] = aiRowCol[j];
    }else{
      sqlite3_str_appendf(pSql, "%sc%d", nSelect ? "," : "", iCol);
      aiRowCol[i] = nSelect++;
    }
  }
  if( nSelect==0 ) sqlite3_str_appendall(pSql, "0");
  sqlite3_str_appendf(pSql, " FROM \"%w\"", zCte);
}

/* Would ds_input_row() need more arguments (the reader and n values)
** than db's functions may take now?  Then the reader takes the wide
** path.  The limit is read each time: an application may lower it. */
static int dsReaderIsWide(sqlite3 *db, int n){
  return n + 1 > sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, -1);
}

/*
** The SQL of reader p: the wide path's if p->aiRowCol is set for it.  A
** plain scan read through ds_input_row() also gets the SQL of its keys
** first form and of its sample of keys (p->zKeysFirst, p->zKeySample),
** and the means to switch (xKeysFirst).  NULL if memory ran out.
*/
static char *dsReaderMakeSql(DsReader *p, sqlite3 *db, const DsInput *pIn,
                             int nKey, const int *aiKey, int nPay,
                             const int *aiPay){
  char *zCte = dsReaderCteName(pIn->zBody);
  char *zSql;
  if( zCte==0 ) return 0;
  if( p->aiRowCol ){
    sqlite3_str *pSql = sqlite3_str_new(db);
    dsReaderWideSql(pSql, pIn, zCte, nKey, aiKey, nPay, aiPay, p->aiRowCol);
    zSql = sqlite3_str_finish(pSql);
  }else{
    zSql = dsReaderSqlText(db, pIn, zCte, DS_READ_ROWS, nKey, aiKey, nPay,
                           aiPay);
    if( zSql && pIn->bPlainScan && nKey>0 ){
      p->base.xKeysFirst = dsReaderKeysFirst;
      p->zKeysFirst = dsReaderSqlText(db, pIn, zCte, DS_READ_KEYS_FIRST,
                                      nKey, aiKey, nPay, aiPay);
      p->zKeySample = dsReaderSqlText(db, pIn, zCte, DS_READ_KEY_SAMPLE,
                                      nKey, aiKey, nPay, aiPay);
      if( p->zKeysFirst==0 || p->zKeySample==0 ){
        sqlite3_free(zSql);
        zSql = 0;
      }
    }
  }
  sqlite3_free(zCte);
  return zSql;
}

/*
** Open a reader of pIn returning rows of the key columns aiKey[] followed
** by the columns aiPay[], on pConn's own thread (rangeread.c opens readers
** of either kind, and this one on each of its read connections too).
*/
int dsSerialReaderOpen(DsConn *pConn, const char *zFunc, const DsInput *pIn,
                       int nKey, const int *aiKey, int nPay,
                       const int *aiPay, DsSource **ppSrc, char **pzErr){
  DsReader *p;
  char *zSql = 0;
  int bWide = dsReaderIsWide(pConn->db, nKey + nPay);
  size_t nSlot;
  int rc;
  *ppSrc = 0;
  p = sqlite3_malloc64(sizeof(DsReader));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsSourceNextOfBatch;
  p->base.xBatch = bWide ? dsReaderWideBatch : dsReaderBatch;
  p->base.xClose = dsReaderClose;
  p->pConn = pConn;
  p->nCol = nKey + nPay;
  p->nKeyCol = nKey;
  p->zFunc = zFunc;
  nSlot = (size_t)(p->nCol + 1);
  p->aVal = sqlite3_malloc64(sizeof(DsValue) * nSlot);
  if( bWide ){
    p->apCol = sqlite3_malloc64(sizeof(sqlite3_value *) * nSlot);
    p->aiRowCol = sqlite3_malloc64(sizeof(int) * nSlot);
  }
  if( p->aVal && (!bWide || (p->apCol && p->aiRowCol)) ){
    zSql = dsReaderMakeSql(p, pConn->db, pIn, nKey, aiKey, nPay, aiPay);
  }
  if( zSql==0 ){
    dsReaderClose(&p->base);
    return SQLITE_NOMEM;
  }
  rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &p->pStmt, 0);
  if( rc==SQLITE_OK && !bWide ){
    rc = sqlite3_bind_pointer(p->pStmt, 1, p, DS_READER_PTR, 0);
  }
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_INTERRUPT ){
      /* Interrupted as its readers were prepared: no fault of the input,
      ** said as every operator says it (operator.c, dsOpMessage). */
      *pzErr = sqlite3_mprintf("%s: interrupted", zFunc);
    }else if( rc!=SQLITE_NOMEM ){
      *pzErr = dsPrepareError(pConn->db, zFunc, 0, pIn->zText, zSql);
      if( *pzErr==0 ){
        *pzErr = sqlite3_mprintf("%s: cannot read the dataset '%s': %s",
            zFunc, pIn->zText, sqlite3_errmsg(pConn->db));
      }
    }
    sqlite3_free(zSql);
    dsReaderClose(&p->base);
    return rc;
  }
  sqlite3_free(zSql);
  *ppSrc = &p->base;
  return SQLITE_OK;
}

/* The row count sqlite_stat1 holds for a table (its first number), or -1
** in *pnRow.  SQLITE_OK or SQLITE_NOMEM. */
static int dsStat1Rows(sqlite3 *db, const DsInput *pIn, i64 *pnRow){
  sqlite3_stmt *pStmt = 0;
  int rc;
  char *zSql = sqlite3_mprintf(
      "SELECT stat FROM \"%w\".sqlite_stat1 WHERE tbl=%Q COLLATE NOCASE",
      pIn->zSchema ? pIn->zSchema : "main", pIn->zName);
  *pnRow = -1;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    const char *zStat = (const char *)sqlite3_column_text(pStmt, 0);
    if( zStat==0 && sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
      rc = SQLITE_NOMEM;
    }else if( zStat && isdigit((unsigned char)zStat[0]) ){
      *pnRow = 0;
      while( isdigit((unsigned char)*zStat) ){
        *pnRow = *pnRow*10 + (*zStat++ - '0');
      }
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* The rows sqlite_stat1 holds for pIn, a named table, else -1: what the
** progress line can know of an input without reading it. */
i64 dsInputStat1Count(sqlite3 *db, const DsInput *pIn){
  i64 n = -1;
  if( pIn->zName ) dsStat1Rows(db, pIn, &n);
  return n;
}

/* The count zSql (may be NULL: out of memory) gives, or -1. */
static int dsCountRows(DsConn *pConn, const char *zSql, i64 *pnRow){
  sqlite3_stmt *pStmt = 0;
  int rc;
  *pnRow = -1;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = dsStepInput(pConn, pStmt);
  if( rc==SQLITE_ROW ) *pnRow = sqlite3_column_int64(pStmt, 0);
  sqlite3_finalize(pStmt);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* The rows of pIn read up to nCap at most: SQLite steps the input
** without computing any of its columns.  *pbAtLeast is set when the count
** reached nCap (the input has at least that many rows). */
static int dsCountRowsUpTo(DsConn *pConn, const DsInput *pIn, i64 nCap,
                           i64 *pnRow, int *pbAtLeast){
  char *zSql = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM (\n%s\n) "
                               "LIMIT %lld)", pIn->zBody, nCap);
  int rc = dsCountRows(pConn, zSql, pnRow);
  sqlite3_free(zSql);
  *pbAtLeast = *pnRow>=nCap;
  return rc;
}

/*
** The rows of pIn, found out cheaply: from sqlite_stat1 for an analyzed
** table; else counted, where a plain scan of one table (a table, or a
** view or query that only reads one) is counted whole (SQLite
** counts a b-tree without decoding its rows) but any other is read
** only up to nCap rows.  A plain scan is read only up to nCap rows too
** when bCapPlain is set: a caller that knows the table to be much larger
** than nCap (dsInputSpanRows) steps through nCap rows rather than count
** them all.  *pbAtLeast is set when the count stopped at nCap (the input
** has at least that many rows).  *pnRow is -1 if the size cannot be found
** out.  Returns SQLITE_NOMEM if memory ran out on the way (a size guessed
** for want of memory would steer the plan silently), else SQLITE_OK.
*/
int dsInputEstimateRows(DsConn *pConn, const DsInput *pIn, i64 nCap,
                        int bCapPlain, i64 *pnRow, int *pbAtLeast){
  char *zSql;
  int rc = SQLITE_OK;
  *pbAtLeast = 0;
  *pnRow = -1;
  if( pIn->zName ){
    rc = dsStat1Rows(pConn->db, pIn, pnRow);
    if( rc!=SQLITE_OK || *pnRow>=0 ) return rc;
  }
  if( pIn->bPlainScan && !bCapPlain ){
    zSql = sqlite3_mprintf("SELECT count(*) FROM (\n%s\n)", pIn->zBody);
    rc = dsCountRows(pConn, zSql, pnRow);
    sqlite3_free(zSql);
  }else{
    rc = dsCountRowsUpTo(pConn, pIn, nCap, pnRow, pbAtLeast);
  }
  return rc;
}

/* Rows sampled to measure an input's rows (dsInputSampleRowBytes). */
#define DS_WIDTH_SAMPLE 1024

/*
** The bytes the values of a row of pIn take in the row format, on
** average over its first DS_WIDTH_SAMPLE rows, counting only the columns
** carried: the key columns aiKey[] and the others aiPay[].  *pnBytes is
** 0 when the input is empty or could not be read.  For a plain scan of a
** table only (nothing runs but a scan of its first pages): a view or
** query is measured by reading it ahead, for the operator (plan.c).
** SQLITE_OK, or SQLITE_NOMEM.
*/
int dsInputSampleRowBytes(DsConn *pConn, const DsInput *pIn, int nKey,
                          const int *aiKey, int nPay, const int *aiPay,
                          i64 *pnBytes){
  sqlite3_str *pSql;
  sqlite3_stmt *pStmt = 0;
  char *zCte, *zSql;
  int i, rc;
  *pnBytes = 0;
  zCte = dsReaderCteName(pIn->zBody);
  if( zCte==0 ) return SQLITE_NOMEM;
  pSql = sqlite3_str_new(pConn->db);
  dsReaderCteSql(pSql, pIn, zCte);
  sqlite3_str_appendall(pSql, "count(*), sum(0");
  for(i=0; i<nKey+nPay; i++){
    sqlite3_str_appendf(pSql, "+CASE typeof(c%d) WHEN 'null' THEN 1 "
        "WHEN 'integer' THEN 9 WHEN 'real' THEN 9 "
        "ELSE 5+length(CAST(c%d AS BLOB)) END",
        dsReaderColumn(i, nKey, aiKey, aiPay),
        dsReaderColumn(i, nKey, aiKey, aiPay));
  }
  sqlite3_str_appendf(pSql, ") FROM (SELECT * FROM \"%w\" LIMIT %d)",
                      zCte, DS_WIDTH_SAMPLE);
  zSql = sqlite3_str_finish(pSql);
  sqlite3_free(zCte);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(pConn->db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = dsStepInput(pConn, pStmt);
  if( rc==SQLITE_ROW && sqlite3_column_int64(pStmt, 0)>0 ){
    *pnBytes = sqlite3_column_int64(pStmt, 1) / sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return dsIsNoMem(rc) ? SQLITE_NOMEM : SQLITE_OK;
}

/* Rows of a plain scan counted one by one at most, for a quick estimate;
** past that, the table's rowids or its b-tree tell. */
#define DS_QUICK_COUNT 4096

/*
** The rows of pIn as far as its b-tree's ends tell, without reading it:
** from sqlite_stat1 for an analyzed table, else, for a table with rowids,
** the span of its rowids (two b-tree descents).  The span is never less
** than the rows (rowids are distinct integers), and is exact for a table
** whose rows were only appended.  -1 for anything else: a view, a query,
** a table without rowids.  SQLITE_OK, or SQLITE_NOMEM.
*/
int dsInputSpanRows(DsConn *pConn, const DsInput *pIn, i64 *pnRow){
  char *zSql;
  int rc;
  const char *zSchema = pIn->zSchema ? pIn->zSchema : "main";
  *pnRow = -1;
  if( pIn->zName==0 ) return SQLITE_OK;
  rc = dsStat1Rows(pConn->db, pIn, pnRow);
  if( rc!=SQLITE_OK || *pnRow>=0 ) return rc;
  zSql = sqlite3_mprintf("SELECT (SELECT max(rowid) FROM \"%w\".\"%w\") "
                         "- (SELECT min(rowid) FROM \"%w\".\"%w\") + 1",
                         zSchema, pIn->zName, zSchema, pIn->zName);
  /* A view, or a table without rowids, fails to prepare: no span. */
  rc = dsCountRows(pConn, zSql, pnRow);
  sqlite3_free(zSql);
  return rc;
}

/*
** The rows of pIn as far as SQLite can tell without running it, for a
** plan's cost, on every statement (inputs grow; nothing is kept): from
** sqlite_stat1 for an analyzed table; else, for a plain scan of one table
** (a table, or a view or query that only reads one), counted up to
** DS_QUICK_COUNT rows, and past that the span of the table's rowids
** (dsInputSpanRows) or, without rowids, SQLite's count of its b-tree.  A
** view or query that is not a plain scan is not run (running it is what
** the operator does, once): *pnRow is -1.  SQLITE_OK, or SQLITE_NOMEM.
*/
int dsInputQuickRows(DsConn *pConn, const DsInput *pIn, i64 *pnRow){
  char *zSql;
  int rc = SQLITE_OK;
  int bAtLeast;
  *pnRow = -1;
  if( pIn->zName ){
    rc = dsStat1Rows(pConn->db, pIn, pnRow);
    if( rc!=SQLITE_OK || *pnRow>=0 ) return rc;
  }
  if( !pIn->bPlainScan ) return SQLITE_OK;
  rc = dsCountRowsUpTo(pConn, pIn, DS_QUICK_COUNT, pnRow, &bAtLeast);
  if( rc!=SQLITE_OK || !bAtLeast ) return rc;
  if( pIn->zName ){
    i64 nSpan = -1;
    rc = dsInputSpanRows(pConn, pIn, &nSpan);
    if( rc!=SQLITE_OK ) return rc;
    if( nSpan>*pnRow ){
      *pnRow = nSpan;
      return SQLITE_OK;
    }
    if( nSpan>=0 ) return SQLITE_OK;
  }
  zSql = sqlite3_mprintf("SELECT count(*) FROM (\n%s\n)", pIn->zBody);
  rc = dsCountRows(pConn, zSql, pnRow);
  sqlite3_free(zSql);
  return rc;
}
