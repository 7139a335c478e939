// One scrape's view of its checks, as columns of numbers the addon writes
// the per-check families from (native/metrics/scrape-lines.h, issue 19): each
// check's status is read once, when the scrape begins, into a row of
// doubles and its perfdata items into slots, and the text the lines repeat
// (`{check="<id>"`, each distinct `,label="…",uom="…"`) and the text of each
// number that is neither whole nor a short decimal (decimal.ts) into the
// scrape's pieces. A runner's columns and pieces are kept from one scrape to
// the next and only its changed checks read again (scrape-cache.ts); the
// lines themselves are never kept: kept per check they were ~150 MB at
// 100,000 checks with five perfdata items each, and RSS 700 MiB against
// issue 19's 400. The column
// layout is native/metrics/scrape-lines.h's; the text must come out byte for byte
// as renderFamilies gives it (test/metrics/metrics-render.test.ts renders both over
// random histories).
import type { CheckFigures } from '../../check/model/check-status';
import { decimalOf } from './decimal';
import { allFamilies, isPerCheck } from '../model/families';
import { checkExposure, type PerfdataExposure } from '../model/metrics-options';
import type { PerfdataLimit } from '../model/perfdata-limit';
import { baseUom, scale, unitFactor } from '../model/perfdata-units';
import type { PerfDatum } from '../../check/plugin/perfdata';
import type { ThresholdRange } from '../../check/plugin/range';
import { ROW, ScrapeColumns, type ViewColumns } from './scrape-columns';
import type { ScrapeText } from './scrape-text';

export const perCheckFamilies = allFamilies.filter(isPerCheck);

const CHECK = Buffer.from('{check="', 'latin1');
const LABEL = Buffer.from(',label="', 'latin1');
const UOM = Buffer.from('",uom="', 'latin1');
const QUOTE = Buffer.from('"', 'latin1');

// native/metrics/scrape-lines.h
const R = { interval: 0, running: 1, state: 2, stateType: 3, attempt: 4, maxAttempts: 5, lastRun: 6, lastChange: 7, execution: 8, latency: 9, labelSets: 10, dropLimit: 11, dropDuplicate: 12, dropTooLong: 13 } as const;
const HAS_LAST = 1 << 16;
const HAS_PERF = 1 << 17;
const C_DECIMAL = 18;
const S = { value: 0, warnLow: 1, warnHigh: 2, critLow: 3, critHigh: 4, min: 5, max: 6 } as const;
const I_WARN = 1 << 8;
const I_CRIT = 1 << 9;
const I_MIN = 1 << 10;
const I_MAX = 1 << 11;
const I_WARN_INSIDE = 1 << 12;
const I_CRIT_INSIDE = 1 << 13;
const I_DECIMAL = 16;

/** Where the addon's call keeps its place (state's slots, native/napi/scrape-lines-addon.cc). */
export const ViewState = { Next: 0, Stop: 1, Pos: 2, Checks: 3, Items: 4, Slots: 5, Pieces: 6 } as const;

/** Distinct (label, unit) pieces a scrape shares between checks, at most: past it, each item writes its own. */
const SHARED_ITEM_PIECES = 65_536;

export class CheckViews {
  /** What the addon reads (ViewState), filled by columns(). */
  readonly state = new Float64Array(7);
  /** label → base unit → the piece `,label="…",uom="…"`: most checks print the same few labels. */
  readonly #itemPieces = new Map<string, Map<string, number>>();
  #shared = 0;

  /** The columns the addon reads (columns()); add() appends to them. */
  cols: ScrapeColumns;
  /** Where #rowSlot() and #itemSlot() write: cols, or what gather() was given. */
  #to: ScrapeColumns;

  constructor(readonly text: ScrapeText, readonly limit: PerfdataLimit, readonly exposure: PerfdataExposure,
    cols: ScrapeColumns = new ScrapeColumns()) {
    this.cols = cols;
    this.#to = cols;
  }

  get length(): number {
    return this.cols.n;
  }

