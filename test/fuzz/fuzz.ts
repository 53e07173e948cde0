/**
 * Shared by the fuzz tests: how many inputs per parser (FUZZ_RUNS; 300 by default so `npm test`
 * and CI stay quick, `FUZZ_RUNS=100000` for the full run) and the property every answer must
 * keep: a clear 4xx or a result, never a 5xx, a hang or a stack trace in the body.
 */
import fc from 'fast-check';
import { expect } from 'vitest';

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** Per request: longer than this is a hang. */
export const ANSWER_WITHIN_MS = 10_000;

/** Test timeout for `runs` inputs at a pessimistic 20 ms each, plus start-up. */
export const fuzzTimeout = (runs = FUZZ_RUNS) => 60_000 + runs * 20;

export const fuzzParams = (runs = FUZZ_RUNS): fc.Parameters<unknown> => ({
  numRuns: runs,
  endOnFailure: true,
});

/** A stack frame (`at fn (file:line:col)`) or a Node error class with its message, as servers leak them. */
const STACK = /\n\s+at .+[:(].*\d+:\d+\)?|node:internal|\/node_modules\/|\.ts:\d+:\d+/;

/** The property: below 500, and a non-2xx body is a JSON error without a stack trace. */
export function expectClean(status: number, body: string, what: string): void {
  expect(status, `${what} → ${status}: ${body.slice(0, 300)}`).toBeLessThan(500);
  expect(STACK.test(body), `${what}: stack trace in body: ${body.slice(0, 300)}`).toBe(false);
  if (status >= 400 && status !== 405) {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    expect(
      typeof parsed.error === 'string' || typeof parsed.error === 'object',
      `${what}: error body ${body}`,
    ).toBe(true);
  }
}

/** Rejects if `p` takes longer than ANSWER_WITHIN_MS: a hang fails the property. */
export function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${ANSWER_WITHIN_MS} ms`)),
      ANSWER_WITHIN_MS,
    );
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

/** Text a fuzzer sends: anything printable, JSON-ish fragments, and the odd huge number. */
export const fuzzText = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom(
      '',
      ' ',
      '-1',
      '0',
      '1e309',
      '9007199254740993',
      'NaN',
      'null',
      '{}',
      '[]',
      '%',
      '%zz',
      '\u0000',
    ),
    fc.integer().map(String),
    fc.double().map(String),
  );

/**
 * A valid example with up to three of its values (at any depth) replaced by arbitrary JSON, or
 * arbitrary JSON outright: payloads close enough to the real ones to reach deep into a parser.
 */
export function mutated(examples: readonly unknown[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom(...examples), fc.array(fc.tuple(fc.nat(), fc.jsonValue()), { maxLength: 3 }))
        .map(([ex, edits]) => {
          const copy = structuredClone(ex);
          for (const [at, value] of edits) replaceAt(copy, at, value);
          return copy;
        }),
    },
    { weight: 1, arbitrary: fc.jsonValue() },
  );
}

/** Replaces the `at`-th (modulo their count) value inside `root` by `value`, in place. */
function replaceAt(root: unknown, at: number, value: unknown): void {
  const slots: [Record<string, unknown> | unknown[], string | number][] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v))
      for (const [i, x] of v.entries()) {
        slots.push([v, i]);
        walk(x);
      }
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        slots.push([v as Record<string, unknown>, k]);
        walk(x);
      }
  };
  walk(root);
  const slot = slots[at % Math.max(1, slots.length)];
  if (slot) (slot[0] as Record<string | number, unknown>)[slot[1]] = value;
}
