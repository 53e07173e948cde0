/**
 * The simulation and console clients against the real app with a generation worker: an async job
 * reports progress and completes, its artifact streams with the announced length; normalize, the
 * cache lifecycle, funding, venues and presets; every failure is an MdpError carrying the error
 * body's code, status and request id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ConsoleClient,
  type JobView,
  MdpError,
  SimulationClient,
} from '../../clients/typescript/src/index.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let sim: SimulationClient;

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
  sim = new SimulationClient({ url: stack.http.url, key: (await stack.accounts.key('quant')).key });
});

afterAll(async () => {
  await stack?.close();
});

async function byteLength(body: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) n += chunk.byteLength;
  return n;
}

it('runs an asynchronous generation job with progress and streams its artifact', async () => {
  const job = await sim.generate({ config: { symbol: 'BTC', seed: 7 }, duration_seconds: 7_200 });
  expect(job.jobId).toMatch(/^sim_batch_/);
  expect(job.manifestHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  const seen: JobView[] = [];
  const result = await job.wait({ intervalMs: 100, onProgress: (j) => seen.push(j) });
  expect(result).toMatchObject({ status: 'completed', job_id: job.jobId, manifest_hash: job.manifestHash });
  expect(seen.at(-1)?.status).toBe('completed');
  expect(
    seen.every((j) => j.progress.rows_done <= j.progress.rows_total || j.progress.rows_total === 0),
  ).toBe(true);
  const dl = await sim.download(result);
  expect(dl.contentLength).toBe(result.content_length_bytes);
  expect(await byteLength(dl.body)).toBe(result.content_length_bytes);
});

it('normalizes into a cache, replays, exports and deletes it', async () => {
  const payload = (i: number) => ({
    e: 'trade',
    E: 1_000 + i,
    s: 'BTCUSDT',
    t: i,
    p: '100.5',
    q: '2',
    T: 1_000 + i,
    m: false,
  });
  const out = await sim.normalize({
    source: 'binance',
    events: [0, 1, 2].map((i) => ({ payload: payload(i) })),
    enable_cache: true,
  });
  expect(out.events).toHaveLength(3);
  const key = out.cache_key as string;
  expect((await sim.caches.stats()).caches.map((c) => c.cache_key)).toContain(key);
  expect(await sim.caches.manifest(key)).toMatchObject({ cache_key: key, event_count: 3, source: 'binance' });
  const replay = sim.caches.replay(key);
  const seqs: number[] = [];
  let step = await replay.next();
  for (; !step.done; step = await replay.next()) seqs.push(step.value.seq);
  expect(step.value).toMatchObject({ complete: true, last_event_id: seqs.at(-1) });
  const rest: number[] = [];
  for await (const e of sim.caches.replay(key, { from: seqs[0] as number })) rest.push(e.seq);
  expect(rest).toEqual(seqs.slice(1));
  const parquet = await sim.caches.export(key);
  expect(await byteLength(parquet.body)).toBe(parquet.contentLength);
  await sim.caches.delete(key);
  const gone = await sim.caches.manifest(key).catch((e: unknown) => e);
  expect(gone).toBeInstanceOf(MdpError);
  expect(gone).toMatchObject({
    code: 'not_found',
    status: 404,
    requestId: expect.stringMatching(/^req_[0-9a-f]{20}$/),
  });
});

it('simulates funding and reads venues and presets', async () => {
  const funding = await sim.funding({
    exchange: 'binance',
    spot_price: 100_000,
    mark_price: 100_050,
    num_periods: 3,
    seed: 1,
  });
  expect(funding.periods).toHaveLength(3);
  expect((await sim.venues('hyperliquid')).exchange).toBe('hyperliquid');
  expect((await sim.presets()).map((p) => p.name)).toContain('flash-crash');
});

it('carries the error body’s code, status, details and request id', async () => {
  const bad = await sim
    .generate({ config: { symbol: 'BTC' }, duration_seconds: 10_000_000 })
    .catch((e: unknown) => e);
  expect(bad).toMatchObject({
    code: 'unprocessable',
    status: 422,
    requestId: expect.stringMatching(/^req_/),
  });
  expect((bad as MdpError).details).toMatchObject({ field: 'duration_seconds' });
  const venue = await sim.venues('nasdaq' as 'binance').catch((e: unknown) => e);
  expect(venue).toMatchObject({ code: 'not_found', status: 404 });
  const unauth = new SimulationClient({ url: stack.http.url, key: 'mdp_nope' });
  expect(await unauth.caches.stats().catch((e: unknown) => e)).toMatchObject({
    code: 'invalid_key',
    status: 401,
  });
  const console = new ConsoleClient({ url: stack.http.url });
  expect(await console.login('nobody@example.com', 'Wrong-Passw0rd!').catch((e: unknown) => e)).toMatchObject(
    {
      code: 'invalid_credentials',
      status: 401,
      requestId: expect.stringMatching(/^req_/),
    },
  );
});
