// client.js: the `dataset` extension from Node, through better-sqlite3.
//
//     NODE_PATH=build/node/node_modules node tests/clients/client.js EXTENSION < SCRIPT
//
// better-sqlite3 (version 12, installed by `make node-client` into
// build/node) bundles its own SQLite, newer than Debian's.  This loads
// EXTENSION (the shared library's path, with or without .so) into a
// :memory: database with db.loadExtension(), then runs SCRIPT: one SQL
// statement per line (blank lines and `--` lines are skipped), printing
// each statement's rows as the sqlite3 shell's list mode does: values
// joined by `|`, NULL as the word NULL, BLOB as x'HEX'.  A failing
// statement prints `error: MESSAGE` and the script goes on.  This is what
// tests/clients/script.h does in C.  If the library cannot be loaded, the
// message goes to stderr and the exit status is 2.
//
// Integers come back as BigInt (safeIntegers), so 64-bit values print
// exactly rather than as rounded JavaScript numbers.
'use strict';

const fs = require('fs');
const Database = require('better-sqlite3');

function show(value) {
  if (value === null) return 'NULL';
  if (Buffer.isBuffer(value)) return "x'" + value.toString('hex').toUpperCase() + "'";
  return String(value);
}

function runStatement(db, sql) {
  let out = '';
  try {
    const stmt = db.prepare(sql);
    if (!stmt.reader) {
      stmt.run();
      return '';
    }
    for (const row of stmt.raw(true).all()) {
      out += row.map(show).join('|') + '\n';
    }
  } catch (e) {
    out += 'error: ' + e.message + '\n';
  }
  return out;
}

function main() {
  if (process.argv.length !== 3) {
    process.stderr.write('usage: client.js EXTENSION < SCRIPT\n');
    return 1;
  }
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  try {
    db.loadExtension(process.argv[2]);
  } catch (e) {
    process.stderr.write('cannot load ' + process.argv[2] + ': ' + e.message + '\n');
    return 2;
  }
  const script = fs.readFileSync(0, 'utf8');
  let out = '';
  for (const line of script.split('\n')) {
    const sql = line.replace(/\r$/, '');
    if (sql === '' || sql.startsWith('--')) continue;
    out += runStatement(db, sql);
  }
  process.stdout.write(out);
  db.close();
  return 0;
}

process.exitCode = main();
