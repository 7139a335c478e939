// What the soak watches: this process's fds, threads, children, RSS and heap,
// read from /proc the way the leak tests do.
import { readFileSync, readdirSync } from 'node:fs';

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

export function snapshot() {
  const mem = process.memoryUsage();
  return { fds: fdCount(), threads: threadCount(), children: childCount(), rss: mem.rss, heapUsed: mem.heapUsed };
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
