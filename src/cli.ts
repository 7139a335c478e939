#!/usr/bin/env node
// noshell command line: thin; the work is in the library.
import path from 'node:path';
import { runBench } from './bench/run';

const usage = `usage:
  noshell bench [--quick] [--out DIR]   fork-rate / check-workload comparison`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === 'bench') {
    let quick = false;
    let outDir = path.resolve('bench', 'results');
    for (let i = 0; i < rest.length; i++) {
      if (rest[i] === '--quick') quick = true;
      else if (rest[i] === '--out' && rest[i + 1] !== undefined) outDir = path.resolve(rest[++i]);
      else {
        process.stderr.write(`noshell bench: unknown argument ${rest[i]}\n${usage}\n`);
        return 2;
      }
    }
    await runBench({ quick, outDir, log: (line) => process.stdout.write(`${line}\n`) });
    return 0;
  }
  process.stderr.write(`${usage}\n`);
  return cmd === undefined || cmd === '--help' || cmd === '-h' ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`noshell: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
