// noshell check [--timeout S] [--timeout-state N] [--shell auto|true|false] -- <command…>
import { formatResult } from '../check/format';
import { runCheck, type CheckState } from '../check/run-check';
import type { ShellOption } from '../command';
import { parseDuration } from './duration';

export const checkUsage = 'noshell check [--timeout S] [--timeout-state 0-3] [--shell auto|true|false] -- <command...>';

export async function checkCommand(args: string[], out: (s: string) => void): Promise<number> {
  let timeout = 60_000;
  let timeoutState: CheckState = 3;
  let shell: ShellOption = 'auto';
  let i = 0;
  for (; i < args.length && args[i] !== '--'; i++) {
    const flag = args[i];
    const value = args[++i];
    if (value === undefined) throw new TypeError(`noshell check: ${flag} needs a value\nusage: ${checkUsage}`);
    if (flag === '--timeout') timeout = parseDuration(value, '--timeout', 's');
    else if (flag === '--timeout-state' && /^[0-3]$/.test(value)) timeoutState = Number(value) as CheckState;
    else if (flag === '--shell' && ['auto', 'true', 'false'].includes(value)) shell = value === 'auto' ? 'auto' : value === 'true';
    else throw new TypeError(`noshell check: bad argument ${flag} ${value}\nusage: ${checkUsage}`);
  }
  const command = args.slice(i + 1);
  if (command.length === 0) throw new TypeError(`noshell check: no command\nusage: ${checkUsage}`);
  // One word after -- is a command string (it may need the shell); more are an argv.
  const result = await runCheck(command.length === 1 ? command[0] : command, { timeout, timeoutState, shell });
  out(`${formatResult(result)}\n`);
  return result.state;
}
