/**
 * A caller that has gone costs no own-coin lookup, on every transport that resolves coins for a
 * request: the unified SSE stream, JSON-RPC (md_l2Book, answered through the latest-state view)
 * and gRPC unary (GetBook). The test's guard holds admission until the test lets it go (then admits
 * as an account, so a coin the platform does not know is looked up among the account's own); the
 * client goes away while it is held, the test waits until the edge's server has seen its
 * connection close, then lets admission go. A lookup (`STREAM.INFO` with a subjects filter, counted
 * by the test's own subscriber on `$JS.API.STREAM.INFO.>`) made then would be on behalf of nobody.
 * gRPC streams and disk-sync sessions are covered by transport-bounds-grpc and -disksync.
 * A control: the same SSE request, not abandoned, makes its one lookup (and is 404 coin_not_found).
 */
import http from 'node:http';
import type { Server as NetServer } from 'node:net';
import type { Subscription } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Guard, openGuard } from '../../gateways/core/guard.ts';
import { LatestState } from '../../gateways/core/latest-state.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildGrpcApp, type GrpcApp } from '../../gateways/grpc/app.ts';
import { http2ServersOf } from '../../gateways/grpc/ping-guard.ts';
import { buildUnifiedApp, type UnifiedApp } from '../../gateways/unified/app.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { keyMetadata, ownPriceClient } from '../support/grpc.ts';
import { rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

const config = testConfig();
let server: TestNats;
let nats: Nats;
let tail: LiveTail;
let latest: LatestState;
let unified: UnifiedApp;
let sseUrl: string;
let jsonrpc: TestJsonRpc;
let grpc: GrpcApp;
let grpcTarget: string;

/** Admission waits for `release()`; `reached` resolves once a request is waiting in it. */
let gate: { reached: Promise<void>; release: () => void } | null = null;
let admitted = 0;
const guard: Guard = {
  async admit(req) {
    const g = gate;
    if (g) {
      (g as unknown as { arrive: () => void }).arrive();
      await new Promise<void>((r) => {
        g.release = r;
      });
    }
    admitted++;
    return { ...(await openGuard.admit(req)), accountId: 'acct_gone', keyId: 'key_gone' };
  },
};
function holdAdmission(): void {
  let arrive = () => {};
  const reached = new Promise<void>((r) => {
    arrive = r;
  });
  gate = { reached, release: () => {} };
  Object.assign(gate, { arrive });
}

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  const log = createLogger(config.LOG_LEVEL, 'gateway');
  tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  latest = await LatestState.start(nats, tail, log);
  unified = buildUnifiedApp({ config, nats, tail, guard, log, region: 'us' });
  sseUrl = await unified.app.listen({ host: '127.0.0.1', port: 0 });
  jsonrpc = await startTestJsonRpc(nats, config, { guard });
  grpc = buildGrpcApp({ config, nats, tail, latest, guard, log, region: 'us' });
  grpcTarget = `127.0.0.1:${await grpc.listen('127.0.0.1', 0)}`;
}, 60_000);

afterAll(async () => {
  gate?.release();
  await grpc?.shutdown();
  await jsonrpc?.close();
  await unified?.shutdown();
  latest?.stop();
  tail?.stop();
  await nats?.nc.close();
  await server?.cleanup();
});

/** Counts own-coin lookups (`STREAM.INFO` with a subjects filter) while it listens. */
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
      // A lookup goes out within the turns after admission; two more turns and a flush take it in.
      for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
      await nats.nc.flush();
      sub.unsubscribe();
      return lookups;
    },
  };
}

const connections = (s: NetServer) =>
  new Promise<number>((resolve, reject) => s.getConnections((e, n) => (e ? reject(e) : resolve(n))));

/** Waits until `servers` hold no connection: the edge has seen the client's close. */
async function closedOn(servers: NetServer[], what: string): Promise<void> {
  await eventually(
    async () => (await Promise.all(servers.map(connections))).every((n) => n === 0),
    10_000,
    `${what}: the edge saw the connection close`,
  );
  await new Promise((r) => setImmediate(r));
}

/** A request on a connection of its own, closed after it (no pooled connection stays open). */
function send(url: string, method = 'GET', body?: string): http.ClientRequest {
  const req = http.request(url, {
    method,
    agent: false,
    headers: body ? { 'content-type': 'application/json' } : {},
  });
  req.on('error', () => {});
  req.end(body);
  return req;
}

/** Holds admission, runs `start` (the request), then `leave` (the client goes), then lets it in. */
async function abandonedLookups(start: () => void, leave: () => Promise<void>): Promise<number> {
  holdAdmission();
  const before = admitted;
  const probe = await streamInfoProbe();
  start();
  await gate?.reached;
  await leave();
  const g = gate;
  gate = null;
  g?.release();
  await eventually(() => admitted === before + 1, 5_000, 'admitted after the client left');
  return probe.stop();
}

describe('a caller gone while admitted costs no own-coin lookup', () => {
  it('SSE: the same request, not abandoned, makes one lookup (control)', async () => {
    const probe = await streamInfoProbe();
    const status = await new Promise<number>((resolve) =>
      send(`${sseUrl}/api/v1/unified/stream?coin=QGONECTL`).on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }),
    );
    expect(status).toBe(404);
    expect(await probe.stop()).toBe(1);
  });

  it('SSE /api/v1/unified/stream', async () => {
    let req: http.ClientRequest | null = null;
    const lookups = await abandonedLookups(
      () => {
        req = send(`${sseUrl}/api/v1/unified/stream?coin=QGONESSE`);
      },
      async () => {
        req?.destroy();
        await closedOn([unified.app.server], 'SSE');
      },
    );
    expect(lookups).toBe(0);
  });

  it('JSON-RPC md_l2Book', async () => {
    let req: http.ClientRequest | null = null;
    const lookups = await abandonedLookups(
      () => {
        req = send(jsonrpc.url, 'POST', JSON.stringify(rpc('md_l2Book', ['QGONERPC'])));
      },
      async () => {
        req?.destroy();
        await closedOn([jsonrpc.rpc.app.server], 'JSON-RPC');
      },
    );
    expect(lookups).toBe(0);
  });

  it('gRPC GetBook', async () => {
    const client = ownPriceClient(grpcTarget);
    let call: { cancel(): void } | null = null;
    const lookups = await abandonedLookups(
      () => {
        call = client.GetBook({ coin: 'QGONEGRPC', depth: 5 }, keyMetadata('k'), () => {});
      },
      async () => {
        call?.cancel();
        client.close();
        await closedOn(http2ServersOf(grpc.server), 'gRPC');
      },
    );
    expect(lookups).toBe(0);
  });
});
