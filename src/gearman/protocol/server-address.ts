// A gearmand address as the C worker's server= option takes it.

export interface ServerAddress {
  host: string;
  port: number;
}

export const DEFAULT_PORT = 4730;

/** `host[:port]` (IPv6 as `[addr]:port`), port 4730 by default, like the C worker. */
export function parseServer(text: string): ServerAddress {
  const s = text.trim();
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
  const port = m?.[2] !== undefined ? Number(m[2]) : DEFAULT_PORT;
  if (m === null || m[1] === '' || !(port > 0 && port < 65536)) {
    throw new TypeError(`bad Gearman server address ${JSON.stringify(text)} (expected host[:port])`);
  }
  return { host: m[1], port };
}
