"""client.py: the `dataset` extension from Python's sqlite3 module.

    /usr/bin/python3 tests/clients/client.py EXTENSION < SCRIPT

Loads EXTENSION (the shared library's path, with or without .so) into a
:memory: database with enable_load_extension() and load_extension(), then
runs SCRIPT: one SQL statement per line (blank lines and `--` lines are
skipped), printing each statement's rows as the sqlite3 shell's list mode
does: values joined by `|`, NULL as the word NULL, BLOB as x'HEX'.  A
failing statement prints `error: MESSAGE` and the script goes on.  This is
what tests/clients/script.h does in C.  If the library cannot be loaded,
the message goes to stderr and the exit status is 2.

It needs a Python whose sqlite3 module was built with extension loading:
Debian's /usr/bin/python3 is; a Python built by pyenv usually is not (it
has no enable_load_extension at all).
"""
import sqlite3
import sys


def show(value):
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "x'" + value.hex().upper() + "'"
    return str(value)


def run_script(con, lines):
    for line in lines:
        sql = line.rstrip("\r\n")
        if not sql or sql.startswith("--"):
            continue
        try:
            rows = con.execute(sql).fetchall()
        except sqlite3.Error as e:
            print("error: %s" % e)
            continue
        for row in rows:
            print("|".join(show(v) for v in row))
        sys.stdout.flush()


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: client.py EXTENSION < SCRIPT\n")
        return 1
    # Autocommit, as the other clients: no transaction opened behind our back.
    con = sqlite3.connect(":memory:", isolation_level=None)
    try:
        con.enable_load_extension(True)
        con.load_extension(sys.argv[1])
        con.enable_load_extension(False)
    except (AttributeError, sqlite3.Error) as e:
        sys.stderr.write("cannot load %s: %s\n" % (sys.argv[1], e))
        return 2
    run_script(con, sys.stdin)
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
