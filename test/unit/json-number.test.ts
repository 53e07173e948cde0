/**
 * contracts/json-number.ts, the one fast number reader: `readJsonNumber` reads a JSON number token
 * from bytes as `JSON.parse` does and refuses what JSON refuses; `decimal` reads the same tokens from
 * strings to the same values, and any other string as `Number()` does ("" excepted: NaN).
 */
import { describe, expect, it } from 'vitest';
import { decimal, readJsonNumber, scanned } from '../../contracts/json-number.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import { seededRandom } from '../support/seeded-random.ts';

/** The token's bytes, then a 0 (as jsonUtf8 gives them). */
const bytes = (token: string) => Buffer.from(`${token}\0`, 'latin1') as RawBuffer;

const read = (token: string): number | null => {
  const end = readJsonNumber(bytes(`${token},`), 0);
  return end === token.length ? scanned.value : null;
};

const FIXED = [
  '0',
  '-0',
  '1',
  '-1',
  '0.1',
  '97123.5',
  '0.0123',
  '33.82000000',
  '0.00000100',
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
  '1e00005',
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

/** Random JSON number tokens: integer part, fraction, exponent, sign, 0 to 35 digits. */
function randomTokens(random: () => number, count: number): string[] {
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
  return Array.from({ length: count }, () => {
    const int = random() < 0.2 ? '0' : `${1 + Math.floor(random() * 9)}${digits(Math.floor(random() * 17))}`;
    const frac = random() < 0.6 ? `.${digits(1 + Math.floor(random() * 18))}` : '';
    const exp =
      random() < 0.3
        ? `e${random() < 0.5 ? '-' : random() < 0.5 ? '+' : ''}${Math.floor(random() * 30)}`
        : '';
    return `${random() < 0.3 ? '-' : ''}${int}${frac}${exp}`;
  });
}

describe('readJsonNumber', () => {
  it('equals JSON.parse on edge cases and 5,000 random tokens', () => {
    const { random } = seededRandom('json-number readJsonNumber');
    for (const t of [...FIXED, ...randomTokens(random, 5_000)])
      expect(Object.is(read(t), JSON.parse(t)), t).toBe(true);
  });

  it('refuses what JSON refuses', () => {
    for (const t of ['+1', '.5', '-', '1.', '1e', '1e+', '-.1', 'x'])
      expect(readJsonNumber(bytes(t), 0), t).toBe(-1);
    // `01` is `0` followed by something that is no number: the caller's grammar refuses the rest.
    expect(readJsonNumber(bytes('01'), 0)).toBe(1);
  });
});

describe('decimal', () => {
  it('reads the same tokens to the same values as readJsonNumber, JSON.parse and Number()', () => {
    const { random } = seededRandom('json-number decimal');
    for (const t of [...FIXED, ...randomTokens(random, 5_000)]) {
      const v = decimal(t);
      expect(Object.is(v, JSON.parse(t)) && Object.is(v, Number(t)) && Object.is(v, read(t)), t).toBe(true);
    }
  });

  it('reads venue decimal strings (prices and sizes with trailing zeros) as Number() does', () => {
    const { random } = seededRandom('json-number venue strings');
    for (let k = 0; k < 5_000; k++) {
      const t = (random() * 10 ** Math.floor(random() * 7)).toFixed(Math.floor(random() * 11));
      expect(Object.is(decimal(t), Number(t)), t).toBe(true);
    }
  });

  it('gives any other string Number()’s value, and NaN for ""', () => {
    expect(decimal('')).toBeNaN();
    const others = [
      ...['+1', '.5', '5.', '-.5', '01', '00.5', '-01', '0x1f', '0b1', '0o7', '1_0', ' 1', '1 ', ' ', '\n'],
      ...['Infinity', '-Infinity', 'NaN', '-', '.', '1e', '1e+', '1.e5', '1.2.3', '1e5.5', 'x', '1x', '٣'],
    ];
    for (const t of others) expect(Object.is(decimal(t), Number(t)), JSON.stringify(t)).toBe(true);
  });
});
