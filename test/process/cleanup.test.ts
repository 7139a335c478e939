// cleanup: children die with the Node process. A parent holding 50 children
// in flight (half on the executor, half on the event loop, some as nobody) is
// SIGKILLed: none is left a second later, and without cleanup all 50 are. A
// normal exit takes the rest of each child's process group too; a Worker's
// children go with the Worker.
import { spawn as cpSpawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRoot } from '../unprivileged';

const dist = path.resolve(__dirname, '..', '..', 'dist', 'index.js');
let tags: string[] = [];

/** Pids of processes whose argv[0] is tag (set with argv0 or exec -a). */
function tagged(tag: string): number[] {
  const r = spawnSync('pgrep', ['-f', `^${tag}( |$)`], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map(Number);
}

function newTag(): string {
  const tag = `noshell-cleanup-${process.pid}-${tags.length}`;
  tags.push(tag);
  return tag;
}

afterEach(() => {
  for (const tag of tags) for (const pid of tagged(tag)) process.kill(pid, 'SIGKILL');
  tags = [];
});

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return what();
}

/** Starts `node -e script`; resolves once it printed "ready". */
function startParent(script: string): Promise<ReturnType<typeof cpSpawn>> {
  const child = cpSpawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`parent exited ${code} before ready: ${out}`)));
  });
}

function fiftyChildren(tag: string, cleanup: boolean): string {
  const nobody = isRoot ? '{ uid: 65534, gid: 65534 }' : '{}';
  return `
    const { execFile, spawn } = require(${JSON.stringify(dist)});
    const o = { cleanup: ${cleanup}, argv0: ${JSON.stringify(tag)} };
    for (let i = 0; i < 25; i++) execFile('/bin/sleep', ['300'], { ...o, ...(i % 5 === 0 ? ${nobody} : {}) }).catch(() => {});
    for (let i = 0; i < 25; i++) spawn('/bin/sleep', ['300'], { ...o, stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', ...(i % 5 === 0 ? ${nobody} : {}) });
    const poll = setInterval(() => {
      const n = require('node:child_process').spawnSync('pgrep', ['-c', '-P', String(process.pid)], { encoding: 'utf8' }).stdout.trim();
      if (Number(n) >= 50) { clearInterval(poll); console.log('ready'); }
    }, 20);`;
}

describe('cleanup', () => {
  it('SIGKILL of a parent with 50 children in flight: 0 left 1 s later (both paths, some as nobody)', async () => {
    const tag = newTag();
    const parent = await startParent(fiftyChildren(tag, true));
    expect(tagged(tag)).toHaveLength(50);
    const gone = new Promise((r) => parent.on('exit', r));
    parent.kill('SIGKILL');
    await gone;
    await new Promise((r) => setTimeout(r, 1000));
    expect(tagged(tag)).toEqual([]);
  });

  it('without cleanup all 50 outlive it (the control)', async () => {
    const tag = newTag();
    const parent = await startParent(fiftyChildren(tag, false));
    const gone = new Promise((r) => parent.on('exit', r));
    parent.kill('SIGKILL');
    await gone;
    await new Promise((r) => setTimeout(r, 300));
    expect(tagged(tag)).toHaveLength(50);
  });

  it.each(['process.exit(0)', 'throw new Error("boom")'])(
    'a normal end (%s) sends killSignal to each child\'s group: grandchildren go too, on both paths',
    async (end) => {
      const tag = newTag();
      const sh = `exec -a ${tag} sleep 300 & exec -a ${tag} sleep 301`;
      const parent = cpSpawn(process.execPath, ['-e', `
        const { execFile, spawn } = require(${JSON.stringify(dist)});
        execFile('/bin/bash', ['-c', ${JSON.stringify(sh)}], { cleanup: true }).catch(() => {});
        spawn('/bin/bash', ['-c', ${JSON.stringify(sh)}], { cleanup: true, stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
        const poll = setInterval(() => {
          const n = require('node:child_process').spawnSync('pgrep', ['-c', '-f', '^${tag} '], { encoding: 'utf8' }).stdout.trim();
          if (Number(n) >= 4) { clearInterval(poll); ${end}; }
        }, 20);`], { stdio: 'ignore' });
      await new Promise((r) => parent.on('exit', r));
      expect(await until(() => tagged(tag).length === 0, 1000)).toBe(true);
    },
  );

  it('a child started in a Worker with cleanup goes when the Worker is terminated', async () => {
    const tag = newTag();
    const parent = await startParent(`
      const { Worker } = require('node:worker_threads');
      const w = new Worker(\`
        const { execFile, spawn } = require(${JSON.stringify(JSON.stringify(dist)).slice(1, -1)});
        execFile('/bin/sleep', ['300'], { cleanup: true, argv0: '${tag}' }).catch(() => {});
        spawn('/bin/sleep', ['300'], { cleanup: true, argv0: '${tag}', stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
        require('node:worker_threads').parentPort.postMessage('up');
      \`, { eval: true });
      w.on('message', () => setTimeout(() => w.terminate().then(() => setTimeout(() => console.log('ready'), 200)), 200));
      setInterval(() => {}, 1000);`);
    try {
      expect(await until(() => tagged(tag).length === 0, 1000)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
