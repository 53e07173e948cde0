/**
 * Derived bars and snapshots (issue 31 part 4) on a real nats-server: the pure builder over `MD`
 * read twice gives the same bytes, equal to a batch computation written apart
 * (test/support/derived-reference.ts); the producer stores exactly those in `DERIVED`; it resumes
 * mid-way from what `DERIVED` holds without publishing anything again; a late event past the grace
 * is counted in the first open bar, and a quiet coin's bar closes on its source's other coins.
 */
import { afterEach, expect, it } from 'vitest';
import { DERIVED_GRACE_MS, DerivedEvent } from '../../contracts/derived.ts';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import type { BookEvent, MarketEvent, Source, TradeEvent } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { DERIVED_ALL, MD_ALL } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { DerivedBuilder } from '../../producers/derived/derived-builder.ts';
import { readResumePoint } from '../../producers/derived/resume.ts';
import { type DerivedRunner, startDerivedRunner } from '../../producers/derived/runner.ts';
import { derivedKey, readAll, referenceDerived, type Stored } from '../support/derived-reference.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { seededRandom } from '../support/seeded-random.ts';

const T0 = 1_767_225_600_000; // an hour boundary
const HOUR = 3_600_000;
const log = createLogger('silent');

let server: TestNats | null = null;
let nats: Nats | null = null;
let runner: DerivedRunner | null = null;

afterEach(async () => {
  await runner?.stop();
  await nats?.nc.close();
  await server?.cleanup();
  runner = null;
  nats = null;
  server = null;
});

async function freshNats(): Promise<Nats> {
  server = await startTestNats();
  nats = await connectTestNats(server.url, testConfig());
  return nats;
}

type Item = { subject: string; event: MarketEvent };

const trade = (
  source: Source,
  symbol: string,
  ts: number,
  price: number,
  size: number,
  i: number,
): TradeEvent => ({
  event_type: 'trade',
  source,
  symbol,
  timestamp_ms: ts,
  capture_time_ms: ts,
  side: i % 2 ? 'buy' : 'sell',
  price,
  size,
  trade_id: `trd_${source}_${symbol}_${i}`,
  notional_usd: price * size,
});

function book(
  source: Source,
  symbol: string,
  ts: number,
  bids: { price: number; size: number }[],
  asks: { price: number; size: number }[],
  isSnapshot: boolean | undefined,
): BookEvent {
  return {
    event_type: 'book',
    source,
    symbol,
    timestamp_ms: ts,
    capture_time_ms: ts,
    bids,
    asks,
    best_bid: null,
    best_ask: null,
    mid_price: null,
    spread_bps: null,
    ...(isSnapshot === undefined ? {} : { is_snapshot: isSnapshot }),
  };
}

/**
 * A known history (~1 s between events by default): two sources, a busy and a quiet coin, full books (synthetic) and
 * diffs (binance), 6 % late events (up to 8 s back, past the grace for most), and an account's own
 * events (on `OWN`, published in the same run), which the producer must never read.
 */
function history(random: () => number, count: number, stepMs = 2_000): Item[] {
  const coins: [Source, string, number][] = [
    ['synthetic', 'BTC', 0.45],
    ['synthetic', 'ETH', 0.3],
    ['binance', 'BTC', 0.22],
    ['binance', 'SOL', 0.03],
  ];
  const mids = new Map<string, number>([
    ['BTC', 90_000],
    ['ETH', 3_000],
    ['SOL', 150],
  ]);
  const items: Item[] = [];
  let t = T0 + 50;
  const level = (mid: number, k: number, sign: number) => ({
    price: Math.round((mid + sign * (k + 1) * 0.5) * 100) / 100,
    size: Math.round(random() * 1000) / 100 + 0.01,
  });
  const push = (source: Source, symbol: string, ts: number, i: number, kind: 'trade' | 'book') => {
    const mid = (mids.get(symbol) as number) * (1 + (random() - 0.5) * 0.002);
    if (kind === 'trade') {
      const e = trade(
        source,
        symbol,
        ts,
        Math.round(mid * 100) / 100,
        Math.round(random() * 500) / 1000 + 0.001,
        i,
      );
      items.push({ subject: `md.${source}.${symbol}.trade`, event: e });
      if (random() < 0.02)
        items.push({ subject: `own.acc_other.${source}.${symbol}.trade`, event: { ...e, price: 1 } });
      return;
    }
    if (source === 'synthetic') {
      const n = 3 + Math.floor(random() * 10);
      const side = (sign: number) => Array.from({ length: n }, (_, k) => level(mid, k, sign));
      items.push({
        subject: `md.${source}.${symbol}.book`,
        event: book(source, symbol, ts, side(-1), side(1), undefined),
      });
      return;
    }
    // Binance BTC gets a full book now and then; quiet SOL only its first (as after a connect):
    // its snapshots' base lies far back, where a resume must re-read from.
    const first = !items.some((x) => x.subject === `md.${source}.${symbol}.book`);
    const full = first || (symbol !== 'SOL' && random() < 0.05);
    const side = (sign: number) =>
      full
        ? Array.from({ length: 15 }, (_, k) => level(mid, k, sign))
        : Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
            const l = level(mid, Math.floor(random() * 14), sign);
            return random() < 0.3 ? { ...l, size: 0 } : l;
          });
    items.push({
      subject: `md.${source}.${symbol}.book`,
      event: book(source, symbol, ts, side(-1), side(1), full),
    });
  };
  // Every series starts early (its first 1 h bar closes in the first half of the history).
  coins.forEach(([source, symbol], i) => {
    push(source, symbol, t + i, i, 'trade');
    push(source, symbol, t + i, i, 'book');
  });
  for (let i = coins.length; i < count; i++) {
    t += Math.floor(random() * stepMs);
    let r = random();
    let pick = coins[0] as [Source, string, number];
    for (const c of coins) {
      pick = c;
      r -= c[2];
      if (r < 0) break;
    }
    const [source, symbol] = pick;
    const ts = random() < 0.06 ? t - Math.floor(random() * 8_000) : t;
    push(source, symbol, ts, i, random() < 0.6 ? 'trade' : 'book');
  }
  return items;
}

