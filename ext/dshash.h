/*
** dshash.h: the hash table of build rows and the Bloom filter (layer 4),
** private to the two files that use them: hashtable.c, which implements
** them, and hashjoin.c, the one strategy that builds on them.
*/
#ifndef DSHASH_H
#define DSHASH_H

#include "dataset_int.h"

/*
** A hash table of build rows (hashtable.c): one sub-table per list of
** rows it was made from, each a directory of slots (low bits of the hash)
** over an array of the rows sorted by slot.  The caller says which
** sub-table a hash belongs to (its partition).
*/
typedef struct DsHashPart DsHashPart;
struct DsHashPart {
  u8 *aRow;               /* the rows, slot after slot */
  const i64 *aOff;        /* mask+2 offsets: slot s is aOff[s]..aOff[s+1] */
  u64 mask;               /* slots - 1 */
  i64 nByte;              /* bytes of aRow */
  u8 *aBlock;             /* the allocation this sub-table frees, or NULL:
                          ** its rows, and those of the sub-tables after
                          ** it that share it (hashtable.c) */
};

typedef struct DsHashTable DsHashTable;
struct DsHashTable {
  DsMem *pMem;
  DsHashPart *aPart;      /* NULL: no table */
  i64 *aDir;              /* the directories of all sub-tables, one block */
  int nPart;
  i64 nRow;
};

int dsHashTableBuild(DsHashTable *p, DsMem *pMem, int nPart,
                     DsRow *const *apList, const i64 *anRow,
                     DsArena *const *apArena, i64 nReserve, DsOp *pOp);
void dsHashTableFree(DsHashTable *p);
i64 dsHashTableDirectoryBytes(const i64 *anRow, int nPart);

/* The rows of hash h's slot in sub-table iPart: from the one returned to
** *ppEnd (excluded), each DS_ROW_STRIDE() after the last. */
static inline DsRow *dsHashTableSlot(const DsHashTable *p, int iPart, u64 h,
                                     const u8 **ppEnd){
  assert( iPart>=0 && iPart<p->nPart );
  const DsHashPart *pPart = &p->aPart[iPart];
  const i64 *pOff = &pPart->aOff[h & pPart->mask];
  *ppEnd = pPart->aRow + pOff[1];
  return (DsRow *)(pPart->aRow + pOff[0]);
}

/* Where hash h's slot starts in the directory, for prefetching. */
static inline const void *dsHashTableSlotAddr(const DsHashTable *p,
                                              int iPart, u64 h){
  const DsHashPart *pPart = &p->aPart[iPart];
  return &pPart->aOff[h & pPart->mask];
}

/*
** A Bloom filter of key hashes (hashtable.c): a power-of-two array of
** 64-bit words; a hash sets three bits of one word.  The bits come from
** the hash itself (every bit is as good as another), the three bit
** positions from its low 18 bits and the word from the bits above them,
** below the 5 high bits that choose a partition (so the filter of one
** partition, whose hashes share those, still spreads).  One word per key
** keeps a test to one cache miss.  It never says no to a hash that was
** added.
*/
typedef struct DsBloom DsBloom;
struct DsBloom {
  u64 *aWord;             /* NULL: no filter */
  u64 mask;               /* words - 1 */
};

int dsBloomInit(DsBloom *p, DsMem *pMem, i64 nWord);
void dsBloomFree(DsBloom *p, DsMem *pMem);
void dsBloomAddList(DsBloom *p, const DsRow *pList);

/* splitmix64's finalizer: fresh, well-mixed bits from a hash. */
static inline u64 dsMix64(u64 x){
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27; x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

static inline u64 dsBloomWordBits(u64 h){
  return (1ULL << (h & 63)) | (1ULL << ((h >> 6) & 63))
       | (1ULL << ((h >> 12) & 63));
}

static inline void dsBloomAdd(DsBloom *p, u64 hash){
  assert( p->aWord!=0 );
  p->aWord[(hash >> 18) & p->mask] |= dsBloomWordBits(hash);
}

/* Fetch the word dsBloomMayHave() will test for hash into the cache. */
DS_PREFETCHER void dsBloomPrefetch(const DsBloom *p, u64 hash){
  __builtin_prefetch(&p->aWord[(hash >> 18) & p->mask]);
}

static inline int dsBloomMayHave(const DsBloom *p, u64 hash){
  u64 bits = dsBloomWordBits(hash);
  return (p->aWord[(hash >> 18) & p->mask] & bits)==bits;
}

#endif /* DSHASH_H */
