// Fuzzing every parser of untrusted text (issue 8): plugin output, perfdata,
// ranges, command strings, durations, checks files. Three kinds of property:
// nothing escapes but the documented typed errors; formatPerfdata reads back
// as the same data; and 1 MiB of adversarial input costs no more than a small
// multiple of 1 MiB of plain input. NOSHELL_FUZZ_RUNS sets the runs per
// property (`npm run fuzz` runs many more than CI does).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPerfdata } from '../../src/check/format';
import { parsePerfdata, parsePerfdataDetailed, type PerfDatum } from '../../src/check/plugin/perfdata';
import { parsePluginOutput } from '../../src/check/plugin/plugin-output';
import { checkRange, parseRange } from '../../src/check/plugin/range';
import { loadChecksFile } from '../../src/config/checks-file';
import { parseDuration } from '../../src/util/duration';
import { parseCommand } from '../../src/command/parse-command';
import { REASON_NAMES } from '../../src/command/shell-syntax';
import { checksFileCorpus, yamlChecksFileCorpus, type Corpus } from './fuzz-corpus';
import { anyText, commandText, durationText, perfDatum, perfdataText, yamlText } from './fuzz-inputs';
import { loadChecksFile as compiledLoadChecksFile, quiet, TARGETS } from './fuzz-targets';
import { bestMs, onlyThrows, ratioTo, repeatTo } from '../linear-time';

const RUNS = Number(process.env.NOSHELL_FUZZ_RUNS ?? 300);
// ~2 s per MiB even for plain YAML: 32 KiB in the CI form, 256 KiB in long runs.
const yamlSize = RUNS >= 10_000 ? 256 * 1024 : 32 * 1024;
// Per-test time: CI runs finish in seconds; long runs scale with RUNS.
const TIMEOUT = 30_000 + RUNS * 10;
// Every input handed to a parser, reported at the end.
let fuzzed = 0;

function check<T>(arb: fc.Arbitrary<T>, predicate: (value: T) => void, numRuns = RUNS): void {
  fc.assert(
    fc.property(arb, (value) => {
      fuzzed++;
      predicate(value);
    }),
    { numRuns },
  );
}

function expectDatum(p: PerfDatum): void {
  expect(typeof p.label).toBe('string');
  expect(p.label).not.toBe('');
  expect(p.value === null || typeof p.value === 'number').toBe(true);
  expect(Number.isNaN(p.value)).toBe(false);
  // A unit never holds an item separator or a field separator.
  expect(p.uom).not.toMatch(/[ \t\r\n;]/);
  for (const r of [p.warn, p.crit]) if (r !== undefined) expect(r.start <= r.end).toBe(true);
}

describe('no exception but the documented ones', () => {
  it('parsePluginOutput and parsePerfdata never throw on text', () => {
    check(anyText, (text) => {
      const out = parsePluginOutput(text);
      expect(out.output).not.toMatch(/[|\n]/);
      expect(out.longOutput).not.toMatch(/\|/);
      out.perfdata.forEach(expectDatum);
      const detailed = parsePerfdataDetailed(text);
      expect(parsePerfdata(text)).toEqual(detailed.perfdata);
      detailed.perfdata.forEach(expectDatum);
    });
  }, TIMEOUT);

  it('parseRange throws only RangeError; checkRange is a boolean and @ negates it', () => {
    check(fc.tuple(fc.oneof(anyText, perfdataText), fc.double()), ([text, value]) => {
      onlyThrows(() => {
        const r = parseRange(text);
        expect(r.start <= r.end).toBe(true);
        const alert = checkRange(value, r);
        expect(typeof alert).toBe('boolean');
        expect(checkRange(value, { ...r, alertInside: !r.alertInside })).toBe(!alert);
      }, RangeError);
    });
  }, TIMEOUT);

  it('parseCommand throws only TypeError, and only for NUL', () => {
    check(fc.oneof(commandText, anyText), (text) => {
      let parsed;
      try {
        parsed = parseCommand(text);
      } catch (err) {
        expect(err).toBeInstanceOf(TypeError);
        expect(text).toContain('\0');
        return;
      }
      expect(parsed.needsShell).toBe(parsed.reasons.length > 0);
      const order = parsed.reasons.map((r) => REASON_NAMES.indexOf(r));
      expect(order).toEqual([...new Set(order)].sort((a, b) => a - b));
      expect(order).not.toContain(-1);
      if (!parsed.needsShell) expect(parsed.argv.length).toBeGreaterThan(0);
      for (const word of parsed.argv) expect(typeof word).toBe('string');
    });
  }, TIMEOUT);

  it('parseDuration throws only TypeError and otherwise gives ms >= 0', () => {
    check(fc.tuple(fc.oneof(durationText, anyText), fc.constantFrom('ms' as const, 's' as const)), ([text, unit]) => {
      onlyThrows(() => expect(parseDuration(text, 'x', unit)).toBeGreaterThanOrEqual(0), TypeError);
    });
  }, TIMEOUT);

  describe('checks files', () => {
    let dir = '';
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'noshell-fuzz-'));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    const file = fc.oneof(
      anyText,
      fc.json(),
      fc.record({ checks: fc.array(fc.dictionary(fc.constantFrom('id', 'command', 'interval', 'timeout'), fc.oneof(durationText, fc.jsonValue()))) }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
      fc.record({ defaults: fc.jsonValue(), checks: fc.constant([]) }, { requiredKeys: ['checks'] }).map((o) => JSON.stringify(o)),
    );

    it('loadChecksFile throws only TypeError naming the file (JSON and YAML)', () => {
      const yamlFile = fc.oneof(yamlText, anyText, file);
      check(fc.oneof(file.map((t) => ['json', t]), yamlFile.map((t) => ['yaml', t])), ([ext, text]) => {
        const name = path.join(dir, `checks.${ext}`);
        fs.writeFileSync(name, text);
        try {
          const loaded = loadChecksFile(name);
          expect(Array.isArray(loaded.checks)).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(TypeError);
          expect((err as Error).message).toMatch(/checks\.(json|yaml)|expected a duration/);
        }
      });
    }, TIMEOUT);
  });
});

