/**
 * Fuzzing the disk-sync edge's client messages through the real edge (built in this process as
 * `gateway disksync` builds it: the real API-key guard, Quant keys, the one-connection lease, a
 * real nats-server with a few events). Each input is a short sequence of client frames sent on one
 * connection, kept open across inputs while the server keeps it: arbitrary JSON, near-valid
 * subscribe / unsubscribe / ping objects with mutated fields, broken JSON text, text frames that
 * are not UTF-8, binary frames, a frame over 4 MB, a burst over the message rate.
 *
 * The property, per frame: the server answers it (`pong`, `subscribed`, `unsubscribed`) or closes
 * the connection with one of the spec's codes (4004, 4005, 4006, 4029, 1009; a text frame that is
 * not UTF-8 is 4005 too) and a non-empty UTF-8 reason within 123 bytes, after an `error` message
 * naming the same close code; every text frame the server sends is JSON (a
 * data array or a control message of a known type) without a stack trace; never 1011, never a
 * hang. Afterwards a fresh connection still subscribes and replays the log.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startDisksyncGateway } from '../../app/disksync-gateway.ts';
import type { StartedEdge } from '../../app/edge.ts';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { DISKSYNC_CLOSES, MAX_FRAME_BYTES, MAX_REASON_BYTES } from '../../contracts/disksync.ts';
import { ERROR_CATALOGUE } from '../../contracts/errors.ts';
import type { Stoppable } from '../../platform/lifecycle.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { expectClean, FUZZ_RUNS, fuzzAssert, fuzzText, fuzzTimeout, mutated, within } from './fuzz.ts';

/** Burst 2 × this: a long-lived connection meets 4029 now and then, a burst input always. */
const MSG_RATE = 200;
/** Low, so that a connection kept across inputs reaches the cap (4006) now and then. */
const MAX_SUBSCRIPTIONS = 3;
const KEYS = 4;
const EVENTS = 6;
const config = testConfig({
  DISKSYNC_PORT_US: '0',
  DISKSYNC_MSG_RATE: String(MSG_RATE),
  DISKSYNC_MAX_SUBSCRIPTIONS: String(MAX_SUBSCRIPTIONS),
});
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let guardPart: Stoppable;
let edge: StartedEdge;
let url: string;
const keys: string[] = [];

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  const events = Array.from({ length: EVENTS }, (_, i) => ({
    event: trade(i % 2 ? 'ETH' : 'BTC', i),
    id: `fuzz.ws.${i}`,
    ingestUs: nowUs(),
  }));
  await publishEvents(nats.js, events, createLogger('silent'));
  for (let i = 0; i < KEYS + 1; i++) keys.push((await accounts.key('quant')).key);
  const log = createLogger(config.LOG_LEVEL, 'disksync');
  const guard = await startEdgeGuard(nats, config, log);
  guardPart = guard.part;
  edge = await startDisksyncGateway(nats, config, log, 'us', guard);
  url = edge.address;
}, 60_000);

afterAll(async () => {
  for (const c of open) c.ws.terminate();
  await edge?.stop();
  await guardPart?.stop();
  await base?.close();
});

// ---------------------------------------------------------------------------------------------
// A recording client: every server frame checked as it arrives, answers counted, the close kept.

const CONTROL_TYPES = new Set([
  'subscribed',
  'unsubscribed',
  'caught_up',
  'pong',
  'notice',
  'warning',
  'error',
]);
const ANSWERS = new Set(['pong', 'subscribed', 'unsubscribed']);
const ERROR_CODES = new Set([...Object.keys(ERROR_CATALOGUE), ...Object.keys(DISKSYNC_CLOSES)]);
/** The codes a client's messages may end a connection with. */
const CLOSES = new Set([4004, 4005, 4006, 4029, 1009]);

type Conn = {
  ws: WebSocket;
  answers: number;
  errors: Record<string, unknown>[];
  close: { code: number; reason: Buffer } | null;
  /** What was wrong with a server frame (checked after each step, outside the event handler). */
  faults: string[];
  changed: (() => void)[];
};

