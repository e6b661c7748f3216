/*
** spill.c: spill files, the one way any operator puts rows on disk.
**
** A spill file holds rows in their memory image (DS_ROW_IMAGE: hash,
** sizes, flags and packed values), so a row goes out and comes back with
** one copy and keeps its matched flag.  A file is written in one pass,
** then rewound and read back in the order written, as often as the
** operator likes (block nested loops re-read theirs).
**
** I/O goes through one buffer per file, allocated on the first write and
** charged to the operator's memory, with pwrite()/pread() at explicit
** offsets: large sequential transfers and no shared file position.
**
** The file is created with mkstemp() in the connection's temp_dir and
** unlinked at once, so it exists only as an open descriptor: it vanishes
** when closed, and also when the process dies, on every path.
**
** A closed spill file is emptied (ftruncate) and kept by its operator
** for the next spill to write into: a hybrid hash join under a small
** budget runs hundreds of partition tasks, each with a build and a probe
** file, and creating, unlinking and closing two files a task cost more
** system time than the join's own work.  The files kept never outnumber
** the most the operator had open at once, which it needed anyway; it
** closes them when it finishes (dsOpFinish, operator.c).
**
** A DsSpill is also a DsSource (its first member), so a spilled partition
** can be fed back into the same code that reads an input.
**
** No statement is stepped while a spill file is written or read, so every
** row moved ticks the operator's interrupt check (interrupt.c): whatever
** loop moves rows through a file can be interrupted there.
**
** A file can also be written from a worker thread (sort.c writes its runs
** on one while the caller gathers the next).  The worker must not touch
** what the caller's thread owns (the budget, the statistics, the
** operator's error and interrupt check), so the caller detaches the file
** first (dsSpillDetach: its buffer is allocated then), the worker appends
** with dsSpillWriteDetached(), which keeps the bytes written and a
** failure's errno in the file itself, and the caller, once the worker is
** done, attaches it again (dsSpillAttach): the bytes go to the statistics
** and a failure becomes the error dsSpillWrite() would have given; or,
** when the statement is ending anyway, forgets what it kept
** (dsSpillForget).
*/
#include "dataset_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef DS_TEST_HOOKS
/*
** Test-only faults, compiled into the test program alone (tests/
** testfixture.c, -DDS_TEST_HOOKS), never into the shared library, which
** has no such state: the N-th read or write of a spill file from the
** moment a test asks fails in a chosen way, so that tests can reach the
** paths of a short read, an I/O error or a full disk.  One setting per
** process is what a test program needs; atomics because operators of
** connections in other threads may spill meanwhile.
*/
#include <stdatomic.h>

#define DS_SPILL_FAULT_SHORT  1   /* this and later calls move part only */
#define DS_SPILL_FAULT_EOF    2   /* 0 bytes moved */
#define DS_SPILL_FAULT_EIO    3   /* -1, EIO */
#define DS_SPILL_FAULT_ENOSPC 4   /* -1, ENOSPC */

static struct DsSpillFault {
  atomic_int nCountdown;  /* calls until the fault; 0: none armed */
  atomic_int eKind;       /* DS_SPILL_FAULT_* */
  atomic_int bShort;      /* a SHORT fault has begun */
  atomic_int nCall;       /* calls since armed */
  atomic_int nFault;      /* calls failed or shortened since armed */
} dsSpillFaults[2];       /* [0] reads, [1] writes */

void dsSpillTestFault(int bWrite, int nCountdown, int eKind){
  struct DsSpillFault *p = &dsSpillFaults[bWrite!=0];
  atomic_store(&p->nCountdown, 0);
  atomic_store(&p->bShort, 0);
  atomic_store(&p->nCall, 0);
  atomic_store(&p->nFault, 0);
  atomic_store(&p->eKind, eKind);
  if( nCountdown>0 ) atomic_store(&p->nCountdown, nCountdown);
}

/* Spill files created (mkstemp) and opened (created or reused) since the
** process started: tests check that files are reused. */
static atomic_int dsSpillNewFiles, dsSpillOpenFiles;
void dsSpillTestFiles(int *pnNew, int *pnOpen){
  *pnNew = atomic_load(&dsSpillNewFiles);
  *pnOpen = atomic_load(&dsSpillOpenFiles);
}
# define dsSpillCountFile(bNew) \
  atomic_fetch_add((bNew) ? &dsSpillNewFiles : &dsSpillOpenFiles, 1)

