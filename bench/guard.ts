/**
 * `npm run bench -- guard`: what the edge guard adds per request for a cached key.
 * Same fastify route twice in one process, with and without the guard's preHandler, driven over
 * real HTTP (keep-alive, one request at a time) by the same client; plus `guard.admit()` alone.
 * Goal (issue 3): added p50 ≤ 50 µs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEdgeGuard } from '../app/edge-guard.ts';
import { createHttpApp } from '../gateways/core/http-hygiene.ts';
import { installKeyAuth } from '../gateways/http/require-key.ts';
import { createLogger } from '../platform/logger.ts';
import { startNatsServer } from '../platform/nats-server.ts';
import { startTestAccounts } from '../test/support/accounts.ts';
import { connectTestNats, testConfig } from '../test/support/gateway.ts';
import { Histogram } from './lib/histogram.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);

const us = (ns: bigint) => Number(ns) / 1_000;
const summary = (h: Histogram) => ({
  p50: round(h.percentile(50)),
  p99: round(h.percentile(99)),
  count: h.count,
});
const round = (x: number) => Math.round(x * 10) / 10;

async function drive(url: string, headers: Record<string, string>, n: number): Promise<Histogram> {
  const h = new Histogram();
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const res = await fetch(url, { headers }); // keep-alive: one connection reused
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    h.record(us(process.hrtime.bigint() - t));
  }
  return h;
}

export async function run(): Promise<unknown> {
  const store = mkdtempSync(join(tmpdir(), 'bench-guard-'));
  const server = await startNatsServer({ storeDir: store });
  const config = testConfig();
  const nats = await connectTestNats(server.url, config);
  const accounts = await startTestAccounts(nats, config);
  const edge = await startEdgeGuard(nats, config, createLogger('silent'));
  const app = createHttpApp({ logger: false });
  const requireKey = installKeyAuth(app, edge.guard);
  app.get('/open', async () => ({ ok: true }));
  app.get('/guarded', { preHandler: requireKey(null) }, async () => ({ ok: true }));
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const out: Record<string, unknown> = {
      benchmark: 'guard',
      requests_per_case: REQUESTS,
      goal: 'added p50 ≤ 50 µs for a cached key',
    };
    const quant = (await accounts.key('quant')).key;
    const headers = { 'x-api-key': quant };
    await drive(`${base}/guarded`, headers, 2_000); // warm: key cached, JIT
    await drive(`${base}/open`, headers, 2_000);
    process.stderr.write('guard: http, quant key\n');
    // Alternate quarters so drift on a noisy machine hits both sides alike.
    const open = new Histogram();
    const guarded = new Histogram();
    for (let q = 0; q < 4; q++) {
      open.merge(await drive(`${base}/open`, headers, REQUESTS / 4));
      guarded.merge(await drive(`${base}/guarded`, headers, REQUESTS / 4));
    }
    out.http_quant = {
      route_without_guard_us: summary(open),
      route_with_guard_us: summary(guarded),
      added_p50_us: round(guarded.percentile(50) - open.percentile(50)),
      added_p99_us: round(guarded.percentile(99) - open.percentile(99)),
      ratio_p50_with_guard: round((guarded.percentile(50) / open.percentile(50)) * 100) / 100,
    };
    // admit() alone: Quant (no rate-limit I/O) flat out; Pro paced at 1,000/s, under its 2,000/s,
    // so the cost of its shared-bucket leases is included but nothing is refused.
    const admitOnce = async (key: string) => {
      const t = process.hrtime.bigint();
      const p = await edge.guard.admit({
        surface: 'simulation',
        region: 'us',
        headers: { 'x-api-key': key },
        query: {},
        requestId: 'bench',
        capability: null,
        stream: false,
      });
      const d = us(process.hrtime.bigint() - t);
      p.release();
      return d;
    };
    const quantAdmit = new Histogram();
    for (let i = 0; i < REQUESTS; i++) quantAdmit.record(await admitOnce(quant));
    const pro = (await accounts.key('pro')).key;
    const proAdmit = new Histogram();
    process.stderr.write('guard: admit, pro key at 1,000/s\n');
    for (let i = 0; i < 5_000; i++) {
      proAdmit.record(await admitOnce(pro));
      await new Promise((r) => setTimeout(r, 1));
    }
    out.admit_alone_us = { quant: summary(quantAdmit), pro_at_1000_per_s: summary(proAdmit) };
    return out;
  } finally {
    await app.close();
    await edge.part.stop();
    accounts.stop();
    await nats.nc.close();
    await server.stop();
    rmSync(store, { recursive: true, force: true });
  }
}
