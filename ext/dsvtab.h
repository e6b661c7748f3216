/*
** dsvtab.h: layer 7 of docs/ARCHITECTURE.md, the virtual tables: what the
** CREATE VIRTUAL TABLE forms share (vtab_args.c) and the one skeleton
** (vtab.c) every module is a descriptor of.  Included by dataset_int.h
** alone, after dsops.h.
*/
#ifndef DSVTAB_H
#define DSVTAB_H

/*************************************************************************
** The CREATE VIRTUAL TABLE forms of the modules (vtab_args.c)
*/
/* The name=value arguments a module takes: the first nRequired of
** azName must be given, the others may be.  dsVtabArgsParse() fills one
** value per name (NULL for an optional one not given). */
typedef struct DsVtabArgSpec DsVtabArgSpec;
struct DsVtabArgSpec {
  const char *zFunc;      /* module name, for messages */
  int nName;
  int nRequired;
  const char *const *azName;
};

int dsVtabArgsParse(const DsVtabArgSpec *pSpec, int argc,
                    const char *const *argv, char **azValue, char **pzErr);
void dsVtabArgsFree(const DsVtabArgSpec *pSpec, char **azValue);
int dsVtabArgWord(const char *zValue, char **pzOut);
int dsVtabIsCreating(sqlite3 *db, const char *zSchema, const char *zTab);
int dsVtabIsFunctionForm(sqlite3 *db, int argc, const char *const *argv);

/* What the CREATE form of every two-input module keeps about its table:
** its name, the inputs as its columns were declared, why it is unusable
** (a reconnect that could not read its inputs: it has the placeholder
** schema), and how many of its xFilter/xNext calls are running (more than
** one can only come from tables that read each other in a cycle). */
typedef struct DsVtabTyped DsVtabTyped;
struct DsVtabTyped {
  const char *zFunc;      /* module name, for messages */
  char *zName;            /* the table's name */
  int bTemp;              /* in the temp schema: gone with the connection */
  char *zUnusable;        /* why the inputs could not be read on connect */
  DsInput *apIn[2];       /* the inputs as the columns were declared */
  int nActive;            /* xFilter or xNext calls of this table running */
};
int dsVtabTypedInit(DsVtabTyped *p, const char *zFunc, const char *zSchema,
                    const char *zName);
int dsVtabTypedConnected(sqlite3 *db, DsVtabTyped *p, int rc, int bCreating,
                         char **pzErr);
int dsVtabTypedUsable(sqlite3_vtab *pVtab, const DsVtabTyped *p);
int dsVtabTypedReopen(DsVtabTyped *p, sqlite3 *db, DsInput **apIn,
                      char **pzErr);
int dsVtabTypedWanted(const DsVtabTyped *p, const char *idxStr,
                      u8 **aaWant);
void dsVtabTypedClear(DsVtabTyped *p);

char *dsVtabPairName(DsInput *const apIn[2], int iSide, int iCol);
void dsVtabSchemaColumn(sqlite3_str *pSql, const char *zName,
                        const char *zDecl, const char *zColl);
int dsVtabCheckWidth(sqlite3 *db, const char *zFunc, const char *zTab,
                     int nCol, const char *zFrom, const char *zFix,
                     char **pzErr);
int dsVtabDeclare(sqlite3 *db, const char *zFunc, const char *zTab,
                  sqlite3_str *pSql, char **pzErr);
int dsVtabDeclarePair(sqlite3 *db, const char *zFunc, const char *zTab,
                      DsInput *const apIn[2], char **pzErr);
int dsVtabDeclarePlaceholder(sqlite3 *db);
int dsVtabFunctionBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo,
                            const DsVtabArgSpec *pSpec, int iFirst,
                            int *pmArg);
void dsVtabFunctionArgs(int mArg, int argc, sqlite3_value **argv, int nArg,
                        sqlite3_value **aArg);
void dsVtabSetError(sqlite3_vtab *pVtab, char *zMsg);
int dsVtabColUsed(u64 mUsed, int iCol);

/*************************************************************************
** The virtual-table skeleton (vtab.c): one set of methods serves every
** module, driven by the module's descriptor.  A module's table and cursor
** structs start with a DsVtab and a DsVtabCursor.
*/
#define DS_VTAB_MAX_ARG   6   /* arguments of a module at most */
#define DS_VTAB_USE_SHIFT 8   /* idxNum bit of the first output column used
                              ** (table-valued form; bits 0-5: arguments) */

typedef struct DsVtabModule DsVtabModule;
typedef struct DsVtab DsVtab;
typedef struct DsVtabCursor DsVtabCursor;

struct DsVtab {
  sqlite3_vtab base;
  const DsVtabModule *pMod;
  DsConn *pConn;
  int bTyped;             /* the CREATE VIRTUAL TABLE form */
  DsVtabTyped typed;      /* that form: name, inputs as declared, nActive */
};

struct DsVtabCursor {
  sqlite3_vtab_cursor base;
  /* xColumn of the form: a pointer, so that the two stay apart and the
  ** CREATE form's small one is not weighed down by the JSON one. */
  int (*xColumn)(DsVtabCursor *, sqlite3_context *, int);
  DsConn *pConn;
  DsVtab *pTab;
  sqlite3_value *apArg[DS_VTAB_MAX_ARG];  /* the arguments (hidden columns) */
  DsInput *apIn[2];       /* the inputs of the run */
  i64 iRowid;
  int bEof;
};

/* A module: see vtab.c for how each member is used. */
struct DsVtabModule {
  DsVtabArgSpec args;     /* name and arguments */
  const char *zSchema;    /* the table-valued form's schema */
  int iArg0;              /* its first hidden (argument) column */
  int nUse;               /* its output columns recorded in idxNum */
  i64 nFunctionRows;      /* its estimatedRows */
  i64 iRowid0;            /* rowid of the first row */
  size_t szTab, szCur;    /* sizes of the module's table and cursor */
  int bColUsedIdxStr;     /* CREATE form: colUsed goes to idxStr, as hex */
  /* The CREATE form; xSetup NULL: the module has none. */
  int (*xSetup)(sqlite3 *, DsVtab *, char **azValue, int bCreating,
                char **pzErr);
  void (*xTableClear)(DsVtab *);                              /* or NULL */
  int (*xTableBestIndex)(DsVtab *, sqlite3_index_info *);     /* or NULL */
  void (*xFunctionOrder)(DsVtab *, sqlite3_index_info *);     /* or NULL */
  /* A run: open the operator (aArg NULL for the CREATE form, whose
  ** inputs are in the cursor already), step it (SQLITE_ROW, SQLITE_DONE,
  ** or an error with *pzErr), release what the run set up. */
  int (*xStart)(DsVtabCursor *, int idxNum, const char *idxStr,
                sqlite3_value **aArg, char **pzErr);
  int (*xStep)(DsVtabCursor *, char **pzErr);
  void (*xReset)(DsVtabCursor *);
  void (*xCursorClear)(DsVtabCursor *);                       /* or NULL */
  int (*xFunctionColumn)(DsVtabCursor *, sqlite3_context *, int);
  int (*xTableColumn)(DsVtabCursor *, sqlite3_context *, int);
};

int dsVtabRegister(sqlite3 *db, const DsVtabModule *pMod, DsConn *pConn,
                   void (*xFreeConn)(void *));

#endif /* DSVTAB_H */
