// One budget of work per turn of the event loop, shared by everything that
// takes from it: the writers of every metrics server's responses
// (write-body.ts) and every prom-client scrape of a runner
// (sliced-snapshot.ts) on this thread take from loopTurns. Each with a
// budget of its own, 64 readers held the loop 354 ms: tasks resumed in one
// turn (setImmediate callbacks run back to back, with no timers or I/O
// between them) ran their 5 ms each, one after another.

/** Work of all the budget's takers together between two turns of the event loop, ms (default 5). */
export const TURN_MS = 5;

export class TurnBudget {
  #start = performance.now();
  #waiting: Array<() => void> | null = null;

  constructor(readonly turnMs = TURN_MS) {}

  /** This turn's budget is spent. */
  get due(): boolean {
    return performance.now() - this.#start >= this.turnMs;
  }

  /** Resolves in the next turn, whose budget starts then (one setImmediate for every taker waiting). */
  next(): Promise<void> {
    if (this.#waiting === null) {
      const waiting: Array<() => void> = (this.#waiting = []);
      setImmediate(() => {
        this.#waiting = null;
        this.#start = performance.now();
        for (const w of waiting) w();
      });
    }
    const waiting = this.#waiting;
    return new Promise<void>((resolve) => waiting.push(resolve));
  }

  /** next() if this turn's budget is spent. */
  async pause(): Promise<void> {
    if (this.due) await this.next();
  }
}

/** The budget of this thread's event loop: every metrics server and registry of a runner on it shares it. */
export const loopTurns = new TurnBudget();
