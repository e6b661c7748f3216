'use strict';
// The name of this platform among the bundled libraries (prebuilds/NAME/):
// Node's platform and architecture, and on Linux the C library, since a
// library built against glibc does not load under musl (Alpine).
module.exports = function platformKey() {
  let key = process.platform + '-' + process.arch;
  if (process.platform === 'linux') {
    let glibc = false;
    try {
      glibc = Boolean(process.report.getReport().header.glibcVersionRuntime);
    } catch (e) {
      glibc = false;
    }
    key += glibc ? '-glibc' : '-musl';
  }
  return key;
};
