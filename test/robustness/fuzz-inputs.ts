// Random inputs for test/robustness/fuzz.test.ts: raw bytes, any code points, and
// "token soups" made of the pieces each parser gives meaning to, so that
// short random strings reach the interesting paths (quotes, ranges, `$((`).
import fc from 'fast-check';
import type { PerfDatum } from '../../src/check/plugin/perfdata';
import type { ThresholdRange } from '../../src/check/plugin/range';

/** Random bytes read as UTF-8 (bad sequences become U+FFFD) or as Latin-1. */
export const bytesText = fc
  .tuple(fc.uint8Array({ maxLength: 200 }), fc.boolean())
  .map(([bytes, utf8]) => Buffer.from(bytes).toString(utf8 ? 'utf8' : 'latin1'));

const digitRun = fc.tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom('1', '9', '0')).map(([n, d]) => d.repeat(n));

function soup(tokens: readonly string[]): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...tokens) },
    { weight: 1, arbitrary: digitRun },
    { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 3 }) },
  );
  return fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
}

const UNICODE_BLANKS = ['\u2028', '\u2029', '\u00a0', '\ufeff', '\u3000', '\u0085', '\u000b'];

export const PERFDATA_TOKENS = [
  "'", "''", "'a b'", '=', ';', ';;;;', '|', '\n', '\r\n', '\r', ' ', '\t', '~', ':', '~:', '@', '.', ',',
  'e', 'E', 'e+', 'e-', '-', '+', 'U', 'ms', '%', 'KB', 'c', 'load1', '0', '1.5', ',5', '1e999', '-0',
  'NaN', 'Infinity', '0x10', '\0', '\\', 'OK - ', ...UNICODE_BLANKS,
];

export const COMMAND_TOKENS = [
  "'", '"', '\\', '\\\n', '$', '$((', '$(', '${', '$1', '$@', '`', ')', '}', '(', '{', '#', '~', '!', '=',
  'A=', 'PATH=', '__proto__=', 'a b', ' ', '\t', '\n', '|', '||', '&&', ';', ';;', '&', '<', '>', '>>',
  '2>&1', '<<-', '*', '?', '[', 'cd', 'if', 'exec', 'check_disk', '-w', '10%', '\u00e9', '\x7f', '\x01',
  '\0', ...UNICODE_BLANKS,
];

export const DURATION_TOKENS = ['1', '10', '.', '.5', ' ', '\t', 'ms', 's', 'm', 'h', 'x', '-', 'e3', ...UNICODE_BLANKS];

export const YAML_TOKENS = [
  'checks:\n', '- ', ': ', '[', ']', '{', '}', ',', '&a ', '*a', '!!str ', '!tag ', '? ', '|\n', '>\n', '"', "'",
  '#', '\n', '  ', '\t', '---\n', '...\n', '<<: ', 'id', 'command', 'interval', 'defaults:\n', 'macros:\n',
  '60s', '$USER1$', '$ARG1$', '%YAML 1.2\n', '\\', '~', 'null', 'yes', '0x1F', '1e3', ...UNICODE_BLANKS,
];

export const perfdataText = soup(PERFDATA_TOKENS);
export const yamlText = soup(YAML_TOKENS);
export const commandText = soup(COMMAND_TOKENS);
export const durationText = soup(DURATION_TOKENS);

/** Every kind of text, for parsers that must survive all of them. */
export const anyText = fc.oneof(bytesText, fc.string({ unit: 'binary', maxLength: 100 }), perfdataText, commandText);

// Valid perfdata as data: what formatPerfdata must print so that it reads back.
const number = fc.double({ noNaN: true });

const range: fc.Arbitrary<ThresholdRange> = fc
  .record({
    start: fc.oneof(fc.constant(-Infinity), number),
    end: number,
    alertInside: fc.boolean(),
  })
  .filter((r) => r.start <= r.end);

// A unit is whatever follows the number up to ';' or a blank; it cannot start
// with a digit (the digit would belong to the number).
const uom = fc.oneof(
  fc.constantFrom('', 's', 'ms', 'us', '%', 'B', 'KB', 'MB', 'TB', 'c', 'C', 'GB', 'e', 'E5', ',5', '.5', '\u2028'),
  fc
    .string({ unit: 'binary', minLength: 1, maxLength: 6 })
    .filter((u) => !/[ \t\r\n;]/.test(u) && !/^[0-9]/.test(u)),
);

export const perfDatum: fc.Arbitrary<PerfDatum> = fc
  .tuple(
    fc.record(
      { label: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }), warn: range, crit: range, min: number, max: number },
      { requiredKeys: ['label'] },
    ),
    fc.oneof(fc.constant(null), number),
    uom,
  )
  .map(([fields, value, unit]) => {
    const { label, ...rest } = fields;
    return { label, value, uom: value === null ? '' : unit, ...rest };
  });
