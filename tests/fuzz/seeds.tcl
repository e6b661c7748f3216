# seeds.tcl: write the seed inputs of the fuzz target (tests/fuzz/fuzz_ops.c).
#
#   tclsh tests/fuzz/seeds.tcl DIR
#
# Each seed is an input in the target's format (docs/fuzzing.md): tables,
# then operations.  The procs below write the bytes the decoder reads, so
# a seed says what it is for: a join of duplicate and NULL keys under
# every hint, a coGroup under a tiny memory_limit, bad datasets, CREATE
# VIRTUAL TABLE arguments, settings, aggregates.  Then a few dozen random
# inputs (fixed seed) for variety.  The fuzzer's corpus (tests/fuzz/corpus)
# started from these; `make fuzz-merge` keeps it minimal.

set dir [lindex $argv 0]
if {$dir eq ""} { puts stderr "usage: tclsh seeds.tcl DIR"; exit 2 }
file mkdir $dir

# --- The bytes of the format ------------------------------------------------
proc b {args} { binary format c* $args }
proc text {s} { return "[encoding convertto utf-8 $s]\x00" }

# A value: int/real/text/blob from the target's pools, NULL, or raw.
proc vint {i}  { b [expr {0 + 8*$i}] }     ;# aIntPool[i]: 0 1 -1 2 3 42 2^53 ...
proc vreal {i} { b [expr {2 + 8*$i}] }     ;# aRealPool[i]: 0.0 -0.0 1.0 2.0 0.5 ...
proc vtext {i} { b [expr {3 + 8*$i}] }     ;# azTextPool[i]: '' a A 1 2.0 ...
proc vblob {i} { b [expr {4 + 8*$i}] }
proc vnull {}  { b 5 }
proc vraw {s}  { return "[b 6][text $s]" }

# A table: its name byte (0: t<i>), columns as {nameByte typeByte}, rows as
# lists of values.  Name bytes below 128 give a, b, c...; type byte 0: none.
proc table {name cols rows} {
  set out [b $name [expr {[llength $cols] - 1}]]
  foreach c $cols { append out [b {*}$c] }
  append out [b [llength $rows]]
  foreach r $rows { append out [join $r ""] }
  return $out
}
proc header {ntab} { b [expr {$ntab - 1}] }

# Operation codes (op byte % 16).
array set OP {
  join 0 join_vtab 2 cogroup 3 cogroup_vtab 4 cross 5 cross_vtab 6 plan 7
  vtab_raw 8 aggregate 9 config 11 last_stats 12 change 13
}
# A dataset: mode byte (0-15: the valid forms, 200+: bad), form byte, table.
proc data {mode form tab} { b $mode $form $tab }
# Keys: mode byte (nKey-1 in the low bits) and one byte per position and
# per style (1: position, 2: name, 6: name with its case changed).
proc keys {positions {style 2}} {
  set n [llength $positions]
  set out [b [expr {$n - 1}]]
  foreach p $positions { append out [b $p] }
  if {$n == 1 && $style eq "int"} {
    return [b [expr {0x60}] [lindex $positions 0]]
  }
  foreach p $positions { append out [b $style] }
  return $out
}
# Hint and join type: 48 + index in the target's lists (0: left out).
proc word {i} { b [expr {48 + 8*$i + ($i % 8)}] }
proc hintw {name} {
  set i [lsearch {OPTIMIZER_CHOOSES BROADCAST_HASH_FIRST BROADCAST_HASH_SECOND
                 REPARTITION_HASH_FIRST REPARTITION_HASH_SECOND
                 REPARTITION_SORT_MERGE} $name]
  # the byte k must give k % 8 == i and 48 <= k < 224
  b [expr {48 + $i}]
}
proc typew {name} {
  set i [lsearch {INNER LEFT_OUTER RIGHT_OUTER FULL_OUTER} $name]
  b [expr {54 + $i}]   ;# 54 % 9 == 0
}
proc crossw {name} {
  set i [lsearch {OPTIMIZER_CHOOSES FIRST_IS_SMALL SECOND_IS_SMALL} $name]
  b [expr {48 + $i}]   ;# 48 % 4 == 0
}
proc config {nameIdx valueIdx} { b $::OP(config) $nameIdx $valueIdx }

proc write_seed {name bytes} {
  set f [open [file join $::dir $name] wb]
  puts -nonewline $f $bytes
  close $f
}

