/**
 * Fuzzing the gRPC edge's request messages through the real edge (built in this process as
 * `gateway grpc` builds it: the real guard and accounts, a real nats-server with trades and
 * books), for every method of price.PriceService:
 * - well-typed requests with adversarial values, serialized with contracts/proto/price.proto: any
 *   coin, depth, coins list, event types, sources, `after_seq` and `heartbeat_s` extremes, and for
 *   the bidirectional Stream whole ClientMessage sequences (open or not first);
 * - the bidirectional Stream on its own with long and repeated coin lists: hundreds of distinct
 *   coins, thousands of repeats of a few, lists around the per-subscription cap, and the same
 *   subscribe / unsubscribe sent many times in a row (past the stream's pending-message bound);
 * - raw bytes as the request body (a generic client whose serializer passes Buffers through):
 *   random bytes, valid encodings cut short or with a byte flipped, lengths that overrun.
 * Keys vary (Quant, Pro, Basic, a Quant key scoped to `chain:hyperliquid` + `stream:read`, none,
 * unknown) and so does `x-request-id`. A failure names its replay seed (fuzz.ts `fuzzAssert`).
 *
 * The property: a result, an open stream, or a clear status (never INTERNAL, UNKNOWN or
 * DATA_LOSS) whose details are non-empty and hold no stack trace, with the catalogue's
 * `x-error-code` trailer on every catalogue status; never a hang; and the edge answers a plain
 * call afterwards.
 */
import {
  Client,
  credentials,
  Metadata,
  type MethodDefinition,
  type ServiceError,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import fc from 'fast-check';
import { protoPath as HEALTH_PROTO_PATH } from 'grpc-health-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LOADER_OPTIONS, packageDefinition, SERVICE_NAME } from '../../gateways/grpc/proto.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { keyMetadata, startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { expectClean, FUZZ_RUNS, fuzzAssert, fuzzText, fuzzTimeout, within } from './fuzz.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: TestGrpc;
/** Calls without a valid key go to an edge of their own: they soon exhaust the address's failed-key budget. */
let keyless: TestGrpc;
let client: Client;
let keylessClient: Client;
const keys: Record<string, string | null> = { none: null, unknown: 'mdk_live_notakeyatall0000000000' };

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 400, { booksEvery: 3 });
  while (publisher.published() < 30) await new Promise((r) => setTimeout(r, 10));
  await publisher.stop();
  [edge, keyless] = await Promise.all([startTestGrpc(nats, config, 'us'), startTestGrpc(nats, config, 'us')]);
  client = new Client(edge.target, credentials.createInsecure());
  keylessClient = new Client(keyless.target, credentials.createInsecure());
  for (const plan of ['quant', 'pro', 'basic'] as const) keys[plan] = (await accounts.key(plan)).key;
  keys.chain = (await accounts.key('quant', { scopes: ['chain:hyperliquid', 'stream:read'] })).key;
}, 60_000);

afterAll(async () => {
  client?.close();
  keylessClient?.close();
  await edge?.close();
  await keyless?.close();
  await base?.close();
});

// ---------------------------------------------------------------------------------------------
// Calls through a generic client: the proto's codecs, or Buffers as they are.

type AnyMethod = MethodDefinition<unknown, unknown>;
const methods: Record<string, AnyMethod> = {
  ...(packageDefinition[SERVICE_NAME] as unknown as Record<string, AnyMethod>),
  HealthCheck: (
    loadSync(HEALTH_PROTO_PATH, LOADER_OPTIONS)['grpc.health.v1.Health'] as unknown as Record<
      string,
      AnyMethod
    >
  ).Check as AnyMethod,
};
const pathOf = (m: string) => (methods[m] as AnyMethod).path;
const raw = (b: unknown): Buffer => b as Buffer;
const serializerFor = (m: string, isRaw: boolean) =>
  isRaw ? raw : ((methods[m] as AnyMethod).requestSerialize as (v: unknown) => Buffer);
const decoderOf = (m: string) => (methods[m] as AnyMethod).responseDeserialize as (b: Buffer) => unknown;

