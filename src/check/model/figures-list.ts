// How a reader takes a CheckRunner's checks without a copy of each: the
// internal protocol a CheckRunner implements (symbol-keyed methods, not
// public names) and the metrics read through (metrics/model/metrics-snapshot.ts).
// Here, below both, so the runner does not import its readers' code for it.
import type { CheckFigures } from './check-status';

/** CheckRunner's eachCheckStatus() with its records of the last results as they are (internal: not a public name). */
export const eachCheckFigures: unique symbol = Symbol('noshell.eachCheckFigures');

/**
 * CheckRunner's definition of a check as it has it now (undefined: none):
 * with [eachCheckFigures], what lets a scrape keep its columns
 * (scrape-cache.ts; internal: not a public name).
 */
export const checkDefinitionOf: unique symbol = Symbol('noshell.checkDefinitionOf');

/**
 * CheckRunner's checks as a list taken now, each read into one object that
 * the next read overwrites (internal: not a public name). A scrape of
 * 100,000 unchanged checks made ~33 MB of garbage: an object per check and
 * per iterator step, and a set of their ids.
 */
export const checkFiguresList: unique symbol = Symbol('noshell.checkFiguresList');

export interface FiguresList {
  readonly length: number;
  /** Check `i`'s figures, valid until the next read(): whoever keeps them keeps a copy (copyFigures). */
  read(i: number): CheckFigures;
}
