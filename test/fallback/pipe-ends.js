// Run by test/process/executor-syscalls.test.ts under strace, in a fresh Node
// process: children with no output, output on both streams, output that
// fills the pipe many times over, and one whose output outlives it through
// a grandchild, one at a time; or (argument `concurrent`) 32 children in
// flight together; or (`pairs`) two callers one exec at a time each. Prints
// what each exec returned, as JSON.
const path = require('node:path');
const { exec, execFile } = require(path.resolve(__dirname, '..', '..', 'dist', 'index.js'));

(async () => {
  if (process.argv[2] === 'pairs') {
    // Two callers, each one exec at a time of a child that keeps a CPU busy
    // for a while: each executor thread (one per CPU) usually has none of
    // its own in flight when it starts one, while the other's child runs.
    const lane = async (k) => {
      const got = [];
      for (let i = 0; i < 12; i++) {
        got.push((await exec(['/bin/sh', '-c', `i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; echo ${k}${i}`])).stdout);
      }
      return got;
    };
    process.stdout.write(JSON.stringify(await Promise.all([lane('a'), lane('b')])));
    return;
  }
  if (process.argv[2] === 'concurrent') {
    // Children in flight together: each start beside others.
    const rs = await Promise.all(Array.from({ length: 32 }, (_, i) => exec(['/bin/sh', '-c', `sleep 0.0${i % 5}; echo c${i}`])));
    process.stdout.write(JSON.stringify(rs.map((r) => r.stdout)));
    return;
  }
  const out = { empty: [], both: [], big: 0, late: '' };
  for (let i = 0; i < 10; i++) {
    const r = await execFile('/bin/true', []);
    out.empty.push([r.stdout, r.stderr, r.exitCode]);
  }
  for (let i = 0; i < 10; i++) {
    const r = await exec(['/bin/sh', '-c', `echo out${i}; echo err${i} >&2`]);
    out.both.push([r.stdout, r.stderr]);
  }
  out.big = (await exec(['/bin/sh', '-c', 'head -c 3000000 /dev/zero'], { maxBuffer: 4e6 })).stdout.length;
  out.late = (await exec(['/bin/sh', '-c', '(sleep 0.2; echo late) & echo early'], { outputGrace: Infinity })).stdout;
  process.stdout.write(JSON.stringify(out));
})();
