// The check layer's documented defaults, as behaviour, with no options at
// all (issue 17): CheckRunner runs at most 32 checks at once, runCheck keeps
// 64 KiB of output, and a check with only a timeout times out as UNKNOWN.
import { afterEach, describe, expect, it } from 'vitest';
import { CheckRunner } from '../../src/check/runner/runner';
import { runCheck } from '../../src/check/run-check';
import { PROBE } from '../helpers';

let runner: CheckRunner | null = null;
afterEach(async () => {
  await runner?.stop({ deadline: 2000 });
  runner = null;
});

describe('check defaults with no options', () => {
  it('new CheckRunner(): at most 32 checks run at once, the rest queue', async () => {
    runner = new CheckRunner();
    // First runs are spread over the interval: a short one makes all 40 due at once.
    for (let i = 0; i < 40; i++) runner.add({ id: `c${i}`, command: ['/bin/sleep', '1'], interval: 50 });
    let most = 0;
    let queued = 0;
    runner.start();
    const end = Date.now() + 800;
    while (Date.now() < end) {
      const s = runner.stats();
      most = Math.max(most, s.running);
      queued = Math.max(queued, s.queued);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(most).toBe(32);
    expect(queued).toBe(8);
  });

  it('runCheck(command): 64 KiB of output kept, the rest dropped, the check not failed', async () => {
    const r = await runCheck(['sh', '-c', `echo "OK - big"; ${PROBE} spew 200000; exit 0`]);
    expect(r.state).toBe(0);
    expect(r.output.length + r.longOutput.length + 1).toBeLessThanOrEqual(64 * 1024);
    expect(r.output.length + r.longOutput.length).toBeGreaterThan(60 * 1024);
  });

  it('runCheck(command, { timeout }): the timed-out check is UNKNOWN (the default timeoutState)', async () => {
    const r = await runCheck(['/bin/sleep', '5'], { timeout: 200 });
    expect(r.timedOut).toBe(true);
    expect(r.state).toBe(3);
    expect(r.output).toMatch(/timed out after 0.2 s/);
  });
});
