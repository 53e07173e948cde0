/**
 * `npm run bench -- normalize`: normalization and cache throughput, each figure beside a baseline
 * measured in the same run.
 *
 * 1. In process: `normalizeBatch` per source and payload kind (and a per-source mix), payloads
 *    built from the public fixtures' templates with varying prices/ids/times (bench/lib/
 *    normalize-payloads.ts), parsed with JSON.parse as the HTTP body parser would, batches of
 *    1,000, after a warm-up. Goal: ≥ 1M events/s for Binance trades.
 * 1b. Against tardis-dev (`vs_tardis`): our normalizer and tardis-dev's on the same parsed messages
 *    of every kind both map, symbols interleaved, outputs compared field by field; goal ≥ 1.2× on
 *    every kind in every run (bench/lib/normalize-vs-tardis.ts).
 * 2. Through HTTP: POST /mcp/normalize on the real `{base_url}` app with the real guard, bodies just
 *    under the 1 MB limit, keep-alive fetch from this process at several concurrencies; beside it
 *    the in-process cost of the same request's steps (JSON.parse, zod body, normalize, stringify).
 * 3. Cache export: a cache of N events (synthetic mix, stored directly, not via HTTP: one normalize
 *    call can carry ~5k events under 1 MB and every call makes its own cache), GET
 *    /mcp/caches/export/{key} timed to its last byte, vs DuckDB alone running the exporter's COPY
 *    over the same rows pre-written as NDJSON.
 * 4. Replay: GET /mcp/caches/stream/{key} read to `event: end` by a raw http client in a worker
 *    process, vs a raw ordered push consumer (callback, counting) reading the same messages.
 *
 * Environment: BENCH_SCALE (default 1; 0.1 for a quick run) scales counts and time caps;
 * BENCH_PAYLOADS (per in-process case), BENCH_HTTP_CONCURRENCY (comma list, default 1,4),
 * BENCH_CACHE_EVENTS, BENCH_REPEATS (runs of the Binance-trade goal case and run pairs of each
 * vs_tardis kind, default 3) override single parameters; BENCH_PHASES (comma list of
 * in_process, vs_tardis, http, cache) runs a subset.
 */
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata } from 'hyparquet';
import { ndjsonToParquetSql } from '../consumers/caches/cache-exporter.ts';
import { readCache } from '../consumers/caches/cache-reader.ts';
import type { CacheManifest } from '../contracts/caches.ts';
import { encodeStoredEvent, storedJsonWithSeq } from '../contracts/event-wire.ts';
import type { MarketEvent } from '../contracts/events.ts';
import { MAX_BODY_BYTES } from '../contracts/limits.ts';
import { NormalizeBody } from '../contracts/normalize.ts';
import { startNatsServer } from '../platform/nats-server.ts';
import type { CacheStore } from '../producers/caches/cache-store.ts';
import { NORMALIZER_VERSION, normalizeBatch } from '../producers/normalizer/index.ts';
import { startTestAccounts } from '../test/support/accounts.ts';
import { connectTestNats, testConfig } from '../test/support/gateway.ts';
import { startTestHttp } from '../test/support/http-app.ts';
import { Histogram } from './lib/histogram.ts';
import { startWorker } from './lib/ipc.ts';
import { KINDS, type Kind, MIXES, mixGenerator, parseEvents, texts } from './lib/normalize-payloads.ts';
import { vsTardis } from './lib/normalize-vs-tardis.ts';
import { ProcStats } from './lib/proc-stats.ts';

// ---------------------------------------------------------------- parameters and helpers

