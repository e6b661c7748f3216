# tester.tcl: a small test harness for the `dataset` extension.
#
# In the style of SQLite's test/tester.tcl, but for plain `tclsh` with
# Debian's `package require sqlite3` (libsqlite3-tcl): SQLite's own tester
# needs its testfixture binary.  A test file is
#
#     source [file join [file dirname [info script]] tester.tcl]
#     do_execsql_test name-1.1 { SELECT 1+1 } {2}
#     finish_test
#
# and is run as `tclsh tests/NAME.test` (or by tests/runall.tcl).
#
# Procs:
#   do_execsql_test NAME SQL EXPECTED   flat list of `db eval SQL` == EXPECTED
#   do_catchsql_test NAME SQL EXPECTED  {0 rows} or {1 errmsg} == EXPECTED
#   do_rows_test NAME SQL EXPECTED      one result row per line, the values
#                                       joined with `|` (like the shell's
#                                       list mode); EXPECTED is one such row
#                                       per line, blank lines and leading and
#                                       trailing blanks of lines ignored.
#                                       Handy for JSON, whose braces would
#                                       need quoting in a Tcl list.
#   do_test NAME SCRIPT EXPECTED        result of SCRIPT (run at global level)
#                                       == EXPECTED, compared as strings
#   skip_test NAME REASON               a test that cannot run here because
#                                       what it needs is absent: prints
#                                       `NAME... SKIPPED: REASON` (runall.tcl
#                                       shows these lines), counts nothing
#   execsql SQL ?DB?, catchsql SQL ?DB? the helpers behind the above
#   reset_db                            close `db`, open it again on a fresh
#                                       empty database file
#   default_threads                     the default of ds_config('threads'):
#                                       the CPUs online, at most 8
#   finish_test                         print `N passed, N failed`, clean up,
#                                       exit 1 if anything failed
#
# Connections.  `sqlite3` is wrapped (as SQLite's tester does) so that every
# connection opened by a test, `db` or any other, has the extension: if
# `SELECT ds_version()` fails on the new connection, the extension is
# loaded with load_extension() from $DS_EXT, default `build/dataset`; a
# relative DS_EXT is taken relative to the repository root, found from
# this file's own location (tests/..).  The probe comes first because a
# statically linked test program may register the extension by itself.
#
# NULL.  Every connection opened here gets `nullvalue NULL`: SQL NULL shows
# as the word NULL in results (Tcl's default, the empty string, cannot be
# told from ''), so tests must not use the text 'NULL' as data.
#
# Floating point values come back from `db eval` in Tcl's own shortest
# round-trip form (1.0, 0.1, 1.1111111111111112), not SQLite's %!.15g.
#
# Environment: DS_EXT (extension path), DS_TEST_VERBOSE=1 (print every test
# name as it passes), TMPDIR (where the scratch databases go),
# DS_TEST_THREADS=N (every connection opened here runs
# ds_config('threads', N) once the extension is there: `make
# test-threads1` runs the differential suites with 1, where the default
# is the number of cores).

package require sqlite3

# Line-buffered output, so that a test file that crashes still shows how
# far it got when run by runall.tcl (through a pipe).
fconfigure stdout -buffering line

namespace eval ::tester {
  variable root [file dirname [file dirname [file normalize [info script]]]]
  variable nPass 0
  variable nFail 0
  variable failed {}
  variable tmpdir {}
  variable dbfile {}
  variable verbose [expr {[info exists ::env(DS_TEST_VERBOSE)]
                          && $::env(DS_TEST_VERBOSE) ne "" 
                          && $::env(DS_TEST_VERBOSE) ne "0"}]
}

# The repository root (the directory holding tests/, ext/, VERSION).
proc repo_root {} { return $::tester::root }

# Path given to load_extension(), without the .so suffix (SQLite adds it).
proc ds_ext_path {} {
  set p [file join [repo_root] build dataset]
  if {[info exists ::env(DS_EXT)] && $::env(DS_EXT) ne ""} {
    set p $::env(DS_EXT)
    if {[file pathtype $p] ne "absolute"} { set p [file join [repo_root] $p] }
  }
  return $p
}

# Make sure connection $db has the extension; set its nullvalue.
proc ds_prepare_connection {db} {
  $db nullvalue NULL
  if {[catch {$db eval {SELECT ds_version()}}]} {
    set path [ds_ext_path]
    $db enable_load_extension 1
    if {[catch {$db eval {SELECT load_extension($path)}} msg]} {
      error "cannot load the dataset extension from '$path': $msg"
    }
    $db enable_load_extension 0
    if {[catch {$db eval {SELECT ds_version()}} msg]} {
      error "extension loaded from '$path' but ds_version() fails: $msg"
    }
  }
  if {[info exists ::env(DS_TEST_THREADS)] && $::env(DS_TEST_THREADS) ne ""} {
    set n $::env(DS_TEST_THREADS)
    if {![string is integer -strict $n]} {
      error "DS_TEST_THREADS must be an integer, not '$n'"
    }
    $db eval "SELECT ds_config('threads', $n)"
  }
}

