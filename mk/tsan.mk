# make tsan (tests/concurrency.test, included by the Makefile)
# build/tsan/concurrency       tests/concurrency.c under -fsanitize=thread,
#                              the extension linked in (variant tsan)
# build/tsan/concurrency-new   the same on the newer SQLite's amalgamation,
#                              compiled with -fsanitize=thread as well
#                              (variant tsan-new: its sqlite3.h)
TSAN_FLAGS   := -O1 -g -fsanitize=thread
TSAN_SQLITE  := build/tsan/sqlite3.o
TSAN_OPTIONS ?= halt_on_error=1 exitcode=66
# Without address randomization: some kernels map memory where TSan's
# shadow memory wants to be.
NO_ASLR      := $(shell command -v setarch >/dev/null 2>&1 && \
                  echo "setarch $$(uname -m) -R")

tsan_CFLAGS     = $(TSAN_FLAGS) $(CORE_CFLAGS)
tsan_DEPS       = deps-tsan
tsan-new_CFLAGS = $(TSAN_FLAGS) -DSQLITE_CORE -I$(NEW_SQLITE_DIR)
tsan-new_DEPS   = deps-tsan
$(eval $(call ds_variant,tsan))
$(eval $(call ds_variant,tsan-new))

build/tsan/concurrency: tests/concurrency.c $(tsan_OBJ) | deps-tsan
	$(CC) $(DS_CFLAGS) $(tsan_CFLAGS) -Iext -o $@ tests/concurrency.c \
	    $(tsan_OBJ) $(LDFLAGS) $(SQLITE_LIBS) -lm

# The amalgamation's object is named by this explicit rule, which make
# prefers to the tsan variant's pattern rule for build/tsan/%.o.
$(TSAN_SQLITE): $(NEW_SQLITE_DIR)/sqlite3.c | deps-tsan
	@mkdir -p build/tsan
	$(CC) $(TSAN_FLAGS) -DSQLITE_THREADSAFE=1 -c -o $@ $<

build/tsan/concurrency-new: tests/concurrency.c $(tsan-new_OBJ) $(TSAN_SQLITE)
	$(CC) $(DS_CFLAGS) $(tsan-new_CFLAGS) -Iext -o $@ tests/concurrency.c \
	    $(tsan-new_OBJ) $(TSAN_SQLITE) $(LDFLAGS) -lm -ldl

tsan: build/tsan/concurrency
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	echo "== the extension under TSan, on Debian's SQLite" && \
	TSAN_OPTIONS="$(TSAN_OPTIONS)" $(NO_ASLR) build/tsan/concurrency \
	    "$$dir/t.db" $(or $(ROUNDS),4) && \
	if [ -f $(NEW_SQLITE_DIR)/sqlite3.c ]; then \
	    $(MAKE) --no-print-directory build/tsan/concurrency-new && \
	    echo "== the extension and SQLite $$(sed -n \
	        's/^#define SQLITE_VERSION  *"\(.*\)"/\1/p' \
	        $(NEW_SQLITE_DIR)/sqlite3.h) under TSan" && \
	    TSAN_OPTIONS="$(TSAN_OPTIONS)" $(NO_ASLR) \
	        build/tsan/concurrency-new "$$dir/n.db" $(or $(ROUNDS),4); \
	else \
	    echo "(no newer SQLite: run make node-client for its amalgamation)"; \
	fi

