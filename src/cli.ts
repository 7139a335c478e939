#!/usr/bin/env node
// noshell command line: thin; the work is in the library. `--version`, help
// and `build-addon` are answered before anything loads the native addon
// (build-addon is what makes one where none loads); the other commands load
// it with ./cli/main.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildAddonCommand } from './cli/build-addon';
import { asksForHelp, commandHelp, findCommand, overview } from './cli/help';
import { holdStartSignals } from './daemon/start-signals';

// A hung-up terminal or a closed pipe (EIO, EPIPE) must not crash us
// before our children are stopped: output is lost, the stop goes on. Said
// once on stderr for stdout (`noshell run … | head -c 1`): a daemon whose
// results go nowhere without a word looks like one that has none.
let stdoutLost = false;
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (stdoutLost) return;
  stdoutLost = true;
  const cmd = process.argv[2] !== undefined && findCommand(process.argv[2]) !== undefined ? ` ${process.argv[2]}` : '';
  process.stderr.write(`noshell${cmd}: stdout: ${e.code ?? e.message} (its reader is gone); what would go there is lost from here on\n`);
});
process.stderr.on('error', () => {});

const out = (s: string) => process.stdout.write(s);
const err = (s: string) => process.stderr.write(s);

/** The installed package's version: dist/cli.js sits one level below package.json. */
function version(): string {
  return (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
}

async function dispatch(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === '--version' || cmd === '-v') {
    out(`${version()}\n`);
    return 0;
  }
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || (cmd === 'help' && rest.length === 0)) {
    out(overview());
    return 0;
  }
  const name = cmd === 'help' ? rest[0] : cmd;
  const command = findCommand(name);
  if (command === undefined) {
    err(`noshell: unknown command ${JSON.stringify(name)}\n\n${overview()}`);
    return 2;
  }
  if (cmd === 'help' || asksForHelp(rest)) {
    out(commandHelp(command));
    return 0;
  }
  if (cmd === 'build-addon') return buildAddonCommand(rest, out, err);
  // A daemon starting: SIGHUP/SIGINT/SIGTERM are held from here, before its code
  // loads, until it has its own handlers (cli/start-signals.ts).
  if (cmd === 'gearman-worker' || (cmd === 'run' && !rest.includes('--check'))) holdStartSignals();
  const { main } = await import('./cli/main');
  return main(argv);
}

dispatch(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    // No addon loads here: its own message says why and what to run.
    if (e instanceof Error && e.message.startsWith('noshell: cannot load its native addon')) err(`${e.message}\n`);
    else err(`noshell: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  },
);
