'use strict';
// The `dataset` SQLite extension for Node: load(db) loads it into a
// better-sqlite3 Database (or any connection with loadExtension(path)),
// getLoadablePath() names the library for any other driver.
const fs = require('fs');
const path = require('path');
const platformKey = require('./platform.js');

const suffix = process.platform === 'darwin' ? '.dylib'
  : process.platform === 'win32' ? '.dll' : '.so';

// The library compiled at install (install.js) if there is one, else the
// bundled one of this platform.
function getLoadablePath() {
  const key = platformKey();
  const candidates = [
    path.join(__dirname, 'build', 'dataset' + suffix),
    path.join(__dirname, 'prebuilds', key, 'dataset' + suffix),
  ];
  for (const p of candidates) {
    if (fs.existsSync(p)) return p;
  }
  throw new Error('sqlite-dataset: getLoadablePath: no library for ' + key +
    ' (none bundled, none compiled at install): run `npm rebuild ' +
    'sqlite-dataset` where a C compiler (cc, or CC=...) is installed');
}

function load(db) {
  if (!db || typeof db.loadExtension !== 'function') {
    throw new TypeError('sqlite-dataset: load(db): db must be a connection ' +
      'with a loadExtension(path) method, such as a better-sqlite3 ' +
      'Database; for another driver, load getLoadablePath() with its own call');
  }
  db.loadExtension(getLoadablePath());
  return db;
}

module.exports = { load, getLoadablePath };