void dsSpillTestCalls(int bWrite, int *pnCall, int *pnFault){
  struct DsSpillFault *p = &dsSpillFaults[bWrite!=0];
  *pnCall = atomic_load(&p->nCall);
  *pnFault = atomic_load(&p->nFault);
}

/* The fault for this call, if any: 0 or DS_SPILL_FAULT_*. */
static int dsSpillFaultNow(struct DsSpillFault *p){
  atomic_fetch_add(&p->nCall, 1);
  if( atomic_load(&p->bShort) ){
    atomic_fetch_add(&p->nFault, 1);
    return DS_SPILL_FAULT_SHORT;
  }
  if( atomic_load(&p->nCountdown)>0
   && atomic_fetch_sub(&p->nCountdown, 1)==1 ){
    int eKind = atomic_load(&p->eKind);
    if( eKind==DS_SPILL_FAULT_SHORT ) atomic_store(&p->bShort, 1);
    atomic_fetch_add(&p->nFault, 1);
    return eKind;
  }
  return 0;
}

/* pread() or pwrite() as the armed fault has it. */
static ssize_t dsSpillFaultIo(int bWrite, int fd, void *z, size_t n,
                              i64 iOff){
  int eFault = dsSpillFaultNow(&dsSpillFaults[bWrite]);
  switch( eFault ){
    case DS_SPILL_FAULT_SHORT: if( n>1 ) n = n/3 + 1; break;
    case DS_SPILL_FAULT_EOF:   return 0;
    case DS_SPILL_FAULT_EIO:   errno = EIO; return -1;
    case DS_SPILL_FAULT_ENOSPC: errno = ENOSPC; return -1;
  }
  return bWrite ? pwrite(fd, z, n, (off_t)iOff) : pread(fd, z, n, (off_t)iOff);
}
# define dsSpillPread(fd, z, n, off)  dsSpillFaultIo(0, fd, z, n, off)
# define dsSpillPwrite(fd, z, n, off) dsSpillFaultIo(1, fd, (void *)(z), n, off)
#else
# define dsSpillPread(fd, z, n, off)  pread(fd, z, n, (off_t)(off))
# define dsSpillPwrite(fd, z, n, off) pwrite(fd, z, n, (off_t)(off))
# define dsSpillCountFile(bNew)
#endif

struct DsSpill {
  DsSource base;          /* reading it as a source of rows */
  DsOp *pOp;
  int fd;
  int nAlloc;             /* size of aBuf */
  u8 *aBuf;               /* the I/O buffer */
  int nBuf;               /* bytes in aBuf: pending writes, or read data */
  int iBuf;               /* next byte of aBuf to read */
  int bReading;
  i64 iOff;               /* file offset of the next pwrite or pread */
  i64 nByte;              /* bytes written */
  i64 nRow;               /* rows written */
  int bDetached;          /* written (dsSpillDetach) or read ahead
                          ** (DsStageAhead) by a worker */
  int errDetached;        /* the errno of a detached write or read that
                          ** failed; -1 for a read past the end */
  int bKeepBuf;           /* reading keeps the buffer past the last row */
  DsStageAhead *pAhead;        /* the worker reading it, or NULL */
  i64 nAheadRead;         /* rows of the file it has read */
  i64 nDetachedBytes;     /* bytes a detached writer put in the file */
};

static int dsSpillStaged(DsSource*, const DsRowStage*, DsStaged**, int*);
static void dsSpillStop(DsSource*);
static void dsSpillAheadFree(DsSpill*);

/* Bytes of I/O buffer per file: DsOp.nSpillBuf when the operator sets it
** (a hash join writing many partitions at once shares the budget between
** them), else 1/64 of memory_limit, within these bounds. */
#define DS_SPILL_BUF_MIN 512
#define DS_SPILL_BUF_MAX (256 * 1024)

/* The size of the I/O buffer of each spill file of operator pOp. */
i64 dsSpillBufferBytes(const DsOp *pOp){
  i64 nBuf = pOp->nSpillBuf ? pOp->nSpillBuf : pOp->pConn->nMemLimit / 64;
  if( nBuf < DS_SPILL_BUF_MIN ) nBuf = DS_SPILL_BUF_MIN;
  if( nBuf > DS_SPILL_BUF_MAX ) nBuf = DS_SPILL_BUF_MAX;
  return nBuf;
}

