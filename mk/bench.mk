# make bench, bench-quick, bench-callgrind (never part of `make test`;
# included by the Makefile)
# The driver is build/dsbench (build/bench is the directory of its data
# and results).  The commit measured is written into the report; -dirty
# when ext/ or bench/bench.c (what is measured, and how) differ from it.
BENCH_COMMIT = $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell \
               git diff --quiet HEAD -- ext bench/bench.c 2>/dev/null || echo -dirty)
BENCH_OPTS   = --commit '$(BENCH_COMMIT)' $(if $(FILTER),--filter '$(FILTER)') \
               $(if $(TIMEOUT),--timeout $(TIMEOUT))
BENCH_REPORT = $(TCLSH) bench/report.tcl build/bench/results.tsv \
               build/bench/meta.tsv docs/benchmarks.md docs/benchmarks.png

build/dsbench: bench/bench.c | deps-build
	@mkdir -p build
	$(CC) -std=c11 -Wall -Wextra $(CFLAGS) -o $@ bench/bench.c $(LDFLAGS) \
	    $(SQLITE_LIBS) -lm

bench: $(LIB) build/dsbench | deps-bench
	build/dsbench run --reps $(or $(REPS),5) $(BENCH_OPTS)
	$(BENCH_REPORT)

bench-quick: $(LIB) build/dsbench | deps-bench
	build/dsbench run --quick --reps $(or $(REPS),3) $(BENCH_OPTS)
	$(BENCH_REPORT)

# Issue 26's figures alone (threads 2 against 1, and the 12x and scan
# targets), in about 15 minutes with 3 runs on the 2-core machine (once
# the 1Mx10M datasets exist: generating one takes minutes): the
# typed form of every case the targets name, SQLite's join and scan where
# a target sets ours against them.  On m2m and zipf only the hints that
# were fastest with 1 thread run (RS and OC; BS, RS and OC).
BENCH_THREADS_CASES = \
    uni-1Mx10M:inner:sum:native:- uni-1Mx10M:inner:sum:scan:- \
    uni-1Mx10M:inner:sum:vt:* \
    uni-1Mx1M:inner:sum:native:- uni-1Mx1M:inner:sum:scan:- \
    uni-1Mx1M:inner:sum:vt:* \
    uni-1Mx10M:left:sum:vt:* uni-1Mx10M:full:sum:vt:* \
    m2m-1Mx10M:inner:sum:vt:OC:* m2m-1Mx10M:inner:sum:vt:RS:* \
    zipf-1Mx10M:inner:sum:vt:OC:* zipf-1Mx10M:inner:sum:vt:BS:* \
    zipf-1Mx10M:inner:sum:vt:RS:* \
    uni-1Mx10M:cogroup:count:vt:* one-1Kx10K:cross:sum:vt:* \
    uni-1Mx10M:inner:sum.lim4:vt:* uni-1Mx10M:inner:sum.mem:vt:BS:*
BENCH_EMPTY :=
BENCH_COMMA := ,
BENCH_THREADS_FILTER = $(subst $(BENCH_EMPTY) $(BENCH_EMPTY),$(BENCH_COMMA),$(strip \
                       $(BENCH_THREADS_CASES)))

.PHONY: bench-threads
bench-threads: $(LIB) build/dsbench | deps-bench
	build/dsbench run --reps $(or $(REPS),3) --commit '$(BENCH_COMMIT)' \
	    --filter '$(BENCH_THREADS_FILTER)' $(if $(TIMEOUT),--timeout $(TIMEOUT))
	$(BENCH_REPORT)

# The timed part of one case under callgrind: collection is toggled on
# as runTimed is entered in the calling thread, and as start_thread (glibc's
# entry of every new thread) is entered in the extension's worker threads,
# which the statement starts and joins within runTimed; each flag alone
# would miss the other's instructions.  THREADS=N runs a case of the
# extension with ds_config('threads', N), whatever its :tN says; a name
# without :tN runs with 1, which keeps instruction counts comparable from
# one commit to the next.
bench-callgrind: $(LIB) build/dsbench | deps-callgrind
	@test -n "$(CASE)" || { echo "usage: make bench-callgrind CASE=NAME" \
	    "[THREADS=N] (build/dsbench list prints the names)"; exit 1; }
	build/dsbench gen '$(CASE)'
	valgrind --tool=callgrind --toggle-collect=runTimed \
	    --toggle-collect=start_thread \
	    --callgrind-out-file=build/bench/callgrind.out \
	    build/dsbench one '$(CASE)' $(if $(THREADS),--threads $(THREADS)) \
	    $(if $(MEMORY_LIMIT),--memory-limit $(MEMORY_LIMIT))
	callgrind_annotate --threshold=99 build/bench/callgrind.out | head -45
