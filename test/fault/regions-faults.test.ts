/**
 * Issue 32 §3: faults of two regions (test/support/regions.ts: a 3-node home cluster, every stream
 * R3, and a JP nats-server joined through an 80 ms-each-way link; one `gateway edges` process per
 * region), events published at home at RATE/s throughout. JP clients: SSE and gRPC readers that
 * resume on JP with their own last position, and TypeScript clients given [JP, US].
 * 1. The link cut for LINK_CUT_S (60 s with TEST_FULL=1, 10 s alone): JP edges keep their clients
 *    connected through the cut (no reconnect), then catch up; every JP client ends with every
 *    sequence exactly once (the catch-up's burst may end a slow client with `reconnect`: it
 *    resumes exactly).
 * 2. kill -9 the home node that leads `MD` while JP clients stream: no JP client sees a gap or a
 *    duplicate.
 * 3. kill -9 the JP nats-server: JP's /healthz is 503 at once; after NATS_LOST_CLOSE_MS (3 s here)
 *    JP's edges end their streams with `reconnect`, and the TypeScript clients go on from US with
 *    their position, exactly once. JP's server restarted: its copy catches up from where it was
 *    (nothing it held lost) and JP serves again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamDisk } from '../../clients/typescript/src/disk.ts';
import { streamGrpc } from '../../clients/typescript/src/grpc.ts';
import { stream } from '../../clients/typescript/src/index.ts';
import type { ResumingStream } from '../../clients/typescript/src/resuming-stream.ts';
import { type ResumingReader, resumingReader } from '../support/cluster.ts';
import { eventually } from '../support/eventually.ts';
import { publishAtRate, type RatePublisher } from '../support/publisher.ts';
import { startTwoRegions, type TwoRegions } from '../support/regions.ts';
import { exactlyOnce, resumingGrpcReader } from '../support/resuming-transports.ts';

const full = process.env.TEST_FULL === '1';
const RATE = Number(process.env.FAULT_EVENTS_PER_S ?? 1_000);
const LINK_CUT_S = Number(process.env.REGION_LINK_CUT_S ?? (full ? 60 : 10));
const LOST_CLOSE_MS = 3_000;
let two: TwoRegions;
let publisher: RatePublisher;

beforeAll(async () => {
  two = await startTwoRegions({ homeSize: 3, env: { NATS_LOST_CLOSE_MS: String(LOST_CLOSE_MS) } });
  publisher = publishAtRate(two.home.js, ['BTC', 'ETH'], RATE);
}, 300_000);

afterAll(async () => {
  await publisher?.stop();
  await two?.stop();
});

/** The home region's newest sequence, once JetStream answers (it may be electing a leader). */
const homeLast = async () =>
  (await eventually(() => two.home.jsm.streams.info('MD').catch(() => null), 60_000, 'MD info', 250)).state
    .last_seq;

/** JP readers (SSE, gRPC) from JP's newest sequence, each with a key of its own. */
async function jpReaders(): Promise<{ from: number; readers: ResumingReader[] }> {
  const keys = await two.jpKeys(2);
  const from = (await two.jp.jsm.streams.info('MD')).state.last_seq;
  return {
    from,
    readers: [
      resumingReader([two.edges.jp.sse], keys[0] as string, from),
      resumingGrpcReader([two.edges.jp.grpc], keys[1] as string, from),
    ],
  };
}

/** Waits until every reader is past `end`, stops them, and checks each holds `from + 1 … end` once. */
async function exactlyThrough(readers: ResumingReader[], from: number, end: number, what: string) {
  await eventually(
    () => readers.every((r) => r.last() >= end),
    90_000,
    `${what}: every JP client at ${end} (${readers.map((r) => r.last()).join(', ')})`,
  );
  for (const r of readers) r.stop();
  for (const r of readers)
    expect(
      exactlyOnce(
        r.seqs.filter((s) => s <= end),
        from,
        end,
      ),
      what,
    ).toBe('ok');
}