async function publishAll(n: Nats, items: Item[]): Promise<void> {
  for (let i = 0; i < items.length; i += 500)
    await Promise.all(
      items.slice(i, i + 500).map(({ subject, event }) => n.js.publish(subject, encodeStoredEvent(event))),
    );
}

/** The pure builder over stored events: `<subject>@<start>` → JSON, in emission order. */
function build(md: Stored[]): [string, string][] {
  const builder = new DerivedBuilder();
  const out: [string, string][] = [];
  for (const m of md) {
    const t = m.subject.split('.');
    if (t.length !== 4) continue;
    for (const e of builder.push(m.seq, t[1] as string, t[2] as string, t[3] as string, JSON.parse(m.text))) {
      const subject = `dv.${e.source}.${e.symbol}.${e.event_type}`;
      const text = JSON.stringify(e);
      out.push([derivedKey(subject, text), text]);
    }
  }
  return out;
}

async function storedDerived(n: Nats): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const m of await readAll(n, STREAMS.DERIVED, DERIVED_ALL)) {
    const key = derivedKey(m.subject, m.text);
    if (out.has(key)) throw new Error(`stored twice: ${key}`);
    out.set(key, m.text);
  }
  return out;
}

const same = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/** What `stored` lacks, has in excess, or holds otherwise than `want` (three of each at most). */
function difference(stored: Map<string, string>, want: Map<string, string>): string {
  const missing = [...want.keys()].filter((k) => !stored.has(k));
  const extra = [...stored.keys()].filter((k) => !want.has(k));
  const changed = [...want].filter(([k, v]) => stored.has(k) && stored.get(k) !== v);
  return JSON.stringify({
    stored: stored.size,
    want: want.size,
    missing: missing.slice(0, 3),
    extra: extra.slice(0, 3),
    changed: changed.slice(0, 3).map(([k, v]) => ({ key: k, want: v, stored: stored.get(k) })),
  });
}