/** What a call ended with: a status (OK for a unary answer or a stream we cancelled after it opened). */
type Ended = { status: StatusObject; messages: unknown[] };

function unaryCall(
  client: Client,
  method: string,
  isRaw: boolean,
  request: unknown,
  md: Metadata,
): Promise<Ended> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      pathOf(method),
      serializerFor(method, isRaw),
      decoderOf(method),
      request,
      md,
      (err: ServiceError | null, value: unknown) =>
        resolve(
          err
            ? { status: err, messages: [] }
            : { status: { code: Status.OK, details: 'OK', metadata: new Metadata() }, messages: [value] },
        ),
    );
  });
}

/**
 * A plain GetBlockNumber on the same connection: once it is answered, a status the server sent
 * for an earlier stream right after its headers has arrived too (frames of one connection keep
 * their order).
 */
async function probe(client: Client): Promise<Ended> {
  return unaryCall(client, 'GetBlockNumber', false, {}, keyMetadata(keys.quant as string));
}

/** A server stream: its status if it fails, else OK once it is open (then cancelled). */
async function serverStream(
  client: Client,
  method: string,
  isRaw: boolean,
  request: unknown,
  md: Metadata,
): Promise<Ended> {
  const call = client.makeServerStreamRequest(
    pathOf(method),
    serializerFor(method, isRaw),
    decoderOf(method),
    request,
    md,
  );
  const messages: unknown[] = [];
  call.on('data', (m: unknown) => messages.push(m));
  call.on('error', () => {});
  const status = new Promise<StatusObject>((resolve) => call.on('status', resolve));
  const opened = await Promise.race([
    new Promise<boolean>((resolve) => call.on('metadata', () => resolve(true))),
    status.then(() => false),
  ]);
  if (!opened) return { status: await status, messages };
  const p = await probe(client);
  expectCleanStatus(p, `probe after ${method}`);
  call.cancel();
  const s = await status;
  return { status: s.code === Status.CANCELLED ? { ...s, code: Status.OK } : s, messages };
}

const PING_END = { ping: { id: 'end' } };
const encodeClientMessage = serializerFor('Stream', false);

/** The bidirectional Stream: the parts, then a ping; its status, or OK once that ping is answered. */
async function bidi(client: Client, parts: unknown[], isRaw: boolean, md: Metadata): Promise<Ended> {
  const call = client.makeBidiStreamRequest(pathOf('Stream'), raw, decoderOf('Stream'), md);
  const messages: unknown[] = [];
  let ponged: () => void = () => {};
  const pong = new Promise<void>((resolve) => {
    ponged = resolve;
  });
  call.on('data', (m: { pong?: { id?: string } }) => {
    messages.push(m);
    if (m.pong?.id === 'end') ponged();
  });
  call.on('error', () => {});
  const status = new Promise<StatusObject>((resolve) => call.on('status', resolve));
  for (const p of parts) call.write(isRaw && Buffer.isBuffer(p) ? p : encodeClientMessage(p));
  call.write(encodeClientMessage(PING_END));
  const answered = await Promise.race([pong.then(() => true), status.then(() => false)]);
  if (!answered) return { status: await status, messages };
  call.cancel();
  const s = await status;
  return { status: s.code === Status.CANCELLED ? { ...s, code: Status.OK } : s, messages };
}

// ---------------------------------------------------------------------------------------------
// The property.

const FORBIDDEN = new Set([Status.INTERNAL, Status.UNKNOWN, Status.DATA_LOSS]);
/** Statuses the edge maps from its error catalogue: each carries `x-error-code` (not so grpc.health.v1's NOT_FOUND). */
const CATALOGUED = new Set([
  Status.INVALID_ARGUMENT,
  Status.OUT_OF_RANGE,
  Status.NOT_FOUND,
  Status.PERMISSION_DENIED,
  Status.UNAUTHENTICATED,
]);

