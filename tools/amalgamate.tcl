# amalgamate.tcl: write the one-file source of the extension, as SQLite
# ships sqlite3.c, from ext/.  Run by `make dist`; its output is never
# kept in the repository or edited by hand.
#
#   tclsh tools/amalgamate.tcl OUTDIR XXHASH_H
#
# writes OUTDIR/dataset.c and OUTDIR/dataset.h.  XXHASH_H is the xxhash.h
# the build uses (the Makefile asks the compiler where it is); it is
# inlined whole, its licence with it, so that the amalgamation needs no
# header beyond SQLite's own and the C library's.
#
# dataset.c is laid out so that `cc -shared -fPIC dataset.c` hides every
# symbol but the entry point, as the Makefile's -fvisibility=hidden does:
#
#   1. the licence (LICENSE) and the version (VERSION) as DS_VERSION;
#   2. _POSIX_C_SOURCE, then every system header the sources include and
#      SQLite's sqlite3ext.h, hoisted here: declarations of functions
#      defined elsewhere must not fall under the hidden visibility below;
#   3. xxhash.h (every function static with XXH_INLINE_ALL) and dataset.h
#      (the entry point, exported);
#   4. `#pragma GCC visibility push(hidden)` (GCC and Clang), then
#      dataset_int.h with each layer header it includes (dsrow.h, ...)
#      inlined where it is included, then the private headers two files
#      share (dshash.h, ...) by name, each header once, then every
#      ext/*.c, dataset.c first, each with its
#      #include lines commented out, and each .c file followed by an
#      #undef of the macros it defines: they are its own, and two files
#      may define one name differently (DS_FUNC); a static name that two
#      files use (azSide) is renamed NAME_FILE in each by a macro.

if {[llength $argv] != 2} {
  puts stderr "usage: tclsh tools/amalgamate.tcl OUTDIR XXHASH_H"
  exit 2
}
lassign $argv outdir xxhash
set root [file dirname [file dirname [file normalize [info script]]]]

proc slurp {path} {
  set f [open $path rb]
  set data [read $f]
  close $f
  return $data
}

set version [string trim [slurp [file join $root VERSION]]]
if {![regexp {^[0-9]+\.[0-9]+\.[0-9]+$} $version]} {
  puts stderr "amalgamate.tcl: VERSION must be X.Y.Z, not '$version'"
  exit 1
}
set license [string trimright [slurp [file join $root LICENSE]]]
if {![file readable $xxhash]} {
  puts stderr "amalgamate.tcl: cannot read $xxhash (xxHash's header, Debian: libxxhash-dev)"
  exit 1
}

# The .c files: dataset.c (the entry point) first, the others by name.
set sources [list dataset.c]
foreach f [lsort [glob -tails -directory [file join $root ext] *.c]] {
  if {$f ne "dataset.c"} { lappend sources $f }
}
set known {dataset.h sqlite3ext.h xxhash.h}

# The internal headers: dataset_int.h, the layer headers it includes and
# the private ones of two files.  Each is inlined once, where it is first
# included; a later #include of it is commented out.
set extHeaders {}
foreach h [lsort [glob -tails -directory [file join $root ext] *.h]] {
  if {$h ne "dataset.h"} { lappend extHeaders $h }
}
set inlined {}

# The licence as a C comment, each line prefixed as SQLite's comments are.
proc license_comment {license what} {
  set out "/*\n** $what\n**\n"
  foreach line [split $license \n] {
    append out [string trimright "** $line"] \n
  }
  append out "*/\n"
}