/* Allocate the I/O buffer, which exists only while the file is being
** written or read: a file waiting its turn holds no memory. */
static int dsSpillBuffer(DsSpill *p){
  i64 nBuf;
  if( p->aBuf ) return SQLITE_OK;
  nBuf = dsSpillBufferBytes(p->pOp);
  p->aBuf = dsMalloc(&p->pOp->mem, nBuf);
  if( p->aBuf==0 ) return SQLITE_NOMEM;
  p->nAlloc = (int)nBuf;
  return SQLITE_OK;
}

/* Give the I/O buffer back (nothing pending in it). */
static void dsSpillDropBuffer(DsSpill *p){
  dsFree(&p->pOp->mem, p->aBuf);
  p->aBuf = 0;
  p->nAlloc = 0;
  p->nBuf = p->iBuf = 0;
}

/* rc, a failure of a spill file, is the extension's own (dataset.c):
** the connection remembers it until the statement reports it.  The only
** place the extension itself raises an I/O code. */
static int dsSpillFailed(DsOp *pOp, int rc){
  pOp->pConn->rcSpill = rc;
  return rc;
}

/*
** Record the failure of a spill file's zWhat ("create", "write", "read")
** with errno err.  The codes are those of the failing resource (a full
** disk, an I/O error); the statement ends with SQLITE_ERROR all the same
** (dsStatementError(), dataset.c), for the spill file is the extension's
** own scratch space, not the database.
*/
static int dsSpillIoError(DsSpill *p, const char *zWhat, int err){
  const char *zDir = dsTempDir(p->pOp->pConn);
  int rc;
  if( err==ENOSPC || err==EFBIG || err==EDQUOT ){
    rc = dsOpError(p->pOp, SQLITE_FULL,
                   "out of space for spill files in '%s' (%s)", zDir,
                   strerror(err));
  }else{
    rc = dsOpError(p->pOp, SQLITE_IOERR, "cannot %s a spill file in '%s': %s",
                   zWhat, zDir, strerror(err));
  }
  return dsSpillFailed(p->pOp, rc);
}

static int dsSpillFlush(DsSpill *p){
  int i = 0;
  while( i<p->nBuf ){
    ssize_t n = dsSpillPwrite(p->fd, p->aBuf + i, (size_t)(p->nBuf - i),
                              p->iOff);
    if( n<0 && errno==EINTR ) continue;
    if( n<=0 ){
      int err = n<0 ? errno : ENOSPC;
      if( p->bDetached ){
        p->errDetached = err;
        return SQLITE_IOERR;
      }
      return dsSpillIoError(p, "write", err);
    }
    i += (int)n;
    p->iOff += n;
  }
  if( p->bDetached ){
    p->nDetachedBytes += p->nBuf;
  }else{
    p->pOp->stats.nSpilled += p->nBuf;
  }
  p->nBuf = 0;
  return SQLITE_OK;
}

static int dsSpillAppend(DsSpill *p, const u8 *z, i64 n){
  while( n>0 ){
    i64 nCopy = p->nAlloc - p->nBuf;
    if( nCopy==0 ){
      int rc = dsSpillFlush(p);
      if( rc!=SQLITE_OK ) return rc;
      nCopy = p->nAlloc;
    }
    if( nCopy>n ) nCopy = n;
    memcpy(p->aBuf + p->nBuf, z, (size_t)nCopy);
    p->nBuf += (int)nCopy;
    z += nCopy;
    n -= nCopy;
  }
  return SQLITE_OK;
}

static int dsSpillNext(DsSource *pSrc, DsArena *pArena, DsRow **ppRow){
  return dsSpillRead((DsSpill *)pSrc, pArena, ppRow);
}

static void dsSpillCloseSource(DsSource *pSrc){
  dsSpillClose((DsSpill *)pSrc);
}

