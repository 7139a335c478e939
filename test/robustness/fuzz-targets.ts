// The parsers the complexity checks time, from the compiled package (see
// compiled() in linear-time.ts), with their corpus and random units.
import type fc from 'fast-check';
import type * as Perfdata from '../../src/check/plugin/perfdata';
import type * as PluginOutput from '../../src/check/plugin/plugin-output';
import type * as Range from '../../src/check/plugin/range';
import type * as ChecksFile from '../../src/config/checks-file';
import type * as Duration from '../../src/util/duration';
import type * as ParseCommand from '../../src/command/parse-command';
import {
  commandCorpus, durationCorpus, perfdataCorpus, pluginOutputCorpus, rangeCorpus, type Corpus,
} from './fuzz-corpus';
import { commandText, durationText, perfdataText } from './fuzz-inputs';
import { compiled } from '../linear-time';

export interface Target {
  name: string;
  parse: (text: string) => unknown;
  corpus: (size: number) => Corpus;
  /** Random short units that, repeated, make inputs for this parser. */
  units: fc.Arbitrary<string>;
}

/** parse, with the documented errors (TypeError, RangeError) turned into null. */
export function quiet<T>(parse: (text: string) => T): (text: string) => T | null {
  return (text) => {
    try {
      return parse(text);
    } catch (err) {
      if (err instanceof TypeError || err instanceof RangeError) return null;
      throw err;
    }
  };
}

const { parsePerfdata } = compiled<typeof Perfdata>('check/plugin/perfdata.js');
const { parsePluginOutput } = compiled<typeof PluginOutput>('check/plugin/plugin-output.js');
const { parseRange } = compiled<typeof Range>('check/plugin/range.js');
const { parseCommand } = compiled<typeof ParseCommand>('command/parse-command.js');
const { parseDuration } = compiled<typeof Duration>('util/duration.js');

export const { loadChecksFile } = compiled<typeof ChecksFile>('config/checks-file.js');

export const TARGETS: Target[] = [
  { name: 'parsePerfdata', parse: parsePerfdata, corpus: perfdataCorpus, units: perfdataText },
  { name: 'parsePluginOutput', parse: parsePluginOutput, corpus: pluginOutputCorpus, units: perfdataText },
  { name: 'parseRange', parse: quiet(parseRange), corpus: rangeCorpus, units: perfdataText },
  { name: 'parseCommand', parse: quiet(parseCommand), corpus: commandCorpus, units: commandText },
  { name: 'parseDuration', parse: quiet((t: string) => parseDuration(t, 'x')), corpus: durationCorpus, units: durationText },
];
