/**
 * What one request of the JSON-RPC edge (and one unified SSE request) can cost, with the real
 * guard, on a private nats-server whose JetStream API requests the test counts itself (a plain
 * subscriber on `$JS.API.STREAM.INFO.>` sees every request beside the server):
 * - coins: a subscription of 101 coins is refused (-32602 / HTTP 400 invalid_params); a Basic
 *   batch of 25 md_newFilter calls naming 100 unknown coins each is refused past 500 coins in all
 *   (-32602), and resolving the caller's own coins costs ONE `STREAM.INFO` for the whole request
 *   (it cost two per unknown coin: thousands); an SSE request of 100 unknown coins costs one too;
 * - answers: a batch of md_trades answers at most 20,000 events in all (truncated: true says so,
 *   or -32007 when nothing is left); a batch of md_getFilterChanges at most 8 MiB of events, and
 *   what was left out comes with the next polls, no event lost or repeated.
 */
import type { Subscription } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_COINS_PER_JSONRPC_REQUEST,
  MAX_COINS_PER_SUBSCRIPTION,
  MAX_JSONRPC_ANSWER_BYTES,
  MAX_JSONRPC_ANSWER_EVENTS,
} from '../../contracts/transport-limits.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway, testConfig } from '../support/gateway.ts';
import { post, type RpcAnswer, rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import type { TestNats } from '../support/nats.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: TestJsonRpc;
let sse: TestGateway;

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  edge = await startTestJsonRpc(nats, config, { guard: 'keys' });
  sse = await startTestGateway(server.url, {}, { guard: 'keys' });
}, 60_000);

afterAll(async () => {
  await sse?.close();
  await edge?.close();
  await base?.close();
});

/** Counts the own-coin lookups (`STREAM.INFO` with a subjects filter) made while it listens. */
async function streamInfoProbe() {
  let lookups = 0;
  const sub: Subscription = nats.nc.subscribe('$JS.API.STREAM.INFO.>', {
    callback: (_e, m) => {
      if (new TextDecoder().decode(m.data).includes('subjects_filter')) lookups++;
    },
  });
  await nats.nc.flush();
  return {
    async stop(): Promise<number> {
      await nats.nc.flush();
      sub.unsubscribe();
      return lookups;
    },
  };
}

const unknownCoins = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `Q${tag}${String(i).padStart(4, '0')}`);

describe('coins', () => {
  it('refuses a filter of 101 coins with -32602', async () => {
    const { key } = await accounts.key('basic');
    const res = await post(
      edge.url,
      rpc('md_newFilter', [{ coins: unknownCoins(MAX_COINS_PER_SUBSCRIPTION + 1, 'A') }]),
      { 'x-api-key': key },
    );
    expect(res.json).toMatchObject({ error: { code: -32602 } });
    expect((res.json as RpcAnswer).error?.message).toContain(`at most ${MAX_COINS_PER_SUBSCRIPTION} coins`);
  });

  it('a Basic batch of 25 md_newFilter × 100 unknown coins: one STREAM.INFO, calls past 500 coins -32602', async () => {
    const { key } = await accounts.key('basic');
    const body = Array.from({ length: 25 }, (_, i) =>
      rpc('md_newFilter', [{ coins: unknownCoins(MAX_COINS_PER_SUBSCRIPTION, `B${i}`) }], i),
    );
    const probe = await streamInfoProbe();
    const res = await post(edge.url, body, { 'x-api-key': key });
    const lookups = await probe.stop();
    expect(res.status).toBe(200);
    const answers = res.json as RpcAnswer[];
    const within = MAX_COINS_PER_JSONRPC_REQUEST / MAX_COINS_PER_SUBSCRIPTION;
    expect(answers.filter((a) => a.error?.code === -32003)).toHaveLength(within);
    expect(answers.filter((a) => a.error?.code === -32602)).toHaveLength(25 - within);
    for (const a of answers.filter((x) => x.error?.code === -32602))
      expect(a.error?.data).toMatchObject({ error: 'invalid_params', limit: MAX_COINS_PER_JSONRPC_REQUEST });
    expect(lookups).toBe(1);
  });

  it('an SSE request of 100 unknown coins costs one STREAM.INFO; 101 coins is HTTP 400', async () => {
    const { key } = await accounts.key('pro');
    const probe = await streamInfoProbe();
    const res = await fetch(
      `${sse.url}/api/v1/unified/stream?coin=${unknownCoins(MAX_COINS_PER_SUBSCRIPTION, 'C').join(',')}`,
      { headers: { 'x-api-key': key } },
    );
    const lookups = await probe.stop();
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'coin_not_found' });
    expect(lookups).toBe(1);

    const tooMany = await fetch(
      `${sse.url}/api/v1/unified/stream?coin=${unknownCoins(MAX_COINS_PER_SUBSCRIPTION + 1, 'D').join(',')}`,
      { headers: { 'x-api-key': key } },
    );
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toMatchObject({ error: 'invalid_params' });
  });
});

