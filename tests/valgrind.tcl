# valgrind.tcl: the test suite under valgrind's memcheck (`make valgrind`).
#
#   tclsh tests/valgrind.tcl TESTFIXTURE ?GLOB ...?
#
# 1. tests/runall.tcl runs in TESTFIXTURE under memcheck, and so does every
#    process it starts (--trace-children=yes): the child test programs and
#    the sqlite3 shell of the examples and docs.test, which loads
#    build/dataset.so; not the tools (make, cc, sh, ...).  Each process
#    writes what memcheck finds to a file of its own under build/valgrind/,
#    so that the tests' own output is not disturbed.
# 2. The verdict on memory: every such file must be empty (no error, no
#    definite leak); those that are not are printed.
# 3. The verdict on the tests: a test file that fails under memcheck is run
#    again natively.  If it passes there, its failure came from valgrind
#    itself: SQLite 3.40 converts reals to and from text in long double,
#    which valgrind computes in double precision (1e300 reads back as
#    1.0000000000000004e+300, 0.1 prints as 0.1 at 17 digits), so tests
#    that compare the extension's JSON of reals with SQLite's own text
#    fail under it.  Memory errors are caught by 2 whatever a test says.
#    A file that fails natively too is a failure.
#
# Exit status 0 only if both verdicts are clean.  Environment as for
# runall.tcl (DS_TEST_TIMEOUT, DS_FAULT_STEP, ...).

if {[llength $argv] < 1} {
  puts stderr "usage: tclsh tests/valgrind.tcl TESTFIXTURE ?GLOB ...?"
  exit 2
}
set root [file dirname [file dirname [file normalize [info script]]]]
set fixture [file normalize [lindex $argv 0]]
set globs [lrange $argv 1 end]
set logdir [file join $root build valgrind]
file delete -force $logdir
file mkdir $logdir

set skip {*/make,*/cc,*/gcc,*/diff,*/node,*/npm,*/python3*,*/env,*/sh,*/bash,*/unshare}
set vg [list valgrind -q --tool=memcheck --error-exitcode=99 \
            --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite --trace-children=yes \
            --trace-children-skip=$skip --child-silent-after-fork=yes \
            --log-file=$logdir/vg.%p.log]

# 1. The run, its output shown as it comes and kept.
set chan [open |[list {*}$vg $fixture [file join $root tests runall.tcl] {*}$globs 2>@1] r]
set failedFiles {}
while {[gets $chan line] >= 0} {
  puts $line
  if {[regexp {^Failed: (.*)$} $line -> list]} {
    set failedFiles [split [string map {", " ,} $list] ,]
  }
}
set runStatus [catch {close $chan}]

# 2. What memcheck found.
set reports {}
foreach f [lsort [glob -nocomplain -directory $logdir vg.*.log]] {
  if {[file size $f] > 0} { lappend reports $f }
}
puts ""
if {[llength $reports]} {
  puts "memcheck found errors or definite leaks in [llength $reports] process(es):"
  foreach f $reports {
    set fd [open $f]
    puts "--- $f"
    puts [read $fd]
    close $fd
  }
} else {
  puts "memcheck: no error and no definite leak in any process"
}

# 3. Test files that failed: again, natively.
set nativeFailed {}
set files {}
foreach name $failedFiles {
  set name [string trim $name]
  if {$name ne ""} { lappend files $name }
}
if {[llength $files] && [llength $reports]} {
  # Failing already; memcheck's reports above say why these failed.
  puts "Failed under memcheck: [join $files {, }]"
  set nativeFailed $files
} elseif {[llength $files]} {
  puts "Failed under memcheck: [join $files {, }]; running them natively:"
  set rc [catch {exec $fixture [file join $root tests runall.tcl] \
                     {*}$files 2>@1} out]
  foreach line [split $out \n] { puts "    $line" }
  if {$rc} {
    set nativeFailed $files
    puts "They fail natively too: a real failure."
  } else {
    puts "They pass natively: their failures under memcheck come from\
          valgrind's double-precision emulation of SQLite's long double\
          conversions of reals (see docs/reliability.md), not from the\
          extension."
  }
} elseif {$runStatus} {
  # runall.tcl failed without naming files: count it.
  set nativeFailed {runall.tcl}
}

if {[llength $reports] || [llength $nativeFailed]} {
  puts "make valgrind: FAILED"
  exit 1
}
puts "make valgrind: passed"
exit 0
