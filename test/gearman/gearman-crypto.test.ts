import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayloadCodec, decryptText, encryptText, GearmanPayloadError, keyFromFile, keyFromString } from '../../src/gearman/payload/crypto';
import { escapeOutput, formatJob, formatResult, formatSubmittedResult, parseJob, parseKeyValues } from '../../src/gearman/payload/job-payload';

// Known answers produced by the real C mod_gm_encrypt (Mod-Gearman 5.2.4, test/peers/mod-gearman/).
const JOB = 'type=service\nresult_queue=check_results\nhost_name=lab-host\nservice_description=lab-svc\n' +
  'core_time=1700000000.000000\ntimeout=60\ncommand_line=/usr/lib/nagios/plugins/check_dummy 0 ok\n\n\n';
const JOB_B64 = 'J2a4jgvrpXS4sZ40Ho9gn9fHnhYsfYIcltRKH8VRtIDdXNa5zfoIHREsoATlXfzkQlRfHB/3wRODjUFMTkfi3UgOgjBRRSKYv0Yxmi' +
  'VjdWbhD6N7iwgYJvGMAw/KHrcpi//29eFEVEG1YzPmnTqdHJUeTq+kp8oH8q2wCaM61pxFvArSvh16wh0OYGaAdsCfWjOsScyaGenn/72xBq7Jet' +
  '0ZbHIMpLkgJbzqJndPJCAubd61jUUQ/lWBRGYL1EYn';

// Made in beforeAll: a run whose -t filter skips every test here runs neither hook, and a directory made at collection was left behind.
let dir = '';
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'noshell-gm-crypto-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function keyfile(name: string, content: string): string {
  const f = path.join(dir, name);
  writeFileSync(f, content);
  return f;
}

describe('Mod-Gearman crypto (known answers of the C mod_gm_encrypt)', () => {
  const key = keyFromString('testkey');
  const vectors: Array<[string, string]> = [
    ['type=service', 'yxN5y40uZLxp+T8+rcjHzw=='],
    ['abcdefghijklmno', '8pztb8KNBEc5cWiqPdY8aw=='],
    ['0123456789abcdef0123456789abcde', 'eboqHcyWmSKQ2Oh+dyywhQhJxiqDU8EhvyA444KnJR1XCSh+Fg/Fww8oz6HdovsC'],
    [JOB, JOB_B64],
  ];
  for (const [plain, b64] of vectors) {
    it(`encrypts ${JSON.stringify(plain.slice(0, 24))} (${plain.length} bytes) exactly and decrypts it back`, () => {
      expect(encryptText(key, plain)).toBe(b64);
      expect(decryptText(key, b64)).toBe(plain);
    });
  }

  it('one codec (one OpenSSL context each way, reused) gives the known answers for every payload in any order', () => {
    const codec = createPayloadCodec({ key: 'testkey' });
    // Interleaved encodes and decodes, a bad payload in between: no state
    // from one payload may leak into the next.
    for (let round = 0; round < 3; round++) {
      for (const [plain, b64] of [...vectors].reverse()) {
        expect(codec.decode(b64)).toBe(plain);
        expect(() => codec.decode('not base64!')).toThrow(GearmanPayloadError);
        expect(codec.encode(plain)).toBe(b64);
        // A payload with a trailing partial block: the partial block is ignored.
        const ragged = Buffer.concat([Buffer.from(b64, 'base64'), Buffer.from([7, 7, 7])]).toString('base64');
        expect(codec.decode(ragged)).toBe(plain);
      }
    }
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\0')), (text) => {
      expect(codec.decode(codec.encode(text))).toBe(text);
      expect(codec.encode(text)).toBe(encryptText(key, text));
    }), { numRuns: 200 });
  });

  it('keyfile: 40 characters without newline are cut to 32', () => {
    expect(encryptText(keyFromFile(keyfile('k40', '0123456789'.repeat(4))), 'type=service')).toBe('n+XqN7dl/93uOVXQqf3Gow==');
  });
  it('keyfile: only the first line', () => {
    expect(encryptText(keyFromFile(keyfile('k2', 'mysecretkey12345\nsecondline\n')), 'type=service')).toBe('lZKpCevfXGvtVMZFf7hqtA==');
  });
  it('keyfile: leading spaces kept, trailing whitespace stripped', () => {
    expect(encryptText(keyFromFile(keyfile('ks', '  spaced key  \r\n')), 'type=service')).toBe('bGbLi5pmmln5a/TXsh3eHA==');
  });
  it('encryption=no is plain base64', () => {
    const codec = createPayloadCodec({ encryption: false });
    expect(codec.encode('type=service')).toBe('dHlwZT1zZXJ2aWNl');
    expect(codec.decode('dHlwZT1zZXJ2aWNl')).toBe('type=service');
  });
  it('key bytes stop at the first NUL and at 32 bytes', () => {
    expect(keyFromString('testkey\0ignored')).toEqual(keyFromString('testkey'));
    expect(keyFromString('x'.repeat(40))).toEqual(keyFromString('x'.repeat(32)));
    expect(keyFromString('testkey')).toHaveLength(32);
  });

  it('decoding strips newlines, cuts to whole blocks, accepts zero and newline padding', () => {
    const b64 = 'eboqHcyWmSKQ2Oh+dyywhQhJxiqDU8EhvyA444KnJR1XCSh+Fg/Fww8oz6HdovsC';
    expect(decryptText(key, `${b64.slice(0, 20)}\n${b64.slice(20)}\n`)).toBe('0123456789abcdef0123456789abcde');
    // Two extra bytes after the blocks (base64 of 50 bytes) are cut off.
    const extra = Buffer.concat([Buffer.from(b64, 'base64'), Buffer.from([1, 2])]).toString('base64');
    expect(decryptText(key, extra)).toBe('0123456789abcdef0123456789abcde');
    expect(decryptText(key, encryptText(key, 'type=host\n\n\n\n\n'))).toBe('type=host\n\n\n\n\n');
  });

  it('rejects bad base64 with a typed error', () => {
    for (const bad of ['not base64!', 'abc', '====', 'ab=c']) {
      expect(() => decryptText(key, bad)).toThrow(GearmanPayloadError);
      expect(() => createPayloadCodec({ encryption: false }).decode(bad)).toThrow(GearmanPayloadError);
    }
  });

  it('the wrong key decrypts to garbage that is no job (discarded, not a crash)', () => {
    const job = parseJob(decryptText(keyFromString('otherkey'), JOB_B64));
    expect(job.knownKeys).toBe(0);
  });

  it('round-trips any text without NUL under any key (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\0')), fc.string({ maxLength: 40 }), (text, k) => {
      const kk = keyFromString(k);
      expect(decryptText(kk, encryptText(kk, text))).toBe(text);
    }), { numRuns: 300 });
  });
});

