// CI's closing lines, over every vitest run of .ci/run: the ten slowest test
// files (hooks included, from test/reporters/file-times.ts), each failed test
// again with the run it failed in (CI shows the tail of the output), and the
// plain "N passed, N failed, N skipped" line last. Exit 1 when a run is missing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = 'test-results';
const runs = [
  { label: 'npm test', file: 'vitest.json' },
  { label: 'fallbacks', file: 'vitest-fallbacks.json' },
  ...(existsSync(path.join(dir, 'node-lines')) ? readdirSync(path.join(dir, 'node-lines')) : [])
    .filter((f) => f.endsWith('.json') && !f.endsWith('.times.json')).sort()
    .map((f) => ({ label: f.slice('node-'.length, -'.json'.length), file: path.join('node-lines', f) })),
];

let missing = 0;
const reports = runs.map((run) => {
  const file = path.join(dir, run.file);
  if (!existsSync(file)) {
    missing++;
    console.log(`FAILED [${run.label}]: no report (${file})`);
    return null;
  }
  return JSON.parse(readFileSync(file, 'utf8'));
});

const slow = [];
runs.forEach((run, i) => {
  const times = path.join(dir, run.file.replace(/\.json$/, '.times.json'));
  if (!existsSync(times)) return;
  const t = JSON.parse(readFileSync(times, 'utf8'));
  console.log(`${run.label}: ${t.files.length} files in ${(t.wallMs / 1000).toFixed(0)} s`);
  for (const f of t.files) slow.push({ ...f, run: runs[i].label });
});
slow.sort((a, b) => b.ms - a.ms);
console.log('the ten slowest test files:');
for (const f of slow.slice(0, 10)) {
  console.log(`${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file} [${f.run}${f.project === 'solo' ? ', solo' : ''}]`);
}

reports.forEach((r, i) => {
  if (r === null) return;
  const run = runs[i].label;
  if (r.reason) console.log(`FAILED [${run}]: ${r.reason}`);
  for (const file of r.testResults ?? []) {
    const name = file.name.replace(`${process.cwd()}/`, '');
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((a) => a.status === 'failed')) {
      console.log(`FAILED [${run}] ${name}: ${String(file.message ?? '').slice(0, 400)}`);
    }
    for (const a of file.assertionResults ?? []) {
      if (a.status !== 'failed') continue;
      const msg = String((a.failureMessages ?? [])[0] ?? '').split('\n');
      const why = [msg[0], msg.find((l) => l.includes('/test/'))?.trim()].filter(Boolean).join(' ').slice(0, 400);
      console.log(`FAILED [${run}] ${name} > ${a.fullName}: ${why}`);
    }
  }
});

const sum = (k) => reports.reduce((n, r) => n + (r?.[k] ?? 0), 0);
console.log(`${sum('numPassedTests')} passed, ${sum('numFailedTests') + missing} failed, ${sum('numPendingTests') + sum('numTodoTests')} skipped`);
process.exit(missing > 0 ? 1 : 0);
