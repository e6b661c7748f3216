# runall.tcl: run the whole test suite of the `dataset` extension.
#
#   tclsh tests/runall.tcl ?GLOB ...?
#
# It may be started from any directory: the test files find the repository
# from their own location, and the examples (which load ./build/dataset)
# run with the repository root as their working directory.
#
# 1. Every tests/*.test runs in a child tclsh process of its own, with this
#    process's environment, so that a crash is a counted failure and not the
#    end of the run.  Each file must end by printing `N passed, N failed`
#    (tester.tcl's finish_test does); a file that dies without that line
#    counts as 1 failure and its output is shown.  The output of a file with
#    failures is shown too (without the lines of passing tests, except the
#    last one before a crash); of a file without, only its lines
#    `NAME... SKIPPED: REASON` (tester.tcl's skip_test).
# 2. Every sql/examples/*.sql runs through the sqlite3 shell as
#    `sqlite3 -batch -bail :memory: < FILE` from the repository root; its
#    stdout and stderr together must equal sql/examples/NAME.expected byte
#    for byte (each example is one test; a diff is shown on a mismatch).
#    No example is ever skipped: each is a seed example that must work.
# 3. The last line printed is the total, `N passed, N failed`; the exit
#    status is non-zero if anything failed.
#
# The files run DS_TEST_JOBS at a time (default: the number of online
# CPUs), the longest first (the times of the last run, kept in
# build/test-times), and each is reported as it ends.  The files that run
# `make` themselves run one at a time.  Every child runs in the repository
# root.
#
# With GLOB arguments only the matching files run: a GLOB with a `/` is
# taken relative to the repository root (tests/join_*.test,
# sql/examples/0*.sql); a GLOB without one is matched against the file
# names in both tests/ and sql/examples/ (join_*, 01_*).
#
# Environment: SQLITE3 (the shell, default `sqlite3`), DS_EXT (see
# tester.tcl), DS_TEST_TIMEOUT (seconds per file, default 900),
# DS_TEST_JOBS (files run at once, default the number of CPUs),
# DS_TESTFIXTURE (the static test program, tests/testfixture.c: the files
# that need its fault-injection commands, faults*.test, run in it instead
# of tclsh; `make test` sets it to build/testfixture, so that they count
# in the one total of the run).

set root [file dirname [file dirname [file normalize [info script]]]]
set tclsh [info nameofexecutable]
set sqlite3_shell sqlite3
if {[info exists env(SQLITE3)] && $env(SQLITE3) ne ""} {
  set sqlite3_shell $env(SQLITE3)
}
set fixture {}
if {[info exists env(DS_TESTFIXTURE)] && $env(DS_TESTFIXTURE) ne ""} {
  set fixture [file normalize $env(DS_TESTFIXTURE)]
}
set timeout_ms 900000
if {[info exists env(DS_TEST_TIMEOUT)] && [string is integer -strict $env(DS_TEST_TIMEOUT)]} {
  set timeout_ms [expr {$env(DS_TEST_TIMEOUT) * 1000}]
}

# Children print every passing test; we show only what matters.
if {![info exists env(DS_TEST_VERBOSE)] || $env(DS_TEST_VERBOSE) eq ""} {
  set env(DS_TEST_VERBOSE) 1
}

set nPass 0
set nFail 0
set nSkipTest 0
set failures {}

# --------------------------------------------------------------------------
# Which files to run.

proc select_files {} {
  global root argv
  set tests [lsort [glob -nocomplain -directory [file join $root tests] *.test]]
  set examples [lsort [glob -nocomplain -directory [file join $root sql examples] *.sql]]
  if {[llength $argv] == 0} { return [list $tests $examples] }
  set t {}
  set e {}
  foreach pattern $argv {
    if {[string first / $pattern] >= 0} {
      set hits [glob -nocomplain -directory $root $pattern]
      if {[llength $hits] == 0 && [file pathtype $pattern] eq "absolute"} {
        set hits [glob -nocomplain $pattern]
      }
      foreach f $hits {
        set f [file normalize $f]
        if {[string match *.test $f]} { lappend t $f }
        if {[string match *.sql $f]} { lappend e $f }
      }
    } else {
      foreach f $tests { if {[string match $pattern [file tail $f]]} { lappend t $f } }
      foreach f $examples { if {[string match $pattern [file tail $f]]} { lappend e $f } }
    }
  }
  list [lsort -unique $t] [lsort -unique $e]
}

# --------------------------------------------------------------------------
# Running child processes: several at once (DS_TEST_JOBS), each with all
# its output (stdout and stderr), whether it ended normally, and a time
# limit.  A child is a job: job($id,...) holds its state, and `done`
# below is called with {status output} when it has ended.

set nextJob 0
set running 0

