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