function expectCleanStatus({ status, messages }: Ended, what: string): void {
  const trailers = Object.fromEntries(
    Object.entries(status.metadata?.getMap() ?? {}).map(([k, v]) => [k, String(v)]),
  );
  const said = `${what} → ${Status[status.code]} ${status.details} ${JSON.stringify(trailers)}`;
  expect(FORBIDDEN.has(status.code), said).toBe(false);
  expectClean(200, `${status.details}\n${JSON.stringify(trailers)}`, said);
  for (const m of messages) expectClean(200, JSON.stringify(m), `${said}: message`);
  if (status.code === Status.OK) return;
  expect(status.details.length, said).toBeGreaterThan(0);
  if (CATALOGUED.has(status.code) && !what.startsWith('HealthCheck'))
    expect(trailers['x-error-code'], said).toBeTruthy();
}

// ---------------------------------------------------------------------------------------------
// What clients send.

const coin = fc.oneof(
  fc.constantFrom(
    'BTC',
    'btc',
    'ETH',
    'SOL',
    'NOPE1',
    '',
    ' BTC',
    'chain:1',
    'É',
    '\u{1F600}',
    'x'.repeat(300),
  ),
  fuzzText(),
);
const coins = fc.oneof(
  fc.array(coin, { maxLength: 5 }),
  fc.constantFrom(Array(5_000).fill('BTC'), Array(2_000).fill('NOPE')),
);
const source = fc.oneof(fc.constantFrom('synthetic', 'binance', 'hyperliquid', 'nope', ''), fuzzText());
const int32 = fc.oneof(fc.integer(), fc.constantFrom(0, 1, -1, 1000, 1001, 2 ** 31 - 1, -(2 ** 31)));
const int64 = fc.oneof(
  fc.nat(200),
  fc.constantFrom(0, -1, 2 ** 53, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 62),
  fc.maxSafeInteger(),
);
const uint32 = fc.oneof(fc.nat(400), fc.constantFrom(0, 1, 300, 301, 2 ** 32 - 1));
const subscription = fc.record(
  {
    coins,
    event_types: fc.array(fc.oneof(fc.constantFrom('trade', 'book', 'funding', ''), fuzzText()), {
      maxLength: 3,
    }),
    sources: fc.array(source, { maxLength: 3 }),
    after_seq: int64,
  },
  { requiredKeys: [] },
);
const clientMessage = fc.oneof(
  subscription.map((open) => ({ open })),
  subscription.map((subscribe) => ({ subscribe })),
  subscription.map((unsubscribe) => ({ unsubscribe })),
  fc.string().map((id) => ({ ping: { id } })),
  fc.constant({}),
);

type Request = { method: string; isRaw: boolean; body: unknown };

const typed: fc.Arbitrary<Request> = fc
  .oneof(
    fc
      .record({ coin, source: fc.option(source, { nil: undefined }) })
      .map((body) => ({ method: 'GetMidPrice', body })),
    fc
      .record({
        coin,
        depth: fc.option(int32, { nil: undefined }),
        source: fc.option(source, { nil: undefined }),
      })
      .map((body) => ({ method: 'GetBook', body })),
    fc.constant({ method: 'GetBlockNumber', body: {} }),
    fc
      .oneof(fc.constantFrom('', SERVICE_NAME, 'nope'), fuzzText())
      .map((service) => ({ method: 'HealthCheck', body: { service } })),
    fc
      .record({ coins, heartbeat_s: uint32 }, { requiredKeys: [] })
      .map((body) => ({ method: 'StreamMids', body })),
    subscription.map((body) => ({ method: 'StreamEvents', body })),
    fc
      .tuple(fc.boolean(), subscription, fc.array(clientMessage, { maxLength: 4 }))
      .map(([openFirst, open, rest]) => ({ method: 'Stream', body: openFirst ? [{ open }, ...rest] : rest })),
  )
  .map((r) => ({ ...r, isRaw: false }));

/** Undecodable (or oddly decodable) bytes: random, valid encodings cut or flipped, overrunning lengths. */
const bytes: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.tuple(subscription, fc.nat(), fc.nat(255)).map(([s, at, x]) => {
    const b = Buffer.from(encodeClientMessage({ open: s }));
    if (b.length === 0) return Buffer.from([x]);
    const i = at % b.length;
    return at % 2 ? b.subarray(0, i) : Buffer.concat([b.subarray(0, i), Buffer.from([x]), b.subarray(i + 1)]);
  }),
  fc.constantFrom(
    Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
    Buffer.from([0x0a, 0x05, 0x42]),
    Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
    Buffer.from([0x0f]),
    Buffer.from([0x0b, 0x0c]),
    Buffer.from([0x0a, 0x02, 0xc3, 0x28]),
    Buffer.from([0xff]),
  ),
);

