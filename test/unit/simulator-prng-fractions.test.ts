/**
 * `RandomStream.fractions` is a batched `fraction`: book sizes draw through it, so it must give
 * the very same values (bit for bit) on the fast path below 2^32 and on the general path.
 */
import { describe, expect, it } from 'vitest';
import { RandomStream, STREAM } from '../../contracts/prng.ts';

const TWO32 = 4294967296;

function expectSameAsFraction(stream: RandomStream, first: number, count: number): void {
  const out = new Float64Array(count);
  stream.fractions(first, count, out);
  for (let j = 0; j < count; j++) expect(Object.is(out[j], stream.fraction(first + j))).toBe(true);
}

describe('RandomStream.fractions', () => {
  const streams = [new RandomStream(4, STREAM.BOOK), new RandomStream(2 ** 40 + 3, STREAM.BOOK)];

  it('gives fraction(first + j) for counters below 2^32', () => {
    for (const stream of streams) {
      expectSameAsFraction(stream, 0, 40);
      expectSameAsFraction(stream, 123_456_780, 200);
      expectSameAsFraction(stream, TWO32 - 40, 40);
    }
  });

  it('gives fraction(first + j) for ranges that reach or pass 2^32', () => {
    for (const stream of streams) {
      expectSameAsFraction(stream, TWO32 - 20, 40);
      expectSameAsFraction(stream, 3 * TWO32 + 5, 40);
      expectSameAsFraction(stream, 2 ** 52 - 100, 40);
    }
  });
});
