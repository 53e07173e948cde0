/** `readJsonNumber` reads a JSON number token as `JSON.parse` does, and refuses what JSON refuses. */
import { describe, expect, it } from 'vitest';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import { readJsonNumber, scanned } from '../../gateways/core/json-number.ts';
import { seededRandom } from '../support/rate-limit-reference.ts';

/** The token's bytes, then a 0 (as jsonUtf8 gives them). */
const bytes = (token: string) => Buffer.from(`${token}\0`, 'latin1') as RawBuffer;

const read = (token: string): number | null => {
  const end = readJsonNumber(bytes(`${token},`), 0);
  return end === token.length ? scanned.value : null;
};

describe('readJsonNumber', () => {
  it('equals JSON.parse on edge cases and 5,000 random tokens', () => {
    const fixed = [
      '0',
      '-0',
      '1',
      '-1',
      '0.1',
      '97123.5',
      '0.0123',
      '1e22',
      '1e23',
      '1E-22',
      '1e-23',
      '9007199254740993',
      '123456789012345',
      '1234567890123456',
      '-0.0000001',
      '5e-324',
      '1.7976931348623157e308',
      '2.5e+3',
      '1e99999',
      // around 2^53, where the summed digits stop being exact
      '9007199254740992',
      '9007199254740991.5',
      '900719925474099.25',
      '9007199254740992e-3',
      '9007199254740995e-22',
      '1767225600000123',
      '0.000000000000000000009007199254740993',
      '12345678901234567890',
      '1234567890123456.7e5',
      // 2^53 + 1 summed in doubles rounds to 2^53: no fast path at 2^53 itself
      '0.9007199254740993',
      '9007199254740993e-5',
      '9.007199254740995',
    ];
    const rand = seededRandom(20261126);
    const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');
    const random = Array.from({ length: 5_000 }, () => {
      const int = rand() < 0.2 ? '0' : `${1 + Math.floor(rand() * 9)}${digits(Math.floor(rand() * 17))}`;
      const frac = rand() < 0.6 ? `.${digits(1 + Math.floor(rand() * 18))}` : '';
      const exp = rand() < 0.3 ? `e${rand() < 0.5 ? '-' : ''}${Math.floor(rand() * 30)}` : '';
      return `${rand() < 0.3 ? '-' : ''}${int}${frac}${exp}`;
    });
    for (const t of [...fixed, ...random]) expect(Object.is(read(t), JSON.parse(t)), t).toBe(true);
  });

  it('refuses what JSON refuses', () => {
    for (const t of ['+1', '.5', '-', '1.', '1e', '1e+', '-.1', 'x'])
      expect(readJsonNumber(bytes(t), 0), t).toBe(-1);
    // `01` is `0` followed by something that is no number: the caller's grammar refuses the rest.
    expect(readJsonNumber(bytes('01'), 0)).toBe(1);
  });
});