# Two tables with duplicate keys, NULL keys, 1 and 1.0, '1' and 1, blobs.
set dup_tables "[header 2][table 0 {{0 0} {0 0}} [list \
    [list [vint 1] [vtext 1]] [list [vint 1] [vtext 2]] [list [vreal 2] [vnull]] \
    [list [vnull] [vtext 4]] [list [vtext 3] [vblob 1]] [list [vreal 1] [vint 2]]]]"
append dup_tables [table 0 {{0 0} {0 0}} [list \
    [list [vreal 2] [vint 3]] [list [vint 1] [vnull]] [list [vnull] [vnull]] \
    [list [vtext 3] [vtext 1]] [list [vblob 1] [vblob 2]] [list [vint 3] [vint 4]]]]
append dup_tables [b 0]

# --- Joins under every hint and join type ----------------------------------
foreach hint {OPTIMIZER_CHOOSES BROADCAST_HASH_FIRST BROADCAST_HASH_SECOND
              REPARTITION_HASH_FIRST REPARTITION_HASH_SECOND REPARTITION_SORT_MERGE} {
  foreach type {INNER LEFT_OUTER RIGHT_OUTER FULL_OUTER} {
    set ops ""
    foreach form {0 2} {
      append ops [b [expr {$OP(join) + $form}] 0] [data 0 0 0] [data 0 0 1] \
          [keys 0] [keys 0] [hintw $hint] [typew $type]
    }
    write_seed join-[string tolower $hint]-[string tolower $type] "$dup_tables$ops"
  }
}
# A tiny memory_limit first: everything spills.
write_seed join-spill "$dup_tables[config 0 0][b 0 0][data 3 0 0][data 4 2 1][keys 0][keys 0][hintw REPARTITION_HASH_FIRST][typew FULL_OUTER][b 2 0x0c][data 6 0 0][data 7 0 1][keys 0][keys 0][hintw REPARTITION_SORT_MERGE][typew LEFT_OUTER]"
# Composite keys, by position and by name, with an ORDER BY on the CREATE form.
write_seed join-composite "$dup_tables[b 2 0x06][data 0 1 0][data 3 0 1][keys {0 1} 1][keys {1 0} 2][hintw REPARTITION_SORT_MERGE][typew LEFT_OUTER]"
# --- coGroup, cross, plan ---------------------------------------------------
write_seed cogroup "$dup_tables[b 3 0][data 0 0 0][data 5 0 1][keys 0][keys 0][b 4 0x04][data 0 0 0][data 0 0 1][keys {0 1}][keys {0 1}]"
write_seed cogroup-spill "$dup_tables[config 0 1][b 3 0][data 8 1 0][data 0 0 1][keys 0 int][keys 1 int]"
write_seed cross "$dup_tables[b 5 0][data 0 0 0][data 9 0 1][crossw FIRST_IS_SMALL][b 6 2][data 0 0 0][data 0 0 1][crossw SECOND_IS_SMALL]"
write_seed plan "$dup_tables[b 7 0][data 0 0 0][data 0 0 1][keys 0][keys 0][hintw OPTIMIZER_CHOOSES][typew FULL_OUTER]"
# --- Inputs given in every way ----------------------------------------------
foreach mode {0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15} {
  write_seed dataset-form-$mode "$dup_tables[b 0 0][data $mode 0 0][data $mode 1 1][keys 0][keys 0][hintw BROADCAST_HASH_SECOND][typew FULL_OUTER]"
}
# --- Bad arguments -----------------------------------------------------------
set i 0
foreach bad {"DELETE FROM t0" "SELECT 1; DROP TABLE t0" "(SELECT 1); DELETE FROM t0"
             "nosuch" "" "\"unterminated" "WITH x AS (SELECT 1) DELETE FROM t0"} {
  write_seed bad-dataset-[incr i] "$dup_tables[b 0 0][data 200 0 0][text $bad][data 0 0 1][keys 0][keys 0][hintw OPTIMIZER_CHOOSES][typew INNER]"
}
foreach {name k} {null 201 integer 202 blob 203 real 204} {
  write_seed bad-dataset-$name "$dup_tables[b 3 0][data $k 0 0][data 0 0 1][keys 0][keys 0]"
}
set i 0
foreach badkey {"" "," "a,,b" "99" "\"a" "0x1" "-1"} {
  write_seed bad-key-[incr i] "$dup_tables[b 0 0][data 0 0 0][data 0 0 1][b 224][text $badkey][keys 0][hintw OPTIMIZER_CHOOSES][typew INNER]"
}
write_seed bad-hint "$dup_tables[b 0 0][data 0 0 0][data 0 0 1][keys 0][keys 0][b 240][text FASTEST][typew INNER][b 2 0][data 0 0 0][data 0 0 1][keys 0][keys 0][b 245][text SIDEWAYS][b 1]"
# --- CREATE VIRTUAL TABLE argument lists -------------------------------------
foreach {name raw} {
  vtab-query   {left='SELECT * FROM t0', right=t1, left_key=a, right_key='a', join_type=FULL}
  vtab-missing {left=t0, right=t1, left_key=a}
  vtab-twice   {left=t0, left=t1, right=t1, left_key=a, right_key=a}
  vtab-unknown {left=t0, right=t1, left_key=a, right_key=a, speed=fast}
  vtab-unquoted {left=SELECT * FROM t0, right=t1, left_key=a, right_key=a}
  vtab-cogroup {left="t0", right='t1', left_key='a,b', right_key='0,1'}
} {
  set mod [expr {$name eq "vtab-cogroup" ? 131 : 130}]  ;# % 5: the module; 0x80: raw text
  write_seed $name "$dup_tables[b $OP(vtab_raw) $mod][text $raw][b 1]"
}
# main.fz_raw (0xC0 + module: 195 ds_join_hint, 196 ds_cogroup, 197
# ds_cross), then its input dropped (5) or altered (7), then a second
# connection that connects to it again and drops it.
foreach {name mod after raw} {
  reconnect-join-dropped    195 5 {left=t0, right=t1, left_key=a, right_key=a}
  reconnect-join-altered    195 7 {left='SELECT * FROM t0', right=t1, left_key=0, right_key=0, hint=REPARTITION_SORT_MERGE}
  reconnect-cogroup-dropped 196 5 {left=t0, right=t1, left_key=a, right_key=a}
  reconnect-cross-altered   197 7 {left=t0, right='SELECT * FROM t0'}
} {
  write_seed $name "$dup_tables[b $OP(vtab_raw) $mod][text $raw][b $after]"
}