const open = new Set<Conn>();

function connect(key: string): Conn {
  const ws = new WebSocket(`${url}/`, { headers: { 'x-api-key': key }, maxPayload: 64 * 1024 * 1024 });
  const c: Conn = { ws, answers: 0, errors: [], close: null, faults: [], changed: [] };
  open.add(c);
  const poke = () => {
    for (const f of c.changed.splice(0)) f();
  };
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) checkText(c, data.toString());
    poke();
  });
  ws.on('error', () => {});
  ws.once('close', (code, reason) => {
    c.close = { code, reason };
    open.delete(c);
    poke();
  });
  return c;
}

function checkText(c: Conn, text: string): void {
  try {
    expectClean(200, text, 'server frame');
  } catch {
    c.faults.push(`stack trace in a frame: ${text.slice(0, 300)}`);
  }
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    c.faults.push(`not JSON: ${text.slice(0, 300)}`);
    return;
  }
  if (Array.isArray(m)) return;
  const ctl = m as Record<string, unknown>;
  if (!CONTROL_TYPES.has(String(ctl.type))) c.faults.push(`unknown control ${text.slice(0, 300)}`);
  if (ctl.type === 'error') {
    c.errors.push(ctl);
    const ok =
      ERROR_CODES.has(String(ctl.code)) &&
      typeof ctl.close_code === 'number' &&
      typeof ctl.message === 'string' &&
      typeof ctl.request_id === 'string' &&
      ctl.request_id !== '';
    if (!ok) c.faults.push(`bad error message ${text.slice(0, 300)}`);
  }
  if (ctl.type === 'warning' && !(String(ctl.code) in ERROR_CATALOGUE))
    c.faults.push(`warning outside the catalogue ${text.slice(0, 300)}`);
  if (ANSWERS.has(String(ctl.type))) c.answers++;
}

/** Resolves once `pred` holds (re-checked on every frame and on the close). */
function until(c: Conn, pred: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (pred() ? resolve() : c.changed.push(check));
    check();
  });
}

function expectCloseClean(c: Conn, what: string): void {
  const close = c.close;
  if (!close) return;
  const reason = close.reason;
  expect(CLOSES.has(close.code), `${what}: closed ${close.code} ${reason}`).toBe(true);
  expect(reason.length, `${what}: empty reason`).toBeGreaterThan(0);
  expect(reason.length, `${what}: reason over 123 bytes`).toBeLessThanOrEqual(MAX_REASON_BYTES);
  expect(
    () => new TextDecoder('utf-8', { fatal: true }).decode(reason),
    `${what}: reason UTF-8`,
  ).not.toThrow();
  expectClean(200, reason.toString(), `${what}: close reason`);
  expect(c.errors.at(-1)?.close_code, `${what}: error message before close ${close.code}`).toBe(close.code);
}

// ---------------------------------------------------------------------------------------------
// The connection in use: kept across inputs while the server keeps it, replaced once it closed.

let current: Conn | null = null;
let nextKey = 0;

/** An admitted connection (its ping answered); a key still leased by its last connection (4008) is skipped. */
async function admitted(): Promise<Conn> {
  if (current && !current.close) return current;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const c = connect(keys[nextKey++ % KEYS] as string);
    c.ws.once('open', () => c.ws.send('{"op":"ping"}'));
    await within(
      until(c, () => c.answers > 0 || c.close !== null),
      'admission',
    );
    if (!c.close) {
      current = c;
      return c;
    }
    expect(c.close.code, `admission refused: ${c.close.code} ${c.close.reason}`).toBe(4008);
    if (Date.now() > deadline) throw new Error('no key free within 30 s');
  }
}

// ---------------------------------------------------------------------------------------------
// What a client sends.

type Frame =
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: Uint8Array; binary: boolean }
  | { kind: 'oversize' }
  | { kind: 'burst'; n: number };

