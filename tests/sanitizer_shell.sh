#!/bin/sh
# sanitizer_shell.sh: the sqlite3 shell for `make sanitize`, which writes
# build/sanitize/sqlite3 from this file (@PRELOAD@ and @ROOT@ filled in).
#
# Debian's sqlite3 is not instrumented, but the extension it loads
# (build/sanitize/dataset.so) is: the sanitizer runtimes must be in the
# process before anything else, hence LD_PRELOAD.  The shell runs in
# @ROOT@, where build/dataset.so is a link to that library, so that the
# examples' own `.load ./build/dataset` loads the sanitized one; docs.test
# loads $DS_EXT, which `make sanitize` points at it too.  Database paths
# must therefore be absolute (or :memory:), as runall.tcl and docs.test
# give them.
cd '@ROOT@' || exit 1
LD_PRELOAD='@PRELOAD@' exec sqlite3 "$@"
