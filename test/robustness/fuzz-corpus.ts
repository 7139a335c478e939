// Inputs of a given size that have made, or could make, a parser go
// superlinear (issue 8), each next to plain input of the same size for the
// same parser. Every pattern is a short unit repeated, or a long run with a
// tail that makes a greedy match fail at the very end.
import { repeatTo } from '../linear-time';

export interface Corpus {
  plain: string;
  adversarial: Array<[name: string, text: string]>;
}

/** A run of `unit` filling `size` minus the head and tail around it. */
function run(head: string, unit: string, tail: string, size: number): string {
  return head + repeatTo(unit, size - head.length - tail.length) + tail;
}

export function perfdataCorpus(size: number): Corpus {
  const r = (name: string, head: string, unit: string, tail = ''): [string, string] => [name, run(head, unit, tail, size)];
  return {
    plain: repeatTo('time=0.001s;;;0; ', size),
    adversarial: [
      r('digits then U+2028', 'a=', '1', '\u2028'),
      r('digits then U+2029', 'a=1.', '5', '\u2029'),
      r('exponent digits then U+2028', 'a=1e', '7', '\u2028'),
      r('items ending in U+2028', '', 'a=123456789\u2028 '),
      r('U+2028 run', '', '\u2028'),
      r('= run', '', '='),
      r('quote run', '', "'"),
      r('doubled quotes, unclosed', "'a", "''"),
      r('doubled quotes, closed', "'", "''", "'=1"),
      r('; run', 'a=1', ';'),
      r('~: range run', 'a=1;', '~:'),
      r('@ run', 'a=1;', '@'),
      r('long range then U+2028', 'a=1;~:', '1', '\u2028'),
      r('dots', 'a=', '1.'),
      r('commas', 'a=', '1,'),
      r('e run', 'a=1', 'e'),
      r('sign run', 'a=', '-'),
      r('spaces then x', '', ' ', 'x'),
      r('backslashes', 'a=', '\\'),
      r('no label, digits', '', '9', '\u2028'),
    ],
  };
}

export function pluginOutputCorpus(size: number): Corpus {
  const perf = perfdataCorpus(size - 5);
  const r = (name: string, unit: string): [string, string] => [name, repeatTo(unit, size)];
  return {
    plain: repeatTo('OK - all fine | time=0.001s;;;0;\nlong output line\n', size),
    adversarial: [
      // The perfdata corpus has its own test; a few of it through the line splitter.
      ...perf.adversarial.slice(0, 3).map(([name, text]): [string, string] => [name, `OK | ${text}`]),
      r('many | lines', 'x | a=1\n'),
      r('| run', '|'),
      r('newline run', '\n'),
      r('CR run', '\r'),
      r('CRLF lines with |', 'a|b=2\r\n'),
    ],
  };
}

export function rangeCorpus(size: number): Corpus {
  const r = (name: string, head: string, unit: string, tail = ''): [string, string] => [name, run(head, unit, tail, size)];
  return {
    plain: run('10:', '2', '', size),
    adversarial: [
      r('~: run', '', '~:'),
      r('@ run', '', '@'),
      r(': run', '', ':'),
      r('digits then U+2028', '~:', '1', '\u2028'),
      r('digits then x', '1:', '1', 'x'),
      r('exponent digits then x', '1e', '1', 'x'),
      r('e run', '1', 'e'),
      r('sign run', '', '-'),
      r('dot run', '', '.'),
      r('spaces then 1', '', ' ', '1'),
      r('U+2028 run', '', '\u2028', '1'),
    ],
  };
}