const EXAMPLES = [
  {
    op: 'subscribe',
    id: 's1',
    coins: ['BTC'],
    event_types: ['trade'],
    sources: ['synthetic'],
    from_seq: 0,
    encoding: 'json',
  },
  { op: 'subscribe', id: 'm', encoding: 'msgpack', from_seq: 3 },
  { op: 'subscribe', id: 'a' },
  { op: 'subscribe', id: 'e', coins: ['ETH', 'BTC'], event_types: ['trade', 'book'], from_seq: 2 },
  { op: 'unsubscribe', id: 's1' },
  { op: 'unsubscribe', id: 'a' },
  { op: 'ping' },
];

const anyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 1.5, 2 ** 53, 2 ** 53 + 2, 1e308, -0, Number.MAX_SAFE_INTEGER),
);
const anyValue = fc.oneof(anyNumber, fuzzText(), fc.jsonValue({ maxDepth: 2 }), fc.constant(null));
const coinish = fc.oneof(
  fc.constantFrom('BTC', 'btc', 'ETH', 'NOPE1', '', 'chain:1', 'BTC ', 'É', '\u{1F600}'),
  fuzzText(),
);

/** Subscribe / unsubscribe / ping objects with every field drawn from valid, near-valid and wrong values. */
const shaped = fc.record(
  {
    op: fc.oneof(fc.constantFrom('subscribe', 'unsubscribe', 'ping', 'SUBSCRIBE', 'dance', ''), anyValue),
    id: fc.oneof(fc.constantFrom('s1', 'a', 'm', 'x'.repeat(64), 'x'.repeat(65), ''), fc.string(), anyValue),
    coins: fc.oneof(
      fc.array(coinish, { maxLength: 5 }),
      fc.constantFrom(Array(20_000).fill('BTC'), Array(3_000).fill('NOPE')),
      anyValue,
    ),
    event_types: fc.oneof(fc.array(fc.constantFrom('trade', 'book', 'x', ''), { maxLength: 3 }), anyValue),
    sources: fc.oneof(fc.array(fc.constantFrom('synthetic', 'binance', 'nope'), { maxLength: 3 }), anyValue),
    from_seq: fc.oneof(anyNumber, fc.nat(EVENTS + 2), anyValue),
    encoding: fc.oneof(fc.constantFrom('json', 'msgpack', 'xml', 'JSON'), anyValue),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

/** Subscribes of the right shape with adversarial values: reach 4004, 4006, duplicate ids, encodings. */
const wellTyped = fc.record(
  {
    op: fc.constant('subscribe'),
    id: fc.oneof(fc.constantFrom('s1', 'a', 'm'), fc.string({ minLength: 1, maxLength: 64 })),
    coins: fc.array(fc.constantFrom('BTC', 'eth', 'SOL', 'NOPE1', 'NOPE2'), { minLength: 1, maxLength: 4 }),
    event_types: fc.subarray(['trade', 'book'], { minLength: 1 }),
    sources: fc.subarray(['synthetic', 'binance', 'hyperliquid'], { minLength: 1 }),
    from_seq: fc.oneof(fc.nat(EVENTS + 2), fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 40)),
    encoding: fc.constantFrom('json', 'msgpack'),
  },
  { requiredKeys: ['op', 'id'] },
);

const text = (t: string): Frame => ({ kind: 'text', text: t });

const frame: fc.Arbitrary<Frame> = fc.oneof(
  { weight: 120, arbitrary: shaped.map((v) => text(JSON.stringify(v))) },
  { weight: 120, arbitrary: mutated(EXAMPLES).map((v) => text(JSON.stringify(v) ?? 'null')) },
  { weight: 120, arbitrary: wellTyped.map((v) => text(JSON.stringify(v))) },
  { weight: 120, arbitrary: fc.constantFrom(...EXAMPLES).map((v) => text(JSON.stringify(v))) },
  {
    weight: 40,
    arbitrary: fc
      .tuple(fc.constantFrom(...EXAMPLES), fc.nat(), fc.string({ maxLength: 3 }))
      .map(([ex, at, junk]) => {
        const s = JSON.stringify(ex);
        const i = at % (s.length + 1);
        return text(s.slice(0, i) + junk + s.slice(i + (at % 3)));
      }),
  },
  { weight: 40, arbitrary: fc.jsonValue().map((v) => text(JSON.stringify(v) ?? 'null')) },
  { weight: 40, arbitrary: fuzzText().map(text) },
  {
    weight: 20,
    arbitrary: fc
      .uint8Array({ maxLength: 64 })
      .map((bytes) => ({ kind: 'bytes', bytes, binary: true }) as Frame),
  },
  {
    weight: 20,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 32 })
      .map((b) => ({ kind: 'bytes', bytes: Uint8Array.from([...b, 0xc3, 0x28]), binary: false }) as Frame),
  },
  { weight: 1, arbitrary: fc.constant<Frame>({ kind: 'oversize' }) },
  { weight: 1, arbitrary: fc.constant<Frame>({ kind: 'burst', n: 2 * MSG_RATE + 100 }) },
);

