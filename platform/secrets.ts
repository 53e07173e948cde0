/**
 * Keyed hashes and password hashing. API keys and session tokens are stored only as
 * HMAC-SHA256 under the server secret; passwords with scrypt. Rotation: the hash names its secret
 * version (`v<version>.`); new hashes use the current secret, and a value stored under a previous
 * secret (still configured) is found by `allHashes`, then stored again under the current one by
 * its owner (key store, accounts service), so the previous secret can be retired later.
 */
import {
  createHash,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  opts: object,
) => Promise<Buffer>;

export type Secrets = {
  /** `v<version>.<hex HMAC-SHA256>` under the current secret: usable as a KV key. */
  keyHash(apiKeyOrToken: string): string;
  /** The value's hash under every configured secret, the current one first. */
  allHashes(apiKeyOrToken: string): string[];
  /** The value's hash under each older secret still configured (`allHashes` without the current). */
  olderHashes(apiKeyOrToken: string): string[];
  /** Whether a stored hash was made under the current secret. */
  isCurrent(hash: string): boolean;
  /** Constant-time equality of two hashes. */
  sameHash(a: string, b: string): boolean;
};

/** A secret no longer used for new hashes but still accepted (rotation). */
export type PreviousSecret = { secret: string; version: number };

export function createSecrets(secret: string, version = 1, previous: PreviousSecret[] = []): Secrets {
  // Each secret as a KeyObject made once: a string key is prepared again on every createHmac.
  const hmac = (key: KeyObject, v: number, value: string) =>
    `v${v}.${createHmac('sha256', key).update(value).digest('hex')}`;
  const current = createSecretKey(Buffer.from(secret, 'utf8'));
  const older = previous
    .filter((p) => p.version !== version)
    .map((p) => ({ key: createSecretKey(Buffer.from(p.secret, 'utf8')), version: p.version }));
  const olderHashes = (value: string) => older.map((p) => hmac(p.key, p.version, value));
  return {
    keyHash: (value) => hmac(current, version, value),
    allHashes: (value) => [hmac(current, version, value), ...olderHashes(value)],
    olderHashes,
    isCurrent: (hash) => hash.startsWith(`v${version}.`),
    sameHash(a, b) {
      const x = Buffer.from(a);
      const y = Buffer.from(b);
      return x.length === y.length && timingSafeEqual(x, y);
    },
  };
}

const SCRYPT = { N: 16_384, r: 8, p: 1, keylen: 32 };

/** `scrypt$N$r$p$<salt b64>$<hash b64>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  if (alg !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** Unkeyed digest for lookup keys that are not secrets (an email's index key). */
export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');
