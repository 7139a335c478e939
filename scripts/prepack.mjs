// npm pack / npm publish run this first (issue 18): a package without both
// prebuilt addons, or with binaries built from other native/ sources, is never
// packed. What is missing or stale is built (scripts/prebuild.mjs); when that
// cannot be done here, packing fails and says what is missing and why.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, TARGETS, prebuildProblems } from './prebuild-targets.mjs';

let problems = prebuildProblems();
if (problems.length > 0) {
  console.error(`prepack: ${problems.join('; ')}: building them`);
  const stale = TARGETS.filter((t) => prebuildProblems([t]).length > 0).map((t) => t.arch);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'prebuild.mjs'), ...stale], { stdio: 'inherit' });
  problems = prebuildProblems();
  if (r.status !== 0 || problems.length > 0) {
    console.error(`prepack: refusing to pack popen-noshell without its prebuilt addons: ${problems.join('; ')}`);
    process.exit(1);
  }
}
