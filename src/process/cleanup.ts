// cleanup: children that die with this process. The native side sets
// PR_SET_PDEATHSIG (SIGKILL) in each child, which covers a SIGKILL or a crash
// of ours; on a normal exit this hook also sends killSignal to the process
// group of every cleanup child still running on the event-loop path (the
// executor does the same for its own children as it stops).
const live = new Set<() => void>();
let hooked = false;

function killAll(): void {
  for (const kill of live) kill();
  live.clear();
}

/** Runs `kill` if the process exits while the returned function has not been called. */
export function killOnExit(kill: () => void): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', killAll);
  }
  live.add(kill);
  return () => {
    live.delete(kill);
  };
}
