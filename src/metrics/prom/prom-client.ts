// prom-client, loaded on first use: requiring it takes ~140 ms (measured,
// Node 20 on the 2-core test machine), which `noshell check`, run once per
// check by a monitoring core, and library users without metrics should not pay.
type PromClient = typeof import('prom-client');

let loaded: PromClient | undefined;

export function promClient(): PromClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily (above); `import type` keeps it typed
  loaded ??= require('prom-client') as PromClient;
  return loaded;
}
