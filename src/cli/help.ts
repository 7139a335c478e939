// What `noshell --help`, `noshell help <command>` and `noshell <command>
// --help` print (issue 20): the usage, each option on its own line with a
// one-line meaning, to stdout. No import here loads the addon: help works
// where the addon does not (yet).
export interface CommandHelp {
  name: string;
  /** One line for the overview. */
  summary: string;
  /** Usage lines, without "usage: ". */
  synopsis: string[];
  /** [option as typed, meaning]. */
  options: Array<[string, string]>;
  /** Paragraph lines after the options. */
  notes: string[];
}

const COMMON_GEARMAN: Array<[string, string]> = [
  ['--server=HOST[:PORT]', 'a gearmand to use (port 4730 by default); repeat or comma-separate for several'],
  ['--key=KEY', 'the AES-256 key the Mod-Gearman peers share (--password is the same)'],
  ['--keyfile=FILE', 'read the key from FILE (its first line)'],
  ['--encryption=no', 'plain base64 payloads, no key'],
];

export const COMMANDS: CommandHelp[] = [
  {
    name: 'check',
    summary: 'run one Nagios plugin: its text on stdout, its state as the exit code',
    synopsis: [
      'noshell check [--timeout S] [--timeout-state STATE] [--format text|json] [limits] -- <program> [args...]',
      'noshell check [--timeout S] [--timeout-state STATE] [--format text|json] [limits] [--shell false|auto|true] --command <string>',
    ],
    options: [
      ['-- <program> [args...]', 'the plugin as an argv: one word is a program name, never a shell command'],
      ['--command <string>', 'the plugin as a command string, split like the shell splits words (no shell)'],
      ['--shell false|auto|true', 'for --command: false (default) refuses shell syntax, auto uses /bin/sh only for it, true always'],
      ['--timeout S', 'seconds (or 500ms, 2m) before the plugin\'s process group is killed (default 60)'],
      ['--timeout-state STATE', 'the state of a timed-out check: 0-3 or OK, WARNING, CRITICAL, UNKNOWN (default UNKNOWN)'],
      ['--format text|json', 'text: the plugin\'s stdout as written (default); json: the parsed result'],
      ['--rlimit NAME=V[,…]', 'limits: nofile=1024,as=512M,core=0; SOFT:HARD as in nofile=512:4096; unlimited; may be repeated'],
      ['--nice N', 'limits: the plugin\'s nice value, -20 to 19'],
      ['--cgroup DIR', 'limits: a cgroup v2 directory the plugin runs in'],
      ['-h, --help', 'this help'],
    ],
    notes: [
      'Exit codes are the plugin\'s states: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. Bad usage is UNKNOWN (3),',
      'as for any Nagios plugin (2 would read as CRITICAL). SIGINT/SIGTERM/SIGHUP kill the plugin\'s group first;',
      'a SIGKILL of noshell check kills the plugin too (not what it started). A limit that cannot be set is UNKNOWN, and',
      'the plugin never runs.',
    ],
  },
  {
    name: 'run',
    summary: 'schedule the checks of a JSON or YAML file, print results, serve /metrics',
    synopsis: [
      'noshell run <checks.json|.yaml> [--format json|text] [--metrics-port N [--metrics-host H]] [--concurrency N] [--tick D] [--allow-root]',
      'noshell run --check <checks.json|.yaml>',
    ],
    options: [
      ['--check', 'validate the file (and warn about users it cannot switch to) and exit: 0 valid, 2 invalid'],
      ['--format json|text', 'one JSON line per result (default) or an aligned text line'],
      ['--metrics-port N', 'serve Prometheus metrics on http://HOST:N/metrics'],
      ['--metrics-host H', 'the address to serve them on (default 127.0.0.1)'],
      ['--concurrency N', 'checks running at once (default: the file\'s concurrency, else 32)'],
      ['--tick D', 'checks due within D (1ms to 60s, with its unit) start together, at most D late (default: the file\'s tick, else 50ms; 0: each when due)'],
      ['--allow-root', 'run checks as root when noshell runs as root and a check names no user'],
      ['-h, --help', 'this help'],
    ],
    notes: [
      'SIGHUP reloads the file (a bad file is logged, the running checks go on); SIGINT/SIGTERM stop',
      'scheduling, give running checks 5 s, abort them, and exit with 128 + the signal number.',
      'NOSHELL_LOOP_DELAY_REPORT=MS in the environment: every MS ms, one line `noshell run: loop-delay {json}`',
      'on stderr with the event loop\'s delay in that window (p50Ms, p99Ms, maxMs), heapUsedBytes and rssBytes.',
    ],
  },
  {
    name: 'bench',
    summary: 'the fork-rate / check-workload comparison against child_process (and the C references)',
    synopsis: [
      'noshell bench [--quick] [--seconds S] [--rounds N] [--out DIR] [--workloads W,…] [--concurrency N,…] [--heaps MiB,…] [--bun PATH] [--deno PATH] [--node PATH]… [--no-loop-delay] [--load]',
      'noshell bench --gearman [--jobs N] [--max-worker N] [--rounds N] [--key K]',
      'noshell bench --vs-nagios [--services N] [--interval S] [--workers 4,16] [--concurrency N] [--tick D] [--seconds S] [--rounds R] [--plugin PATH]',
      'noshell bench --scale [--quick | --sizes N,N,…] [--rate R] [--fill-rate R] [--seconds S] [--cli PATH]',
      'noshell bench --pipelines [--runs N] [--rounds R] [--load]',
    ],
    options: [
      ['--quick', 'a shorter matrix (fewer workloads, 2 rounds, 0.25 s per measurement)'],
      ['--seconds S', 'time per measurement (default 0.6 s, 0.25 s with --quick)'],
      ['--out DIR', 'where results.md/.json and the charts go (default ./noshell-bench-results)'],
      ['--rounds N', 'rounds per table, its drivers in turn (default 3, 2 with --quick)'],
      ['--workloads W,…', 'only these of true, echo, plugin, check_dummy, check_load, sh_plugin'],
      ['--concurrency N,…', 'only the tables at these of 1, 16, 64 in flight'],
      ['--heaps MiB,…', 'only the tables with this parent heap held: small (or 0), 256, 1024'],
      ['--bun PATH', 'also Bun.spawn in that Bun, in every table (repeatable, as --deno)'],
      ['--deno PATH', 'also Deno.Command in that Deno, in every table'],
      ['--node PATH', 'also noshell and child_process under that Node, in every table (repeatable)'],
      ['--no-loop-delay', 'no 1 ms timer beside the drivers: no loop delay columns, and none of the timer\'s own CPU in the figures'],
      ['--load', 'two CPU hogs run beside every measurement'],
      ['--gearman', 'the C Mod-Gearman worker vs noshell\'s on a real gearmand (needs gearmand and the C peers)'],
      ['  --jobs N', 'jobs per round (default 5000)'],
      ['  --max-worker N', 'plugins at once per worker (default 16)'],
      ['  --rounds N', 'rounds, alternating the two workers (default 3)'],
      ['  --key K', 'the encryption key both use (default noshell-bench-key)'],
      ['--vs-nagios', 'CheckRunner vs Nagios 4 at saturation (needs nagios4-core and root)'],
      ['  --services N', 'services checked (default 3000)'],
      ['  --interval S', 'check interval in seconds (default 1)'],
      ['  --workers 4,16', 'Nagios check-worker counts to try (default 16)'],
      ['  --concurrency N', 'CheckRunner concurrency (default 64)'],
      ['  --tick D', 'CheckRunner tick, with its unit (default 50ms, as noshell run; 0: each check when due)'],
      ['  --seconds S', 'measured seconds per round (default 15, after 5 s of warm-up)'],
      ['  --rounds R', 'rounds (default 2)'],
      ['  --plugin PATH', 'the plugin both run (default check_dummy 0 ok)'],
      ['--scale', 'noshell run at 1,000, 10,000 and 100,000 checks: start, memory, scrapes, latency, reloads'],
      ['  --sizes N,N,…', 'the numbers of checks (default 1000,10000,100000; --quick: 1000,10000)'],
      ['  --rate R', 'checks/s all of them offer together, whatever their number (default: half the capacity, at most 300)'],
      ['  --fill-rate R', 'checks/s of the run until every check has reported (default: half the capacity, at most 800)'],
      ['  --seconds S', 'scraped seconds per size, a scrape every 5 s (default 20, 10 with --quick)'],
      ['  --cli PATH', 'the noshell to measure: another build\'s dist/cli.js (default this one)'],
      ['--pipelines', 'a 2- and a 3-stage pipeline and a `>>` shell-free vs the same string through /bin/sh -c'],
      ['  --runs N', 'runs per round and driver (default 300)'],
      ['  --rounds R', 'alternating rounds (default 3)'],
      ['  --load', 'also beside two CPU hogs'],
      ['-h, --help', 'this help'],
    ],
    notes: [
      'Results go to stdout, each once (for `noshell bench`, the text of results.md); progress to stderr:',
      'one line rewritten in place on a terminal, one plain line per table or round otherwise.',
      'The full matrix takes ~5.5 min on 2 cores; --quick ~30 s. --scale first measures the machine\'s capacity',
      '(~8 s; not when both rates are given), then offers half of it; each fill takes N / fill-rate s:',
      'the whole ~15 min on 2 cores that run ~300 checks/s (--quick ~2.5 min).',
    ],
  },
  {
    name: 'gearman-worker',
    summary: 'a Mod-Gearman worker (drop-in for mod_gearman_worker, the same option names)',
    synopsis: [
      'noshell gearman-worker [--config=FILE] --server=HOST[:PORT] [--key=K|--keyfile=F|--encryption=no] [options]',
    ],
    options: [
      ['--config=FILE', 'read options from a worker.conf (key=value lines, the C worker\'s names); repeatable'],
      ...COMMON_GEARMAN,
      ['--identifier=ID', 'this worker\'s name (serves the worker_ID queue; default: the host name)'],
      ['--hosts, --services', 'serve the host / service check queues'],
      ['--eventhandler, --notifications', 'serve the event handler / notification queues'],
      ['--hostgroups=G,..', 'serve hostgroup_G queues'],
      ['--servicegroups=G,..', 'serve servicegroup_G queues'],
      ['--max-worker=N', 'plugins running at once (default 20)'],
      ['--min-worker=N', 'accepted for compatibility (one process serves them all)'],
      ['--job_timeout=S', 'seconds before a plugin is killed, when the job gives none (default 60)'],
      ['--timeout_return=N', 'the state of a timed-out check (default 2, CRITICAL)'],
      ['--show_error_output=yes|no', 'append the plugin\'s stderr to its output (default yes)'],
      ['--load_limit1/5/15=L', 'take no job while the 1/5/15-minute load average is above L'],
      ['--debug=N', '0 errors and start-up; 1 or more, a line for each job too'],
      ['--logfile=FILE', 'log to FILE (reopened on SIGHUP, for logrotate) instead of stderr'],
      ['--prometheus_server=[HOST:]PORT', 'serve Prometheus metrics (default host 127.0.0.1)'],
      ['--allow-root', 'run as root (refused by default: plugins come from the monitoring config)'],
      ['-h, --help', 'this help'],
    ],
    notes: [
      'SIGHUP re-reads the options and config files (servers, queues, max-worker, timeouts, key) and reopens',
      'the log file; running jobs go on. SIGTERM/SIGINT stop taking jobs and wait for the running ones.',
      'Options of the C worker that do not apply here are accepted and ignored (logged at start).',
    ],
  },
  {
    name: 'gearman-submit',
    summary: 'put a check job, or a passive result, on a gearmand (like send_gearman)',
    synopsis: [
      'noshell gearman-submit --server=HOST[:PORT] [--key=K|--keyfile=F|--encryption=no] [--wait=S] --type=TYPE --host=H [--service=S] --command=CMD [job options]',
      'noshell gearman-submit --server=HOST[:PORT] [--key=K|--keyfile=F|--encryption=no] --host=H [--service=S] --returncode=N [--message=TEXT] [result options]',
    ],
    options: [
      ...COMMON_GEARMAN,
      ['--type=service|host|eventhandler|notification', 'the job\'s type (default: service with --service, else host)'],
      ['--host=H, --service=S', 'the host (and service) it is for'],
      ['--command=CMD', 'the job\'s command line'],
      ['--timeout=S, -t S', 'the job\'s timeout in seconds'],
      ['--queue=Q', 'submit to queue Q instead of the type\'s own'],
      ['--priority=normal|high|low', 'the job\'s priority (default low for service checks, else normal)'],
      ['--wait=S', 'seconds to wait for gearmand to take it (default 10)'],
      ['--returncode=N, -r N', 'submit a passive result with state N'],
      ['--message=TEXT, -m TEXT', 'its text (default: read from stdin)'],
      ['--result_queue=Q', 'the queue the result goes to (default check_results)'],
      ['--active', 'mark the result as an active check\'s'],
      ['--starttime=T, --finishtime=T', 'its start and finish time (Unix seconds; default now)'],
      ['--latency=S', 'its latency in seconds'],
      ['-h, --help', 'this help'],
    ],
    notes: [],
  },
  {
    name: 'build-addon',
    summary: 'build the native addon from source, where no prebuilt one fits (musl, other CPUs, old glibc)',
    synopsis: ['noshell build-addon [-- NODE-GYP-ARGS...]'],
    options: [
      ['-- NODE-GYP-ARGS...', 'passed on to node-gyp (e.g. --debug, --nodedir=DIR)'],
      ['-h, --help', 'this help'],
    ],
    notes: [
      'Needs a C and a C++ compiler, make and python3; builds native/build/Release/noshell.node in the',
      'installed package, which is then loaded before any prebuilt binary.',
    ],
  },
];

