# dataset: Apache Flink's DataSet operators as a SQLite extension.
#
#   make             build build/dataset.so (build/dataset.dylib on macOS)
#   make dist        the release files, into dist/ (docs/install.md): the
#                    amalgamation dataset.c and dataset.h, the Python sdist
#                    and wheel, the npm tarball
#   make demo        build, then run every sql/examples/*.sql in the sqlite3 shell
#   make test        build, then run the whole test suite
#   make test-threads1  the differential suites again with threads 1
#                    (DS_TEST_THREADS=1), where `make test` runs with the
#                    default (the number of cores, at most 8)
#   make testfixture a tclsh with the extension linked in statically
#                    (-DSQLITE_CORE, sqlite3_auto_extension), for sanitizers
#                    and fault injection
#   make sanitize    the whole test suite under AddressSanitizer and
#                    UndefinedBehaviorSanitizer (build/sanitize/); CI's,
#                    with every 2nd fault point of the allocation loops of
#                    faults*.test (FAULT_STEP=1 tries them all)
#   make valgrind    the whole test suite under valgrind memcheck (slow)
#                    Both take TESTS='GLOB ...' (runall.tcl's arguments)
#   make install     install the extension under $(PREFIX) (default
#                    /usr/local), honouring DESTDIR; `make uninstall` undoes it
#   make clients     the C client programs of tests/clients.test
#   make node-client better-sqlite3 12 from npm, into build/node
#   make interrupt   stop every step of every operator with sqlite3_interrupt()
#                    and with a progress handler (tests/interrupt.c), on
#                    Debian's SQLite and, if `make node-client` brought its
#                    amalgamation, on a newer one; prints the latencies
#   make tsan        tests/concurrency.c (8 readers, a writer, one WAL
#                    database) under ThreadSanitizer: the extension's code
#                    on Debian's SQLite (not instrumented) and, with the
#                    amalgamation of `make node-client`, with SQLite itself
#                    instrumented too; zero reports (ROUNDS=N, default 4)
#   make bench       the benchmarks (bench/bench.c): generate data under
#                    build/bench/data once, run every case, write
#                    build/bench/results.tsv, docs/benchmarks.md and
#                    docs/benchmarks.png.  Takes an hour or more.
#   make bench-quick the same on the two smaller sizes, fewer hints and
#                    groups, 3 runs (about half an hour).  Results
#                    accumulate in results.tsv: a run replaces the cases
#                    it runs (rm the file to start afresh)
#   make bench-callgrind CASE=uni-1Mx1M:inner:count:tvf:BS
#                    one case under valgrind --tool=callgrind, and the
#                    functions that cost the most instructions
#                    (build/dsbench list prints the case names)
#   Bench variables: FILTER=GLOB[,GLOB] (case names), REPS=N, TIMEOUT=SEC.
#   make soak        the long differential run (tests/soak.c): a million
#                    random cases against SQLite's own SQL; SOAK_CASES=N,
#                    SOAK_SEED=N (default: the time, printed)
#   make fuzz        the libFuzzer target (tests/fuzz/fuzz_ops.c, clang
#                    with ASan and UBSan) for FUZZ_SECONDS (default 60)
#                    over tests/fuzz/corpus; new inputs go to
#                    build/fuzz/corpus, crashes to build/fuzz/
#   make fuzz-merge  minimise tests/fuzz/corpus with what build/fuzz/corpus
#                    found (libFuzzer's -merge=1)
#
# Objects of every variant build go to build/<variant>/ (see "Variants");
# the fuzz, bench and tsan targets are in mk/*.mk.
#
# Missing Debian packages are installed with apt-get when run as root;
# otherwise make stops and prints the command that installs them (on a
# system without apt-get: what is missing, by its Debian name).

CC      ?= cc
CFLAGS  ?= -O2 -g
SQLITE3 ?= sqlite3
TCLSH   ?= tclsh

VERSION   := $(shell cat VERSION)
# Shared libraries are .dylib on macOS, .so elsewhere.
SO        := $(if $(filter Darwin,$(shell uname -s)),.dylib,.so)
LIB       := build/dataset$(SO)
# _DEFAULT_SOURCE beside POSIX: madvise() and its MADV_ hints (memory.c).
DS_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
             -Wall -Wextra -fPIC -pthread -DDS_VERSION='"$(VERSION)"'
