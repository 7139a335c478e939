// What the soak watches: this process's fds, threads, children, read from
// /proc the way the leak tests do; RSS, the part of it that is V8's young
// generation, V8 heap used and V8 heap size.
import { readFileSync, readdirSync } from 'node:fs';
import v8 from 'node:v8';

export function fdCount() {
  // The listing includes the directory fd readdirSync itself holds open.
  return readdirSync('/proc/self/fd').length - 1;
}

export function threadCount() {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
}

export function childCount() {
  let n = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      n += readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).length;
    } catch {
      // the thread ended between the two reads
    }
  }
  return n;
}

/**
 * Resident bytes of V8's young generation (new space and new large objects).
 * It holds no leak — bounded by the maximum semi-space size, emptied by every
 * scavenge, survivors moved to old space — but it is most of a healthy run's
 * RSS movement: V8 grows it to the allocation rate (Node 24: 16 → 128 MiB over
 * the first ~20,000 operations; 20 and 22 keep 32 MiB, 26 ~50 MiB), its pages
 * become resident as they are first used, and some are given back after GCs.
 */
export function youngGenBytes() {
  return v8.getHeapSpaceStatistics()
    .filter((s) => s.space_name.startsWith('new_'))
    .reduce((n, s) => n + s.physical_space_size, 0);
}

export function snapshot() {
  const mem = process.memoryUsage();
  const young = youngGenBytes();
  return {
    fds: fdCount(), threads: threadCount(), children: childCount(), rss: mem.rss, young, rssOutsideYoung: mem.rss - young,
    heapUsed: mem.heapUsed, heapTotal: mem.heapTotal,
  };
}

const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * With no operation in flight: lets sockets finish closing (they close a few
 * ticks after 'close') and children be reaped, then collects garbage when
 * --expose-gc allows, so that RSS compares like with like.
 */
export async function settle() {
  let last = -1;
  for (let round = 0; round < 50; round++) {
    for (let k = 0; k < 5; k++) await tick();
    const now = fdCount();
    if (now === last && childCount() === 0) break;
    last = now;
    await sleep(20);
  }
  globalThis.gc?.();
  await tick();
  return snapshot();
}
