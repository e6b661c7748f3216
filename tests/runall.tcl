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
# With GLOB arguments only the matching files run: a GLOB with a `/` is
# taken relative to the repository root (tests/join_*.test,
# sql/examples/0*.sql); a GLOB without one is matched against the file
# names in both tests/ and sql/examples/ (join_*, 01_*).
#
# Environment: SQLITE3 (the shell, default `sqlite3`), DS_EXT (see
# tester.tcl), DS_TEST_TIMEOUT (seconds per file, default 900),
# DS_TESTFIXTURE (the static test program, tests/testfixture.c: the files
# that need its fault-injection commands, faults.test, run in it instead
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
# Running a child process: all its output (stdout and stderr), whether it
# ended normally, and a time limit.

# Run the command line $cmd (a list for `open |`), feeding it file $input
# if not empty.  Returns {status output}: status is the exit code, or a
# text like "killed by SIGSEGV" or "timed out".
proc run_child {cmd {input {}}} {
  global timeout_ms
  set pipeline [list | {*}$cmd]
  if {$input ne ""} { lappend pipeline < $input }
  lappend pipeline 2>@1
  set chan [open $pipeline r]
  fconfigure $chan -translation binary -blocking 0
  set pids [pid $chan]
  set ::child_out ""
  set ::child_done 0
  fileevent $chan readable [list child_readable $chan]
  set timer [after $timeout_ms [list set ::child_done timeout]]
  while {$::child_done == 0} { vwait ::child_done }
  after cancel $timer
  if {$::child_done eq "timeout"} {
    foreach p $pids { catch {exec kill -9 $p} }
    catch {close $chan}
    return [list "timed out after [expr {$timeout_ms/1000}] s" $::child_out]
  }
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
  list $status $::child_out
}

proc child_readable {chan} {
  append ::child_out [read $chan]
  if {[eof $chan]} { set ::child_done 1 }
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
  if {$fixture ne "" && [file tail $file] in {faults.test}} { return $fixture }
  return $tclsh
}

proc run_test_file {file} {
  global nPass nFail failures root
  set name [file tail $file]
  set t0 [clock milliseconds]
  lassign [run_child [list [interpreter_for $file] $file]] status output
  set secs [format %.1f [expr {([clock milliseconds] - $t0) / 1000.0}]]
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

proc run_example {file} {
  global root sqlite3_shell nPass nFail failures
  set name [file tail $file]
  set expfile "[file rootname $file].expected"
  if {![file exists $expfile]} {
    puts "$name: FAILED: no [file tail $expfile]"
    incr nFail
    lappend failures $name
    return
  }
  set expected [read_binary $expfile]
  set here [pwd]
  cd $root
  lassign [run_child [list $sqlite3_shell -batch -bail :memory:] $file] status output
  cd $here
  if {$output eq $expected} {
    puts "$name: ok"
    incr nPass
    return
  }
  puts "$name: FAILED (exit status $status); diff expected actual:"
  set tmp [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] \
               "ds-example-[pid].out"]
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

lassign [select_files] testfiles examples
foreach file $testfiles { run_test_file $file }
foreach file $examples { run_example $file }

puts ""
if {[llength $failures] > 0} { puts "Failed: [join $failures {, }]" }
if {$nSkipTest > 0} { puts "Skipped: $nSkipTest test(s), reasons above" }
puts "$nPass passed, $nFail failed"
exit [expr {$nFail > 0}]
