import { describe, expect, it } from 'vitest';
import { expandMacros, MacroError } from '../../src/config/macros';
import { parseCommand } from '../../src/command/parse-command';

const user = new Map([['USER1', '/usr/lib/nagios/plugins'], ['USER256', 'last'], ['USER2', 's3cr$t']]);

describe('expandMacros', () => {
  it('expands $USERn$ from the macros and $ARGn$ from the args, as text', () => {
    expect(expandMacros('$USER1$/check_load -w $ARG1$ -c $ARG2$', user, ['5,4,3', '10,8,6']))
      .toBe('/usr/lib/nagios/plugins/check_load -w 5,4,3 -c 10,8,6');
    expect(expandMacros('$USER256$$ARG32$', user, Array.from({ length: 32 }, (_, i) => `a${i + 1}`))).toBe('lasta32');
    expect(expandMacros('no macros here', user, [])).toBe('no macros here');
  });

  it('$$ is a dollar; a $ that starts no macro stays for the command parser', () => {
    expect(expandMacros('a $$ b $$ARG1$$', user, ['x'])).toBe('a $ b $ARG1$');
    expect(expandMacros('echo $HOME $1 $ $a$ $', user, [])).toBe('echo $HOME $1 $ $a$ $');
  });

  it('an $ARGn$ past the args is empty, as in Nagios (optional trailing arguments)', () => {
    expect(expandMacros('check -H $ARG1$ $ARG2$', user, ['h'])).toBe('check -H h ');
  });

  it('expands once: macros inside values stay as written', () => {
    expect(expandMacros('$ARG1$ $USER2$', user, ['$ARG2$', 'no'])).toBe('$ARG2$ s3cr$t');
  });

  it('refuses undefined user macros and macros it does not know', () => {
    expect(() => expandMacros('$USER3$/x', user, [])).toThrow(new MacroError('$USER3$ is not defined in "macros"'));
    for (const bad of ['$HOSTADDRESS$', '$USER0$', '$USER257$', '$ARG0$', '$ARG33$', '$ARG01$', '$USER1X$']) {
      expect(() => expandMacros(`x ${bad}`, user, []), bad).toThrow(/unknown macro/);
    }
  });

  it('an expanded Nagios range argument needs no shell (issue 12)', () => {
    const command = expandMacros('$USER1$/check_snmp -H h -o o -w $ARG1$ -c $ARG2$', user, ['~:20', '~:30']);
    expect(parseCommand(command)).toMatchObject({
      argv: ['/usr/lib/nagios/plugins/check_snmp', '-H', 'h', '-o', 'o', '-w', '~:20', '-c', '~:30'],
      needsShell: false,
    });
  });

  it('runs in linear time on 1 MiB of dollars and near-macros', () => {
    const size = 1 << 20;
    const time = (text: string) => {
      let best = Infinity;
      for (let k = 0; k < 3; k++) {
        const t0 = performance.now();
        expandMacros(text, user, ['x']);
        best = Math.min(best, performance.now() - t0);
      }
      return best;
    };
    const plain = Math.max(time('a'.repeat(size)), 0.5);
    const texts = ['$', '$a', '$AAAA ', '$ARG1$', '$ARG ', '$USER1$a', '$ARG1', '$$A']
      .map((unit) => unit.repeat(Math.ceil(size / unit.length)));
    // A name that never closes: looked at twice, never more.
    texts.push(`$${'A'.repeat(size)}`, `${'$a'.repeat(size / 4)}${'$'.repeat(size / 2)}`);
    for (const text of texts) {
      const unit = text.slice(0, 8);
      expect(() => expandMacros(text, user, ['x']), unit).not.toThrow();
      // Linear work is well under a second even on a busy machine (short
      // pieces cost GC); a quadratic scan of 1 MiB would take minutes.
      expect(time(text), unit).toBeLessThan(Math.max(plain * 50, 2000));
    }
  });
});