# The shared library exports sqlite3_dataset_init alone: hidden symbols let
# the compiler inline and call directly across the sources (-flto).
SO_CFLAGS := -fvisibility=hidden -flto=auto
SRC       := $(wildcard ext/*.c)
HDR       := $(wildcard ext/*.h)
# Tcl's flags as pkg-config gives them (installed by deps-fixture).
TCL_CFLAGS ?= $(shell pkg-config --cflags tcl 2>/dev/null)
TCL_LIBS   ?= $(shell pkg-config --libs tcl 2>/dev/null)
SQLITE_LIBS ?= -lsqlite3
# The compiler of the libFuzzer target (mk/fuzz.mk; deps-fuzz checks it).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined

# --- Variants -----------------------------------------------------------------
# Every build of ext/ but the release library is a variant: its objects are
# compiled once into build/<variant>/ with its own compiler, flags and
# dependency step, and every program of that variant links them, instead of
# each recipe compiling every source again.  A variant NAME sets NAME_CC
# (default $(CC)), NAME_CFLAGS and NAME_DEPS (the deps-* step its objects
# need), then $(eval $(call ds_variant,NAME)) gives NAME_OBJ and the rule.
# build/dataset.so stays one compile of all sources (-flto across them).
define ds_variant
$(1)_CC  ?= $$(CC)
$(1)_OBJ := $$(SRC:ext/%.c=build/$(1)/%.o)
build/$(1)/%.o: ext/%.c $$(HDR) | $$($(1)_DEPS)
	@mkdir -p build/$(1)
	$$($(1)_CC) $$(DS_CFLAGS) $$($(1)_CFLAGS) -c -o $$@ $$<
endef

.PHONY: all demo test test-threads1 testfixture clean deps-build deps-demo deps-test \
        deps-fixture install uninstall clients node-client deps-sqlcipher \
        bench bench-quick bench-callgrind deps-bench deps-callgrind \
        sanitize valgrind deps-sanitize deps-valgrind \
        interrupt tsan deps-tsan soak fuzz fuzz-merge deps-fuzz \
        dist dist-python dist-npm deps-dist deps-dist-test

all: $(LIB)

# The release library leaves out the assert()s of ext/ (-DNDEBUG): they
# check what the comments state, in every test build (build/testfixture,
# the static objects of the soak and fuzz programs, make sanitize).
$(LIB): $(SRC) $(HDR) | deps-build
	@mkdir -p build
	$(CC) $(DS_CFLAGS) $(SO_CFLAGS) $(CFLAGS) -DNDEBUG -shared -o $@ $(SRC) \
	    $(LDFLAGS) -lm

testfixture: build/testfixture

# -DDS_TEST_HOOKS: the test-only code of ext/ (the spill-file fault hooks
# of spill.c, the thread-start fault of rangeread.c, ds_test_hook() of
# interrupt.c), for test programs only, never
# in build/dataset.so or libsqlite3_dataset.a.
# Debian's libsqlite3 has the column metadata routines (PRAGMA
# compile_options: ENABLE_COLUMN_METADATA); code linked with it says so, as
# SQLite's own headers expect, so that a typed column gets the collation
# of the input column it reads (input.c, dsColumnCollation).
CORE_CFLAGS    := -DSQLITE_CORE -DSQLITE_ENABLE_COLUMN_METADATA
FIXTURE_CFLAGS  = $(CORE_CFLAGS) -DDS_TEST_HOOKS -Iext $(TCL_CFLAGS)

FIXTURE_LIBS    = $(SQLITE_LIBS) $(TCL_LIBS) -lm

# The test fixture's objects (build/fixture/) and the static library's
# (build/static/: -DSQLITE_CORE, without the test hooks).
fixture_CFLAGS  = $(CFLAGS) $(FIXTURE_CFLAGS)
fixture_DEPS    = deps-fixture
static_CFLAGS   = $(CFLAGS) $(CORE_CFLAGS)
static_DEPS     = deps-build
$(eval $(call ds_variant,fixture))
$(eval $(call ds_variant,static))

build/testfixture: tests/testfixture.c $(fixture_OBJ) | deps-fixture
	$(CC) $(DS_CFLAGS) $(fixture_CFLAGS) -o $@ tests/testfixture.c \
	    $(fixture_OBJ) $(LDFLAGS) $(FIXTURE_LIBS)

demo: $(LIB) | deps-demo
	@for f in sql/examples/*.sql; do \
	    echo "==> $$f"; \
	    $(SQLITE3) -batch -bail :memory: < "$$f" || exit 1; \
	    echo; \
	done

# The suite under tclsh with build/dataset.so loaded, as users load it,
# except faults*.test, which need the test program's fault injection and
# so run in build/testfixture (DS_TESTFIXTURE); one total ends the run.
# runall.tcl runs as many files at once as there are cores (DS_TEST_JOBS).
# The suite also runs the soak driver briefly (tests/soak.test) and replays
# the fuzz corpus (tests/fuzz.test): both are built first.  TESTS globs
# reach runall.tcl unexpanded (set -f): the shell would expand packaging*
# to the directory packaging/.
test: $(LIB) build/testfixture build/soak build/fuzz_replay | deps-test
	set -f; DS_TESTFIXTURE=build/testfixture $(TCLSH) tests/runall.tcl $(TESTS)

# The differential suites (each compares the operators with SQLite's own
# SQL) with threads 1 on every connection they open (tester.tcl, and the
# soak and fuzz drivers through tests/oracle.c, read DS_TEST_THREADS):
# the single-threaded path, which `make test` no longer takes by default.
# Not threads.test, which sets threads 1, 2 and 8 on each of its cases
# itself: run again here it repeated `make test`'s run, about 190 s of CI.
THREADS1_TESTS := join_diff.test join_vtab_diff.test cogroup.test \
                  cogroup_vtab.test cross.test cross_vtab.test soak.test \
                  fuzz.test
test-threads1: $(LIB) build/testfixture build/soak build/fuzz_replay | deps-test
	DS_TEST_THREADS=1 DS_TESTFIXTURE=build/testfixture \
	    $(TCLSH) tests/runall.tcl $(THREADS1_TESTS)

# --- Sanitizers and valgrind (docs/reliability.md) --------------------------
# make sanitize: the whole suite (every tests/*.test, sql/examples, docs
# examples) under AddressSanitizer + UndefinedBehaviorSanitizer, halting at
# the first report, leaks checked at every exit.  The test program is
# build/sanitize/testfixture; runall.tcl starts each test file in a child
# of the same program.  The examples and docs.test go through the sqlite3
# shell, which runs with the sanitizer runtimes preloaded and loads
# build/sanitize/dataset.so (tests/sanitizer_shell.sh).
SAN_DIR    := build/sanitize
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=all
# Instrumented code runs about three times slower: faults.test alone takes
# longer than runall.tcl's default 900 s per file, so a file may take three
# times as long here (make sanitize TIMEOUT=N changes it).  Every fault
# point runs natively in `make test`; here every 2nd (FAULT_STEP), which
# keeps CI's run under 45 minutes.
SAN_ENV    := DS_TEST_TIMEOUT=$(or $(TIMEOUT),2700) \
              DS_FAULT_STEP=$(or $(FAULT_STEP),2) \
              ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1 \
              UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
              DS_SANITIZER=asan \
              SQLITE3=$(CURDIR)/$(SAN_DIR)/sqlite3 \
              DS_EXT=$(CURDIR)/$(SAN_DIR)/dataset
SAN_PRELOAD = $(shell $(CC) -print-file-name=libasan.so) \
              $(shell $(CC) -print-file-name=libubsan.so)

# Two variants: the test fixture's objects (build/sanitize/) and the
# loadable library's (build/sanitize-so/, without -DSQLITE_CORE).
sanitize_CFLAGS    = $(SAN_CFLAGS) $(FIXTURE_CFLAGS)
sanitize_DEPS      = deps-sanitize
sanitize-so_CFLAGS = $(SAN_CFLAGS)
sanitize-so_DEPS   = deps-sanitize
$(eval $(call ds_variant,sanitize))
$(eval $(call ds_variant,sanitize-so))

$(SAN_DIR)/testfixture: tests/testfixture.c $(sanitize_OBJ) | deps-sanitize
	$(CC) $(DS_CFLAGS) $(sanitize_CFLAGS) -o $@ tests/testfixture.c \
	    $(sanitize_OBJ) $(LDFLAGS) $(FIXTURE_LIBS)

$(SAN_DIR)/dataset.so: $(sanitize-so_OBJ) | deps-sanitize
	@mkdir -p $(SAN_DIR)
	$(CC) $(DS_CFLAGS) $(SAN_CFLAGS) -shared -o $@ $(sanitize-so_OBJ) \
	    $(LDFLAGS) -lm

# The shell wrapper runs in $(SAN_DIR)/root, where build/dataset.so is the
# sanitized library: the examples' `.load ./build/dataset` finds it there.
$(SAN_DIR)/sqlite3: tests/sanitizer_shell.sh $(SAN_DIR)/dataset.so
	@mkdir -p $(SAN_DIR)/root/build
	ln -sf ../../dataset.so $(SAN_DIR)/root/build/dataset.so
	sed -e 's|@PRELOAD@|$(strip $(SAN_PRELOAD))|' \
	    -e 's|@ROOT@|$(CURDIR)/$(SAN_DIR)/root|' \
	    tests/sanitizer_shell.sh > $@
	chmod +x $@

sanitize: $(SAN_DIR)/testfixture $(SAN_DIR)/sqlite3 build/soak build/fuzz_replay | deps-test
	set -f; $(SAN_ENV) $(SAN_DIR)/testfixture tests/runall.tcl $(TESTS)

# make valgrind: the same suite under valgrind's memcheck (tests/valgrind.tcl):
# build/testfixture and every child it starts (test files, the sqlite3
# shell with build/dataset.so), zero errors and no definite leak in any
# process; a test file that fails under memcheck but passes natively is a
# failure of valgrind's emulation of SQLite's long double arithmetic, not
# of the extension.  Slow (an hour or more); not part of CI.
# DS_FAULT_STEP samples the allocation loops of faults*.test.
valgrind: build/testfixture $(LIB) | deps-test deps-valgrind
	set -f; DS_SANITIZER=valgrind DS_TEST_TIMEOUT=$(or $(TIMEOUT),14400) \
	DS_FAULT_STEP=$(or $(FAULT_STEP),7) \
	    $(TCLSH) tests/valgrind.tcl build/testfixture $(TESTS)

# --- Soak and fuzz (tests/soak.c, tests/oracle.c; the fuzz targets are in
#     mk/fuzz.mk) ---------------------------------------------------------------
# Both link the extension in (-DSQLITE_CORE) with the system libsqlite3 and
# compare every valid case with SQLite's own SQL (tests/oracle.c).
ORACLE       := tests/oracle.c tests/oracle.h
SOAK_CASES   ?= 1000000
SOAK_SEED    ?= $(shell date +%s)

build/soak: tests/soak.c $(ORACLE) build/libsqlite3_dataset.a
	$(CC) $(DS_CFLAGS) $(CFLAGS) -Iext -Itests -o $@ tests/soak.c \
	    tests/oracle.c build/libsqlite3_dataset.a $(LDFLAGS) $(SQLITE_LIBS) -lm

soak: build/soak
	build/soak --seed $(SOAK_SEED) --cases $(SOAK_CASES) --progress 10000

clean:
	rm -rf build dist

# --- Install ----------------------------------------------------------------
# $(PREFIX)/lib/sqlite3/dataset.so   (.dylib on macOS) for .load and sqlite3_load_extension()
# $(PREFIX)/lib/libsqlite3_dataset.a the same code built with -DSQLITE_CORE,
#                                    for programs that link it in
# $(PREFIX)/include/dataset.h        sqlite3_dataset_init() for those
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
EXTDIR     ?= $(LIBDIR)/sqlite3

install: $(LIB) build/libsqlite3_dataset.a
	install -d $(DESTDIR)$(EXTDIR) $(DESTDIR)$(INCLUDEDIR)
	install -m 644 $(LIB) $(DESTDIR)$(EXTDIR)/dataset$(SO)
	install -m 644 build/libsqlite3_dataset.a \
	    $(DESTDIR)$(LIBDIR)/libsqlite3_dataset.a
	install -m 644 ext/dataset.h $(DESTDIR)$(INCLUDEDIR)/dataset.h

uninstall:
	rm -f $(DESTDIR)$(EXTDIR)/dataset$(SO) \
	    $(DESTDIR)$(LIBDIR)/libsqlite3_dataset.a \
	    $(DESTDIR)$(INCLUDEDIR)/dataset.h
	rmdir $(DESTDIR)$(EXTDIR) 2>/dev/null || true

build/libsqlite3_dataset.a: $(static_OBJ)
	rm -f $@
	$(AR) rcs $@ $(static_OBJ)

# --- Clients (tests/clients/, run by tests/clients.test) -------------------
# static_client links the extension in (libsqlite3_dataset.a); dynamic_client
# loads build/dataset.so; test/needs4/dataset.so is the extension built to
# require SQLite 4.0.0, so that every SQLite refuses it, and
# test/other/dataset.so the extension under another version number, built
# with -DDS_DEFAULT_THREADS=1 (its threads default to 1).  sqlcipher_client is
# dynamic_client linked with SQLCipher 3.4, which is SQLite 3.15: the
# extension must refuse that one (built on its own: it needs a package).
CLIENT_HDR := tests/clients/script.h

clients: build/static_client build/dynamic_client build/test/needs4/dataset.so \
         build/test/other/dataset.so

build/static_client: tests/clients/static.c $(CLIENT_HDR) \
                     build/libsqlite3_dataset.a
	$(CC) $(DS_CFLAGS) $(CFLAGS) -Iext -o $@ tests/clients/static.c \
	    build/libsqlite3_dataset.a $(LDFLAGS) $(SQLITE_LIBS) -lm

build/dynamic_client: tests/clients/dynamic.c $(CLIENT_HDR) | deps-build
	@mkdir -p build
	$(CC) $(DS_CFLAGS) $(CFLAGS) -o $@ tests/clients/dynamic.c \
	    $(LDFLAGS) $(SQLITE_LIBS)

build/sqlcipher_client: tests/clients/dynamic.c $(CLIENT_HDR) | deps-sqlcipher
	@mkdir -p build
	$(CC) $(DS_CFLAGS) $(CFLAGS) $$(pkg-config --cflags sqlcipher) -o $@ \
	    tests/clients/dynamic.c $(LDFLAGS) $$(pkg-config --libs sqlcipher)

# The objects of both are the variants needs4 and other.
needs4_CFLAGS = -O0 -DDS_MIN_SQLITE=4000000
needs4_DEPS   = deps-build
other_CFLAGS  = -O0 -UDS_VERSION -DDS_VERSION='"0.0.0-other"' \
                -DDS_DEFAULT_THREADS=1
other_DEPS    = deps-build
$(eval $(call ds_variant,needs4))
$(eval $(call ds_variant,other))

build/test/needs4/dataset.so: $(needs4_OBJ)
	@mkdir -p build/test/needs4
	$(CC) -shared -o $@ $(needs4_OBJ) $(LDFLAGS)

# The extension under another version number, which a connection that has
# this one loaded must refuse to load on top of it.
build/test/other/dataset.so: $(other_OBJ)
	@mkdir -p build/test/other
	$(CC) -shared -o $@ $(other_OBJ) $(LDFLAGS)

# better-sqlite3 12 (tests/clients/package.json) from npm's registry; it
# builds its own SQLite.  Installed once, then found in build/node.
NODE_BS3 := build/node/node_modules/better-sqlite3/build/Release/better_sqlite3.node

node-client: $(NODE_BS3)

$(NODE_BS3): tests/clients/package.json
	@mkdir -p build/node
	cp tests/clients/package.json build/node/package.json
	npm install --prefix build/node --no-audit --no-fund
	touch $@

# --- Interrupts (tests/interrupt.test) -------------------------------------
# build/test/hooks/dataset.so  the extension with its test hook
#                              (-DDS_TEST_HOOKS: the SQL function
#                              ds_test_hook(), see ext/interrupt.c)
# build/interrupt              tests/interrupt.c on Debian's SQLite (3.40)
# build/interrupt-new          the same on a SQLite that has
#                              sqlite3_is_interrupted() (3.41+): the
#                              amalgamation better-sqlite3 ships, which
#                              `make node-client` puts under build/node
#                              (NEW_SQLITE_DIR: another directory holding
#                              sqlite3.c and sqlite3.h), compiled with
#                              SQLite's default options
HOOKS_SO       := build/test/hooks/dataset.so
NEW_SQLITE_DIR ?= build/node/node_modules/better-sqlite3/deps/sqlite3
NEW_SQLITE_O   := build/test/newsqlite/sqlite3.o
TEST_CFLAGS    := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -pthread

# Its objects are the variant hooks; -flto=auto again at the link, where
# the compiler does its work across the sources.
hooks_CFLAGS = $(SO_CFLAGS) $(CFLAGS) -DDS_TEST_HOOKS
hooks_DEPS   = deps-build
$(eval $(call ds_variant,hooks))

$(HOOKS_SO): $(hooks_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(DS_CFLAGS) $(hooks_CFLAGS) -shared -o $@ $(hooks_OBJ) \
	    $(LDFLAGS) -lm

build/interrupt: tests/interrupt.c $(HOOKS_SO)
	$(CC) $(TEST_CFLAGS) $(CFLAGS) -o $@ tests/interrupt.c $(LDFLAGS) \
	    $(SQLITE_LIBS)

$(NEW_SQLITE_O): $(NEW_SQLITE_DIR)/sqlite3.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -DSQLITE_THREADSAFE=1 -c -o $@ $<

build/interrupt-new: tests/interrupt.c $(NEW_SQLITE_O) $(HOOKS_SO)
	$(CC) $(TEST_CFLAGS) $(CFLAGS) -I$(NEW_SQLITE_DIR) -o $@ \
	    tests/interrupt.c $(NEW_SQLITE_O) $(LDFLAGS) -lm -ldl

interrupt: build/interrupt
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	build/interrupt "$$dir" && \
	if [ -f $(NEW_SQLITE_DIR)/sqlite3.c ]; then \
	    $(MAKE) --no-print-directory build/interrupt-new && \
	    build/interrupt-new "$$dir"; \
	else \
	    echo "(no newer SQLite: run make node-client for its amalgamation)"; \
	fi

# --- Concurrency (tests/concurrency.test; make tsan is in mk/tsan.mk) -----
# build/concurrency            tests/concurrency.c with the extension linked
#                              in (the static variant's objects)
build/concurrency: tests/concurrency.c $(static_OBJ) | deps-build
	$(CC) $(DS_CFLAGS) $(static_CFLAGS) -Iext -o $@ tests/concurrency.c \
	    $(static_OBJ) $(LDFLAGS) $(SQLITE_LIBS) -lm

# The fuzz, bench and tsan targets, in fragments of their own (after the
# variables they use: NEW_SQLITE_DIR, ORACLE, the variant template).
include mk/fuzz.mk mk/bench.mk mk/tsan.mk

# --- Release files (make dist; docs/install.md) ----------------------------
# dist/dataset.c, dist/dataset.h  the amalgamation, by tools/amalgamate.tcl
#                                 from ext/ and xxHash's header (found
#                                 where the compiler finds it)
# dist/sqlite-dataset-V.tar.gz    the Python sdist: compiles dataset.c at
#                                 install
# dist/sqlite_dataset-V-py3-none-PLATFORM.whl   the Python wheel
# dist/sqlite-dataset-V.tgz       the npm tarball (`npm pack`), with the
#                                 library for this platform; it compiles
#                                 dataset.c at install on any other
# The packages are built in build/dist/ from packaging/python and
# packaging/npm, with the amalgamation and LICENSE copied beside them.
# PYTHON is the Python whose setuptools, wheel and build make the Python
# package (the system's: the one first on PATH may be a pyenv build
# without them).  tests/packaging.test installs every file as users do.
PYTHON    ?= /usr/bin/python3
XXHASH_H  ?= $(shell $(CC) $(CPPFLAGS) $(CFLAGS) -M -include xxhash.h \
               -x c /dev/null 2>/dev/null | \
               tr ' \\' '\n\n' | grep '/xxhash\.h$$' | head -n 1)
DIST_AMAL := dist/dataset.c dist/dataset.h
DIST_LIB  := build/dist/dataset$(SO)

dist: $(DIST_AMAL) dist-python dist-npm
	@ls -l dist

# One version everywhere: VERSION (ds_version()), the packages, CHANGELOG.md.
dist/dataset.c: $(SRC) $(HDR) VERSION LICENSE tools/amalgamate.tcl \
                packaging/python/sqlite_dataset/__init__.py \
                packaging/npm/package.json CHANGELOG.md | deps-build deps-test
	@v='$(VERSION)'; \
	grep -q "^__version__ = \"$$v\"$$" packaging/python/sqlite_dataset/__init__.py || \
	    { echo "packaging/python/sqlite_dataset/__init__.py: __version__ is not $$v (VERSION)"; exit 1; }; \
	grep -q "^  \"version\": \"$$v\",$$" packaging/npm/package.json || \
	    { echo "packaging/npm/package.json: version is not $$v (VERSION)"; exit 1; }; \
	grep -q "^## $$v " CHANGELOG.md || \
	    { echo "CHANGELOG.md: no section '## $$v (date)' for VERSION"; exit 1; }
	$(TCLSH) tools/amalgamate.tcl dist '$(XXHASH_H)'

dist/dataset.h: dist/dataset.c
	@:

# The amalgamation compiled alone, as its header comment says.
$(DIST_LIB): dist/dataset.c
	@mkdir -p build/dist
	$(CC) -O2 -Wall -Wextra -shared -fPIC dist/dataset.c -o $@ -lm

dist-python: $(DIST_AMAL) | deps-dist
	rm -rf build/dist/python dist/sqlite-dataset-*.tar.gz \
	    dist/sqlite_dataset-*.whl
	@mkdir -p build/dist
	cp -R packaging/python build/dist/python
	cp $(DIST_AMAL) LICENSE build/dist/python/
	cd build/dist/python && CC='$(CC)' $(PYTHON) -m build --no-isolation \
	    --outdir '$(CURDIR)/dist' . > ../python.log 2>&1 || \
	    { cat ../python.log; exit 1; }
	@grep 'warning:' build/dist/python.log | grep -v 'byte-compiling' || true

NPM_PLATFORM = $(shell node -p "require('./packaging/npm/platform.js')()")

dist-npm: $(DIST_AMAL) $(DIST_LIB) | deps-dist
	rm -rf build/dist/npm dist/sqlite-dataset-*.tgz
	@mkdir -p build/dist
	cp -R packaging/npm build/dist/npm
	cp $(DIST_AMAL) LICENSE build/dist/npm/
	mkdir -p build/dist/npm/prebuilds/$(NPM_PLATFORM)
	cp $(DIST_LIB) build/dist/npm/prebuilds/$(NPM_PLATFORM)/
	cd build/dist/npm && npm pack --pack-destination '$(CURDIR)/dist' \
	    --loglevel warn

# --- Debian packages ------------------------------------------------------
# $(call ds_need,package:test-command ...) checks each package by its test
# command and installs the missing ones (root) or says how (not root).
define ds_need
	@missing=""; why=""; \
	for spec in $(1); do \
	    pkg=$${spec%%:*}; check=$${spec#*:}; \
	    sh -c "$$check" >/dev/null 2>&1 || { missing="$$missing $$pkg"; \
	        why="$$why    $$pkg: $$check failed\n"; }; \
	done; \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        echo "Installing missing packages:$$missing"; \
	        export DEBIAN_FRONTEND=noninteractive; \
	        apt-get install -y -q $$missing >/dev/null 2>&1 || \
	        { apt-get update -q >/dev/null 2>&1 && \
	          apt-get install -y -q $$missing >/dev/null; } || \
	        { echo "apt-get could not install:$$missing"; exit 1; }; \
	    elif command -v apt-get >/dev/null 2>&1; then \
	        echo "Missing packages:$$missing"; \
	        echo "Install them with:  sudo apt-get install -y$$missing"; \
	        exit 1; \
	    else \
	        echo "Missing (named as Debian packages):$$missing"; \
	        printf %b "$$why"; \
	        echo "This is not a Debian system: install what they provide" \
	             "with its own package manager."; \
	        exit 1; \
	    fi; \
	fi
endef

# Headers are looked for where the compiler looks, not at a path of one
# system.
HAVE_HDR     = $(CC) $(CPPFLAGS) $(CFLAGS) -E -include $(1) -x c /dev/null
PKG_BUILD   := libsqlite3-dev:'$(call HAVE_HDR,sqlite3.h)' \
               libxxhash-dev:'$(call HAVE_HDR,xxhash.h)'
PKG_DEMO    := sqlite3:'command -v sqlite3'
PKG_TEST    := tcl:'command -v tclsh' \
               libsqlite3-tcl:'echo "exit [catch {package require sqlite3}]" | tclsh' \
               bsdutils:'command -v script'
PKG_PKGCONF := pkg-config:'command -v pkg-config'
PKG_FIXTURE := $(PKG_PKGCONF) \
               tcl-dev:'$(CC) $$(pkg-config --cflags tcl) -E -include tcl.h -x c /dev/null'
PKG_SQLCIPHER := $(PKG_PKGCONF) \
               libsqlcipher-dev:'pkg-config --exists sqlcipher'
PKG_BENCH   := tcl:'command -v tclsh' gnuplot-nox:'command -v gnuplot'
PKG_GRIND   := valgrind:'command -v callgrind_annotate'
PKG_SAN     := libgcc-12-dev:'ls /usr/lib/gcc/*/*/libasan.so /usr/lib/gcc/*/*/libubsan.so'
PKG_VALGRIND := valgrind:'command -v valgrind'
PKG_TSAN    := libtsan2:'ldconfig -p | grep -q libtsan.so'
# make dist: the Python package is built by $(PYTHON) with setuptools,
# wheel and build; the npm package by npm.  tests/packaging.test also
# installs them into virtual environments (venv) and compiles the
# amalgamation with clang.
PKG_DIST    := python3-setuptools:'$(PYTHON) -c "import setuptools"' \
               python3-wheel:'$(PYTHON) -c "import wheel"' \
               python3-build:'$(PYTHON) -m build --version' \
               nodejs:'command -v node' npm:'command -v npm'
PKG_DIST_TEST := python3-venv:'$(PYTHON) -c "import ensurepip, venv"' \
               clang:'command -v clang'
PKG_FUZZ    := clang:'command -v $(FUZZ_CC)' \
               libclang-rt-14-dev:'test -f "$$($(FUZZ_CC) -print-file-name=libclang_rt.fuzzer-x86_64.a)"'

deps-build:
	$(call ds_need,$(PKG_BUILD))
deps-demo:
	$(call ds_need,$(PKG_DEMO))
deps-test:
	$(call ds_need,$(PKG_DEMO) $(PKG_TEST))
deps-fixture:
	$(call ds_need,$(PKG_BUILD) $(PKG_TEST) $(PKG_FIXTURE))
deps-sqlcipher:
	$(call ds_need,$(PKG_SQLCIPHER))
deps-bench:
	$(call ds_need,$(PKG_BUILD) $(PKG_BENCH))
deps-callgrind:
	$(call ds_need,$(PKG_BUILD) $(PKG_GRIND))
deps-sanitize:
	$(call ds_need,$(PKG_BUILD) $(PKG_TEST) $(PKG_FIXTURE) $(PKG_SAN))
deps-valgrind:
	$(call ds_need,$(PKG_VALGRIND))
deps-tsan:
	$(call ds_need,$(PKG_BUILD) $(PKG_TSAN))
deps-fuzz:
	$(call ds_need,$(PKG_BUILD) $(PKG_FUZZ))
deps-dist:
	$(call ds_need,$(PKG_DIST))
deps-dist-test:
	$(call ds_need,$(PKG_DIST) $(PKG_DIST_TEST))