# Wrap the `sqlite3` command: `sqlite3 NAME FILE ?options?` opens the
# connection and then prepares it as above; other forms pass through.
if {[info commands sqlite_orig] eq ""} {
  rename sqlite3 sqlite_orig
  proc sqlite3 {args} {
    set r [uplevel 1 [list sqlite_orig {*}$args]]
    if {[llength $args] >= 2 && ![string match -* [lindex $args 0]]} {
      uplevel 1 [list ds_prepare_connection [lindex $args 0]]
    }
    return $r
  }
}

# Open connection $name on a new in-memory database of text encoding $enc
# (UTF-8, UTF-16le, UTF-16be) holding tables l16(k) and r16(k) of the same
# keys: texts whose order differs between UTF-8 bytes (code points),
# UTF-16le bytes and UTF-16be bytes, which is SQLite's BINARY order in
# each encoding; an integer; a NULL.
proc open_encoded_db {name enc} {
  uplevel 1 [list sqlite3 $name :memory:]
  $name eval "PRAGMA encoding='$enc'"
  $name eval {
    CREATE TABLE l16(k);
    CREATE TABLE r16(k);
    INSERT INTO l16 VALUES ('a'), (char(0x101)), (char(0x100)), ('b'),
      (char(0xFF61)), (char(0x1F600)), ('z'), (1), (NULL);
    INSERT INTO r16 SELECT k FROM l16;
  }
}

# The default of ds_config('threads') in a build without
# -DDS_DEFAULT_THREADS (ext/config.c): the CPUs online, at most 8, at
# least 1.  getconf asks sysconf(_SC_NPROCESSORS_ONLN), as the extension
# does (nproc counts only the CPUs this process may run on).
proc default_threads {} {
  set n [exec getconf _NPROCESSORS_ONLN]
  expr {$n > 8 ? 8 : ($n < 1 ? 1 : $n)}
}

# A scratch directory for this test process, removed by finish_test.
proc test_tmpdir {} {
  if {$::tester::tmpdir eq ""} {
    set base /tmp
    if {[info exists ::env(TMPDIR)] && [file isdirectory $::env(TMPDIR)]} {
      set base $::env(TMPDIR)
    }
    set d [file join $base "ds-test-[pid]-[clock clicks]"]
    file mkdir $d
    set ::tester::tmpdir [file normalize $d]
  }
  return $::tester::tmpdir
}

# Run $script in the sqlite3 shell (SQLITE3, default sqlite3) on a new
# in-memory database, after loading the extension; return what it prints,
# each "Runtime error near line N: " made "Error: ".  For what only the
# shell can set, such as SQLite's length limit (.limit length N): Tcl's
# interface has no way to set it.
proc shell_run {script} {
  set shell sqlite3
  if {[info exists ::env(SQLITE3)] && $::env(SQLITE3) ne ""} {
    set shell $::env(SQLITE3)
  }
  set f [file join [test_tmpdir] shell_run.sql]
  set fd [open $f w]
  puts $fd ".load '[ds_ext_path]'"
  puts $fd $script
  close $fd
  catch {exec $shell -batch :memory: < $f 2>@1} out
  set lines {}
  foreach line [split $out \n] {
    set line [string trim $line]
    if {$line eq "child process exited abnormally"} continue
    regsub {^Runtime error near line \d+: } $line {Error: } line
    lappend lines $line
  }
  return [join $lines \n]
}

# Close `db` (if open) and open it again on a new, empty database file.
proc reset_db {} {
  catch {db close}
  set f [file join [test_tmpdir] test.db]
  foreach suffix {"" -journal -wal -shm} { file delete -force $f$suffix }
  set ::tester::dbfile $f
  uplevel #0 [list sqlite3 db $f]
}

# SQL for the JSON text of value $x as the extension writes it in the
# `left`/`right` objects of the table-valued forms: a BLOB as hex text, a
# REAL as %!.15g when that reads back as the same number, else %!.17g
# (SQLite 3.40's json_object() stops at 15 digits and so can change a
# value; newer SQLite always writes 17), an infinity as 9.0e+999, anything
# else as json_object() has it.  Use as json_object('v', [json_value_sql v]).
# Not for reals past 1e22 that need 17 digits: there 3.40's printf can get
# the 17th wrong, and the extension writes the C library's correct digits
# (aggregates.test 1.5.x; tests/oracle.c has the whole rule).
proc json_value_sql {x} {
  return "CASE typeof($x)
    WHEN 'blob' THEN hex($x)
    WHEN 'real' THEN json(CASE
      WHEN $x > 1.7976931348623157e308 THEN '9.0e+999'
      WHEN $x < -1.7976931348623157e308 THEN '-9.0e+999'
      WHEN CAST(printf('%!.15g', $x) AS REAL) = $x THEN printf('%!.15g', $x)
      ELSE printf('%!.17g', $x) END)
    ELSE $x END"
}

