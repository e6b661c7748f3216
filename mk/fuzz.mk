# make fuzz, make fuzz-merge and build/fuzz_replay (tests/fuzz/; included
# by the Makefile, which defines ORACLE and the variant template).
# The fuzz target without libFuzzer: runs each input named once.
build/fuzz_replay: tests/fuzz/fuzz_ops.c $(ORACLE) build/libsqlite3_dataset.a
	$(CC) $(DS_CFLAGS) $(CFLAGS) -DFUZZ_REPLAY -Iext -Itests -o $@ \
	    tests/fuzz/fuzz_ops.c tests/oracle.c build/libsqlite3_dataset.a \
	    $(LDFLAGS) $(SQLITE_LIBS) -lm

# The libFuzzer target's objects: the variant fuzz, by clang.
fuzz_CC     = $(FUZZ_CC)
fuzz_CFLAGS = $(FUZZ_FLAGS) $(CORE_CFLAGS)
fuzz_DEPS   = deps-fuzz
$(eval $(call ds_variant,fuzz))

build/fuzz/fuzz_ops: tests/fuzz/fuzz_ops.c $(ORACLE) $(fuzz_OBJ) | deps-fuzz
	$(FUZZ_CC) $(DS_CFLAGS) $(FUZZ_FLAGS) -Iext -Itests -o $@ \
	    tests/fuzz/fuzz_ops.c tests/oracle.c $(fuzz_OBJ) $(LDFLAGS) \
	    $(SQLITE_LIBS) -lm

FUZZ_RUN = build/fuzz/fuzz_ops -dict=tests/fuzz/ops.dict -max_len=2048 \
           -timeout=25 -artifact_prefix=build/fuzz/

fuzz: build/fuzz/fuzz_ops
	@mkdir -p build/fuzz/corpus
	$(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    build/fuzz/corpus tests/fuzz/corpus tests/fuzz/found

# The corpus keeps the fewest inputs that reach every edge the others do
# (-use_counters=0: edges, not how often each runs); tests/fuzz/found,
# the inputs that found bugs, is kept as it is.
fuzz-merge: build/fuzz/fuzz_ops
	@mkdir -p build/fuzz/corpus build/fuzz/merged
	rm -f build/fuzz/merged/*
	$(FUZZ_RUN) -merge=1 -use_counters=0 build/fuzz/merged \
	    tests/fuzz/corpus build/fuzz/corpus
	rm -f tests/fuzz/corpus/*
	cp build/fuzz/merged/* tests/fuzz/corpus/
	@echo "tests/fuzz/corpus: $$(ls tests/fuzz/corpus | wc -l) inputs"

