// The rates of `noshell bench --scale` (issue 19): half the measured capacity,
// capped at what a fast machine's bench always offered; given ones as given.
import { describe, expect, it } from 'vitest';
import { parseScaleArgs } from '../../src/bench/scale/scale-args';
import { benchRates, describeRate } from '../../src/bench/scale/scale-rates';

describe('benchRates', () => {
  it('offers half the measured capacity, rounded down', () => {
    expect(benchRates(331.9, { rate: null, fillRate: null })).toEqual({
      rate: { value: 165, from: 'capacity' }, fillRate: { value: 165, from: 'capacity' },
    });
  });

  it('keeps a fast machine at 300 and 800 checks/s', () => {
    expect(benchRates(1000, { rate: null, fillRate: null })).toEqual({
      rate: { value: 300, from: 'cap' }, fillRate: { value: 500, from: 'capacity' },
    });
    expect(benchRates(1600, { rate: null, fillRate: null })).toEqual({
      rate: { value: 300, from: 'cap' }, fillRate: { value: 800, from: 'cap' },
    });
  });

  it('takes a given rate as given, above the capacity too', () => {
    expect(benchRates(300, { rate: 250, fillRate: null })).toEqual({
      rate: { value: 250, from: 'given' }, fillRate: { value: 150, from: 'capacity' },
    });
    expect(benchRates(null, { rate: 300, fillRate: 800 })).toEqual({
      rate: { value: 300, from: 'given' }, fillRate: { value: 800, from: 'given' },
    });
  });

  it('never makes a rate of 0, nor one from no capacity', () => {
    expect(() => benchRates(1.5, { rate: null, fillRate: 10 })).toThrow(RangeError);
    expect(() => benchRates(null, { rate: 300, fillRate: null })).toThrow(/no --fill-rate given and no capacity measured/);
    expect(() => benchRates(Number.NaN, { rate: null, fillRate: 10 })).toThrow(TypeError);
  });

  it('says where a rate came from', () => {
    expect(describeRate({ value: 165, from: 'capacity' }, 331)).toBe('165 checks/s (half the measured capacity)');
    expect(describeRate({ value: 300, from: 'given' }, 330)).toBe('300 checks/s (given; 91 % of the measured capacity)');
    expect(describeRate({ value: 300, from: 'given' }, null)).toBe('300 checks/s (given)');
    expect(describeRate({ value: 300, from: 'cap' }, 1000)).toBe('300 checks/s (the cap, below half the measured capacity; 30 % of the measured capacity)');
  });
});

describe('parseScaleArgs: --rate and --fill-rate', () => {
  const parse = (...argv: string[]) => parseScaleArgs(['--scale', ...argv], '/x/dist/cli.js');

  it('leaves both to the calibration unless given', () => {
    expect(parse()).toMatchObject({ rate: null, fillRate: null });
    expect(parse('--rate', '120', '--fill-rate', '250.5')).toMatchObject({ rate: 120, fillRate: 250.5 });
    expect(parse('--fill-rate=90')).toMatchObject({ rate: null, fillRate: 90 });
  });

  it('refuses what is not a positive number', () => {
    for (const bad of ['0', '-5', 'abc', '', 'NaN']) {
      // `--fill-rate=-5`: parseArgs takes `--fill-rate -5` for an option missing its value (a TypeError too).
      expect(() => parse(`--fill-rate=${bad}`), bad).toThrow(TypeError);
      expect(() => parse(`--fill-rate=${bad}`), bad).toThrow(`--fill-rate must be a positive number, got ${JSON.stringify(bad)}`);
      expect(() => parse(`--rate=${bad}`), bad).toThrow('--rate must be a positive number');
    }
    expect(() => parse('--fill-rate')).toThrow(TypeError);
  });
});
