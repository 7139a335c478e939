// Run under strace by fallbacks.test.ts: /bin/true on the auto, vfork and
// fork paths, each after reading which signals this process handles or
// ignores (/proc/self/status), printed as a JSON list of lists.
'use strict';
const { readFileSync } = require('node:fs');
const { execFile } = require('../../dist/index.js');

process.on('SIGUSR2', () => {});
process.on('SIGWINCH', () => {});

function nonDefault() {
  let mask = 0n;
  for (const line of readFileSync('/proc/self/status', 'utf8').split('\n')) {
    if (line.startsWith('SigIgn:') || line.startsWith('SigCgt:')) mask |= BigInt(`0x${line.slice(7).trim()}`);
  }
  const out = [];
  for (let sig = 1; sig <= 64; sig++) if (sig !== 9 && sig !== 19 && (mask >> BigInt(sig - 1)) & 1n) out.push(sig);
  return out;
}

(async () => {
  const expected = [];
  for (const method of ['auto', 'vfork', 'fork']) {
    expected.push(nonDefault());
    await execFile('/bin/true', [], { method });
  }
  process.stdout.write(JSON.stringify(expected));
})();