# Start the command line $cmd (a list for `open |`), feeding it file
# $input if not empty, in directory $dir.  $done is a command prefix,
# called with the status (the exit code, or a text like "killed by
# SIGSEGV" or "timed out after N s") and the whole output.
proc start_child {cmd input dir done} {
  global job timeout_ms
  set id [incr ::nextJob]
  set pipeline [list | {*}$cmd]
  if {$input ne ""} { lappend pipeline < $input }
  lappend pipeline 2>@1
  set here [pwd]
  cd $dir
  set chan [open $pipeline r]
  cd $here
  fconfigure $chan -translation binary -blocking 0
  set job($id,chan) $chan
  set job($id,out) ""
  set job($id,done) $done
  set job($id,timer) [after $timeout_ms [list child_ended $id timeout]]
  fileevent $chan readable [list child_readable $id]
  incr ::running
}

proc child_readable {id} {
  global job
  append job($id,out) [read $job($id,chan)]
  if {[eof $job($id,chan)]} { child_ended $id eof }
}

proc child_ended {id how} {
  global job timeout_ms
  after cancel $job($id,timer)
  set chan $job($id,chan)
  if {$how eq "timeout"} {
    foreach p [pid $chan] { catch {exec kill -9 $p} }
    catch {close $chan}
    set status "timed out after [expr {$timeout_ms/1000}] s"
  } else {
    fconfigure $chan -blocking 1
    set status 0
    if {[catch {close $chan} msg opts]} {
      set code [dict get $opts -errorcode]
      switch -- [lindex $code 0] {
        CHILDSTATUS { set status [lindex $code 2] }
        CHILDKILLED { set status "killed by [lindex $code 2]" }
        default     { set status "error: $msg" }
      }
    }
  }
  set output $job($id,out)
  set done $job($id,done)
  array unset job $id,*
  incr ::running -1
  {*}$done $status $output
}

proc show_output {text} {
  foreach line [split [string trimright $text \n] \n] { puts "    $line" }
}

# The output of a test file without its "NAME... Ok" lines (the children
# run with DS_TEST_VERBOSE=1), but keeping the last one when the file died,
# so that one can see where it stopped.
proc test_output {text died} {
  set keep {}
  set lastOk {}
  foreach line [split [string trimright $text \n] \n] {
    if {[regexp {^\S+\.\.\. Ok$} $line]} {
      set lastOk $line
    } else {
      lappend keep $line
    }
  }
  if {$died && $lastOk ne ""} {
    lappend keep "(the last test to pass was: $lastOk)"
  }
  join $keep \n
}

# --------------------------------------------------------------------------
# Test files.

# The program a test file runs in: the test program for the files that
# need its commands, when there is one, else this interpreter (under which
# such a file skips itself, saying why).
proc interpreter_for {file} {
  global tclsh fixture
  if {$fixture ne "" && [string match faults*.test [file tail $file]]} { return $fixture }
  return $tclsh
}

# Start test file $file; $makes: it runs make (start_more below).
proc start_test_file {file makes} {
  global root
  if {$makes} { set ::makeBusy 1 }
  start_child [list [interpreter_for $file] $file] {} $root \
      [list test_file_ended $file $makes [clock milliseconds]]
}

proc test_file_ended {file makes t0 status output} {
  global nPass nFail failures
  if {$makes} { set ::makeBusy 0 }
  set name [file tail $file]
  set secs [format %.1f [expr {([clock milliseconds] - $t0) / 1000.0}]]
  set ::fileSecs($name) $secs
  set summary {}
  foreach line [split $output \n] {
    if {[regexp {^(\d+) passed, (\d+) failed$} [string trimright $line \r] -> p f]} {
      set summary [list $p $f]
    }
  }
  if {$summary eq ""} {
    puts "$name: DIED without a summary line (exit status $status, ${secs}s); output:"
    show_output [test_output $output 1]
    incr nFail
    lappend failures $name
    return
  }
  lassign $summary p f
  if {$f == 0 && $status != 0} {
    # Said all passed, yet exited badly: count that as one failure.
    puts "$name: $p passed, 0 failed, but exit status $status"
    show_output [test_output $output 1]
    incr nPass $p
    incr nFail
    lappend failures $name
    return
  }
  puts "$name: $p passed, $f failed (${secs}s)"
  if {$f > 0} {
    show_output [test_output $output 0]
    lappend failures $name
  } else {
    # Tests skipped for lack of what they need say why (tester's skip_test).
    foreach line [split $output \n] {
      if {[string match {*... SKIPPED: *} $line]} { puts "    $line"; incr ::nSkipTest }
    }
  }
  incr nPass $p
  incr nFail $f
}

# --------------------------------------------------------------------------
# Examples.

proc read_binary {file} {
  set f [open $file rb]
  set data [read $f]
  close $f
  return $data
}

