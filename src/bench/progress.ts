// Progress of a benchmark on stderr, so stdout holds only results. On a
// terminal: one line rewritten in place (which table, which round and driver,
// an ETA from the time the finished units took). Elsewhere (a log, CI): one
// plain line per table, and never a control sequence. Updated only between
// measurements, from the caller: no timer of ours runs while one is timed.

export interface ProgressOptions {
  /** Prefix of every line, e.g. "bench". */
  name: string;
  /** What a group is called: "table", "round". */
  groupName: string;
  /** Groups (tables, rounds) and units of work (measurements) in the whole run. */
  groups: number;
  units: number;
  stream?: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean; columns?: number };
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

/** "42 s", "3 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

export class Progress {
  readonly tty: boolean;
  private readonly color: boolean;
  private readonly stream: NonNullable<ProgressOptions['stream']>;
  private readonly now: () => number;
  private readonly start: number;
  private group = 0;
  private groupTitle = '';
  private groupStart = 0;
  private unitsDone = 0;
  private detail = '';
  private shown = false;

  constructor(private readonly o: ProgressOptions) {
    const env = o.env ?? process.env;
    this.stream = o.stream ?? process.stderr;
    // TERM=dumb: a terminal that cannot erase a line; treated as a log.
    this.tty = this.stream.isTTY === true && env.TERM !== 'dumb';
    // https://no-color.org: set and not empty.
    this.color = this.tty && !env.NO_COLOR;
    this.now = o.now ?? (() => performance.now());
    this.start = this.now();
  }

  /** Starts the next group (a table, a round). */
  beginGroup(title: string): void {
    this.group++;
    this.groupTitle = title;
    this.groupStart = this.now();
    this.detail = '';
    this.draw();
  }

  /** Says what runs now (a round and driver); shown on a terminal only. */
  step(detail: string): void {
    this.detail = detail;
    this.draw();
  }

  /** Redraws the line (elapsed time, ETA): for a caller that waits long between steps and times nothing itself. */
  refresh(): void {
    this.draw();
  }

  unitDone(n = 1): void {
    this.unitsDone += n;
  }

  /** Ends the group: on a log, its one line. */
  endGroup(): void {
    if (this.tty) {
      this.draw();
      return;
    }
    const left = this.remainingMs();
    this.stream.write(`${this.o.name}: ${this.counter()} ${this.groupTitle}: done in ${formatDuration(this.now() - this.groupStart)}` +
      `${left === null || left < 500 ? '' : `, about ${formatDuration(left)} left`}\n`);
  }

  /** A line that stays (a note, the files written); the progress line is redrawn under it. */
  note(text: string): void {
    this.around(() => this.stream.write(`${this.o.name}: ${text}\n`));
  }

  /** Runs `write` (output to stdout, which may be this terminal) with the progress line out of its way. */
  around(write: () => void): void {
    this.clear();
    write();
    this.draw();
  }

  /** Removes the progress line for good. */
  end(): void {
    this.clear();
    this.detail = '';
    this.groupTitle = '';
  }

  /** ms still to go, from the mean time of the units done so far; null before the first. */
  remainingMs(): number | null {
    if (this.unitsDone === 0) return null;
    return ((this.now() - this.start) / this.unitsDone) * Math.max(0, this.o.units - this.unitsDone);
  }

  private counter(): string {
    return `${this.o.groupName} ${this.group}/${this.o.groups}`;
  }

  private clear(): void {
    if (!this.tty || !this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }

  private draw(): void {
    if (!this.tty || this.groupTitle === '') return;
    const left = this.remainingMs();
    const eta = `${formatDuration(this.now() - this.start)} elapsed, ${left === null ? 'ETA …' : `ETA ${formatDuration(left)}`}`;
    let head = `${this.o.name}: ${this.counter()} ${this.groupTitle}${this.detail ? ` · ${this.detail}` : ''}`;
    // Never wider than the terminal: a wrapped line cannot be rewritten with \r.
    const room = (this.stream.columns ?? 80) - 1 - ' · '.length - eta.length;
    if (Array.from(head).length > room) head = `${Array.from(head).slice(0, Math.max(0, room - 1)).join('')}…`;
    this.stream.write(`\r${head} · ${this.color ? `\x1b[2m${eta}\x1b[22m` : eta}\x1b[K`);
    this.shown = true;
  }
}