describe('Mod-Gearman payloads', () => {
  it('parses the broker module service job', () => {
    const j = parseJob(JOB);
    expect(j).toMatchObject({
      type: 'service', resultQueue: 'check_results', hostName: 'lab-host', serviceDescription: 'lab-svc',
      coreTime: '1700000000.000000', timeout: 60, commandLine: '/usr/lib/nagios/plugins/check_dummy 0 ok',
    });
    expect(j.knownKeys).toBe(7);
  });
  it('stops at the first empty value, like the C worker', () => {
    const j = parseJob('type=host\nhost_name=\ncommand_line=/bin/true\n');
    expect(j.type).toBe('host');
    expect(j.commandLine).toBeUndefined();
    expect([...parseKeyValues('a=1\nnoequals\nb=2').keys()]).toEqual(['a']);
    expect(parseKeyValues('command_line=/x a=b c=d').get('command_line')).toBe('/x a=b c=d');
  });
  it('v3.3.3 jobs: start_time doubles as core_time', () => {
    const j = parseJob('type=host\nhost_name=h\nstart_time=1700000001.0\nnext_check=1700000001.0\ncommand_line=/bin/true\n\n\n');
    expect(j.coreTime).toBe('1700000001.0');
  });
  it('escapes backslashes and newlines only', () => {
    expect(escapeOutput('a\\b\nc\r\td')).toBe('a\\\\b\\nc\r\td');
  });
  it('formats a result in the C worker order behind type=active', () => {
    expect(formatResult({
      hostName: 'h', serviceDescription: 's', coreStartTime: '1700000000.000000', startTime: 1700000001.5,
      finishTime: 1700000002.25, returnCode: 1, source: 'Mod-Gearman Worker @ w', output: 'WARN\\nx',
    })).toBe('type=active\nhost_name=h\ncore_start_time=1700000000.000000\nstart_time=1700000001.500000\n' +
      'finish_time=1700000002.250000\nreturn_code=1\nexited_ok=1\nsource=Mod-Gearman Worker @ w\nservice_description=s\n' +
      'output=WARN\\nx\n\n\n\n');
  });
  it('formats passive results like send_gearman and jobs like the broker module', () => {
    expect(formatSubmittedResult({ hostName: 'h', startTime: 1, finishTime: 2, returnCode: 2, output: 'a\nb' }))
      .toBe('type=passive\nhost_name=h\nstart_time=1.000000\nfinish_time=2.000000\nlatency=0.000000\nreturn_code=2\n' +
        'source=send_gearman\noutput=a\\nb\n\n');
    const job = formatJob({ type: 'service', hostName: 'lab-host', serviceDescription: 'lab-svc', coreTime: 1700000000,
      timeout: 60, commandLine: '/usr/lib/nagios/plugins/check_dummy 0 ok' });
    expect(job).toBe(JOB);
  });
});