# --- Settings, statistics, aggregates, changes -------------------------------
write_seed config-all "$dup_tables[config 0 2][config 0 8][config 1 3][config 2 4][config 3 1][config 0xc0 0][config 0x80 0][b 12]"
write_seed strict-hints "$dup_tables[config 3 1][b 0 0][data 0 0 0][data 0 0 1][keys 0][keys 0][hintw BROADCAST_HASH_FIRST][typew LEFT_OUTER]"
foreach {name k n} {first 0x00 2 min_by 0x01 0 max_by 0x42 0 key_stats 0x03 0 grouped 0x44 1 sliding 0x05 0 bad_n 0x00 5} {
  write_seed aggregate-$name "$dup_tables[b $OP(aggregate) 0 $k $n]"
}
write_seed changes "$dup_tables[b $OP(change) 0 0][vint 1][vint 1][b 0 0][data 0 0 0][data 0 0 1][keys 0][keys 0][hintw BROADCAST_HASH_FIRST][typew INNER][b $OP(change) 0 3][b 0 0][data 0 0 0][data 0 0 1][keys 0][keys 0][hintw REPARTITION_SORT_MERGE][typew INNER]"
# Odd table and column names: keywords, quotes, ds:input, duplicates by case.
write_seed odd-names "[header 2][table 167 {{133 0} {131 0} {145 3}} [list [list [vint 1] [vint 2] [vtext 1]]]][table 163 {{136 0} {137 4}} [list [list [vint 1] [vtext 1]]]][b 0][b 0 0][data 1 1 0][data 3 3 1][keys 0][keys 0][hintw REPARTITION_HASH_SECOND][typew FULL_OUTER]"

# --- Random inputs, for variety ---------------------------------------------
expr {srand(7)}
for {set i 0} {$i < 40} {incr i} {
  set n [expr {64 + int(rand() * 700)}]
  set bytes ""
  for {set j 0} {$j < $n} {incr j} {
    # Mostly small bytes, so that most arguments are valid.
    append bytes [b [expr {rand() < 0.8 ? int(rand() * 64) : int(rand() * 256)}]]
  }
  write_seed random-$i $bytes
}
puts "[llength [glob -directory $dir *]] seeds in $dir"
