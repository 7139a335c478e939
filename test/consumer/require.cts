// The CommonJS side of the same package (the "require" condition's types).
import noshell = require('popen-noshell');

export async function viaRequire(): Promise<string> {
  const r = await noshell.execFile('/bin/echo', ['hi']);
  const e: typeof noshell.SpawnError = noshell.SpawnError;
  console.log(e.name);
  // @ts-expect-error execFile's file is a string
  await noshell.execFile(['/bin/echo']);
  return String(r.stdout);
}