describe('formatPerfdata reads back', () => {
  it('parse(format(parse(x))) equals parse(x), and the printed form has no errors', () => {
    check(fc.oneof(perfdataText, anyText), (text) => {
      const parsed = parsePerfdata(text);
      const printed = formatPerfdata(parsed);
      const again = parsePerfdataDetailed(printed);
      expect(again.errors).toEqual([]);
      expect(again.perfdata).toEqual(parsed);
    });
  }, TIMEOUT);

  it('generated valid perfdata items come back as the same data', () => {
    check(fc.array(perfDatum, { maxLength: 5 }), (data) => {
      expect(parsePerfdata(formatPerfdata(data))).toEqual(data);
    });
  }, TIMEOUT);
});

// Linear time: the same-size plain input sets the pace for each parser.
const MIB = 1 << 20;
const MAX_RATIO = 20;
const ratios: Array<[string, string, number]> = [];

describe('linear time on 1 MiB', () => {
  for (const target of TARGETS) {
    it(`${target.name}: each adversarial 1 MiB input within ${MAX_RATIO}x of plain`, () => {
      const { plain, adversarial } = target.corpus(MIB);
      target.parse(plain);
      const plainMs = Math.max(bestMs(() => target.parse(plain), 2), 1);
      for (const [name, text] of adversarial) {
        expect(text.length).toBeGreaterThanOrEqual(MIB - 16);
        fuzzed++;
        const ratio = ratioTo(target.parse, text, plain, plainMs, MAX_RATIO);
        ratios.push([target.name, name, ratio]);
        expect(ratio, `${target.name}: ${name}`).toBeLessThan(MAX_RATIO);
      }
    }, TIMEOUT);
  }

  function timeChecksFiles(ext: string, corpus: Corpus): void {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'noshell-fuzz-'));
    try {
      const write = (name: string, text: string) => {
        const file = path.join(dir, `${name.replace(/\W/g, '-')}.${ext}`);
        fs.writeFileSync(file, text);
        return file;
      };
      const load = quiet(compiledLoadChecksFile);
      const plainFile = write('plain', corpus.plain);
      load(plainFile);
      const plainMs = Math.max(bestMs(() => load(plainFile), 2), 1);
      for (const [name, text] of corpus.adversarial) {
        fuzzed++;
        const ratio = ratioTo(load, write(name, text), plainFile, plainMs, MAX_RATIO);
        ratios.push([`loadChecksFile (${ext})`, name, ratio]);
        expect(ratio, name).toBeLessThan(MAX_RATIO);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it(`loadChecksFile: each adversarial 1 MiB JSON file within ${MAX_RATIO}x of a plain one`, () => {
    timeChecksFiles('json', checksFileCorpus(MIB));
  }, TIMEOUT);

  it(`loadChecksFile: each adversarial ${yamlSize / 1024} KiB YAML file within ${MAX_RATIO}x of a plain one`, () => {
    timeChecksFiles('yaml', yamlChecksFileCorpus(yamlSize));
  }, TIMEOUT);

  // Random short units repeated to 256 KiB: finds runs the corpus missed.
  it(`random repeated units, 256 KiB, within ${MAX_RATIO}x of plain`, () => {
    const size = 256 * 1024;
    for (const target of TARGETS) {
      const { plain } = target.corpus(size);
      target.parse(plain);
      const plainMs = Math.max(bestMs(() => target.parse(plain), 2), 1);
      check(target.units.filter((u) => u.length > 0), (unit) => {
        const ratio = ratioTo(target.parse, repeatTo(unit, size), plain, plainMs, MAX_RATIO);
        expect(ratio, `${target.name}: ${JSON.stringify(unit)}`).toBeLessThan(MAX_RATIO);
      }, Math.max(3, Math.ceil(RUNS / 100)));
    }
  }, TIMEOUT);
});

afterAll(() => {
  const worst = new Map<string, [string, number]>();
  for (const [target, name, ratio] of ratios) {
    if (ratio > (worst.get(target)?.[1] ?? -1)) worst.set(target, [name, ratio]);
  }
  console.log(`fuzz: ${fuzzed} inputs, ${RUNS} runs per property; worst adversarial/plain time (1 MiB; YAML ${yamlSize / 1024} KiB):\n` +
    [...worst].map(([target, [name, ratio]]) => `  ${target}: ${ratio.toFixed(2)}x (${name})`).join('\n'));
});
