/**
 * Shared by the fuzz tests: how many inputs per parser (FUZZ_RUNS; 300 by default so `npm test`
 * and CI stay quick, `FUZZ_RUNS=100000` for the full run), the seed (printed with every failure;
 * `FUZZ_SEED=… FUZZ_PATH=…` replays it) and the property every answer must keep: a clear 4xx or
 * a result, never a 5xx, a hang or a stack trace in the body; and on the JSON-RPC surfaces never
 * a failure of the server dressed as an answer (-32603, `internal`, `unknown`) inside an HTTP 200.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { ERROR_CATALOGUE } from '../../contracts/errors.ts';
import { within as withinMs } from '../support/within.ts';

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** The seed of this process's runs: FUZZ_SEED to replay one, else a fresh one. */
export const FUZZ_SEED =
  process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : (Math.random() * 2 ** 31) | 0;

/** Per request: longer than this is a hang. */
export const ANSWER_WITHIN_MS = 10_000;

/** Test timeout for `runs` inputs at a pessimistic 20 ms each, plus start-up. */
export const fuzzTimeout = (runs = FUZZ_RUNS) => 60_000 + runs * 20;

const fuzzParams = (runs = FUZZ_RUNS): fc.Parameters<unknown> => ({
  numRuns: runs,
  endOnFailure: true,
  seed: FUZZ_SEED,
  ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
});

const REPORT_LINE = 2_000;

/**
 * Runs `property` like `fc.assert`; a failure throws an error whose message starts with the line
 * that replays it (`FUZZ_SEED=… FUZZ_PATH=…` in front of the same vitest command), then fast-check's report with the
 * counterexample, and whose cause is the failed assertion.
 */
export async function fuzzAssert<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncPropertyWithHooks<Ts>,
  runs = FUZZ_RUNS,
): Promise<void> {
  const details = await fc.check(property, fuzzParams(runs) as fc.Parameters<Ts>);
  if (!details.failed) return;
  const replay = `replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} (failed at run ${details.numRuns} of ${runs})`;
  // A counterexample can hold thousands of coins: each line is cut, the replay line recreates it.
  const report = (fc.defaultReportMessage(details) ?? '')
    .split('\n')
    .map((l) => (l.length > REPORT_LINE ? `${l.slice(0, REPORT_LINE)}… (${l.length} chars)` : l))
    .join('\n');
  throw new Error(`${replay}\n${report}`, { cause: details.errorInstance });
}

/**
 * Stack text as servers leak it: a frame (`at fn (file:line:col)`, `at file:line:col`), a source
 * position (`x.ts:12`), Node internals, or an error class heading a trace (`TypeError: …`).
 */
const STACK =
  /\n\s+at .+[:(].*\d+:\d+\)?|\bat \S+ \(|node:internal|\/node_modules\/|\.[cm]?[jt]s:\d+|\b[A-Z]\w*Error: /;

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

/** Error codes no input may cause: the server failed (a thrown non-ApiError becomes `internal`). */
const CRASH_CODES = new Set(['internal', 'unknown']);
/** JSON-RPC's "Internal error": what a crash looks like inside an HTTP 200. */
const RPC_INTERNAL = -32603;

/**
 * One JSON-RPC response (of the JSON-RPC edge or POST /mcp): version 2.0, a result or an error;
 * an error is a catalogue row other than -32603 / `internal` / `unknown`, whose data names the
 * code and the request id.
 */
export function expectRpcAnswer(a: Record<string, unknown>, what: string): void {
  const said = `${what} → ${JSON.stringify(a).slice(0, 400)}`;
  expect(a.jsonrpc, said).toBe('2.0');
  expect('result' in a || 'error' in a, said).toBe(true);
  if (!a.error) return;
  const err = a.error as { code?: unknown; data?: { error?: unknown; request_id?: unknown } };
  expect(err.code, `${said}: -32603 (a thrown error)`).not.toBe(RPC_INTERNAL);
  const code = String(err.data?.error);
  expect(code in ERROR_CATALOGUE && !CRASH_CODES.has(code), `${said}: error code`).toBe(true);
  expect(typeof err.data?.request_id === 'string' && err.data.request_id !== '', `${said}: request id`).toBe(
    true,
  );
}

/**
 * A catalogue error body (`{"error": code, …}`, as an HTTP error or an MCP tool's `isError`
 * content): a known code, not `internal` or `unknown`, with the request id; `allowed` lists the
 * 5xx rows the caller accepts by contract (else a 5xx row fails too).
 */
export function expectCatalogueBody(body: string, what: string, allowed: readonly string[] = []): void {
  const parsed = JSON.parse(body) as { error?: unknown; request_id?: unknown };
  const code = String(parsed.error);
  const said = `${what} → ${body.slice(0, 400)}`;
  expect(code in ERROR_CATALOGUE && !CRASH_CODES.has(code), `${said}: error code`).toBe(true);
  const row = ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE];
  expect(row.http < 500 || allowed.includes(code), `${said}: a ${row.http}`).toBe(true);
  expect(typeof parsed.request_id === 'string' && parsed.request_id !== '', `${said}: request id`).toBe(true);
}

/** Rejects if `p` takes longer than ANSWER_WITHIN_MS: a hang fails the property. */
export const within = <T>(p: Promise<T>, what: string): Promise<T> =>
  withinMs(p, ANSWER_WITHIN_MS, `${what}: no answer`);

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