/* Create the file of p in temp_dir, unlinked at once (see above). */
static int dsSpillCreate(DsSpill *p){
  char *zPath = sqlite3_mprintf("%s/ds_spill_XXXXXX",
                                dsTempDir(p->pOp->pConn));
  if( zPath==0 ) return SQLITE_NOMEM;
  p->fd = mkstemp(zPath);
  if( p->fd<0 ){
    int rc = dsSpillIoError(p, "create", errno);
    sqlite3_free(zPath);
    return dsSpillFailed(p->pOp, rc==SQLITE_FULL ? rc : SQLITE_CANTOPEN);
  }
  unlink(zPath);
  sqlite3_free(zPath);
  dsSpillCountFile(1);
  return SQLITE_OK;
}

/* A new, empty spill file of operator pOp: one it kept, else a new one. */
int dsSpillOpen(DsOp *pOp, DsSpill **ppSpill){
  DsSpill *p;
  *ppSpill = 0;
  p = sqlite3_malloc64(sizeof(DsSpill));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsSpillNext;
  p->base.xClose = dsSpillCloseSource;
  if( pOp->pConn->nThread>1 ){
    p->base.xStaged = dsSpillStaged;
    p->base.xStop = dsSpillStop;
  }
  p->pOp = pOp;
  if( pOp->nFreeFd>0 ){
    p->fd = pOp->aFreeFd[--pOp->nFreeFd];
  }else{
    int rc = dsSpillCreate(p);
    if( rc!=SQLITE_OK ){
      sqlite3_free(p);
      return rc;
    }
  }
  dsSpillCountFile(0);
  *ppSpill = p;
  return SQLITE_OK;
}

/* The work of moving one row of nData bytes through a spill file, in the
** units of dsOpTickN(): the row, and a unit per 64 bytes copied. */
static u32 dsSpillTicks(u32 nData){
  return DS_TICK_ROW + nData/64;
}

/* Append one row to the buffer, flushing it when full. */
static int dsSpillPut(DsSpill *p, const DsRow *pRow){
  assert( pRow->nKey<=pRow->nData );
  assert( p->aBuf!=0 && !p->bReading );
  p->nRow++;
  p->nByte += (i64)DS_ROW_HDR + pRow->nData;
  return dsSpillAppend(p, DS_ROW_IMAGE((DsRow *)pRow),
                       (i64)DS_ROW_HDR + pRow->nData);
}