const METHODS = ['GetMidPrice', 'GetBook', 'GetBlockNumber', 'StreamMids', 'StreamEvents', 'Stream'];
const rawRequest: fc.Arbitrary<Request> = fc
  .oneof(
    fc.tuple(fc.constantFrom(...METHODS.slice(0, 5)), bytes).map(([method, body]) => ({ method, body })),
    fc
      .array(fc.oneof(bytes, clientMessage), { minLength: 1, maxLength: 4 })
      .map((body) => ({ method: 'Stream', body })),
  )
  .map((r) => ({ ...r, isRaw: true }));

const requestId = fc.option(
  fc.string({ maxLength: 80 }).map((s) => s.replace(/[^\x20-\x7e]/g, '').trim()),
  { nil: undefined },
);
const who = fc.constantFrom('quant', 'quant', 'quant', 'quant', 'pro', 'basic', 'none', 'unknown');

function call(client: Client, r: Request, md: Metadata): Promise<Ended> {
  if (r.method === 'Stream') return bidi(client, r.body as unknown[], r.isRaw, md);
  if (r.method.startsWith('Stream')) return serverStream(client, r.method, r.isRaw, r.body, md);
  return unaryCall(client, r.method, r.isRaw, r.body, md);
}

const describeRequest = (r: Request, plan: string): string =>
  `${r.method} ${r.isRaw ? 'raw' : 'typed'} (${plan}) ${JSON.stringify(r.body, (_, v) =>
    v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v,
  ).slice(0, 300)}`;

it(`answers ${FUZZ_RUNS} generated requests with a result or a clear status`, {
  timeout: fuzzTimeout(FUZZ_RUNS * 2),
}, async () => {
  const outcomes = new Map<string, number>();
  await fuzzAssert(
    fc.asyncProperty(fc.oneof(typed, rawRequest), who, requestId, async (r, plan, rid) => {
      const what = describeRequest(r, plan);
      const md = keyMetadata(keys[plan] ?? null, rid ? { 'x-request-id': rid } : {});
      const via = plan === 'none' || plan === 'unknown' ? keylessClient : client;
      const ended = await within(call(via, r, md), what);
      const k = `${r.isRaw ? 'raw' : 'typed'} ${Status[ended.status.code]}`;
      outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
      expectCleanStatus(ended, what);
    }),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, outcomes: Object.fromEntries(outcomes) }));
  expect(outcomes.get('typed OK')).toBeGreaterThan(0);
  expect(outcomes.get('typed INVALID_ARGUMENT')).toBeGreaterThan(0);

  // The edge still answers.
  const after = await within(
    unaryCall(client, 'GetMidPrice', false, { coin: 'BTC' }, keyMetadata(keys.quant as string)),
    'GetMidPrice after the run',
  );
  expect(after.status.code).toBe(Status.OK);
  expect(after.messages).toHaveLength(1);
});

// ---------------------------------------------------------------------------------------------
// The bidirectional Stream with long and repeated coin lists.