# A source file with its #include lines commented out; the system headers
# they name are gathered into ::sysinc.  Any quoted header other than
# those inlined here is an error: it would be missing from the one file.
proc strip_includes {name text} {
  set out {}
  foreach line [split [string trimright $text \n] \n] {
    if {[regexp {^\s*#\s*include\s*([<"])([^>"]+)[>"]} $line -> q hdr]} {
      # The line goes into a comment: a comment of its own would end it.
      regsub -all {/\*.*?\*/} $line {} line
      set line [string trimright $line]
      if {$hdr in $::known} {
        append out "/* $line: inlined above */\n"
        continue
      }
      if {$q eq "\"" && $hdr in $::extHeaders} {
        if {$hdr in $::inlined} {
          append out "/* $line: inlined above */\n"
        } else {
          append out [inline_header $hdr]
        }
        continue
      }
      if {$q eq "\""} {
        puts stderr "amalgamate.tcl: $name includes \"$hdr\", which is not inlined"
        exit 1
      }
      if {$hdr ni $::sysinc} { lappend ::sysinc $hdr }
      append out "/* $line: at the top */\n"
      continue
    }
    append out $line \n
  }
  return $out
}

# An internal header, with the headers it includes inlined in their
# place (the first time each is met), between banners.
proc inline_header {hdr} {
  lappend ::inlined $hdr
  set text [strip_includes $hdr [slurp [file join $::root ext $hdr]]]
  return "[banner "Begin file $hdr"]$text[banner "End of $hdr"]"
}

# The macros a .c file defines at any level of #if: its own.
proc defined_macros {text} {
  set names {}
  foreach {-> name} [regexp -all -inline -line {^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)} $text] {
    if {$name ni $names} { lappend names $name }
  }
  return $names
}

proc banner {what} {
  return "/************** $what [string repeat * [expr {60 - [string length $what]}]]/\n"
}

# The names a .c file declares static at file scope (at the start of a
# line: functions, arrays, variables).
proc static_names {text} {
  set names {}
  foreach {-> name} [regexp -all -inline -line \
      {^static\M[^(=;\[]*?\m([A-Za-z_][A-Za-z0-9_]*)\s*[(=;\[]} $text] {
    if {$name ni $names} { lappend names $name }
  }
  return $names
}

# Two files may each have a static of one name (azSide): each such name
# becomes NAME_FILE within its file, by a macro defined before the file
# and undefined after it.
array set nameCount {}
foreach f $sources {
  set statics($f) [static_names [slurp [file join $root ext $f]]]
  foreach n $statics($f) { incr nameCount($n) }
}

set sysinc {}
set body {}
# dataset_int.h, which inlines the layer headers in its order, then the
# private headers (each includes only dataset_int.h, already inlined).
set hdrInt [inline_header dataset_int.h]
foreach h $extHeaders {
  if {$h ni $inlined} { append hdrInt [inline_header $h] }
}
set headerMacros [defined_macros $hdrInt]
append body $hdrInt
foreach f $sources {
  set text [strip_includes $f [slurp [file join $root ext $f]]]
  append body [banner "Begin file $f"]
  set renamed {}
  foreach n $statics($f) {
    if {$nameCount($n) > 1} {
      append body "#define $n ${n}_[file rootname $f]\n"
      lappend renamed $n
    }
  }
  append body $text
  foreach n $renamed { append body "#undef $n\n" }
  foreach m [defined_macros $text] {
    # DS_VERSION is set at the top; the header's macros serve every file.
    if {$m ni $headerMacros && $m ne "DS_VERSION"} {
      append body "#undef $m\n"
    }
  }
  append body [banner "End of $f"]
}

set publicH [slurp [file join $root ext dataset.h]]

# --- dataset.c -------------------------------------------------------------
set c [license_comment $license "dataset $version: Apache Flink's DataSet operators as a SQLite extension."]
append c {/*
** This file is the whole extension in one translation unit, generated
** from the sources in ext/ by tools/amalgamate.tcl (`make dist`); it is
** not edited by hand.  As a loadable extension:
**
**     cc -O2 -shared -fPIC dataset.c -o dataset.so -lm
**
** (dataset.dylib on macOS).  Linked into a program with SQLite itself:
** compile it with -DSQLITE_CORE and call
** sqlite3_auto_extension((void (*)(void))sqlite3_dataset_init), declared
** in dataset.h.  It needs SQLite 3.38.0 or newer at run time.
**
** xxHash's header (xxhash.h, BSD 2-Clause licence) is inlined below, its
** licence with it.
*/
}
append c "#ifndef DS_VERSION\n# define DS_VERSION \"$version\"\n#endif\n"
append c {
/* The sources are POSIX (pread, mkstemp, pthreads), and on Linux give
** the kernel hints about large buffers (madvise: memory.c). */
#if !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE)
# define _POSIX_C_SOURCE 200809L
# define _DEFAULT_SOURCE 1
#endif

/* The assert()s of the sources check the invariants their comments state:
** on in the project's test builds, left out here unless DS_DEBUG is
** defined, as SQLite's amalgamation leaves its own out unless
** SQLITE_DEBUG is. */
#if !defined(DS_DEBUG) && !defined(NDEBUG)
# define NDEBUG 1
#endif

/* SQLite's interface and the system headers of every source. */
#include "sqlite3ext.h"
}
foreach h $sysinc {
  if {$h ne "xxhash.h"} { append c "#include <$h>\n" }
}
append c \n [banner "Begin file xxhash.h"]
append c "#define XXH_INLINE_ALL\n"
append c [string trimright [slurp $xxhash] \n] \n
append c [banner "End of xxhash.h"]
append c [banner "Begin file dataset.h"] $publicH [banner "End of dataset.h"]
append c {
/* Every symbol below is internal but the entry point, which dataset.h
** declared, and whose definition says so again. */
#if defined(__GNUC__)
# pragma GCC visibility push(hidden)
#endif
}
append c \n $body
append c {
#if defined(__GNUC__)
# pragma GCC visibility pop
#endif
}

# --- dataset.h ---------------------------------------------------------------
set h [license_comment $license "dataset $version: the header of the one-file source dataset.c."]
append h $publicH

file mkdir $outdir
foreach {name text} [list dataset.c $c dataset.h $h] {
  set fd [open [file join $outdir $name] wb]
  puts -nonewline $fd $text
  close $fd
}
