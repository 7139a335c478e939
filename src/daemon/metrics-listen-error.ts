// A metrics port that cannot be had (in use, privileged, an address not on
// this host) is a usage problem: one line naming the address and why, exit 2,
// instead of a stack trace (issue 20).
const WHY: Record<string, string> = {
  EADDRINUSE: 'the port is in use',
  EACCES: 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)',
  EADDRNOTAVAIL: 'the address is not one of this host\'s',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

export function metricsListenError(tool: string, host: string, port: number, e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code in WHY)) return e;
  const where = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new TypeError(`${tool}: cannot serve metrics on ${where}: ${WHY[code]} (${code})`);
}
