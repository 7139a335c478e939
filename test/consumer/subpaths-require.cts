// The subpath exports from CommonJS (the "require" condition's types).
import check = require('popen-noshell/check');
import metrics = require('popen-noshell/metrics');
import gearman = require('popen-noshell/gearman');

export function viaRequireSubpaths(): string {
  const runner = new check.CheckRunner();
  const limit: number = metrics.DEFAULT_PERFDATA_LIMIT;
  const codec = gearman.createPayloadCodec({ encryption: false });
  // @ts-expect-error parseRange takes a string
  check.parseRange(10);
  return `${runner.stats().checks} ${limit} ${typeof codec.encode}`;
}