/** Inputs: a few frames; now and then valid subscribes past the cap (4006), with any frame after. */
const frames = fc.oneof(
  { weight: 30, arbitrary: fc.array(frame, { minLength: 1, maxLength: 5 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(), frame)
      .map(([n, last]) => [
        ...Array.from({ length: MAX_SUBSCRIPTIONS + 1 }, (_, i) =>
          text(JSON.stringify({ op: 'subscribe', id: `cap-${n}-${i}` })),
        ),
        last,
      ]),
  },
);

const OVERSIZE = 'x'.repeat(MAX_FRAME_BYTES + 1);

function send(c: Conn, f: Frame): number {
  if (f.kind === 'text') c.ws.send(f.text);
  else if (f.kind === 'bytes') c.ws.send(f.bytes, { binary: f.binary });
  else if (f.kind === 'oversize') c.ws.send(OVERSIZE);
  else {
    for (let i = 0; i < f.n; i++) c.ws.send('{"op":"ping"}');
    return f.n;
  }
  return 1;
}

const describeFrame = (f: Frame): string =>
  f.kind === 'text'
    ? `text ${f.text.slice(0, 200)}`
    : f.kind === 'bytes'
      ? `${f.binary ? 'binary' : 'non-UTF-8 text'} ${Buffer.from(f.bytes).toString('hex').slice(0, 80)}`
      : f.kind;

it(`answers ${FUZZ_RUNS} generated frame sequences, or closes with the spec's code`, {
  timeout: fuzzTimeout(FUZZ_RUNS * 2),
}, async () => {
  const outcomes = new Map<string, number>();
  const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  await fuzzAssert(
    fc.asyncProperty(frames, async (frames) => {
      const c = await admitted();
      for (const f of frames) {
        const what = describeFrame(f);
        const before = c.answers;
        const n = send(c, f);
        await within(
          until(c, () => c.answers >= before + n || c.close !== null),
          what,
        );
        expect(c.faults, what).toEqual([]);
        if (c.close) {
          expectCloseClean(c, what);
          count(String(c.close.code));
          return;
        }
        count('answered');
      }
    }),
  );
  current?.ws.close();
  console.log(JSON.stringify({ runs: FUZZ_RUNS, outcomes: Object.fromEntries(outcomes) }));
  expect(outcomes.get('answered')).toBeGreaterThan(0);
  expect(outcomes.get('4005')).toBeGreaterThan(0);

  // The edge still serves: a fresh key subscribes from the start and gets every BTC trade.
  const fresh = connect(keys[KEYS] as string);
  const events: unknown[] = [];
  fresh.ws.on('message', (d: Buffer, bin: boolean) => {
    if (!bin && d[0] === 0x5b) events.push(...(JSON.parse(d.toString()) as unknown[]));
  });
  fresh.ws.once('open', () =>
    fresh.ws.send(JSON.stringify({ op: 'subscribe', id: 'z', coins: ['BTC'], from_seq: 0 })),
  );
  await within(
    until(fresh, () => events.length >= EVENTS / 2 || fresh.close !== null),
    'a fresh connection',
  );
  expect(fresh.close).toBeNull();
  expect(fresh.faults).toEqual([]);
  fresh.ws.close();
});
