// How long gearmand may keep a request waiting for its answer. gearmand
// answers the requests of one connection in order (SUBMIT_JOB → JOB_CREATED,
// GRAB_JOB → JOB_ASSIGN or NO_JOB), so the oldest unanswered request is the
// one to watch. A server that is connected but stuck (stopped, wedged, a
// half-open connection keepalive has not caught yet) would otherwise hold
// results and grabs forever; past the deadline the connection is dropped and
// redialled, and the client resends what was not acknowledged.

export class AnswerDeadline {
  /** When each unanswered request was sent (performance.now()), oldest first. */
  private sent: number[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly timeoutMs: number,
    private readonly onExpired: (waitedMs: number, unanswered: number) => void,
  ) {}

  get unanswered(): number {
    return this.sent.length - this.head;
  }

  /** A request that gets exactly one answer was written. */
  expect(now = performance.now()): void {
    if (this.timeoutMs <= 0) return;
    this.sent.push(now);
    if (this.timer === null) this.arm(this.timeoutMs);
  }

  /** Its answer (the oldest request's) arrived. */
  answered(): void {
    if (this.head >= this.sent.length) return;
    this.head++;
    // Compact now and then rather than shift() per answer.
    if (this.head === this.sent.length) {
      this.sent = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.sent.length) {
      this.sent = this.sent.slice(this.head);
      this.head = 0;
    }
  }

  /** The connection is gone: nothing is waited for any more. */
  clear(): void {
    this.sent = [];
    this.head = 0;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    // The socket keeps the process alive while it matters; this timer never does.
    this.timer.unref();
  }

  private check(): void {
    this.timer = null;
    if (this.head >= this.sent.length) return;
    const waited = performance.now() - this.sent[this.head];
    if (waited >= this.timeoutMs) {
      const n = this.unanswered;
      this.clear();
      this.onExpired(waited, n);
      return;
    }
    this.arm(this.timeoutMs - waited);
  }
}
