// Splitting command strings without a shell. This is the conservative
// splitter: plain words separated by blanks; anything the shell would
// interpret (quotes, escapes, expansions, operators, globs) is refused with
// ShellSyntaxError rather than guessed at.
import { ShellSyntaxError } from './errors';
import { checkString } from './options';

const special: ReadonlyArray<[RegExp, string]> = [
  [/['"]/, 'quote'],
  [/\\/, 'backslash'],
  [/\$|`/, 'expansion'],
  [/\|/, 'pipe'],
  [/[<>]/, 'redirection'],
  [/[;&\n]/, 'operator'],
  [/[*?[]/, 'glob'],
  [/[(){}]/, 'grouping'],
  [/(^|[ \t])[~#]/, 'tilde or comment'],
  [/^[ \t]*[A-Za-z_][A-Za-z0-9_]*=/, 'assignment'],
];

export function splitCommand(command: string): string[] {
  checkString(command, 'command');
  const reasons = special.filter(([re]) => re.test(command)).map(([, name]) => name);
  const argv = command.split(/[ \t]+/).filter((w) => w !== '');
  if (argv.length === 0) reasons.push('empty command');
  if (reasons.length > 0) throw new ShellSyntaxError(command, reasons);
  return argv;
}
