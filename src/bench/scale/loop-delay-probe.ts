// Preloaded (node -r) by `noshell bench --scale` into a `noshell run` that has
// no loop-delay report of its own (`--cli` of a build from before it): the
// same windows from the same code, so both builds are measured alike.
import { loopDelayInterval, startLoopDelayReport } from '../../daemon/loop-delay-report';

const windowMs = loopDelayInterval();
if (windowMs !== null) startLoopDelayReport(windowMs, (line) => process.stderr.write(line));