/* Append one row. */
int dsSpillWrite(DsSpill *p, const DsRow *pRow){
  int rc;
  assert( !p->bDetached );
  rc = dsOpTickN(p->pOp, dsSpillTicks(pRow->nData));
  if( rc!=SQLITE_OK ) return rc;
  if( p->aBuf==0 ){
    int rc = dsSpillBuffer(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  return dsSpillPut(p, pRow);
}

/* On the caller's thread: make p, being written, ready for a worker to
** go on writing it (see the top).  SQLITE_OK, or SQLITE_NOMEM for its
** buffer, and then p stays attached. */
int dsSpillDetach(DsSpill *p){
  int rc = dsSpillBuffer(p);
  assert( !p->bDetached && !p->bReading );
  if( rc==SQLITE_OK ){
    p->bDetached = 1;
    p->errDetached = 0;
    p->nDetachedBytes = 0;
  }
  return rc;
}

/* On any thread, p detached: append one row, without the interrupt
** check (the worker does its own).  SQLITE_IOERR for a failed write,
** its errno kept for dsSpillAttach(). */
int dsSpillWriteDetached(DsSpill *p, const DsRow *pRow){
  assert( p->bDetached );
  return dsSpillPut(p, pRow);
}

/* On any thread, p detached: write out what the buffer holds. */
int dsSpillFlushDetached(DsSpill *p){
  assert( p->bDetached );
  return p->nBuf>0 ? dsSpillFlush(p) : SQLITE_OK;
}

/* Back on the caller's thread, the worker done with p: count the bytes it
** wrote, and turn its failure into the operator's error, as dsSpillWrite()
** would have.  rc, the worker's result, is returned otherwise. */
int dsSpillAttach(DsSpill *p, int rc){
  int err = p->errDetached;
  assert( p->bDetached );
  p->pOp->stats.nSpilled += p->nDetachedBytes;
  p->nDetachedBytes = 0;
  p->errDetached = 0;
  p->bDetached = 0;
  return err ? dsSpillIoError(p, "write", err) : rc;
}

/* The same when the statement is ending on another error, or was
** stopped: nothing is counted or reported.  A failure kept here must not
** become the operator's error, nor the connection's note of a spill
** failure (DsConn.rcSpill), which the next statement's error would find. */
void dsSpillForget(DsSpill *p){
  if( p && p->bDetached ){
    p->nDetachedBytes = 0;
    p->errDetached = 0;
    p->bDetached = 0;
  }
}

/* Finish writing (or reading) and go back to the first row.  The buffer
** is given back until the first read. */
int dsSpillRewind(DsSpill *p){
  dsSpillAheadFree(p);
  if( !p->bReading ){
    int rc = p->aBuf ? dsSpillFlush(p) : SQLITE_OK;
    if( rc!=SQLITE_OK ) return rc;
    p->bReading = 1;
  }
  dsSpillDropBuffer(p);
  p->iOff = 0;
  p->base.nRow = 0;
  return SQLITE_OK;
}

/* A read of p failed with errno err, or -1: the file ends before what
** was written to it.  The operator's error; or, read by a worker, the
** failure is kept for the caller (dsStageAheadNext). */
static int dsSpillReadFailed(DsSpill *p, int err){
  if( p->bDetached ){
    p->errDetached = err;
    return SQLITE_IOERR;
  }
  if( err>0 ) return dsSpillIoError(p, "read", err);
  return dsSpillFailed(p->pOp, dsOpError(p->pOp, SQLITE_IOERR_SHORT_READ,
      "a spill file in '%s' is shorter than what was written to it",
      dsTempDir(p->pOp->pConn)));
}

/* Copy the next n bytes of the file to z. */
static int dsSpillReadBytes(DsSpill *p, u8 *z, i64 n){
  while( n>0 ){
    i64 nCopy = p->nBuf - p->iBuf;
    if( nCopy==0 ){
      ssize_t nRead;
      do{
        nRead = dsSpillPread(p->fd, p->aBuf, (size_t)p->nAlloc, p->iOff);
      }while( nRead<0 && errno==EINTR );
      if( nRead<=0 ) return dsSpillReadFailed(p, nRead<0 ? errno : -1);
      p->iOff += nRead;
      p->nBuf = (int)nRead;
      p->iBuf = 0;
      nCopy = nRead;
    }
    if( nCopy>n ) nCopy = n;
    memcpy(z, p->aBuf + p->iBuf, (size_t)nCopy);
    p->iBuf += (int)nCopy;
    z += nCopy;
    n -= nCopy;
  }
  return SQLITE_OK;
}

/* Read the row at the file's position into pArena (its buffer allocated,
** a row left): SQLITE_OK or an error.  A worker's read (bDetached) has no
** interrupt check; the caller checks for it. */
static int dsSpillReadRow(DsSpill *p, DsArena *pArena, DsRow **ppRow){
  u8 aHdr[DS_ROW_HDR];
  const u8 *zHdr = aHdr;  /* the row's header: in aHdr, or in the buffer */
  i64 nHave;              /* bytes of the row in the buffer from zHdr */
  u32 nData;
  DsRow *pRow;
  int rc;
  assert( p->aBuf!=0 );
  nHave = p->nBuf - p->iBuf;
  if( nHave>=(i64)DS_ROW_HDR ){
    zHdr = p->aBuf + p->iBuf;
  }else{
    rc = dsSpillReadBytes(p, aHdr, (i64)DS_ROW_HDR);
    if( rc!=SQLITE_OK ) return rc;
    nHave = 0;
  }
  memcpy(&nData, zHdr + offsetof(DsRow, nData) - offsetof(DsRow, hash), 4);
  if( !p->bDetached ){
    rc = dsOpTickN(p->pOp, dsSpillTicks(nData));
    if( rc!=SQLITE_OK ) return rc;
  }
  pRow = dsArenaAlloc(pArena, (i64)DS_ROW_SIZE(nData));
  if( pRow==0 ) return SQLITE_NOMEM;
  pRow->pNext = 0;
  if( nHave>=(i64)DS_ROW_HDR + nData ){
    /* Most rows lie whole in the buffer: one copy. */
    memcpy(DS_ROW_IMAGE(pRow), zHdr, DS_ROW_HDR + nData);
    p->iBuf += (int)(DS_ROW_HDR + nData);
  }else{
    memcpy(DS_ROW_IMAGE(pRow), zHdr, DS_ROW_HDR);
    if( zHdr!=aHdr ) p->iBuf += (int)DS_ROW_HDR;
    rc = dsSpillReadBytes(p, pRow->aData, nData);
    if( rc!=SQLITE_OK ) return rc;
  }
  *ppRow = pRow;
  return SQLITE_OK;
}

/* The next row, allocated in pArena: SQLITE_ROW, SQLITE_DONE or error. */
int dsSpillRead(DsSpill *p, DsArena *pArena, DsRow **ppRow){
  int rc;
  assert( p->pAhead==0 );
  if( p->base.nRow>=p->nRow ){
    if( !p->bKeepBuf ) dsSpillDropBuffer(p);
    return SQLITE_DONE;
  }
  /* A worker reading detached never allocates (see dsSpillDetachRead). */
  assert( p->aBuf!=0 || !p->bDetached );
  if( p->aBuf==0 && (rc = dsSpillBuffer(p))!=SQLITE_OK ) return rc;
  rc = dsSpillReadRow(p, pArena, ppRow);
  if( rc!=SQLITE_OK ) return rc;
  p->base.nRow++;
  return SQLITE_ROW;
}

/*
** Read by a worker in the caller's place, row by row with dsSpillRead():
** a sorted run that sort.c merges with the others on a worker.  The
** caller reads the file's first row, which allocates its buffer, and
** keeps the buffer to the file's close (dsSpillKeepBuffer), as the
** worker can give nothing back; then detaches it.  The worker's reads
** have no interrupt check and keep a failure in the file, which
** dsSpillAttachRead() reports once the worker is stopped, as the caller's
** own read would have.
*/
void dsSpillKeepBuffer(DsSpill *p){
  p->bKeepBuf = 1;
}

void dsSpillDetachRead(DsSpill *p){
  assert( p->bReading && p->bKeepBuf && !p->bDetached && p->pAhead==0 );
  p->bDetached = 1;
  p->errDetached = 0;
}

int dsSpillAttachRead(DsSpill *p){
  int err = p->errDetached;
  assert( p->bDetached && p->pAhead==0 );
  p->bDetached = 0;
  p->errDetached = 0;
  return err ? dsSpillReadFailed(p, err) : SQLITE_OK;
}

/*************************************************************************
** Reading ahead on a worker, through a stage.
**
** With threads above 1 a spill file is also a source that can be read
** through a stage (DsRowStage: see dsSourceStaged), as rangeread.c reads a
** table for a broadcast's probe.  A worker reads the file a batch at a
** time and runs the stage on each batch (stageahead.c, where the worker
** fills); the caller is handed what the stage kept, in place, in the
** file's order.  A hash join's task probes its probe file this way
** (hashjoin.c): reading the file and looking its rows up in the table
** leave the calling thread, which walks the spans found and hands the
** pairs to SQLite.
**
** The worker reads the file detached (no interrupt check, a failure kept
** in the file for the caller to report as its own read would have), in
** the buffer the caller allocated as dsSpillRead() would, so that the
** operator's memory is the same.  Rows, their order and the statistics
** are those of reading on the caller.  Where SQLite may not be used from
** another thread (the worker allocates) or no thread can be started, the
** caller reads and stages each batch itself.  xStop, which the operator
** calls before it frees what the stage reads, dsSpillRewind() and
** dsSpillClose() stop and join the worker.
*/

/* DsStageFill of a file read ahead: on the worker, detached. */
static int dsSpillFillAhead(void *pArg, DsArena *pArena, DsRow **aRow,
                            int nMax, i64 nMaxByte, int *pnRow){
  DsSpill *p = (DsSpill *)pArg;
  i64 nByte = 0;
  int n = 0;
  int rc = SQLITE_OK;
  /* At least a row a batch, however small the budget. */
  while( n<nMax && (nByte<nMaxByte || n==0) && p->nAheadRead<p->nRow ){
    DsRow *pRow;
    rc = dsSpillReadRow(p, pArena, &pRow);
    if( rc!=SQLITE_OK ) break;
    p->nAheadRead++;
    nByte += (i64)DS_ROW_SIZE(pRow->nData);
    aRow[n++] = pRow;
  }
  *pnRow = n;
  if( rc==SQLITE_OK && p->nAheadRead>=p->nRow ) rc = SQLITE_DONE;
  return rc;
}

/* The interrupt check of the caller's waits for the worker. */
static int dsSpillAheadCheck(void *pArg){
  return dsOpCheckInterrupt((DsOp *)pArg);
}

/* Start reading p through pStage, from its first row: on a worker if one
** can run, else on the caller's thread.  SQLITE_OK or SQLITE_NOMEM. */
static int dsSpillAheadStart(DsSpill *p, const DsRowStage *pStage){
  int rc;
  assert( p->bReading && p->base.nRow==0 && p->pAhead==0 );
  if( p->aBuf==0 && (rc = dsSpillBuffer(p))!=SQLITE_OK ) return rc;
  p->nAheadRead = 0;
  /* Detached from before the worker's first read. */
  p->bDetached = 1;
  p->errDetached = 0;
  rc = dsStageAheadOpen(p->pOp->pConn, pStage, dsSpillFillAhead, p, 1, 0,
                   dsSpillAheadCheck, p->pOp, &p->pAhead);
  if( rc!=SQLITE_OK || !dsStageAheadHasWorker(p->pAhead) ) p->bDetached = 0;
  return rc;
}

/* Stop p's worker, if it has one, and join it: the file is the caller's
** again.  The batches stay, with the rows the caller was handed. */
static void dsSpillAheadStop(DsSpill *p){
  if( p->pAhead ){
    dsStageAheadStop(p->pAhead);
    p->bDetached = 0;
  }
}

/* Stop p's worker and free what reading ahead holds. */
static void dsSpillAheadFree(DsSpill *p){
  dsSpillAheadStop(p);
  dsStageAheadFree(p->pAhead);
  p->pAhead = 0;
  p->errDetached = 0;
}

/* xStaged of a spill file (see above).  The worker's failed read becomes
** the caller's error, with the message its own read would have given. */
static int dsSpillStaged(DsSource *pSrc, const DsRowStage *pStage,
                         DsStaged **paOut, int *pnOut){
  DsSpill *p = (DsSpill *)pSrc;
  int nRow = 0;
  int rc;
  *paOut = 0;
  *pnOut = 0;
  if( p->pAhead==0 ){
    rc = dsSpillAheadStart(p, pStage);
    if( rc!=SQLITE_OK ) return rc;
  }
  rc = dsStageAheadNext(p->pAhead, paOut, pnOut, &nRow);
  if( rc==SQLITE_OK ){
    p->base.nRow += nRow;
  }else if( rc!=SQLITE_DONE && p->bDetached ){
    int err;
    dsSpillAheadStop(p);
    err = p->errDetached;
    p->errDetached = 0;
    if( rc==SQLITE_IOERR && err ) return dsSpillReadFailed(p, err);
  }
  return rc;
}

/* xStop of a spill file: its worker, if it has one, stops now. */
static void dsSpillStop(DsSource *pSrc){
  dsSpillAheadStop((DsSpill *)pSrc);
}

/* Keep the descriptor fd of a closed spill file, emptied, for the next
** spill of pOp: SQLITE_OK, or an error if it is not kept (the operator
** has finished, no memory for the list, the file cannot be emptied). */
static int dsSpillKeep(DsOp *pOp, int fd){
  if( pOp->nFreeFd<0 ) return SQLITE_DONE;
  if( pOp->nFreeFd>=pOp->nFreeFdAlloc ){
    int nNew = pOp->nFreeFdAlloc ? pOp->nFreeFdAlloc*2 : 16;
    int *aNew = sqlite3_realloc64(pOp->aFreeFd, sizeof(int)*(u64)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    pOp->aFreeFd = aNew;
    pOp->nFreeFdAlloc = nNew;
  }
  if( ftruncate(fd, 0)!=0 ) return SQLITE_IOERR;
  pOp->aFreeFd[pOp->nFreeFd++] = fd;
  return SQLITE_OK;
}

/* Close spill file p; the operator keeps its descriptor (see above). */
void dsSpillClose(DsSpill *p){
  if( p ){
    DsOp *pOp = p->pOp;
    dsSpillAheadFree(p);
    if( p->fd>=0 && dsSpillKeep(pOp, p->fd)!=SQLITE_OK ) close(p->fd);
    dsFree(&pOp->mem, p->aBuf);
    sqlite3_free(p->base.zErr);
    sqlite3_free(p);
  }
}
