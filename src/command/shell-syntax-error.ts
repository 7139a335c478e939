// The error of the command layer: a command string needs /bin/sh and the
// `shell` option does not allow it.
export class ShellSyntaxError extends Error {
  readonly reasons: string[];
  readonly command: string;

  constructor(command: string, reasons: readonly string[]) {
    super(
      `command needs a shell (${reasons.join(', ')}): ${JSON.stringify(command)}; ` +
        `pass an argv array, or shell: 'auto' to run it with /bin/sh`,
    );
    this.name = 'ShellSyntaxError';
    this.reasons = [...reasons];
    this.command = command;
  }
}
