/**
 * API key format: `mdp_` + 32 base62 characters (≈190 random bits) + 6 base62 characters of
 * checksum. The fixed prefix lets secret scanners find leaked keys; the checksum lets the edge
 * refuse a mistyped or forged-looking key without any lookup.
 */
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'mdp_';
const BODY_LENGTH = 32;
const CHECK_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECK_LENGTH}}$`);

/** Uniformly random base62 text (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  const digest = createHash('sha256').update(body).digest();
  let n = digest.readUInt32BE(0) * 65_536 + digest.readUInt16BE(4);
  let out = '';
  for (let i = 0; i < CHECK_LENGTH; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = randomBase62(BODY_LENGTH);
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

/** True when the text has the key's shape and its checksum matches. */
export function isWellFormedApiKey(key: string): boolean {
  if (!SHAPE.test(key)) return false;
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  return key.slice(KEY_PREFIX.length + BODY_LENGTH) === checksum(body);
}

/** The part of a key shown in the console and logs (never enough to use it). */
export function keyDisplayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

export const newKeyId = (): string => `key_${randomBase62(16)}`;
/** The form of every key id `newKeyId` makes: anything else names no key (404, never a lookup). */
export const KEY_ID = /^key_[0-9A-Za-z]{16}$/;
export const newAccountId = (): string => `acc_${randomBase62(16)}`;