proc start_example {file} {
  global root sqlite3_shell nFail failures
  set expfile "[file rootname $file].expected"
  if {![file exists $expfile]} {
    puts "[file tail $file]: FAILED: no [file tail $expfile]"
    incr nFail
    lappend failures [file tail $file]
    return 0
  }
  start_child [list $sqlite3_shell -batch -bail :memory:] $file $root \
      [list example_ended $file $expfile]
  return 1
}

proc example_ended {file expfile status output} {
  global nPass nFail failures
  set name [file tail $file]
  if {$output eq [read_binary $expfile]} {
    puts "$name: ok"
    incr nPass
    return
  }
  puts "$name: FAILED (exit status $status); diff expected actual:"
  set tmp [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] \
               "ds-example-[pid]-[file rootname $name].out"]
  set f [open $tmp wb]
  puts -nonewline $f $output
  close $f
  if {[catch {exec diff -u --label expected --label actual $expfile $tmp} diff]} {
    regsub {\n?child process exited abnormally$} $diff {} diff
  }
  file delete $tmp
  show_output $diff
  incr nFail
  lappend failures $name
}

# --------------------------------------------------------------------------
# Running the files, DS_TEST_JOBS at a time.
#
# The longest files start first, so that the last to end is not a long
# one started late: the times of the last run (build/test-times, written
# at the end of each run) say which, or, before any run here (a fresh
# clone), those of a run on the project's machine (tests/test-times, a
# copy of a build/test-times: only the order depends on it).  A file in
# neither starts first, in case it is long.  Files that run `make`
# themselves (those with a proc run_make) never run two at once: their
# targets share prerequisites (build/node, the test hooks) that two makes
# would write together.

proc online_cpus {} {
  if {[catch {exec getconf _NPROCESSORS_ONLN} n] || ![string is integer -strict $n]
      || $n < 1} {
    return 1
  }
  return $n
}

proc runs_make {file} {
  expr {[string first "proc run_make" [read_binary $file]] >= 0}
}

proc times_file {} { file join $::root build test-times }

proc last_times {} {
  set times {}
  set file [times_file]
  if {![file exists $file]} { set file [file join $::root tests test-times] }
  if {![catch {open $file r} f]} {
    foreach line [split [read $f] \n] {
      if {[llength $line] == 2 && [string is double -strict [lindex $line 1]]} {
        dict set times {*}$line
      }
    }
    close $f
  }
  return $times
}

# The test files in the order they start: files never timed first, by
# size (bytes), then the others by their last time (seconds), largest
# first.
proc start_order {files} {
  set times [last_times]
  set keyed {}
  foreach file $files {
    set name [file tail $file]
    if {[dict exists $times $name]} {
      lappend keyed [list $file 0 [dict get $times $name]]
    } else {
      lappend keyed [list $file 1 [file size $file]]
    }
  }
  # (lsort is a stable merge sort: the second keeps the first's order.)
  set keyed [lsort -real -decreasing -index 2 $keyed]
  set keyed [lsort -integer -decreasing -index 1 $keyed]
  lmap k $keyed { lindex $k 0 }
}

# Start what may start: up to $jobs children, one make-running file at
# a time, in queue order.
proc start_more {} {
  global queue jobs
  while {$::running < $jobs && [llength $queue] > 0} {
    set i 0
    set picked -1
    foreach item $queue {
      lassign $item kind file
      if {!($kind eq "test" && $::makeBusy && [runs_make $file])} {
        set picked $i
        break
      }
      incr i
    }
    if {$picked < 0} return
    set queue [lreplace $queue $picked $picked]
    if {$kind eq "example"} {
      start_example $file
    } else {
      start_test_file $file [runs_make $file]
    }
  }
}

# Keep the times of the files that ran for the next run's order.
proc save_times {} {
  if {![file isdirectory [file dirname [times_file]]]} return
  set times [last_times]
  foreach name [array names ::fileSecs] { dict set times $name $::fileSecs($name) }
  if {[catch {open [times_file].tmp w} f]} return
  dict for {name secs} $times { puts $f [list $name $secs] }
  close $f
  file rename -force [times_file].tmp [times_file]
}

# --------------------------------------------------------------------------

set jobs [online_cpus]
if {[info exists env(DS_TEST_JOBS)] && [string is integer -strict $env(DS_TEST_JOBS)]
    && $env(DS_TEST_JOBS) > 0} {
  set jobs $env(DS_TEST_JOBS)
}
set makeBusy 0
lassign [select_files] testfiles examples
set queue {}
foreach file [start_order $testfiles] { lappend queue [list test $file] }
foreach file $examples { lappend queue [list example $file] }
start_more
while {$running > 0} {
  vwait ::running
  start_more
}
save_times

puts ""
if {[llength $failures] > 0} { puts "Failed: [join $failures {, }]" }
if {$nSkipTest > 0} { puts "Skipped: $nSkipTest test(s), reasons above" }
puts "$nPass passed, $nFail failed"
exit [expr {$nFail > 0}]
