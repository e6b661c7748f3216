# faults_common.tcl: what faults.test and faults_threads.test share,
# sourced by both after tester.tcl: the spill directory, the data (tests
# faults-1.0 and faults-1.0.sp), and the allocation-failure loop
# do_malloc_test with its checks (no byte, descriptor or spill file left;
# the connection still answers).  faults.test's header says what the loop
# does.

set STEP 1
if {[info exists env(DS_FAULT_STEP)] && [string is integer -strict $env(DS_FAULT_STEP)]
    && $env(DS_FAULT_STEP) > 0} {
  set STEP $env(DS_FAULT_STEP)
}

set HINTS {BROADCAST_HASH_FIRST BROADCAST_HASH_SECOND REPARTITION_HASH_FIRST
           REPARTITION_HASH_SECOND REPARTITION_SORT_MERGE}
set SPILL_LIMIT 65536

# Spill files go to a directory of their own, on tmpfs (/dev/shm) when
# there is one: creating a file there costs microseconds, on this disk a
# tenth of a millisecond, and a spilling hash join creates dozens per run.
# The faults are injected above the file system, so the paths are the
# same.
if {[file isdirectory /dev/shm] && [file writable /dev/shm]} {
  set SPILLDIR /dev/shm/ds-faults-[pid]
} else {
  set SPILLDIR [file join [test_tmpdir] spill]
}
file mkdir $SPILLDIR

