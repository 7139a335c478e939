// `noshell run` writes a line per result. Node writes stdout to a pipe or a
// file synchronously, one write(2) per call: at 800 results/s that was 1.5 s
// of the event loop's time in 125 s (a CPU profile of 100,000 checks, ~14 µs
// a line). The lines of one turn of the event loop go out in one write
// instead, in the order they came, and at once when they reach `maxChars`.

/** Default: flush at 64 Ki characters even within one turn. */
export const LINE_BATCH_CHARS = 64 * 1024;

export class LineBatch {
  #lines: string[] = [];
  #chars = 0;
  #scheduled = false;

  constructor(private readonly write: (s: string) => void, private readonly maxChars = LINE_BATCH_CHARS) {}

  /** Queues `line` (with its newline) for the end of this turn. */
  add(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= this.maxChars) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
  }

  /** Writes what is queued now (before the process says it stopped, and exits). */
  flush(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.length === 1 ? this.#lines[0] : this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.write(text);
  }
}
