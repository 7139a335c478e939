// Shared by the fault scenarios: each runs in its own Node process (limits
// apply only there; a crash is seen as its exit status), checks what it can
// itself, and prints one JSON summary line on stdout before exiting 0.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export const PROBE = new URL('../fixtures/bin/probe', import.meta.url).pathname;
export const FIXTURES = new URL('../fixtures/bin/', import.meta.url).pathname;

export function fdCount() {
  // The directory fd readdirSync holds is listed too; it is gone on return.
  return readdirSync('/proc/self/fd').length - 1;
}

/** fds that are pidfds: how the exit watch shows up in /proc. */
export function pidfdCount() {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:[pidfd]') n++;
    } catch {
      // the readdir fd itself, closed by now
    }
  }
  return n;
}

/** What each open fd is, for a summary that says what leaked. */
export function fdLinks() {
  const out = {};
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      out[fd] = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // the readdir fd itself, closed by now
    }
  }
  return out;
}

export function threadCount() {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
}

/** pids of this process's children (any thread), zombies included. */
export function children() {
  const out = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.push(...readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch {
      // the thread ended between the two reads
    }
  }
  return out;
}

export function isAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(cond, ms = 5000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(10);
  }
  return cond();
}

/** The fields of an error the tests compare, or null. */
export function errorFields(err) {
  if (err === undefined || err === null) return null;
  const { name, code, errno, syscall, step, path, message } = err;
  return { name, code, errno, syscall, step, path, message };
}

/** Settles a promise into { value } or { error } without throwing. */
export async function settle(promise) {
  try {
    return { value: await promise };
  } catch (error) {
    return { error: errorFields(error) };
  }
}

/** Runs fn and reports its throw as data. */
export function attempt(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error: errorFields(error) };
  }
}

/**
 * A scenario never hangs the test: past `ms` it prints what it has and exits
 * 3. Then prints the summary plus the closing figures and exits 0.
 */
export async function scenario(name, ms, body) {
  const summary = { scenario: name };
  const guard = setTimeout(() => {
    process.stdout.write(`${JSON.stringify({ ...summary, hung: true })}\n`);
    process.exit(3);
  }, ms);
  guard.unref();
  await body(summary);
  clearTimeout(guard);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exit(0);
}

/**
 * The closing figures, once sockets have finished closing (they close a
 * loop turn after the result) and children are reaped; then the later spawn
 * that must work again.
 */
export async function closing(summary, exec) {
  const { fds, threads } = summary.baseline;
  await waitFor(() => fdCount() <= fds && threadCount() <= threads && children().length === 0, 3000);
  summary.after = { fds: fdCount(), threads: threadCount(), children: children() };
  if (summary.after.fds !== fds) summary.after.fdLinks = fdLinks();
  const later = await settle(exec(['/bin/echo', 'after']));
  summary.after.laterExec = later.value?.stdout ?? later.error;
}

/**
 * Opens what stays open for the life of the process before a baseline is
 * taken: the exec executor (a thread, an epoll fd and an eventfd, like
 * libuv's thread pool) and what libuv opens once for the first stream a
 * spawn()'s pipes become. A baseline without them would count them as
 * leaks. (Under NOSHELL_FAULT_CAPTURE the exec fails; the executor runs.)
 */
export async function startExecutor(exec) {
  await exec(['/bin/true'], { reject: false }).catch(() => {});
  const { spawn } = await import('../../dist/index.mjs');
  const child = spawn('/bin/true', []);
  child.stdout.resume();
  child.stderr.resume();
  await child.exited;
  await new Promise((r) => setTimeout(r, 20)); // its streams finish closing
}