const distinct = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `C${from + i}`);
/** Lists of up to 100 entries (the cap, counting repeats) mostly, and lists past it; long in both ways. */
const longCoins = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.oneof(
      fc.nat(100).map((n) => distinct(n)),
      fc.array(fc.constantFrom('BTC', 'ETH', 'btc', 'SOL', 'NOPE1'), { minLength: 20, maxLength: 100 }),
      fc
        .tuple(fc.array(coin, { minLength: 1, maxLength: 5 }), fc.nat(100))
        .map(([cs, n]) => Array.from({ length: n }, (_, i) => cs[i % cs.length] as string)),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.array(
        fc.nat(5_000).map((i) => `C${i}`),
        { minLength: 101, maxLength: 300 },
      ),
      fc.array(fc.constantFrom('BTC', 'ETH', 'btc', 'SOL', 'NOPE1'), { minLength: 101, maxLength: 3_000 }),
      fc.constantFrom(Array(5_000).fill('BTC'), [...distinct(100), 'BTC'], ['BTC', ...distinct(100), 'BTC']),
    ),
  },
);
const longSubscription = fc.record(
  {
    coins: longCoins,
    event_types: fc.subarray(['trade', 'book']),
    sources: fc.subarray(['synthetic', 'hyperliquid', 'binance']),
    after_seq: fc.oneof(fc.nat(40), fc.constant(0)),
  },
  { requiredKeys: ['coins'] },
);
/** One control message, or the same one sent 2 to 60 times in a row. */
const repeated = fc
  .tuple(
    fc.oneof(
      longSubscription.map((subscribe) => ({ subscribe })),
      longSubscription.map((unsubscribe) => ({ unsubscribe })),
      fc.string({ maxLength: 8 }).map((id) => ({ ping: { id } })),
    ),
    fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 60 })),
  )
  .map(([m, n]) => Array<unknown>(n).fill(m));
/** Mostly a plain open (the stream is up), so that the long lists reach subscribe and unsubscribe. */
const opening = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      { coins: fc.subarray(['BTC', 'ETH', 'SOL']), after_seq: fc.nat(40) },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: longSubscription },
);
const longSession = fc
  .tuple(opening, fc.array(repeated, { minLength: 1, maxLength: 4 }))
  .map(([open, rest]) => [{ open }, ...rest.flat()]);
const streamWho = fc.constantFrom('quant', 'quant', 'quant', 'chain', 'pro');
/** Sessions of hundreds of messages and coins: fewer of them than inputs of the other fuzzers. */
const STREAM_RUNS = Math.max(20, Math.ceil(FUZZ_RUNS / 5));

it(`Stream: ${STREAM_RUNS} sessions with long and repeated coin lists end with a result or a clear status`, {
  timeout: fuzzTimeout(STREAM_RUNS * 20),
}, async () => {
  const outcomes = new Map<string, number>();
  await fuzzAssert(
    fc.asyncProperty(longSession, streamWho, async (parts, plan) => {
      const summary = parts.map((m) => {
        const [kind, v] = Object.entries(m as Record<string, { coins?: string[] }>)[0] ?? ['?', {}];
        return `${kind}(${v.coins?.length ?? '-'} coins, ${new Set(v.coins).size} distinct)`;
      });
      const what = `Stream (${plan}) ${parts.length} messages: ${summary.slice(0, 12).join(' ')}`;
      const ended = await within(bidi(client, parts, false, keyMetadata(keys[plan] as string)), what);
      const k = Status[ended.status.code] as string;
      outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
      expectCleanStatus(ended, what);
    }),
    STREAM_RUNS,
  );
  console.log(JSON.stringify({ runs: STREAM_RUNS, outcomes: Object.fromEntries(outcomes) }));
  expect(outcomes.get('OK')).toBeGreaterThan(0);

  const after = await within(probe(client), 'GetBlockNumber after the sessions');
  expect(after.status.code).toBe(Status.OK);
});

it('an undecodable body is INVALID_ARGUMENT invalid_params on every kind of method, the bidi stream after open too', async () => {
  const md = () => keyMetadata(keys.quant as string, { 'x-request-id': 'fuzz-undecodable-1' });
  const junk = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  const ended = [
    await unaryCall(client, 'GetBook', true, junk, md()),
    await serverStream(client, 'StreamEvents', true, junk, md()),
    await bidi(client, [junk], true, md()),
    await bidi(client, [{ open: { coins: ['BTC'] } }, junk], true, md()),
  ];
  for (const [i, e] of ended.entries()) {
    expect(e.status.code, `call ${i}: ${e.status.details}`).toBe(Status.INVALID_ARGUMENT);
    expect(e.status.metadata.get('x-error-code')).toEqual(['invalid_params']);
    expect(e.status.metadata.get('x-request-id')).toEqual(['fuzz-undecodable-1']);
  }
});
