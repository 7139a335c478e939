import { existsSync } from 'node:fs';
import { compileIfPossible, shellPlugin } from './tools';

export interface Workload {
  id: string;
  title: string;
  argv: string[];
}

const PLUGINS = '/usr/lib/nagios/plugins';

/** The commands every driver runs; Debian's plugins only where installed, the C plugin only with a compiler. */
export function workloads(): Workload[] {
  const list: Workload[] = [
    { id: 'true', title: '/bin/true', argv: ['/bin/true'] },
    { id: 'echo', title: '/bin/echo, output captured', argv: ['/bin/echo', 'hello world'] },
  ];
  const plugin = compileIfPossible('plugin');
  if (plugin !== null) list.push({ id: 'plugin', title: 'C plugin printing a Nagios line with perfdata', argv: [plugin] });
  if (existsSync(`${PLUGINS}/check_dummy`)) {
    list.push({ id: 'check_dummy', title: 'check_dummy 0 ok (monitoring-plugins)', argv: [`${PLUGINS}/check_dummy`, '0', 'ok'] });
  }
  if (existsSync(`${PLUGINS}/check_load`)) {
    // Thresholds no load average reaches: a busy machine (a previous benchmark
    // leaves load 10+ on 2 cores) must not turn the workload into exit 2.
    list.push({
      id: 'check_load', title: 'check_load -w 1000,1000,1000 -c 2000,2000,2000',
      argv: [`${PLUGINS}/check_load`, '-w', '1000,1000,1000', '-c', '2000,2000,2000'],
    });
  }
  list.push({ id: 'sh_plugin', title: '#!/bin/sh plugin', argv: [shellPlugin()] });
  return list;
}
