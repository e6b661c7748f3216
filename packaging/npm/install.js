'use strict';
// Run by `npm install`.  A bundled library that fits this platform
// (prebuilds/PLATFORM/) is kept; otherwise, or when asked to
// (`npm install --build-from-source`, or SQLITE_DATASET_BUILD_FROM_SOURCE=1),
// the one-file source dataset.c is compiled with the C compiler ($CC, else
// cc) into build/.  A missing compiler fails the install with a message
// saying what to install.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const platformKey = require('./platform.js');

const suffix = process.platform === 'darwin' ? '.dylib'
  : process.platform === 'win32' ? '.dll' : '.so';
const key = platformKey();
const truthy = (v) => /^(1|true|yes)$/i.test(v || '');
const fromSource = truthy(process.env.npm_config_build_from_source) ||
  truthy(process.env.SQLITE_DATASET_BUILD_FROM_SOURCE);
const prebuilt = path.join(__dirname, 'prebuilds', key, 'dataset' + suffix);
// Relative to this directory, where the compiler runs.
const out = path.join('build', 'dataset' + suffix);

function fail(msg) {
  console.error('sqlite-dataset: ' + msg);
  process.exit(1);
}

if (!fromSource && fs.existsSync(prebuilt)) {
  console.log('sqlite-dataset: using the bundled library for ' + key);
  process.exit(0);
}

const cc = (process.env.CC || 'cc').trim().split(/\s+/);
const cflags = (process.env.CFLAGS || '-O2').trim().split(/\s+/).filter(Boolean);
const args = cc.slice(1).concat(cflags, ['-shared', '-fPIC', 'dataset.c',
  '-o', out, '-lm']);
fs.mkdirSync(path.join(__dirname, 'build'), { recursive: true });
console.log('sqlite-dataset: ' + (fromSource ? 'building from source'
  : 'no bundled library for ' + key) + ': ' + cc.concat(args).join(' '));
const r = spawnSync(cc[0], args, { cwd: __dirname, stdio: 'inherit' });
if (r.error && r.error.code === 'ENOENT') {
  fail('no C compiler found (tried `' + cc[0] + '`) to compile dataset.c ' +
    'for ' + key + ': install one (gcc or clang; on macOS the Xcode ' +
    'command line tools), or name it in CC, then run ' +
    '`npm rebuild sqlite-dataset`');
}
if (r.error) fail('could not run ' + cc[0] + ': ' + r.error.message);
if (r.status !== 0) {
  fail('compiling dataset.c failed (' + cc[0] + ' exited with status ' +
    r.status + '); see the compiler\'s messages above');
}
console.log('sqlite-dataset: built ' + out);