# Tables tb (6,000 rows) and tp (15,000) whose hash join, under a
# memory_limit of 256K, spills its build side tb into partitions joined
# afterwards as tasks, each probing a file of about 470 rows of tp: keys
# of mixed types (integers, reals equal to them, other reals, -0.0 and 0,
# text, BLOBs, NULLs), a few rows a key, rows wide enough to spill.
# threads.test and faults_threads.test (8.x both) join them.
proc create_ahead_tables {{db db}} {
  $db eval {
    CREATE TABLE tb(id INTEGER PRIMARY KEY, k, p);
    CREATE TABLE tp(id INTEGER PRIMARY KEY, k, p);
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<6000)
    INSERT INTO tb SELECT i, CASE i % 9
        WHEN 0 THEN NULL
        WHEN 1 THEN ((i * 7919) % 1500) * 1.0
        WHEN 2 THEN 't' || ((i * 7919) % 1500)
        WHEN 3 THEN CAST('b' || (i % 300) AS BLOB)
        WHEN 4 THEN CASE WHEN i % 2 THEN -0.0 ELSE 0 END
        ELSE (i * 7919) % 1500 END, printf('%080d', i) FROM c;
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<15000)
    INSERT INTO tp SELECT i, CASE i % 7
        WHEN 0 THEN NULL
        WHEN 1 THEN 't' || ((i * 104729) % 1700)
        WHEN 2 THEN CAST('b' || (i % 350) AS BLOB)
        WHEN 3 THEN ((i * 104729) % 1700) + 0.5
        ELSE (i * 104729) % 1700 END, printf('%060d', i) FROM c;
  }
}

proc execsql {sql {db db}} {
  uplevel #0 [list $db eval $sql]
}

proc catchsql {sql {db db}} {
  set rc [catch {uplevel #0 [list $db eval $sql]} msg]
  list $rc $msg
}

# Record one test result.  $ok is a boolean.
proc tester_result {name ok expected actual} {
  if {$ok} {
    incr ::tester::nPass
    if {$::tester::verbose} { puts "$name... Ok" }
  } else {
    incr ::tester::nFail
    lappend ::tester::failed $name
    puts "$name... FAILED"
    puts "  Expected: \[$expected\]"
    puts "  Got:      \[$actual\]"
  }
}

proc do_test {name script expected} {
  if {[catch {uplevel #0 $script} actual]} {
    set actual "ERROR: $actual"
    tester_result $name 0 $expected $actual
    return
  }
  tester_result $name [expr {$actual eq $expected}] $expected $actual
}

proc do_execsql_test {name sql expected} {
  set expected [list {*}$expected]
  if {[catch {execsql $sql} actual]} {
    tester_result $name 0 $expected "ERROR: $actual"
    return
  }
  tester_result $name [expr {$actual eq $expected}] $expected $actual
}

proc do_catchsql_test {name sql expected} {
  set expected [list {*}$expected]
  set actual [catchsql $sql]
  tester_result $name [expr {$actual eq $expected}] $expected $actual
}

# Rows of a query, one line per row, the values joined with |.
proc rowsql {sql {db db}} {
  set lines {}
  uplevel #0 [list $db eval $sql ::tester::row {
    set vals {}
    foreach c $::tester::row(*) { lappend vals $::tester::row($c) }
    lappend ::tester::rowlines [join $vals |]
  }]
  set lines $::tester::rowlines
  set ::tester::rowlines {}
  return [join $lines \n]
}
set ::tester::rowlines {}

proc do_rows_test {name sql expected} {
  set want {}
  foreach line [split $expected \n] {
    set line [string trim $line]
    if {$line ne ""} { lappend want $line }
  }
  set want [join $want \n]
  set ::tester::rowlines {}
  if {[catch {rowsql $sql} actual]} {
    set ::tester::rowlines {}
    tester_result $name 0 "\n$want\n" "ERROR: $actual"
    return
  }
  tester_result $name [expr {$actual eq $want}] "\n$want\n" "\n$actual\n"
}

proc skip_test {name reason} {
  puts "$name... SKIPPED: $reason"
}

proc finish_test {} {
  catch {db close}
  catch {db2 close}
  if {$::tester::tmpdir ne ""} { file delete -force $::tester::tmpdir }
  if {$::tester::nFail > 0} {
    puts "Failures: $::tester::failed"
  }
  puts "$::tester::nPass passed, $::tester::nFail failed"
  flush stdout
  exit [expr {$::tester::nFail > 0}]
}

reset_db