  /**
   * v as the addon takes it: a safe integer, NaN or ±Inf as it is; a
   * decimal (decimalOf) with #kind 2; any other number as the index of a
   * piece with its text, #kind 1.
   */
  #num(v: number): number {
    this.#kind = 0;
    if (Number.isSafeInteger(v) || (!Number.isFinite(v) && typeof v === 'number')) return v;
    if (typeof v !== 'number') {
      // A source in plain JavaScript may give a figure that is not a number: written as its text, as num() does.
      this.#kind = 1;
      return this.text.add(String(v));
    }
    const d = decimalOf(v);
    if (!Number.isNaN(d)) {
      this.#kind = 2;
      return d;
    }
    this.#kind = 1;
    return this.text.number(String(v));
  }

  /** What #num() made of its number: 0 itself, 1 a piece, 2 a decimal. */
  #kind = 0;

  #rowSlot(base: number, slot: number, v: number): number {
    this.#to.row[base + slot] = this.#num(v);
    return this.#kind === 0 ? 0 : this.#kind === 1 ? 1 << slot : 1 << (C_DECIMAL + slot);
  }

  #itemSlot(logical: number, v: number): number {
    const c = this.#to;
    c.slots[c.nslots++] = this.#num(v);
    return this.#kind === 0 ? 0 : this.#kind === 1 ? 1 << logical : 1 << (I_DECIMAL + logical);
  }

  #range(r: ThresholdRange, f: number, low: number): number {
    // Finite in the base unit or not (a huge end in PB can overflow it; a plain-JavaScript source may give
    // one that is not a number): the addon writes finite ends only, as renderFamilies does.
    const start = scale(r.start, f);
    const end = scale(r.end, f);
    return this.#itemSlot(low, Number.isFinite(start) ? start : NaN) | this.#itemSlot(low + 1, Number.isFinite(end) ? end : NaN);
  }

  /** The piece `,label="<label>",uom="<unit>"`, made once per scrape for the first SHARED_ITEM_PIECES of them. */
  #itemPiece(label: string, uom: string): number {
    let units = this.#itemPieces.get(label);
    const k = units?.get(uom);
    if (k !== undefined) return k;
    const text = this.text;
    text.ascii(LABEL);
    text.escaped(label);
    text.ascii(UOM);
    text.escaped(uom);
    text.ascii(QUOTE);
    const piece = text.end();
    if (this.#shared < SHARED_ITEM_PIECES && typeof label === 'string' && typeof uom === 'string') {
      if (units === undefined) this.#itemPieces.set(label, (units = new Map<string, number>()));
      units.set(uom, piece);
      this.#shared++;
    }
    return piece;
  }

  /** Adds the check as its series see it, unless it exposes none; a new result is admitted to its caps now. */
  add(status: CheckFigures): void {
    this.gather(status, this.cols, -1);
  }

  /** The piece `{check="<id>"`. */
  checkPiece(id: string): number {
    const text = this.text;
    text.ascii(CHECK);
    text.escaped(id);
    text.ascii(QUOTE);
    return text.end();
  }

  /**
   * add() to columns `c`, with piece `at` as the check's `{check="<id>"`
   * (-1: made now); false if the check exposes no series (nothing added).
   */
  gather(status: CheckFigures, c: ScrapeColumns, at: number): boolean {
    const e = checkExposure(status, this.exposure);
    if (!e.series) return false;
    // Pieces first: if one throws (past 4 GiB), no column has a row more than the others.
    if (at < 0) at = this.checkPiece(status.id);
    this.#to = c;
    let items: readonly PerfDatum[] | null = null;
    let perf = null;
    if (e.perfdata) {
      perf = this.limit.readItems(status);
      items = this.exposure.allLabels ? perf.items : perf.items.filter((p) => this.exposure.labels(p.label));
    }
    c.room(items === null ? 0 : items.length);
    const i = c.n;
    if (items !== null) for (let j = 0; j < items.length; j++) c.ipiece[c.nitems + j] = this.#itemPiece(items[j].label, baseUom(items[j].uom));
    const base = i * ROW;
    let bits = this.#rowSlot(base, R.interval, status.definition.interval / 1000) | this.#rowSlot(base, R.running, status.running ? 1 : 0);
    const l = status.last;
    if (l !== null) {
      bits |= HAS_LAST | this.#rowSlot(base, R.state, l.state) | this.#rowSlot(base, R.stateType, l.stateType === 'HARD' ? 1 : 0) |
        this.#rowSlot(base, R.attempt, l.attempt) | this.#rowSlot(base, R.maxAttempts, l.maxAttempts) |
        this.#rowSlot(base, R.lastRun, l.finishedAt / 1000) | this.#rowSlot(base, R.lastChange, (status.lastStateChangeAt ?? NaN) / 1000) |
        this.#rowSlot(base, R.execution, l.durationMs / 1000) | this.#rowSlot(base, R.latency, l.latencyMs / 1000);
    }
    c.at[i] = at;
    c.item0[i] = c.nitems;
    c.slot0[i] = c.nslots;
    if (perf !== null && items !== null) {
      bits |= HAS_PERF | this.#rowSlot(base, R.labelSets, perf.labelSets) | this.#rowSlot(base, R.dropLimit, perf.dropped.limit) |
        this.#rowSlot(base, R.dropDuplicate, perf.dropped.duplicate) | this.#rowSlot(base, R.dropTooLong, perf.dropped.tooLong);
      for (const p of items) {
        const f = unitFactor(p.uom);
        let ib = this.#itemSlot(S.value, p.value === null ? NaN : scale(p.value, f));
        if (p.warn !== undefined) ib |= I_WARN | (p.warn.alertInside ? I_WARN_INSIDE : 0) | this.#range(p.warn, f, S.warnLow);
        if (p.crit !== undefined) ib |= I_CRIT | (p.crit.alertInside ? I_CRIT_INSIDE : 0) | this.#range(p.crit, f, S.critLow);
        if (p.min !== undefined) ib |= I_MIN | this.#itemSlot(S.min, scale(p.min, f));
        if (p.max !== undefined) ib |= I_MAX | this.#itemSlot(S.max, scale(p.max, f));
        c.ibits[c.nitems++] = ib;
      }
    }
    c.bits[i] = bits;
    c.n = i + 1;
    c.item0[i + 1] = c.nitems;
    return true;
  }

  /** The columns as they are now, and state's counts set to them. */
  columns(): ViewColumns {
    const st = this.state;
    const c = this.cols;
    st[ViewState.Checks] = c.n;
    st[ViewState.Items] = c.nitems;
    st[ViewState.Slots] = c.nslots;
    st[ViewState.Pieces] = this.text.count;
    return c.arrays;
  }
}
