import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY, encodePacket, GearmanProtocolError, PacketParser, PacketType } from '../../src/gearman/protocol/packet';

// A real gc() without --expose-gc on the command line (vitest starts the workers).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function retainedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const T = PacketType;

function split(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    out.push(buf.subarray(at, p));
    at = p;
  }
  out.push(buf.subarray(at));
  return out;
}

describe('Gearman packet codec', () => {
  it('encodes the header and NUL-separated arguments byte for byte', () => {
    const p = encodePacket('REQ', T.SUBMIT_JOB_BG, ['service', 'uniq', 'data']);
    expect(p.subarray(0, 4).toString('latin1')).toBe('\0REQ');
    expect(p.readUInt32BE(4)).toBe(18);
    expect(p.readUInt32BE(8)).toBe('service\0uniq\0data'.length);
    expect(p.subarray(12).toString('latin1')).toBe('service\0uniq\0data');
    expect(encodePacket('REQ', T.GRAB_JOB_UNIQ)).toEqual(Buffer.from('\0REQ\0\0\0\x1e\0\0\0\0', 'latin1'));
  });

  it('keeps NUL bytes inside the last argument (opaque data)', () => {
    const data = Buffer.from([1, 0, 2, 0, 0, 3]);
    const pkt = encodePacket('RES', T.JOB_ASSIGN_UNIQ, ['H:1', 'host', 'u', data]);
    const [p] = new PacketParser({ expect: 'RES' }).push(pkt);
    expect(p.type).toBe(T.JOB_ASSIGN_UNIQ);
    expect(p.args.map((a) => a.toString('latin1')).slice(0, 3)).toEqual(['H:1', 'host', 'u']);
    expect(p.args[3]).toEqual(data);
  });

  it('parses any fragmentation of any packet sequence to the same packets (property)', () => {
    const packet = fc.oneof(
      fc.record({ type: fc.constant(T.NOOP), args: fc.constant([] as Buffer[]) }),
      fc.record({ type: fc.constant(T.NO_JOB), args: fc.constant([] as Buffer[]) }),
      fc.record({ type: fc.constant(T.JOB_CREATED), args: fc.tuple(fc.uint8Array({ maxLength: 40 })).map((a) => a.map((x) => Buffer.from(x))) }),
      fc.record({
        type: fc.constant(T.JOB_ASSIGN_UNIQ),
        args: fc.tuple(
          fc.stringMatching(/^[A-Za-z0-9:.]{0,12}$/), fc.stringMatching(/^[a-z_]{0,12}$/), fc.stringMatching(/^[a-f0-9-]{0,12}$/),
          fc.uint8Array({ maxLength: 300 }),
        ).map(([a, b, c, d]) => [Buffer.from(a), Buffer.from(b), Buffer.from(c), Buffer.from(d)]),
      }),
    );
    fc.assert(fc.property(fc.array(packet, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 30 }), (packets, cuts) => {
      const wire = Buffer.concat(packets.map((p) => encodePacket('RES', p.type, p.args)));
      const parser = new PacketParser({ expect: 'RES' });
      const got = split(wire, cuts).flatMap((c) => parser.push(c));
      expect(got.map((p) => ({ type: p.type, args: p.args.map((a) => Buffer.from(a)) }))).toEqual(packets);
      expect(parser.pending).toBe(0);
    }), { numRuns: 500 });
  });

  it('reads a 1 MiB packet sent one byte at a time in linear time', () => {
    const data = Buffer.alloc(1024 * 1024, 0x41);
    const wire = encodePacket('RES', T.JOB_ASSIGN_UNIQ, ['H:x', 'service', '', data]);
    const parser = new PacketParser({ expect: 'RES' });
    const start = performance.now();
    let got: ReturnType<PacketParser['push']> = [];
    for (let i = 0; i < wire.length; i++) {
      const r = parser.push(wire.subarray(i, i + 1));
      if (r.length > 0) got = r;
    }
    const ms = performance.now() - start;
    expect(got).toHaveLength(1);
    expect(got[0].args[3].equals(data)).toBe(true);
    // Quadratic copying would take minutes; linear takes well under this.
    expect(ms).toBeLessThan(8000);
  });

  it('parser memory with 1-byte chunks: a large announced body costs about the bytes received, not a Buffer per chunk', () => {
    // The defect: every 1-byte chunk was kept as its own Buffer until the
    // packet completed (~210 bytes of heap each: +419 MB for 2 MB pushed).
    const size = 8 * 1024 * 1024;
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4096) data.fill(i & 0xff, i, i + 4096);
    const wire = encodePacket('RES', T.JOB_ASSIGN_UNIQ, ['H:x', 'service', 'u', data]);
    const parser = new PacketParser({ expect: 'RES' });
    const pushed = 200_000;
    const before = retainedBytes();
    let early = 0;
    // A fresh Buffer per push, as socket reads hand over.
    for (let i = 0; i < pushed; i++) early += parser.push(Buffer.from(wire.subarray(i, i + 1))).length;
    const grown = retainedBytes() - before;
    console.log(`1-byte pushes: ${pushed} bytes pushed, retained heap+arrayBuffers grew by ${grown} bytes`);
    expect(early).toBe(0);
    // The body buffer doubles, so up to 2x what arrived, plus noise.
    expect(grown).toBeLessThan(3 * pushed + 512 * 1024);
    expect(parser.pending).toBe(pushed);
    const got = parser.push(wire.subarray(pushed));
    expect(got).toHaveLength(1);
    expect(got[0].args.slice(0, 3).map((a) => a.toString())).toEqual(['H:x', 'service', 'u']);
    expect(got[0].args[3].equals(data)).toBe(true);
    expect(parser.pending).toBe(0);
  });

  it('a header announcing the maximum body allocates nothing until the bytes come', () => {
    const parser = new PacketParser({ expect: 'RES' });
    const before = retainedBytes();
    const head = Buffer.from('\0RES\0\0\0\x0b\0\0\0\0', 'latin1');
    head.writeUInt32BE(DEFAULT_MAX_BODY, 8);
    parser.push(Buffer.concat([head, Buffer.from('H:1\0')]));
    expect(retainedBytes() - before).toBeLessThan(1024 * 1024);
    expect(parser.pending).toBe(16);
  });

  it('default body limit is 16 MiB: the largest broker-module job fits, more is refused', () => {
    expect(DEFAULT_MAX_BODY).toBe(16 * 1024 * 1024);
    // GM_MAX_OUTPUT (10 MiB) of job text, AES-padded and base64-encoded.
    const job = Buffer.alloc(Math.ceil((10 * 1024 * 1024 + 16) / 3) * 4, 0x41);
    const [p] = new PacketParser({ expect: 'RES' }).push(encodePacket('RES', T.JOB_ASSIGN_UNIQ, ['H:host:1', 'service', 'uniq', job]));
    expect(p.args[3].length).toBe(job.length);
    const head = Buffer.from('\0RES\0\0\0\x0b\0\0\0\0', 'latin1');
    head.writeUInt32BE(DEFAULT_MAX_BODY + 1, 8);
    expect(() => new PacketParser({ expect: 'RES' }).push(head)).toThrow(/exceeds the limit of 16777216/);
  });

  const bad: Array<[string, Buffer, string]> = [
    ['bad magic', Buffer.from('\0HTTP/1.1 200 OK\r\n'), 'ERR_GEARMAN_BAD_MAGIC'],
    ['request magic from a server', encodePacket('REQ', T.NOOP), 'ERR_GEARMAN_BAD_MAGIC'],
    ['absurd length', Buffer.concat([Buffer.from('\0RES\0\0\0\x0b', 'latin1'), Buffer.from([0xff, 0xff, 0xff, 0xf0])]), 'ERR_GEARMAN_TOO_LARGE'],
    ['unknown type', Buffer.concat([Buffer.from('\0RES', 'latin1'), Buffer.from([0, 0, 0x10, 0, 0, 0, 0, 0])]), 'ERR_GEARMAN_BAD_TYPE'],
    ['missing arguments', Buffer.concat([Buffer.from('\0RES\0\0\0\x1f\0\0\0\x03', 'latin1'), Buffer.from('abc')]), 'ERR_GEARMAN_BAD_ARGS'],
    ['body on a bare packet', Buffer.concat([Buffer.from('\0RES\0\0\0\x06\0\0\0\x01', 'latin1'), Buffer.from('x')]), 'ERR_GEARMAN_BAD_ARGS'],
  ];
  for (const [name, wire, code] of bad) {
    it(`rejects ${name} with ${code}, also when fragmented, and stays failed`, () => {
      for (const step of [1, 3, wire.length]) {
        const parser = new PacketParser({ expect: 'RES', maxBodySize: 1024 });
        let error: unknown;
        try {
          for (let i = 0; i < wire.length; i += step) parser.push(wire.subarray(i, i + step));
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(GearmanProtocolError);
        expect((error as GearmanProtocolError).code).toBe(code);
        expect(() => parser.push(encodePacket('RES', T.NOOP))).toThrow(GearmanProtocolError);
      }
    });
  }

  it('never throws anything but GearmanProtocolError on random bytes (property)', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 10 }), (bytes, cuts) => {
      const parser = new PacketParser({ expect: 'RES', maxBodySize: 4096 });
      try {
        for (const c of split(Buffer.from(bytes), cuts)) parser.push(c);
      } catch (e) {
        expect(e).toBeInstanceOf(GearmanProtocolError);
      }
    }), { numRuns: 1000 });
  });
});
