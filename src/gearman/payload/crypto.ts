// Mod-Gearman payload encoding: AES-256-ECB (no IV, no header) with the C
// worker's key handling and padding, then base64 — or base64 only when
// encryption is off. Facts read from Mod-Gearman 5.2.4 (common/gm_crypt.c, mod_gm_encrypt in
// common/utils.c; the tarball is in test/peers/mod-gearman/) and checked by the interop tests.
import { createCipheriv, createDecipheriv, type Cipher, type Decipher } from 'node:crypto';
import { readSmallFile } from '../../util/small-file';

const BLOCK = 16;

/** A payload that cannot be decoded (not base64, not a whole AES block). */
export class GearmanPayloadError extends Error {
  readonly code: string;
  constructor(code: 'ERR_GEARMAN_BAD_BASE64' | 'ERR_GEARMAN_BAD_CIPHERTEXT', message: string) {
    super(message);
    this.name = 'GearmanPayloadError';
    this.code = code;
  }
}

export interface PayloadCodec {
  encode(text: string): string;
  /** Throws GearmanPayloadError for input that is not valid base64. */
  decode(payload: string | Buffer): string;
  readonly encrypted: boolean;
}

/** The C worker's key: bytes up to the first NUL, cut at 32, zero-padded to 32. */
export function keyFromString(key: string | Buffer): Buffer {
  let bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const nul = bytes.indexOf(0);
  if (nul >= 0) bytes = bytes.subarray(0, nul);
  const out = Buffer.alloc(32);
  bytes.copy(out, 0, 0, Math.min(32, bytes.length));
  return out;
}

/** From a keyfile: the first line, at most 32 characters, trailing whitespace stripped. */
export function keyFromFile(file: string): Buffer {
  // Not /dev/zero (read until memory ran out); a pipe is read, as the C tools read one.
  let data: Buffer;
  try {
    data = readSmallFile(file, { max: 64 * 1024, pipes: true });
  } catch (e) {
    if (e instanceof TypeError) throw new TypeError(`keyfile ${e.message}`, { cause: e });
    // Missing, unreadable, a directory: the operator's mistake, said in one line.
    if (typeof (e as NodeJS.ErrnoException).code === 'string') {
      throw new TypeError(`keyfile ${file} cannot be read (${(e as Error).message})`, { cause: e });
    }
    throw e;
  }
  let end = data.indexOf(0x0a);
  if (end < 0) end = data.length;
  // fgets(buf, 33) keeps the newline when the line is shorter than 32 bytes;
  // it is whitespace and stripped below either way.
  let line = data.subarray(0, Math.min(end, 32));
  let n = line.length;
  while (n > 0 && (line[n - 1] === 0x20 || (line[n - 1] >= 0x09 && line[n - 1] <= 0x0d))) n--;
  line = line.subarray(0, n);
  return keyFromString(line);
}

// 1 for the standard base64 alphabet, by char code.
const B64 = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') B64[ch.charCodeAt(0)] = 1;
const NL = 0x0a;
const EQ = 0x3d;

/**
 * Strict base64 (standard alphabet, '=' padding, newlines ignored), checked
 * by one scan of the char codes: payloads come from the network and can be
 * as large as a Gearman packet (16 MiB). A regular expression here
 * overflowed V8's stack from ~4.5 M characters (issue 17).
 */
function decodeBase64(payload: string | Buffer): Buffer {
  const text = typeof payload === 'string' ? payload : payload.toString('latin1');
  let chars = 0;
  let pad = 0;
  let newlines = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === NL) {
      newlines++;
    } else if (c === EQ) {
      pad++;
      chars++;
    } else if (c < 128 && B64[c] === 1 && pad === 0) {
      chars++;
    } else {
      throw new GearmanPayloadError('ERR_GEARMAN_BAD_BASE64', `payload is not valid base64 (byte ${c} at offset ${i})`);
    }
  }
  if (chars % 4 !== 0 || pad > 2) {
    throw new GearmanPayloadError('ERR_GEARMAN_BAD_BASE64', `payload is not valid base64 (${chars} characters, ${pad} of padding)`);
  }
  return Buffer.from(newlines > 0 ? text.replaceAll('\n', '') : text, 'base64');
}

/** The text up to the first NUL (the C side reads a C string). */
function cString(buf: Buffer): string {
  const nul = buf.indexOf(0);
  return (nul < 0 ? buf : buf.subarray(0, nul)).toString('utf8');
}

/** strlen+1 bytes zero-padded to a block; the C code adds one more zero block when strlen+1 is already a multiple of 16 (above one block). */
function padPlain(text: string): Buffer {
  const plain = Buffer.from(text, 'utf8');
  let size = plain.length + 1;
  if (size % BLOCK !== 0) size += BLOCK - (size % BLOCK);
  else if (size > BLOCK) size += BLOCK;
  const padded = Buffer.alloc(size);
  plain.copy(padded);
  return padded;
}

/** Whole blocks of the decoded payload (a trailing partial block is ignored, like the C code). */
function cipherBlocks(payload: string | Buffer): Buffer {
  const data = decodeBase64(payload);
  return data.subarray(0, data.length - (data.length % BLOCK));
}

/**
 * AES-256-ECB under one key with one OpenSSL context each way, kept for the
 * codec's life: ECB has no chaining state, and with padding off an update()
 * of whole blocks returns all of them (nothing held back for final()), so
 * one context serves every payload. A context per payload cost more than
 * the AES itself (key schedule, provider fetch).
 */
class EcbCodec {
  private cipher: Cipher | null = null;
  private decipher: Decipher | null = null;

  constructor(private readonly key: Buffer) {}

  encrypt(text: string): string {
    const padded = padPlain(text);
    try {
      this.cipher ??= ecb(createCipheriv('aes-256-ecb', this.key, null));
      return this.cipher.update(padded).toString('base64');
    } catch (err) {
      this.cipher = null; // never reuse a context in an unknown state
      throw err;
    }
  }

  decrypt(payload: string | Buffer): string {
    const data = cipherBlocks(payload);
    if (data.length === 0) return '';
    try {
      this.decipher ??= ecb(createDecipheriv('aes-256-ecb', this.key, null));
      return cString(this.decipher.update(data));
    } catch (err) {
      this.decipher = null;
      throw err;
    }
  }
}

function ecb<T extends Cipher | Decipher>(c: T): T {
  c.setAutoPadding(false);
  return c;
}

export function encryptText(key: Buffer, text: string): string {
  return new EcbCodec(key).encrypt(text);
}

export function decryptText(key: Buffer, payload: string | Buffer): string {
  return new EcbCodec(key).decrypt(payload);
}

export interface CodecOptions {
  /** Default true. */
  encryption?: boolean | undefined;
  key?: string | Buffer | undefined;
  keyfile?: string | undefined;
}

export function createPayloadCodec(options: CodecOptions): PayloadCodec {
  const encryption = options.encryption ?? true;
  if (!encryption) {
    return {
      encrypted: false,
      encode: (text) => Buffer.from(text, 'utf8').toString('base64'),
      decode: (payload) => cString(decodeBase64(payload)),
    };
  }
  let key: Buffer;
  if (options.keyfile !== undefined) key = keyFromFile(options.keyfile);
  else if (options.key !== undefined) key = keyFromString(options.key);
  else throw new TypeError('encryption is on but neither key nor keyfile is set');
  const ecbCodec = new EcbCodec(key);
  return {
    encrypted: true,
    encode: (text) => ecbCodec.encrypt(text),
    decode: (payload) => ecbCodec.decrypt(payload),
  };
}