# Descriptors this process has open, and files left in the spill
# directory.
proc open_fds {} { llength [glob -nocomplain /proc/[pid]/fd/*] }
proc spill_files {} {
  lsort [glob -nocomplain -tails -directory $::SPILLDIR * .*]
}
proc spill_dir_empty {} {
  expr {[lsearch -all -inline -not -regexp [spill_files] {^\.\.?$}] eq ""}
}

#-------------------------------------------------------------------------
# The data.  Small tables for the in-memory runs: duplicate keys, NULL
# keys, unmatched rows on both sides, INTEGER 2 and REAL 2.0 (equal), text
# '2' (equal to neither).  Larger ones for the spilling runs: 100 rows of
# about 620 bytes a side against a 64 KiB budget.
do_execsql_test faults-1.0 {
  CREATE TABLE L(id INTEGER PRIMARY KEY, k, v TEXT);
  CREATE TABLE R(id INTEGER PRIMARY KEY, k, w TEXT);
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<24)
  INSERT INTO L SELECT i, CASE i%8 WHEN 0 THEN NULL WHEN 5 THEN '2'
                                   WHEN 6 THEN 3.0 ELSE i%6 END,
                       'l' || i FROM c;
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<20)
  INSERT INTO R SELECT i, CASE i%9 WHEN 0 THEN NULL WHEN 4 THEN 2.0
                                   WHEN 7 THEN 'x' ELSE (i*5)%7 END,
                       'r' || i FROM c;
  CREATE TABLE BL(id INTEGER PRIMARY KEY, k, v TEXT);
  CREATE TABLE BR(id INTEGER PRIMARY KEY, k, w TEXT);
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<100)
  INSERT INTO BL SELECT i, CASE WHEN i%29=0 THEN NULL ELSE i%80 END,
                        printf('%.600c', 'l') FROM c;
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<100)
  INSERT INTO BR SELECT i, CASE WHEN i%31=0 THEN NULL ELSE (i*3)%90 END,
                        printf('%.600c', 'r') FROM c;
  SELECT count(*), count(k) FROM L UNION ALL SELECT count(*), count(k) FROM R
  UNION ALL SELECT count(*), count(k) FROM BL
  UNION ALL SELECT count(*), count(k) FROM BR;
} {24 21 20 18 100 97 100 97}
# SP, for the selective joins (faults.test 1.8, faults_threads.test 8.8
# and 8.9): keys 1000 and up but for every 20th row, a key of R's.
do_execsql_test faults-1.0.sp {
  CREATE TABLE SP(id INTEGER PRIMARY KEY, k, v TEXT);
  WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<400)
  INSERT INTO SP SELECT i, CASE WHEN i%20=0 THEN i%7 WHEN i%33=0 THEN NULL
                                WHEN i%35=0 THEN 'sp' || i ELSE 1000+i END,
                        'sp' || i FROM c;
  SELECT count(*), count(k) FROM SP;
} {400 388}
set DBFILE $::tester::dbfile

# The query every faulted connection must still answer afterwards, and
# its answer (an inner join of the small tables, counted natively).
set CHECK {SELECT count(*) FROM ds_join_hint('L', 'R', 'k', 'k')}
set CHECK_WANT [db eval {SELECT count(*) FROM L JOIN R ON +L.k = +R.k}]

#-------------------------------------------------------------------------
# The allocation-failure loop.

# A fresh connection `fdb` on the test database, its spill files going to
# SPILLDIR, $setup run and the schema read: the faults start after that.
proc fault_open {setup} {
  sqlite3 fdb $::DBFILE
  # The temp database (temp.j of the CREATE forms) in memory: as a file it
  # would cost a file creation per run.  No statement cache: what a run
  # leaves allocated is then what it leaked.
  fdb eval {PRAGMA temp_store = MEMORY}
  fdb cache size 0
  fdb eval "SELECT ds_config('temp_dir', '$::SPILLDIR')"
  if {$setup ne ""} { fdb eval $setup }
  fdb eval {SELECT count(*) FROM sqlite_schema}
}

# The messages a statement may fail with when an allocation fails: SQLite's
# "out of memory", and one more SQLite writes itself.  The first CREATE of
# a temp table on a connection opens its temp database, and when that
# open runs out of memory (sqlite3OpenTempDatabase() in SQLite's build.c)
# SQLite reports "unable to open a temporary database file for storing
# temporary tables" with the code SQLITE_NOMEM.  (When later allocations
# fail too, the persistent runs, SQLite says "out of memory" instead.)
# The code must be SQLITE_NOMEM (7) in every case.
set NOMEM_MESSAGES {
  {out of memory}
  {unable to open a temporary database file for storing temporary tables}
}

# Did the extension's own allocation fail?  It ends the statement with
# SQLITE_ERROR (1), not SQLITE_NOMEM, and says so in the function's name,
# with the size where the operator's memory failed.
proc own_nomem {got code} {
  expr {$code == 1 && [regexp \
      {^ds_[a-z_]+: out of memory( \(allocating [0-9]+ bytes\))?$} $got]}
}

# What is wrong after a run: a list of messages, empty if nothing.
# $rc/$got are the run's outcome, $m0 and $fds0 the memory and descriptors
# before the connection was opened.  Closes the connection.
proc fault_check {rc got code want m0 fds0} {
  set bad {}
  if {$rc == 0 && $got ne $want} {
    if {$got ni $::ALT} { lappend bad "wrong result: [string range $got 0 300]" }
  }
  if {$rc != 0 && ($got ni $::NOMEM_MESSAGES || $code != 7)
      && ![own_nomem $got $code]} {
    lappend bad "error other than out of memory: $got (code $code)"
  }
  if {[catch {fdb eval $::CHECK} r] || $r ne $::CHECK_WANT} {
    lappend bad "the check query gives: $r"
  }
  fdb close
  set m1 [ds_memory_used]
  if {$m1 != $m0} { lappend bad "[expr {$m1 - $m0}] bytes not given back" }
  if {![spill_dir_empty]} { lappend bad "left in temp_dir: [spill_files]" }
  if {[open_fds] != $fds0} { lappend bad "[expr {[open_fds] - $fds0}] descriptors left open" }
  return $bad
}

# The rows of a result of nCol columns (a flat list), sorted: results
# whose order is not promised are compared so.  nCol 0: as they came.
proc rows_sorted {result nCol} {
  if {$nCol == 0} { return $result }
  set rows {}
  for {set i 0} {$i < [llength $result]} {incr i $nCol} {
    lappend rows [lrange $result $i [expr {$i + $nCol - 1}]]
  }
  lsort $rows
}

# One run of $sql on a fresh connection with the n-th allocation failing
# ($n 0: none).  Returns {nFailed problems rc}.
proc fault_run {setup sql want nCol n persist} {
  set fds0 [open_fds]
  set m0 [ds_memory_used]
  fault_open $setup
  ds_fault_malloc $n $persist
  set rc [catch {fdb eval $sql} got]
  set nFailed [ds_fault_malloc 0]
  set code [fdb errorcode]
  if {$rc == 0} { set got [rows_sorted $got $nCol] }
  list $nFailed [fault_check $rc $got $code $want $m0 $fds0] $rc
}

# A test of a value computed here (do_test runs its script at global
# level, where the loops' variables live).
proc do_check {name value expected} {
  do_test $name [list set ::check_value $value] $expected
}

# Totals, for the summary printed at the end.
set FAULT_POINTS 0
set FAULT_LOOPS 0
set FAULT_SUMMARY {}
set DISK_SUMMARY {}
set ALT {}

# do_malloc_test NAME SQL ?-setup SQL? ?-spill 1? ?-unordered NCOL?
#                ?-alt RESULTS?
#
# The reference result of SQL (no fault, fresh connection), then both
# loops over every allocation.  With -unordered, results (rows of NCOL
# columns) are compared as sorted rows.  -alt is a list of other results
# that are right too, substituted (subst) with $want, the reference.  Tests: NAME.ref (the reference
# ran, and spilled if -spill), NAME.transient and NAME.persistent (no
# problem in any run; more than 10 fault points; at least one run failed
# with out of memory).  Returns the reference result (sorted if
# -unordered).
proc do_malloc_test {name sql args} {
  array set opt {-setup {} -spill 0 -unordered 0 -alt {}}
  array set opt $args
  set fds0 [open_fds]
  set m0 [ds_memory_used]
  fault_open $opt(-setup)
  set rc [catch {fdb eval $sql} want]
  if {$rc == 0} { set want [rows_sorted $want $opt(-unordered)] }
  # Other results that are right too, made from the reference ($want).
  set ::ALT [subst $opt(-alt)]
  set spilled [fdb onecolumn {SELECT ds_last_stats()->>'spilled_bytes'}]
  set bad [fault_check $rc $want [fdb errorcode] $want $m0 $fds0]
  if {$rc} { lappend bad "the reference run fails: $want" }
  if {$opt(-spill) && !($spilled > 0)} { lappend bad "the reference run did not spill" }
  do_check $name.ref $bad {}
  if {$bad ne ""} { return $want }

  foreach persist {0 1} mode {transient persistent} {
    set t0 [clock milliseconds]
    set problems {}
    set nPoint 0
    set nNomem 0
    for {set n 1} {1} {incr n $::STEP} {
      lassign [fault_run $opt(-setup) $sql $want $opt(-unordered) $n $persist] \
          nFailed bad rc
      foreach b $bad { lappend problems "N=$n: $b" }
      if {$nFailed == 0} break
      incr nPoint
      if {$rc} { incr nNomem }
      if {[llength $problems] >= 3} break
    }
    incr ::FAULT_POINTS $nPoint
    incr ::FAULT_LOOPS
    set line "$name.$mode: $nPoint fault points, $nNomem out of memory"
    lappend ::FAULT_SUMMARY $line
    puts "$line ([expr {[clock milliseconds] - $t0}] ms)"
    # (With DS_FAULT_STEP, nPoint counts the points tried, one in STEP.)
    if {$problems eq "" && $nPoint * $::STEP <= 10} {
      lappend problems "only $nPoint fault points"
    }
    if {$problems eq "" && $nNomem == 0} { lappend problems "no run failed" }
    do_check $name.$mode $problems {}
  }
  return $want
}


# The totals of the loops, printed at the end of each file.
proc faults_summary {} {
  file delete -force $::SPILLDIR
  puts "Allocation failure: $::FAULT_POINTS fault points in $::FAULT_LOOPS loops"
  foreach line $::FAULT_SUMMARY { puts "  $line" }
  if {$::DISK_SUMMARY ne ""} {
    puts "Disk faults:"
    foreach line $::DISK_SUMMARY { puts "  $line" }
  }
}