describe('answers', () => {
  const COIN = 'BNDT';
  const TRADES = 12_000;

  beforeAll(async () => {
    const start = Date.now();
    for (let i = 0; i < TRADES; i += 2_000)
      await publishNow(
        nats.js,
        Array.from({ length: 2_000 }, (_, k) => ({
          ...trade(COIN, i + k),
          timestamp_ms: start,
          capture_time_ms: start,
        })),
      );
  }, 120_000);

  it('a batch of 3 md_trades of 10,000 answers at most 20,000 trades, and says which were cut', async () => {
    const { key } = await accounts.key('quant');
    const now = Date.now();
    const body = [0, 1, 2].map((i) => rpc('md_trades', [COIN, now - 600_000, now, 10_000], i));
    const res = await post(edge.url, body, { 'x-api-key': key });
    expect(res.status).toBe(200);
    const answers = res.json as RpcAnswer[];
    type Trades = { trades: unknown[]; truncated: boolean };
    const results = answers.flatMap((a) => (a.result ? [a.result as Trades] : []));
    const total = results.reduce((n, r) => n + r.trades.length, 0);
    // Without the bound: 30,000 trades in one answer.
    expect(total).toBe(MAX_JSONRPC_ANSWER_EVENTS);
    const cut = answers.filter(
      (a) => a.error?.code === -32007 || (a.result as Trades | undefined)?.truncated === true,
    );
    expect(cut.length).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((x) => x.error))
      expect(a.error?.data).toMatchObject({
        error: 'snapshot_too_large',
        max_events: MAX_JSONRPC_ANSWER_EVENTS,
      });
  });

  it('a batch of md_getFilterChanges answers at most 8 MiB of events; the next polls bring the rest, exactly once', async () => {
    const BOOKS = 1_500;
    const { key } = await accounts.key('quant');
    const auth = { 'x-api-key': key };
    // The coin becomes known to the edge with its first event; the filters start after it.
    await publishNow(nats.js, [book('BNDB', 0, 1)]);
    await eventually(() => edge.tail.health.knows('BNDB'), 10_000, 'the coin known');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(edge.url, rpc('md_newFilter', [{ coins: ['BNDB'] }]), auth);
      ids.push((r.json as RpcAnswer).result as string);
    }
    // Books of 200 levels: about 8 KiB each, 12 MiB for the 1,500 of one filter.
    for (let i = 0; i < BOOKS; i += 250)
      await publishNow(
        nats.js,
        Array.from({ length: 250 }, (_, k) => book('BNDB', 1 + i + k, 200)),
      );
    const seen = ids.map(() => new Set<number>());
    let first = true;
    for (let round = 0; round < 20; round++) {
      const res = await post(
        edge.url,
        ids.map((id, i) => rpc('md_getFilterChanges', [id], i)),
        auth,
      );
      const answers = res.json as RpcAnswer[];
      const events = answers.flatMap((a) => (a.result as { seq: number }[] | undefined) ?? []);
      const eventBytes = answers
        .flatMap((a) => (a.result as unknown[] | undefined) ?? [])
        .reduce((n: number, e) => n + JSON.stringify(e).length, 0);
      // Without the bound the first poll answered all 4,500 books (about 36 MiB) in one string.
      expect(eventBytes).toBeLessThanOrEqual(MAX_JSONRPC_ANSWER_BYTES);
      if (first) expect(events.length).toBeLessThan(3 * BOOKS);
      first = false;
      answers.forEach((a, i) => {
        if (a.error) expect(a.error.data).toMatchObject({ error: 'snapshot_too_large' });
        for (const ev of (a.result as { seq: number }[] | undefined) ?? []) {
          expect(seen[i]?.has(ev.seq)).toBe(false);
          seen[i]?.add(ev.seq);
        }
      });
      if (seen.every((s) => s.size >= BOOKS) && events.length === 0) break;
    }
    expect(seen.map((s) => s.size)).toEqual([BOOKS, BOOKS, BOOKS]);
  }, 120_000);
});

describe('own events', () => {
  /** Counts the JetStream API requests about `OWN` (its tail's pulls aside) made while it listens. */
  async function ownRequestProbe() {
    const seen: string[] = [];
    const sub: Subscription = nats.nc.subscribe('$JS.API.>', {
      callback: (_e, m) => {
        const t = m.subject.split('.');
        if (t.includes('OWN') && !m.subject.includes('.MSG.NEXT.')) seen.push(m.subject);
      },
    });
    await nats.nc.flush();
    return {
      async stop(): Promise<string[]> {
        await nats.nc.flush();
        sub.unsubscribe();
        return seen;
      },
    };
  }

  it('a caller without an account (the open guard) costs OWN no request; one with an account reads it', async () => {
    const open = await startTestJsonRpc(nats, config, { guard: 'open' });
    try {
      await publishNow(nats.js, [trade('BTC', 1)]);
      const { key } = await accounts.key('quant');
      const now = Date.now();
      const calls = async (url: string, headers: Record<string, string>) => {
        const made = await post(url, rpc('md_newFilter', [{ coins: ['BTC'], last_event_id: 1 }]), headers);
        const id = (made.json as RpcAnswer).result as string;
        const answers = await post(
          url,
          [rpc('md_trades', ['BTC', now - 60_000, now], 1), rpc('md_getFilterChanges', [id], 2)],
          headers,
        );
        for (const a of answers.json as RpcAnswer[]) expect(a.error, JSON.stringify(a.error)).toBeUndefined();
      };
      const anonymous = await ownRequestProbe();
      await calls(open.url, {});
      expect(await anonymous.stop()).toEqual([]);
      const withAccount = await ownRequestProbe();
      await calls(edge.url, { 'x-api-key': key });
      expect((await withAccount.stop()).length).toBeGreaterThan(0);
    } finally {
      await open.close();
    }
  });
});
