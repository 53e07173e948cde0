/**
 * A paced history read (platform/ordered-reader.ts over platform/pull-consumer.ts) on a real
 * nats-server: every stored message once, in order, with its sequence, through batch boundaries,
 * a handler that makes the read wait, and its consumer deleted under it mid-read (read again
 * from the next sequence on a new consumer, no gap, no duplicate); a filter reads only its subject.
 * Reads pull over the process's history connection (platform/nats-wire/); when it ends mid-read,
 * the read goes on over a new one from the next sequence.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

const log = createLogger('error');
const STREAM = 'PACED_TEST';
const N = 3_000;
let server: TestNats;
let nats: Nats;

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, testConfig());
  await nats.jsm.streams.add({ name: STREAM, subjects: ['paced.>'] });
  for (let i = 1; i <= N; i++) nats.nc.publish(`paced.${i % 3 === 0 ? 'c' : 'ab'}`, JSON.stringify({ i }));
  await nats.nc.flush();
  await eventually(async () => expect((await nats.jsm.streams.info(STREAM)).state.messages).toBe(N));
});

afterAll(async () => {
  await nats?.nc.close();
  await server?.cleanup();
});

/** Reads `filter` from `startSeq` until `last`; `onSeq` may make the read wait. */
function readUntil(
  filter: string,
  startSeq: number,
  last: number,
  onSeq: (seq: number) => Promise<void> | undefined = () => undefined,
): Promise<{ seqs: number[]; bodies: number[] }> {
  const seqs: number[] = [];
  const bodies: number[] = [];
  return new Promise((resolve) => {
    const r = readOrdered(
      nats,
      { stream: STREAM, filter, startSeq, paced: true, batch: 250 },
      (msg, seq) => {
        seqs.push(seq);
        bodies.push((JSON.parse(new TextDecoder().decode(msg.data)) as { i: number }).i);
        if (seq >= last) {
          r.stop();
          resolve({ seqs, bodies });
          return;
        }
        return onSeq(seq);
      },
      log,
    );
  });
}

const range = (from: number, to: number, step = 1) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, k) => from + k * step);

it('delivers every message once, in order, with its sequence, while the handler makes it wait', async () => {
  const waitEvery = (seq: number) =>
    seq % 97 === 0 ? new Promise<void>((r) => setTimeout(r, 2)) : undefined;
  const { seqs, bodies } = await readUntil('paced.>', 101, N, waitEvery);
  expect(seqs).toEqual(range(101, N));
  expect(bodies).toEqual(seqs);
});

it('reads a filtered subject only', async () => {
  const { seqs } = await readUntil('paced.c', 1, N);
  expect(seqs).toEqual(range(3, N, 3));
});

it('goes on from the next sequence on a new consumer when its consumer is deleted mid-read', async () => {
  let deleted = 0;
  const { seqs } = await readUntil('paced.>', 1, N, (seq) => {
    if (seq !== 1_200) return undefined;
    return (async () => {
      for (const c of await nats.jsm.consumers.list(STREAM).next())
        if (c.name.startsWith('pull_')) {
          await nats.jsm.consumers.delete(STREAM, c.name);
          deleted++;
        }
    })();
  });
  expect(deleted).toBe(1);
  expect(seqs).toEqual(range(1, N));
  await expect.poll(async () => (await nats.jsm.consumers.list(STREAM).next()).length).toBe(0);
});

it('pulls over the history connection, and goes on over a new one when it ends mid-read', async () => {
  let first: Awaited<ReturnType<NonNullable<Nats['history']>>> = null;
  const { seqs } = await readUntil('paced.>', 1, N, (seq) => {
    if (seq !== 1_500) return undefined;
    return (async () => {
      first = (await nats.history?.()) ?? null;
      // This read's inbox is the connection's one subscription: the read is on it.
      expect(first?.subscriptions).toBe(1);
      first?.close();
    })();
  });
  expect(seqs).toEqual(range(1, N));
  const next = await nats.history?.();
  expect(first).not.toBeNull();
  expect(next).not.toBeNull();
  expect(next).not.toBe(first);
  expect(next?.subscriptions).toBe(0);
  await expect.poll(async () => (await nats.jsm.consumers.list(STREAM).next()).length).toBe(0);
});