/** Waits until DERIVED holds exactly `want`; else fails saying how it differs. */
async function untilStored(n: Nats, want: Map<string, string>, what: string): Promise<Map<string, string>> {
  let last = new Map<string, string>();
  try {
    return await eventually(
      async () => {
        last = await storedDerived(n);
        return same(last, want) && last;
      },
      120_000,
      what,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${difference(last, want)}`);
  }
}

it('the same MD gives the same bars twice, equal to the reference, and the producer stores exactly them', async () => {
  const { random } = seededRandom('derived history');
  const n = await freshNats();
  await publishAll(n, history(random, 5_000));

  const first = build(await readAll(n, STREAMS.MD, MD_ALL));
  const second = build(await readAll(n, STREAMS.MD, MD_ALL));
  expect(second).toEqual(first);
  const reference = referenceDerived(await readAll(n, STREAMS.MD, MD_ALL));
  const built = new Map(first);
  expect(built.size).toBe(first.length); // no span emitted twice
  expect([...built.keys()].sort()).toEqual([...reference.keys()].sort());
  for (const [k, v] of reference) expect(built.get(k), k).toBe(v);
  for (const v of built.values()) expect(DerivedEvent.safeParse(JSON.parse(v)).error).toBeUndefined();
  // Every kind of every series is there, diff-fed books included.
  for (const kind of ['bar_1s', 'bar_1m', 'bar_1h', 'book_snapshot_10_1s'])
    for (const coin of ['synthetic.BTC', 'synthetic.ETH', 'binance.BTC', 'binance.SOL'])
      expect(
        [...built.keys()].some((k) => k.startsWith(`dv.${coin}.${kind}@`)),
        `${coin} ${kind}`,
      ).toBe(true);

  runner = startDerivedRunner(n, log);
  const stored = await untilStored(n, reference, 'DERIVED holds the reference bars');
  expect(stored.size).toBe(reference.size);
  expect(runner.duplicates()).toBe(0);
}, 300_000);

it('resumes mid-way from what DERIVED holds: nothing lost, nothing published again', async () => {
  const { random } = seededRandom('derived resume');
  const n = await freshNats();
  const items = history(random, 6_000, 4_000); // ~3.3 h
  // Past the second hour: every series has published an hour bar that starts after T0.
  const cut = items.findIndex((x) => x.event.timestamp_ms > T0 + 2 * HOUR + 60_000);
  expect(cut).toBeGreaterThan(0);
  await publishAll(n, items.slice(0, cut));
  runner = startDerivedRunner(n, log);
  const half = referenceDerived(await readAll(n, STREAMS.MD, MD_ALL));
  await untilStored(n, half, 'first half stored');
  await runner.stop();

  // It re-reads from the earliest event a series still needs, not from the start: the first trade
  // of each series' last bar, the full book under each series' last snapshot (a diff-fed book
  // re-read from a diff would lack the levels the diffs did not name; Binance sends a full book
  // only on (re)connect, so its base is often far back).
  const lastSpans = new Map<string, [number, string]>(); // subject → its last span's start and text
  for (const [key, text] of half) {
    const [subject, start] = key.split('@') as [string, string];
    if (Number(start) > (lastSpans.get(subject)?.[0] ?? -1)) lastSpans.set(subject, [Number(start), text]);
  }
  const needed = Math.min(
    ...[...lastSpans.values()].map(([, text]) => {
      const e = JSON.parse(text);
      return e.event_type === 'book_snapshot_10_1s' ? e.base_seq : e.first_seq;
    }),
  );
  expect((await readResumePoint(n)).fromSeq).toBe(needed);

  await publishAll(n, items.slice(cut));
  const md = await readAll(n, STREAMS.MD, MD_ALL);
  const full = referenceDerived(md);
  runner = startDerivedRunner(n, log);
  await untilStored(n, full, 'whole history stored');
  expect(runner.duplicates()).toBe(0);
}, 300_000);

it('a late event past the grace goes to the first open bar; a quiet coin closes on its source moving on', async () => {
  const n = await freshNats();
  const seqs: number[] = [];
  const put = async (symbol: string, ts: number, price: number) => {
    const ack = await n.js.publish(
      `md.synthetic.${symbol}.trade`,
      encodeStoredEvent(trade('synthetic', symbol, ts, price, 1, seqs.length)),
    );
    seqs.push(ack.seq);
  };
  const bar = async (symbol: string, kind: string, start: number) => {
    const all = await readAll(n, STREAMS.DERIVED, DERIVED_ALL).catch(() => []);
    const m = all.find(
      (x) => x.subject === `dv.synthetic.${symbol}.${kind}` && JSON.parse(x.text).start_ms === start,
    );
    return m ? (JSON.parse(m.text) as Record<string, number>) : null;
  };
  runner = startDerivedRunner(n, log);
  await put('BTC', T0 + 100, 10);
  await put('ETH', T0 + 500, 20); // ETH's only event for a while
  await put('BTC', T0 + 1_500, 11);
  await put('BTC', T0 + 1_000 + DERIVED_GRACE_MS - 1, 11.5); // watermark 1 ms short of closing T0's second
  await eventually(() => (runner as DerivedRunner).position() > (seqs.at(-1) as number), 10_000, 'read');
  await new Promise((r) => setTimeout(r, 300));
  expect((await n.jsm.streams.info(STREAMS.DERIVED)).state.messages).toBe(0);

  await put('BTC', T0 + 3_000, 12); // watermark T0 + 3 s = end of T0's second + grace: it closes
  const eth = await eventually(() => bar('ETH', 'bar_1s', T0), 10_000, "quiet ETH's bar closed by BTC");
  expect(eth).toMatchObject({
    trade_count: 1,
    open: 20,
    first_seq: seqs[1],
    last_seq: seqs[1],
    end_ms: T0 + 1_000,
  });
  expect(await bar('BTC', 'bar_1s', T0)).toMatchObject({ trade_count: 1, open: 10 });

  await put('ETH', T0 + 200, 21); // late past the grace: T0's second is published, first open is T0 + 1 s
  await put('BTC', T0 + 2_500, 13); // late within the grace: its own second (T0 + 2 s) is still open
  await put('BTC', T0 + 10_000, 14);
  const late = await eventually(() => bar('ETH', 'bar_1s', T0 + 1_000), 10_000, 'late ETH bar');
  expect(late).toMatchObject({ trade_count: 1, open: 21, first_seq: seqs[5], start_ms: T0 + 1_000 });
  const within = await eventually(() => bar('BTC', 'bar_1s', T0 + 2_000), 10_000, 'BTC T0+2s');
  expect(within).toMatchObject({ trade_count: 2, first_seq: seqs[3], last_seq: seqs[6], close: 13 });
  // T0's ETH bar was published once, and not again with the late trade.
  const ethAll = (await readAll(n, STREAMS.DERIVED, DERIVED_ALL)).filter(
    (m) => m.subject === 'dv.synthetic.ETH.bar_1s',
  );
  expect(ethAll.map((m) => JSON.parse(m.text).start_ms)).toEqual([T0, T0 + 1_000]);
});
