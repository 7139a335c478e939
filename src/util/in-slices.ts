// Long work on the event-loop thread (a reload's apply of 100,000 checks)
// cut into slices, with a turn of the loop between them: the checks due
// meanwhile start, and /metrics and the gearman connections are answered.

/** How long one slice of a sliced apply may hold the event loop, ms. */
export const RELOAD_SLICE_MS = 10;

/**
 * Runs `steps` to its end in slices of at most ~sliceMs, a turn of the
 * event loop between them; `stopping()` true between slices ends it early.
 */
export async function inSlices(steps: Generator<void, void, undefined>, stopping: () => boolean, sliceMs: number): Promise<void> {
  for (;;) {
    const until = performance.now() + sliceMs;
    // A step is short (tens of µs): the clock is read after each.
    for (;;) {
      if (steps.next().done === true) return;
      if (performance.now() >= until) break;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (stopping()) {
      void steps.return(undefined);
      return;
    }
  }
}