const num = (name: string, def: number): number => {
  const v = process.env[name];
  if (v === undefined || v.trim() === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
};

function params() {
  const scale = num('BENCH_SCALE', 1);
  return {
    scale,
    batch_payloads: 1_000,
    payloads_per_case: Math.round(num('BENCH_PAYLOADS', Math.max(50_000, 1_000_000 * scale))),
    case_time_cap_ms: Math.round(Math.max(600, 2_000 * scale)),
    warmup_ms: Math.round(Math.max(200, 500 * scale)),
    goal_repeats: Math.max(1, Math.round(num('BENCH_REPEATS', 3))),
    http_concurrency: (process.env.BENCH_HTTP_CONCURRENCY ?? '1,4').split(',').map((x) => {
      const n = Number(x.trim());
      if (!Number.isInteger(n) || n < 1)
        throw new Error('BENCH_HTTP_CONCURRENCY: comma list of integers ≥ 1');
      return n;
    }),
    http_measure_ms: Math.round(Math.max(1_500, 4_000 * scale)),
    http_warmup_ms: Math.round(Math.max(500, 1_000 * scale)),
    http_body_limit_bytes: MAX_BODY_BYTES,
    cache_events: Math.round(num('BENCH_CACHE_EVENTS', Math.max(20_000, 200_000 * scale))),
    export_repeats: 2,
    replay_repeats: 2,
    vs_tardis_run_ms: Math.round(Math.max(500, 1_500 * scale)),
    phases: (process.env.BENCH_PHASES ?? 'in_process,vs_tardis,http,cache').split(',').map((x) => x.trim()),
  };
}
type Params = ReturnType<typeof params>;

const progress = (msg: string) =>
  process.stderr.write(`[bench normalize ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const r3 = (x: number) => Math.round(x * 1_000) / 1_000;
const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? r3(a / b) : null);
const perS = (n: number, ms: number) => Math.round(n / (ms / 1_000));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const tick = () => new Promise<void>((r) => setImmediate(r));
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

/** Garbage-collection time in a window, from `gc` performance entries (delivered asynchronously). */
class GcTime {
  private entries: { start: number; duration: number }[] = [];
  private readonly obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.entries.push({ start: e.startTime, duration: e.duration });
  });
  constructor() {
    this.obs.observe({ entryTypes: ['gc'] });
  }
  /** GC ms that started in [from, to]; call after a tick so that pending entries are delivered. */
  async within(from: number, to: number): Promise<number> {
    await tick();
    await tick();
    let ms = 0;
    for (const e of this.entries) if (e.start >= from && e.start <= to) ms += e.duration;
    this.entries = this.entries.filter((e) => e.start > to);
    return ms;
  }
  stop(): void {
    this.obs.disconnect();
  }
}

// ---------------------------------------------------------------- 1. in process

type Request = { source: string; symbol?: string; events: { payload: unknown }[] };
type Case = {
  name: string;
  source: Kind['source'];
  symbol?: string;
  description: string;
  gen: Kind['generator'];
};

/** Pool of distinct payloads (≈16 MB of JSON, 4k–32k payloads), cut into batch requests. */
function buildBatches(c: Case, batch: number, seed: number): { requests: Request[]; avgBytes: number } {
  const gen = c.gen(seed);
  const sample = texts(gen, 256);
  const avg = sample.reduce((n, t) => n + t.length, 0) / sample.length;
  const pool = Math.max(4, Math.min(32, Math.floor(16_000_000 / avg / batch))) * batch;
  const all = sample.concat(texts(gen, pool - sample.length));
  const requests: Request[] = [];
  for (let i = 0; i < pool; i += batch) {
    const events = parseEvents(all.slice(i, i + batch));
    requests.push(c.symbol ? { source: c.source, symbol: c.symbol, events } : { source: c.source, events });
  }
  return { requests, avgBytes: Math.round(avg) };
}

type Timed = {
  payloads: number;
  events: number;
  rejected: number;
  ms: number;
  gc_ms: number;
  capped: boolean;
};

async function timeBatches(
  requests: Request[],
  targetPayloads: number,
  capMs: number,
  gc: GcTime,
): Promise<Timed> {
  let payloads = 0;
  let events = 0;
  let rejected = 0;
  let i = 0;
  const t0 = performance.now();
  let now = t0;
  while (payloads < targetPayloads && now - t0 < capMs) {
    const req = requests[i++ % requests.length] as Request;
    const res = normalizeBatch(req);
    events += res.events.length;
    rejected += res.rejected.length;
    payloads += req.events.length;
    now = performance.now();
  }
  const gcMs = await gc.within(t0, now);
  return { payloads, events, rejected, ms: now - t0, gc_ms: gcMs, capped: payloads < targetPayloads };
}

const timedSummary = (t: Timed) => ({
  payloads: t.payloads,
  events: t.events,
  seconds: r3(t.ms / 1_000),
  events_per_s: perS(t.events, t.ms),
  payloads_per_s: perS(t.payloads, t.ms),
  gc_pct: Math.round((t.gc_ms / t.ms) * 1_000) / 10,
  ...(t.rejected ? { rejected: t.rejected } : {}),
  ...(t.capped ? { time_capped: true } : {}),
});

async function inProcess(p: Params): Promise<Record<string, unknown>> {
  const gc = new GcTime();
  const cases: Case[] = [
    ...Object.values(KINDS).map((k) => ({
      name: k.name,
      source: k.source,
      symbol: k.symbol,
      description: k.description,
      gen: k.generator,
    })),
    ...MIXES.map((m) => ({
      name: m.name,
      source: m.source,
      symbol: m.symbol,
      description: `mix ${m.parts.map(([k, w]) => `${w}% ${k}`).join(', ')}`,
      gen: mixGenerator(m),
    })),
  ];
  const out: Record<string, unknown> = {};
  let seed = 1;
  for (const c of cases) {
    const { requests, avgBytes } = buildBatches(c, p.batch_payloads, seed++);
    // Warm-up: JIT and inline caches on this kind's shapes.
    await timeBatches(requests, Number.POSITIVE_INFINITY, p.warmup_ms, gc);
    const repeats = c.name === 'binance_trade' ? p.goal_repeats : 1;
    const runs: Timed[] = [];
    for (let r = 0; r < repeats; r++)
      runs.push(
        await timeBatches(requests, p.payloads_per_case, p.case_time_cap_ms * (repeats > 1 ? 2 : 1), gc),
      );
    const med = runs.slice().sort((a, b) => a.events / a.ms - b.events / b.ms)[runs.length >> 1] as Timed;
    const row: Record<string, unknown> = {
      source: c.source,
      description: c.description,
      payload_json_bytes_avg: avgBytes,
      distinct_payloads: requests.length * p.batch_payloads,
      events_per_payload: r3(med.events / med.payloads),
      ...timedSummary(med),
    };
    if (repeats > 1) row.runs_events_per_s = runs.map((t) => perS(t.events, t.ms));
    out[c.name] = row;
    progress(
      `in-process ${c.name}: ${row.events_per_s} events/s, ${row.payloads_per_s} payloads/s (gc ${row.gc_pct}%)`,
    );
    await tick();
  }
  gc.stop();
  const goal = out.binance_trade as { events_per_s: number; runs_events_per_s?: number[] };
  return {
    batch_payloads: p.batch_payloads,
    goal: 'binance trades ≥ 1,000,000 events/s in process',
    goal_met: goal.events_per_s >= 1_000_000,
    binance_trade_events_per_s_median: goal.events_per_s,
    cases: out,
  };
}

// ---------------------------------------------------------------- 2. through HTTP

type Body = { bytes: Uint8Array<ArrayBuffer>; text: string; payloads: number; events: number };

/** `count` distinct request bodies, each as many payloads as fit under `limit` bytes. */
function buildBodies(kind: Kind, count: number, limit: number): Body[] {
  const gen = kind.generator(101);
  const bodies: Body[] = [];
  const head = `{"source":"${kind.source}"${kind.symbol ? `,"symbol":"${kind.symbol}"` : ''},"events":[`;
  const tail = ']}';
  for (let b = 0; b < count; b++) {
    const parts: string[] = [];
    let len = head.length + tail.length;
    for (;;) {
      const item = `{"payload":${gen()}}`;
      const add = item.length + (parts.length ? 1 : 0);
      if (len + add > limit) break;
      parts.push(item);
      len += add;
    }
    const text = head + parts.join(',') + tail;
    const bytes = Buffer.from(text);
    if (bytes.length !== len || len > limit) throw new Error('body size bookkeeping is off');
    const parsed = JSON.parse(text);
    const events = normalizeBatch(parsed).events.length;
    bodies.push({ bytes, text, payloads: parts.length, events });
  }
  return bodies;
}

/** Microseconds per step of the same request, in process (median of `n` runs). */
function stepCosts(body: Body, n: number) {
  const times: Record<string, number[]> = { json_parse: [], zod_body: [], normalize: [], json_stringify: [] };
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    const parsed = JSON.parse(body.text);
    times.json_parse?.push(performance.now() - t);
    t = performance.now();
    const args = NormalizeBody.parse(parsed);
    times.zod_body?.push(performance.now() - t);
    t = performance.now();
    const res = normalizeBatch({ source: args.source, symbol: args.symbol, events: args.events });
    times.normalize?.push(performance.now() - t);
    t = performance.now();
    JSON.stringify({ source: args.source, normalizer_version: NORMALIZER_VERSION, ...res });
    times.json_stringify?.push(performance.now() - t);
  }
  const ms: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(times)) {
    const m = median(v);
    ms[k] = Math.round(m * 100) / 100;
    total += m;
  }
  return {
    ms_per_request: ms,
    total_ms: Math.round(total * 100) / 100,
    ceiling_events_per_s: perS(body.events, total),
  };
}

async function drive(
  url: string,
  headers: Record<string, string>,
  bodies: Body[],
  concurrency: number,
  durationMs: number,
) {
  const latency = new Histogram();
  const proc = new ProcStats();
  let requests = 0;
  let events = 0;
  let payloads = 0;
  let bytesIn = 0;
  let bytesOut = 0;
  let next = 0;
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  let lastDone = t0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const body = bodies[next++ % bodies.length] as Body;
      const t = performance.now();
      const res = await fetch(url, { method: 'POST', headers, body: body.bytes });
      const buf = await res.arrayBuffer();
      if (res.status !== 200)
        throw new Error(`POST /mcp/normalize: ${res.status} ${Buffer.from(buf).toString().slice(0, 300)}`);
      lastDone = performance.now();
      latency.record((lastDone - t) * 1_000);
      requests++;
      events += body.events;
      payloads += body.payloads;
      bytesIn += body.bytes.length;
      bytesOut += buf.byteLength;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const ms = lastDone - t0;
  const lat = latency.summary(1_000);
  return {
    concurrency,
    requests,
    seconds: r3(ms / 1_000),
    events_per_s: perS(events, ms),
    payloads_per_s: perS(payloads, ms),
    requests_per_s: Math.round((requests / (ms / 1_000)) * 10) / 10,
    request_mb_per_s: Math.round((bytesIn / 1_048_576 / (ms / 1_000)) * 10) / 10,
    response_mb_per_s: Math.round((bytesOut / 1_048_576 / (ms / 1_000)) * 10) / 10,
    latency_ms: { p50: lat.p50, p90: lat.p90, p99: lat.p99, max: lat.max },
    process: proc.read(),
  };
}

async function httpPhase(p: Params, base: string, apiKey: string): Promise<Record<string, unknown>> {
  const url = `${base}/mcp/normalize`;
  const headers = { 'content-type': 'application/json', 'x-api-key': apiKey };
  const out: Record<string, unknown> = {
    client: 'global fetch (undici, keep-alive) in the server process; one connection per concurrent loop',
    body_limit_bytes: p.http_body_limit_bytes,
  };
  for (const name of ['binance_trade', 'binance_depth20']) {
    const kind = KINDS[name] as Kind;
    const bodies = buildBodies(kind, 4, p.http_body_limit_bytes);
    // Check one answer in full: status, event count, no rejection.
    const check = await fetch(url, { method: 'POST', headers, body: bodies[0]?.bytes });
    const json = (await check.json()) as { events?: unknown[]; rejected?: unknown[] };
    if (check.status !== 200 || json.events?.length !== bodies[0]?.events || json.rejected?.length)
      throw new Error(`normalize check failed: ${check.status} ${JSON.stringify(json).slice(0, 300)}`);
    progress(`http ${name}: warm-up`);
    await drive(url, headers, bodies, Math.max(...p.http_concurrency), p.http_warmup_ms);
    const runs = [];
    for (const c of p.http_concurrency) {
      const r = await drive(url, headers, bodies, c, p.http_measure_ms);
      progress(`http ${name} c=${c}: ${r.events_per_s} events/s, p50 ${r.latency_ms.p50} ms`);
      runs.push(r);
    }
    const best = runs.reduce((a, b) => (b.events_per_s > a.events_per_s ? b : a));
    const steps = stepCosts(bodies[0] as Body, 10);
    out[name] = {
      description: kind.description,
      body_bytes: Math.min(...bodies.map((b) => b.bytes.length)),
      body_pct_of_limit:
        Math.round((Math.min(...bodies.map((b) => b.bytes.length)) / MAX_BODY_BYTES) * 1_000) / 10,
      payloads_per_request: bodies.map((b) => b.payloads),
      events_per_request: bodies.map((b) => b.events),
      runs,
      best: { concurrency: best.concurrency, events_per_s: best.events_per_s },
      in_process_same_request: steps,
      http_vs_in_process_ceiling: ratio(best.events_per_s, steps.ceiling_events_per_s),
    };
  }
  return out;
}

// ---------------------------------------------------------------- 3. cache export

async function buildCache(p: Params, caches: CacheStore, accountId: string) {
  const mix = MIXES.find((m) => m.name === 'synthetic_mix');
  if (!mix) throw new Error('no synthetic mix');
  const gen = mixGenerator(mix)(2_024);
  const events: MarketEvent[] = [];
  let rawJsonBytes = 0;
  while (events.length < p.cache_events) {
    const t = texts(gen, Math.min(10_000, p.cache_events - events.length));
    for (const x of t) rawJsonBytes += x.length;
    const res = normalizeBatch({ source: 'synthetic', symbol: 'BTC', events: parseEvents(t) });
    if (res.rejected.length) throw new Error(`synthetic payload rejected: ${res.rejected[0]?.message}`);
    for (const e of res.events) events.push(e);
  }
  const t0 = performance.now();
  const manifest = await caches.store({
    accountId,
    source: 'synthetic',
    symbol: 'BTC',
    events,
    rawJsonBytes,
    normalizerVersion: NORMALIZER_VERSION,
  });
  const ms = performance.now() - t0;
  if (manifest.event_count !== events.length || manifest.last_seq - manifest.first_seq + 1 !== events.length)
    throw new Error(`cache not contiguous: ${JSON.stringify(manifest)}`);
  const trades = events.filter((e) => e.event_type === 'trade').length;
  return {
    events,
    manifest,
    info: {
      events: events.length,
      trades,
      books: events.length - trades,
      book_levels_per_side: 10,
      method: 'CacheStore.store of the app, events from normalizeBatch of the synthetic mix (symbol BTC)',
      stored_bytes: manifest.stored_bytes,
      store_seconds: r3(ms / 1_000),
      store_events_per_s: perS(events.length, ms),
    },
  };
}

async function exportPhase(
  p: Params,
  base: string,
  apiKey: string,
  nats: Awaited<ReturnType<typeof connectTestNats>>,
  manifest: CacheManifest,
  events: MarketEvent[],
) {
  const rows = events.length;
  const url = `${base}/mcp/caches/export/${manifest.cache_key}`;
  const runs = [];
  let lastFile: Uint8Array | null = null;
  for (let r = 0; r < p.export_repeats; r++) {
    const proc = new ProcStats();
    const t0 = performance.now();
    const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
    const headersAt = performance.now();
    if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    for await (const c of res.body) {
      chunks.push(c);
      bytes += c.length;
    }
    const ms = performance.now() - t0;
    lastFile = Buffer.concat(chunks);
    runs.push({
      seconds: r3(ms / 1_000),
      headers_after_s: r3((headersAt - t0) / 1_000),
      bytes,
      rows_per_s: perS(rows, ms),
      process: proc.read(),
    });
    progress(`export: ${perS(rows, ms)} rows/s (${bytes} bytes)`);
  }
  const file = lastFile as Uint8Array;
  const pq = parquetMetadata(
    file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer,
  );
  if (Number(pq.num_rows) !== rows) throw new Error(`export has ${pq.num_rows} rows, expected ${rows}`);

  // Breakdown 1: the JetStream read alone (ordered consumer + splicing seq into the stored JSON), as the exporter does.
  let t0 = performance.now();
  let n = 0;
  for await (const _ of readCache(nats, manifest)) n++;
  const readMs = performance.now() - t0;
  if (n !== rows) throw new Error(`readCache gave ${n} rows, expected ${rows}`);

  // Baseline: NDJSON of the same rows written beforehand, then the exporter's COPY alone.
  const dir = mkdtempSync(join(tmpdir(), 'bench-normalize-duckdb-'));
  try {
    const ndjson = join(dir, 'events.ndjson');
    t0 = performance.now();
    const w = createWriteStream(ndjson);
    for (let i = 0; i < rows; i++) {
      if (!w.write(`${JSON.stringify({ seq: manifest.first_seq + i, ...events[i] })}\n`))
        await once(w, 'drain');
    }
    w.end();
    await once(w, 'finish');
    const ndjsonMs = performance.now() - t0;
    const ndjsonBytes = (await stat(ndjson)).size;
    const meta = {
      cache_key: manifest.cache_key,
      content_hash: manifest.content_hash,
      row_count: String(rows),
    };
    const duck = [];
    for (let r = 0; r < p.export_repeats; r++) {
      const path = join(dir, `out-${r}.parquet`);
      const t = performance.now();
      const db = await DuckDBInstance.create(':memory:', { threads: '1' });
      const conn = await db.connect();
      try {
        await conn.run(ndjsonToParquetSql(ndjson, path, meta));
      } finally {
        conn.closeSync();
        db.closeSync();
      }
      const ms = performance.now() - t;
      duck.push({ seconds: r3(ms / 1_000), rows_per_s: perS(rows, ms), bytes: (await stat(path)).size });
    }
    const bestHttp = Math.max(...runs.map((x) => x.rows_per_s));
    const bestDuck = Math.max(...duck.map((x) => x.rows_per_s));
    return {
      rows,
      http_export: { runs, best_rows_per_s: bestHttp, parquet_num_rows: Number(pq.num_rows) },
      baseline_duckdb_copy_from_ndjson: {
        what: 'same read_json COPY (threads 1, ZSTD, same columns) over the same rows pre-written as NDJSON; DuckDB instance creation included',
        runs: duck,
        best_rows_per_s: bestDuck,
        ndjson_bytes: ndjsonBytes,
      },
      ratio_http_to_baseline: ratio(bestHttp, bestDuck),
      breakdown: {
        jetstream_read_decode: { seconds: r3(readMs / 1_000), rows_per_s: perS(rows, readMs) },
        ndjson_stringify_and_write: { seconds: r3(ndjsonMs / 1_000), rows_per_s: perS(rows, ndjsonMs) },
        duckdb_copy: { seconds: r3(rows / bestDuck), rows_per_s: bestDuck },
        sum_seconds: r3(readMs / 1_000 + ndjsonMs / 1_000 + rows / bestDuck),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- 4. replay

type SseRun = { completed: boolean; events: number; seconds: number; events_per_s: number; status: number };
type PushRun = { completed: boolean; events: number; seconds: number; events_per_s: number };

async function replayPhase(
  p: Params,
  base: string,
  apiKey: string,
  natsUrl: string,
  manifest: CacheManifest,
  events: MarketEvent[],
) {
  const worker = await startWorker('normalize-replay-client');
  try {
    const expected = manifest.event_count;
    const sse: SseRun[] = [];
    const push: PushRun[] = [];
    const server = new ProcStats();
    const serverDuringSse: ReturnType<ProcStats['read']>[] = [];
    const runSse = async () => {
      server.reset();
      const r = await worker.call<SseRun>(
        'sse',
        { url: `${base}/mcp/caches/stream/${manifest.cache_key}`, apiKey, expected, timeoutMs: 180_000 },
        200_000,
      );
      serverDuringSse.push(server.read());
      if (!r.completed) throw new Error(`SSE replay incomplete: ${JSON.stringify(r)}`);
      sse.push(r);
      progress(`replay sse: ${r.events_per_s} events/s`);
    };
    const runPush = async () => {
      const r = await worker.call<PushRun>(
        'push',
        {
          natsUrl,
          accountId: manifest.account_id,
          cacheKey: manifest.cache_key,
          expected,
          lastSeq: manifest.last_seq,
          timeoutMs: 180_000,
        },
        200_000,
      );
      if (!r.completed) throw new Error(`push consumer incomplete: ${JSON.stringify(r)}`);
      push.push(r);
      progress(`replay push consumer: ${r.events_per_s} events/s`);
    };
    for (let r = 0; r < p.replay_repeats; r++) {
      if (r % 2 === 0) {
        await runPush();
        await runSse();
      } else {
        await runSse();
        await runPush();
      }
    }
    // The server's CPU per replayed event for its own steps (splicing `seq` into the stored JSON,
    // SSE framing), in process over the same events: a ceiling for the SSE path.
    const encoded = events.map((e) => encodeStoredEvent(e));
    const t0 = performance.now();
    let chars = 0;
    for (let i = 0; i < encoded.length; i++) {
      const json = storedJsonWithSeq(encoded[i] as Uint8Array, manifest.first_seq + i);
      chars += `id: ${manifest.first_seq + i}\ndata: ${json}\n\n`.length;
    }
    const cpuMs = performance.now() - t0;
    const sseMed = Math.round(median(sse.map((x) => x.events_per_s)));
    const pushMed = Math.round(median(push.map((x) => x.events_per_s)));
    return {
      events: expected,
      sse_client:
        'raw node:http GET in a worker process, counts "\\nid:" with Buffer.indexOf, stops at event: end',
      push_client:
        "raw ordered push consumer (getPushConsumer('CACHE', {filter_subjects}) + callback, counting, no decode) in the same worker",
      sse: { runs: sse, median_events_per_s: sseMed, server_process: serverDuringSse },
      push_consumer: { runs: push, median_events_per_s: pushMed },
      ratio_sse_to_push: ratio(sseMed, pushMed),
      server_steps_in_process: {
        what: 'splice seq into the stored JSON + SSE frame, same events, one thread',
        events_per_s: perS(encoded.length, cpuMs),
        us_per_event: Math.round((cpuMs * 1_000 * 100) / encoded.length) / 100,
        sse_bytes: chars,
      },
    };
  } finally {
    await worker.close();
  }
}

// ---------------------------------------------------------------- run

export async function run(): Promise<unknown> {
  const p = params();
  const started = performance.now();
  const out: Record<string, unknown> = {
    benchmark: 'normalize',
    command: `BENCH_SCALE=${p.scale} npm run -s bench -- normalize`,
    params: p,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    load_avg_start: load(),
  };
  progress(`params ${JSON.stringify(p)}`);
  if (p.phases.includes('in_process')) out.in_process = await inProcess(p);
  if (p.phases.includes('vs_tardis')) {
    const gc = new GcTime();
    out.vs_tardis = await vsTardis({
      batch: p.batch_payloads,
      runMs: p.vs_tardis_run_ms,
      warmupMs: p.warmup_ms,
      repeats: p.goal_repeats,
      gcWithin: (from, to) => gc.within(from, to),
      progress,
    });
    gc.stop();
  }

  if (p.phases.includes('http') || p.phases.includes('cache')) {
    const store = mkdtempSync(join(tmpdir(), 'bench-normalize-nats-'));
    const server = await startNatsServer({ storeDir: store });
    const config = testConfig();
    let nats: Awaited<ReturnType<typeof connectTestNats>> | null = null;
    let accounts: Awaited<ReturnType<typeof startTestAccounts>> | null = null;
    let http: Awaited<ReturnType<typeof startTestHttp>> | null = null;
    try {
      nats = await connectTestNats(server.url, config);
      accounts = await startTestAccounts(nats, config);
      http = await startTestHttp(nats, config, accounts);
      const { key: apiKey, accountId } = await accounts.key('quant', { scopes: ['mcp'] });
      out.setup = {
        nats: 'private nats-server (platform/nats-server.ts), free port, temp store',
        app: 'test/support/http-app.ts startTestHttp: real {base_url} app and guard',
        key: 'quant plan (no rate-limit I/O), scope mcp',
      };
      if (p.phases.includes('http')) out.http = await httpPhase(p, http.url, apiKey);
      if (p.phases.includes('cache')) {
        progress(`cache: building ${p.cache_events} events`);
        const cache = await buildCache(p, http.caches, accountId);
        progress(`cache: stored ${cache.info.events} events at ${cache.info.store_events_per_s}/s`);
        out.cache = cache.info;
        out.cache_export = await exportPhase(p, http.url, apiKey, nats, cache.manifest, cache.events);
        out.replay = await replayPhase(p, http.url, apiKey, server.url, cache.manifest, cache.events);
      }
    } finally {
      await http?.close().catch(() => {});
      accounts?.stop();
      await nats?.nc.close().catch(() => {});
      await server.stop();
      rmSync(store, { recursive: true, force: true });
    }
  }
  out.load_avg_end = load();
  out.total_seconds = r3((performance.now() - started) / 1_000);
  return out;
}
