/**
 * Keyed hashes and password hashing. API keys and session tokens are stored only as
 * HMAC-SHA256 under the server secret (versioned, so the secret can rotate); passwords with scrypt.
 */
import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  opts: object,
) => Promise<Buffer>;

export type Secrets = {
  /** `v<version>.<hex HMAC-SHA256>`: usable as a KV key. */
  keyHash(apiKeyOrToken: string): string;
  /** Constant-time equality of two hashes. */
  sameHash(a: string, b: string): boolean;
};

export function createSecrets(secret: string, version = 1): Secrets {
  return {
    keyHash: (value) => `v${version}.${createHmac('sha256', secret).update(value).digest('hex')}`,
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
