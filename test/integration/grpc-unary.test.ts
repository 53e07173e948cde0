/**
 * The gRPC edge's unary methods and statuses, with a real @grpc/grpc-js client generated from
 * contracts/proto/price.proto against the edge in this process (real guard, real accounts, a
 * private nats-server): GetMidPrice, GetBook and GetBlockNumber answer from the data plane; every
 * call has `x-request-id` in its headers; each refusal is the catalogue's status with
 * `x-error-code` and `x-request-id` trailers, and RESOURCE_EXHAUSTED (rate limit and the
 * concurrent-stream cap) also `retry-after-ms` and `x-ratelimit-remaining`.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import {
  collect,
  keyMetadata,
  type PriceClient,
  priceClient,
  startTestGrpc,
  type TestGrpc,
  trailers,
  unary,
} from '../support/grpc.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let us: TestGrpc;
let jp: TestGrpc;
let client: PriceClient;
let jpClient: PriceClient;
let pro: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 400, { booksEvery: 3 });
  while (publisher.published() < 20) await new Promise((r) => setTimeout(r, 10));
  await publisher.stop();
  [us, jp] = await Promise.all([startTestGrpc(nats, config, 'us'), startTestGrpc(nats, config, 'jp')]);
  client = priceClient(us.target);
  jpClient = priceClient(jp.target);
  pro = (await accounts.key('pro')).key;
}, 60_000);

afterAll(async () => {
  client?.close();
  jpClient?.close();
  await us?.close();
  await jp?.close();
  await base?.close();
});

describe('methods', () => {
  it('GetMidPrice answers the newest book of the coin, x-request-id in its headers', async () => {
    const last = await eventually(async () => {
      const r = await unary(client, 'GetMidPrice', { coin: 'btc' }, keyMetadata(pro));
      return r.value ? r : null;
    });
    expect(last.value).toMatchObject({ coin: 'BTC', source: 'synthetic' });
    const mid = last.value as Record<string, number>;
    expect(mid.price).toBeCloseTo(((mid.best_bid as number) + (mid.best_ask as number)) / 2);
    expect(mid.seq).toBeGreaterThan(0);
    expect(mid.publish_us).toBeGreaterThan(0);
    expect(last.headers?.get('x-request-id')[0]).toMatch(/^req_/);
    const stored = await nats.jsm.streams.getMessage('MD', { seq: mid.seq as number });
    expect(stored?.subject).toBe('md.synthetic.BTC.book');
  });

  it('GetBook cuts each side to depth', async () => {
    const r = await unary(client, 'GetBook', { coin: 'ETH', depth: 3 }, keyMetadata(pro));
    const book = r.value as { bids: unknown[]; asks: unknown[]; seq: number; coin: string };
    expect(book.coin).toBe('ETH');
    expect(book.bids).toHaveLength(3);
    expect(book.asks).toHaveLength(3);
    const all = await unary(client, 'GetBook', { coin: 'ETH' }, keyMetadata(pro));
    expect((all.value as { bids: unknown[] }).bids).toHaveLength(10);
  });

  it('GetBlockNumber is the MD stream last sequence, in decimal and hex', async () => {
    const last = await lastSeq(nats);
    const r = await eventually(async () => {
      const x = await unary(client, 'GetBlockNumber', {}, keyMetadata(pro));
      return x.value?.number === last ? x : null;
    });
    expect(r.value?.hex).toBe(`0x${last.toString(16)}`);
  });

  it('keeps a well-formed x-request-id the client sends', async () => {
    const r = await unary(
      client,
      'GetBlockNumber',
      {},
      keyMetadata(pro, { 'x-request-id': 'client-req-0001' }),
    );
    expect(r.headers?.get('x-request-id')).toEqual(['client-req-0001']);
  });
});

describe('statuses, each with x-error-code and x-request-id trailers', () => {
  const expectStatus = (r: Awaited<ReturnType<typeof unary>>, code: status, errorCode: string) => {
    expect(r.error?.code).toBe(code);
    const t = trailers(r.error);
    expect(t['x-error-code']).toBe(errorCode);
    expect(t['x-request-id']).toMatch(/^req_/);
    expect(r.headers?.get('x-request-id')[0]).toBe(t['x-request-id']);
  };

  it('UNAUTHENTICATED without a key, with a bad key, and with a Bearer token that is not a key', async () => {
    expectStatus(
      await unary(client, 'GetMidPrice', { coin: 'BTC' }, keyMetadata(null)),
      status.UNAUTHENTICATED,
      'invalid_key',
    );
    expectStatus(
      await unary(client, 'GetMidPrice', { coin: 'BTC' }, keyMetadata('mdp_nope')),
      status.UNAUTHENTICATED,
      'invalid_key',
    );
    const bearer = keyMetadata(null, { authorization: `Bearer ${pro}` });
    expect((await unary(client, 'GetBlockNumber', {}, bearer)).value).toBeDefined();
  });

  it('PERMISSION_DENIED for Basic, for JP without Japan access, and for a source outside the chain scope', async () => {
    const basic = (await accounts.key('basic')).key;
    expectStatus(
      await unary(client, 'GetBlockNumber', {}, keyMetadata(basic)),
      status.PERMISSION_DENIED,
      'tier_restricted',
    );
    expectStatus(
      await unary(jpClient, 'GetBlockNumber', {}, keyMetadata(pro)),
      status.PERMISSION_DENIED,
      'tier_restricted',
    );
    const withJp = (await accounts.key('pro', { jp: true })).key;
    expect((await unary(jpClient, 'GetBlockNumber', {}, keyMetadata(withJp))).value).toBeDefined();
    const chain = (await accounts.key('pro', { scopes: ['stream:read', 'chain:hyperliquid'] })).key;
    expectStatus(
      await unary(client, 'GetMidPrice', { coin: 'BTC', source: 'synthetic' }, keyMetadata(chain)),
      status.PERMISSION_DENIED,
      'forbidden',
    );
  });

  it('INVALID_ARGUMENT, NOT_FOUND and OUT_OF_RANGE', async () => {
    const md = keyMetadata(pro);
    expectStatus(await unary(client, 'GetMidPrice', {}, md), status.INVALID_ARGUMENT, 'invalid_params');
    expectStatus(
      await unary(client, 'GetBook', { coin: 'BTC', depth: 0 }, md),
      status.INVALID_ARGUMENT,
      'invalid_params',
    );
    expectStatus(
      await unary(client, 'GetMidPrice', { coin: 'NOPE' }, md),
      status.NOT_FOUND,
      'coin_not_found',
    );
    expectStatus(
      await unary(client, 'GetBook', { coin: 'BTC', depth: 1001 }, md),
      status.OUT_OF_RANGE,
      'snapshot_too_large',
    );
    const streamed = collect(client.StreamEvents({ event_types: ['quote'] }, md));
    const err = await streamed.ended;
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(streamed.messages).toEqual([]);
  });

  it('RESOURCE_EXHAUSTED past the rate limit, with retry-after-ms (the next token, in ms) and x-ratelimit-remaining', async () => {
    // Basic's burst is 25 and refused calls count: the 26th call within the burst window is rate limited.
    const basic = (await accounts.key('basic')).key;
    let limited: Awaited<ReturnType<typeof unary>> | null = null;
    for (let i = 0; i < 40 && !limited; i++) {
      const r = await unary(client, 'GetBlockNumber', {}, keyMetadata(basic));
      if (r.error?.code === status.RESOURCE_EXHAUSTED) limited = r;
    }
    expect(limited).not.toBeNull();
    expectStatus(limited as never, status.RESOURCE_EXHAUSTED, 'rate_limited');
    const t = trailers(limited?.error);
    // Basic refills 10 tokens a second: the next one is about 100 ms away, not a whole second.
    expect(Number(t['retry-after-ms'])).toBeGreaterThan(0);
    expect(Number(t['retry-after-ms'])).toBeLessThan(1_000);
    expect(t['x-ratelimit-remaining']).toBe('0');
  });

  it('RESOURCE_EXHAUSTED past the concurrent-stream cap (Pro: 10); a message-free refusal', async () => {
    const key = (await accounts.key('pro')).key;
    const open = Array.from({ length: 10 }, () =>
      collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(key))),
    );
    await Promise.all(open.map((s) => new Promise((r) => s.call.once('metadata', r))));
    const refused = collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(key)));
    const err = await refused.ended;
    expect(err?.code).toBe(status.RESOURCE_EXHAUSTED);
    const t = trailers(err ?? undefined);
    expect(t['x-error-code']).toBe('subscription_limit');
    expect(Number(t['retry-after-ms'])).toBeGreaterThan(0);
    expect(t['x-ratelimit-remaining']).toBe('0');
    expect(refused.messages).toEqual([]);
    for (const s of open) s.call.cancel();
    const cancelled = await Promise.all(open.map((s) => s.ended));
    expect(cancelled.map((e) => e?.code)).toEqual(open.map(() => status.CANCELLED));
  });
});