it(`the link cut for ${LINK_CUT_S} s: JP clients stay connected, then get every sequence once`, {
  timeout: 120_000 + LINK_CUT_S * 2_000,
}, async () => {
  const { from, readers } = await jpReaders();
  await eventually(() => readers.every((r) => r.seqs.length > 50), 20_000, 'JP clients reading');
  two.regions.link.cut();
  await new Promise((r) => setTimeout(r, LINK_CUT_S * 1_000));
  const jpHealth = await fetch(new URL('/healthz', two.edges.jp.rpc));
  expect(jpHealth.status).toBe(200);
  const region = ((await jpHealth.json()) as { region: { last_contact_ms: number } }).region;
  expect(region.last_contact_ms).toBeGreaterThan((LINK_CUT_S - 2) * 1_000);
  // Connected throughout the cut. (Once it is over, the copy's catch-up arrives as one burst: a
  // client that cannot take it is ended as too slow, `reconnect`, and resumes exactly.)
  expect(
    readers.map((r) => r.reconnects),
    `how connections ended: ${JSON.stringify(readers.map((r) => r.ends ?? []))}`,
  ).toEqual([0, 0]);
  two.regions.link.restore();
  const end = await homeLast();
  await exactlyThrough(readers, from, end, 'link cut');
});

it('kill -9 the home node leading MD: JP clients see no gap and no duplicate', {
  timeout: 180_000,
}, async () => {
  const { from, readers } = await jpReaders();
  await eventually(() => readers.every((r) => r.seqs.length > 50), 20_000, 'JP clients reading');
  const leader = (await two.home.jsm.streams.info('MD')).cluster?.leader;
  const at = two.regions.home.nodes.findIndex((n) => n.name === leader);
  expect(at, `MD's leader ${leader}`).toBeGreaterThanOrEqual(0);
  await two.regions.home.kill(at);
  await new Promise((r) => setTimeout(r, 3_000));
  await two.regions.home.start(at);
  const end = await homeLast();
  await exactlyThrough(readers, from, end, 'home leader killed');
});

it('kill -9 the JP nats-server: JP fails health, TypeScript clients go on from US exactly; JP catches up when back', {
  timeout: 180_000,
}, async () => {
  const keys = await two.jpKeys(3);
  const { jp, us } = two.edges;
  const iterators: ResumingStream[] = [
    stream({ url: [jp.sse, us.sse], key: keys[0] as string }),
    streamGrpc({ target: [jp.grpc, us.grpc], key: keys[1] as string }),
    streamDisk({ url: [jp.disk, us.disk], key: keys[2] as string }),
  ];
  const seqs: number[][] = iterators.map(() => []);
  const reading = iterators.map(async (it, i) => {
    for await (const item of it) if (item.type === 'event') seqs[i]?.push(item.seq);
  });
  await eventually(() => seqs.every((s) => s.length >= 50), 20_000, 'every client reading from JP');
  const held = (await two.jp.jsm.streams.info('MD')).state;
  await two.regions.jp.kill();
  await eventually(
    async () => (await fetch(new URL('/healthz', jp.rpc)).catch(() => null))?.status === 503,
    5_000,
    "JP's /healthz 503",
  );
  await eventually(
    () => iterators.every((it, i) => it.endpoint === [us.sse, us.grpc, us.disk][i]),
    LOST_CLOSE_MS + 20_000,
    'every client on US',
  );
  const end = await homeLast();
  await eventually(() => seqs.every((s) => (s.at(-1) ?? 0) >= end), 30_000, `every client past ${end}`);
  for (const it of iterators) it.close();
  await Promise.all(reading);
  for (const s of seqs)
    expect(
      exactlyOnce(
        s.filter((x) => x <= end),
        (s[0] as number) - 1,
        end,
      ),
    ).toBe('ok');

  // Back: the copy goes on from where it was (what it held kept) and reaches home's end.
  await two.regions.jp.start();
  const after = await homeLast();
  await eventually(
    async () => ((await two.jp.jsm.streams.info('MD').catch(() => null))?.state.last_seq ?? 0) >= after,
    60_000,
    `JP's copy at ${after}`,
  );
  const copy = (await two.jp.jsm.streams.info('MD')).state;
  expect(copy.first_seq).toBe(held.first_seq);
  expect(await fetch(new URL('/healthz', jp.rpc)).then((r) => r.status)).toBe(200);
});