export function commandCorpus(size: number): Corpus {
  const r = (name: string, unit: string, tail = '', head = ''): [string, string] => [name, run(head, unit, tail, size)];
  return {
    plain: repeatTo('/usr/lib/nagios/plugins/check_disk -w 10% -c 5% -p / ', size),
    adversarial: [
      r("'''' run", "'"),
      r('"""" run', '"'),
      r('unclosed quote', 'a', '', "'"),
      r('unclosed double quote', 'a', '', '"$('),
      r('backslash run', '\\'),
      r('line continuations', 'A\\\n'),
      r('$(( run', '$(('),
      r('$( run', '$('),
      r('${ run', '${'),
      r('backquote run', '`'),
      r('"$( run', '"$('),
      r('$(" run', '$("'),
      r('= run', '='),
      r('A= run', 'A='),
      r('assignments', 'a=b '),
      r('# run', '#'),
      r('~ run', '~'),
      r('( run', '('),
      r('| run', '|'),
      r('commands of a list', 'a;', '', 'x '),
      r('stages of a pipeline', 'a|', 'a', 'x '),
      r('&& run', 'a && '),
      r('redirections', ' 2>&1 >f', '', 'x'),
      r('digits before >', '1\\\n', '>f', 'x '),
      r('> run', '>'),
      r('word then U+2028', 'x', '\u2028'),
      r('blanks', ' '),
    ],
  };
}

export function durationCorpus(size: number): Corpus {
  const r = (name: string, head: string, unit: string, tail = ''): [string, string] => [name, run(head, unit, tail, size)];
  return {
    plain: run('1', '0', 's', size),
    adversarial: [
      r('spaces then x', '1', ' ', 'x'),
      r('spaces, unit, spaces, x', '1', ' ', 'ms x'),
      r('decimals then x', '1.', '1', 'x'),
      r('digits then x', '', '1', 'x'),
      r('blank run', '', ' '),
      r('U+2028 run', '1', '\u2028', 'x'),
      r('dot run', '1', '.'),
    ],
  };
}

/** Checks files (JSON text), plain: many ordinary checks. */
export function checksFileCorpus(size: number): Corpus {
  const check = (i: number) => `{"id":"c${i}","command":"check_dummy 0 ok","interval":"60s","timeout":"10s"}`;
  const checks: string[] = [];
  let length = 20;
  for (let i = 0; length < size; i++) {
    checks.push(check(i));
    length += check(i).length + 1;
  }
  const spaces = ' '.repeat(size - 60);
  return {
    plain: `{"concurrency":8,"checks":[${checks.join(',')}]}`,
    adversarial: [
      ['duration of spaces then x', `{"checks":[{"id":"a","command":"x","interval":"1${spaces}x"}]}`],
      ['defaults duration of spaces', `{"defaults":{"timeout":"1${spaces}ms x"},"checks":[]}`],
      ['nested arrays', `${'['.repeat(size / 2)}${']'.repeat(size / 2)}`],
      ['unclosed nesting', '{"checks":'.repeat(size / 11)],
      ['backslash string', `{"checks":"${'\\\\'.repeat(size / 2 - 10)}"}`],
    ],
  };
}

/**
 * YAML checks files. The yaml package parses ~2 s per MiB even of plain
 * files on the dev machine, so the suite times these at a smaller size.
 */
export function yamlChecksFileCorpus(size: number): Corpus {
  let plain = 'checks:\n';
  for (let i = 0; plain.length < size; i++) plain += `  - id: c${i}\n    command: check_dummy 0 ok\n    interval: 60s\n`;
  return {
    plain,
    adversarial: [
      ['nested flow sequences', `${'['.repeat(size / 2)}${']'.repeat(size / 2)}`],
      ['unclosed flow mappings', '{a: '.repeat(size / 4)],
      ['plain scalar with ": "', `checks: ${repeatTo('a: ', size - 8)}`],
      ['duplicate keys', repeatTo('k: v\n', size)],
      ['aliases', `x: &a [1]\n${repeatTo('y: *a\n', size - 10)}`],
      ['block sequence nesting', repeatTo('- ', size)],
      ['complex keys', repeatTo('? ', size)],
      ['duration of spaces', `checks:\n  - id: a\n    command: x\n    interval: "1${' '.repeat(size - 60)}x"\n`],
    ],
  };
}
