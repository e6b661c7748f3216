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
** A DsSpill is also a DsSource (its first member), so a spilled partition
** can be fed back into the same code that reads an input.
**
** No statement is stepped while a spill file is written or read, so every
** row moved ticks the operator's interrupt check (interrupt.c): whatever
** loop moves rows through a file can be interrupted there.
*/
#include "dataset_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

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
};

/* Bytes of I/O buffer per file: DsOp.nSpillBuf when the operator sets it
** (a hash join writing many partitions at once shares the budget between
** them), else 1/64 of memory_limit, within these bounds. */
#define DS_SPILL_BUF_MIN 512
#define DS_SPILL_BUF_MAX (256 * 1024)

/* Allocate the I/O buffer, which exists only while the file is being
** written or read: a file waiting its turn holds no memory. */
static int dsSpillBuffer(DsSpill *p){
  i64 nBuf;
  if( p->aBuf ) return SQLITE_OK;
  nBuf = p->pOp->nSpillBuf ? p->pOp->nSpillBuf
                           : p->pOp->pConn->nMemLimit / 64;
  if( nBuf < DS_SPILL_BUF_MIN ) nBuf = DS_SPILL_BUF_MIN;
  if( nBuf > DS_SPILL_BUF_MAX ) nBuf = DS_SPILL_BUF_MAX;
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

static int dsSpillIoError(DsSpill *p, const char *zWhat, int err){
  int rc = (err==ENOSPC || err==EFBIG || err==EDQUOT) ? SQLITE_FULL
                                                      : SQLITE_IOERR;
  return dsOpError(p->pOp, rc, "cannot %s a spill file in '%s': %s", zWhat,
                   dsTempDir(p->pOp->pConn), strerror(err));
}

static int dsSpillFlush(DsSpill *p){
  int i = 0;
  while( i<p->nBuf ){
    ssize_t n = pwrite(p->fd, p->aBuf + i, (size_t)(p->nBuf - i), p->iOff);
    if( n<0 && errno==EINTR ) continue;
    if( n<=0 ) return dsSpillIoError(p, "write", n<0 ? errno : ENOSPC);
    i += (int)n;
    p->iOff += n;
  }
  p->pOp->stats.nSpilled += p->nBuf;
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

int dsSpillOpen(DsOp *pOp, DsSpill **ppSpill){
  const char *zDir = dsTempDir(pOp->pConn);
  char *zPath = sqlite3_mprintf("%s/ds_spill_XXXXXX", zDir);
  DsSpill *p;
  *ppSpill = 0;
  if( zPath==0 ) return SQLITE_NOMEM;
  p = sqlite3_malloc64(sizeof(DsSpill));
  if( p==0 ){
    sqlite3_free(zPath);
    return SQLITE_NOMEM;
  }
  memset(p, 0, sizeof(*p));
  p->base.xNext = dsSpillNext;
  p->base.xClose = dsSpillCloseSource;
  p->pOp = pOp;
  p->fd = mkstemp(zPath);
  if( p->fd<0 ){
    int rc = dsSpillIoError(p, "create", errno);
    sqlite3_free(zPath);
    sqlite3_free(p);
    return rc==SQLITE_FULL ? rc : SQLITE_CANTOPEN;
  }
  unlink(zPath);
  sqlite3_free(zPath);
  *ppSpill = p;
  return SQLITE_OK;
}

/* The work of moving one row of nData bytes through a spill file, in the
** units of dsOpTickN(): the row, and a unit per 64 bytes copied. */
static u32 dsSpillTicks(u32 nData){
  return DS_TICK_ROW + nData/64;
}

/* Append one row. */
int dsSpillWrite(DsSpill *p, const DsRow *pRow){
  int rc = dsOpTickN(p->pOp, dsSpillTicks(pRow->nData));
  if( rc!=SQLITE_OK ) return rc;
  if( p->aBuf==0 ){
    int rc = dsSpillBuffer(p);
    if( rc!=SQLITE_OK ) return rc;
  }
  p->nRow++;
  p->nByte += (i64)DS_ROW_HDR + pRow->nData;
  return dsSpillAppend(p, DS_ROW_IMAGE((DsRow *)pRow),
                       (i64)DS_ROW_HDR + pRow->nData);
}

/* Finish writing (or reading) and go back to the first row.  The buffer
** is given back until the first read. */
int dsSpillRewind(DsSpill *p){
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

/* Copy the next n bytes of the file to z. */
static int dsSpillReadBytes(DsSpill *p, u8 *z, i64 n){
  while( n>0 ){
    i64 nCopy = p->nBuf - p->iBuf;
    if( nCopy==0 ){
      ssize_t nRead;
      do{
        nRead = pread(p->fd, p->aBuf, (size_t)p->nAlloc, p->iOff);
      }while( nRead<0 && errno==EINTR );
      if( nRead<0 ) return dsSpillIoError(p, "read", errno);
      if( nRead==0 ){
        return dsOpError(p->pOp, SQLITE_IOERR_SHORT_READ,
            "a spill file in '%s' is shorter than what was written to it",
            dsTempDir(p->pOp->pConn));
      }
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

/* The next row, allocated in pArena: SQLITE_ROW, SQLITE_DONE or error. */
int dsSpillRead(DsSpill *p, DsArena *pArena, DsRow **ppRow){
  u8 aHdr[DS_ROW_HDR];
  u32 nData;
  DsRow *pRow;
  int rc;
  if( p->base.nRow>=p->nRow ){
    dsSpillDropBuffer(p);
    return SQLITE_DONE;
  }
  if( p->aBuf==0 && (rc = dsSpillBuffer(p))!=SQLITE_OK ) return rc;
  rc = dsSpillReadBytes(p, aHdr, (i64)DS_ROW_HDR);
  if( rc!=SQLITE_OK ) return rc;
  memcpy(&nData, aHdr + offsetof(DsRow, nData) - offsetof(DsRow, hash), 4);
  rc = dsOpTickN(p->pOp, dsSpillTicks(nData));
  if( rc!=SQLITE_OK ) return rc;
  pRow = dsArenaAlloc(pArena, (i64)DS_ROW_SIZE(nData));
  if( pRow==0 ) return SQLITE_NOMEM;
  pRow->pNext = 0;
  memcpy(DS_ROW_IMAGE(pRow), aHdr, DS_ROW_HDR);
  rc = dsSpillReadBytes(p, pRow->aData, nData);
  if( rc!=SQLITE_OK ) return rc;
  p->base.nRow++;
  *ppRow = pRow;
  return SQLITE_ROW;
}

i64 dsSpillRows(const DsSpill *p){ return p->nRow; }
i64 dsSpillBytes(const DsSpill *p){ return p->nByte; }

void dsSpillClose(DsSpill *p){
  if( p ){
    if( p->fd>=0 ) close(p->fd);
    dsFree(&p->pOp->mem, p->aBuf);
    sqlite3_free(p->base.zErr);
    sqlite3_free(p);
  }
}