function table(rows: Array<[string, string]>): string[] {
  const width = Math.min(34, Math.max(...rows.map(([o]) => o.length)));
  return rows.map(([o, meaning]) => (o.length > width ? `  ${o}\n  ${' '.repeat(width)}  ${meaning}` : `  ${o.padEnd(width)}  ${meaning}`));
}

export function findCommand(name: string): CommandHelp | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `noshell <name> --help`. */
export function commandHelp(c: CommandHelp): string {
  const usage = c.synopsis.map((s, i) => `${i === 0 ? 'usage: ' : '       '}${s}`);
  const notes = c.notes.length > 0 ? ['', ...c.notes] : [];
  return [...usage, '', `${c.summary[0].toUpperCase()}${c.summary.slice(1)}.`, '', 'options:', ...table(c.options), ...notes, ''].join('\n');
}

/** One command's usage lines, for its own error messages. */
export function usageOf(name: string): string {
  const c = findCommand(name);
  return c === undefined ? '' : c.synopsis.join('\n       ');
}

/** `noshell --help`. */
export function overview(): string {
  return [
    'usage: noshell <command> [options]',
    '',
    'Child processes without /bin/sh and without fork(): Nagios-style checks, a Mod-Gearman worker, benchmarks.',
    '',
    'commands:',
    ...table(COMMANDS.map((c) => [c.name, c.summary])),
    '',
    '  noshell help <command>, noshell <command> --help   a command\'s options',
    '  noshell --version, -v                             the installed version',
    '',
  ].join('\n');
}

/** --help or -h among a command's own arguments (not after `--`, where they are the plugin's). */
export function asksForHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h' || a === '--help=yes') return true;
  }
  return false;
}
