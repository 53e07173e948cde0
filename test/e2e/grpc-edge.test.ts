/**
 * The gRPC edge as deployed: two real `gateway grpc --region us` processes on one private
 * nats-server, events published from this process.
 * - A client that knows no proto lists the services by reflection, builds price.PriceService from
 *   the descriptors it returns, and calls GetMidPrice (the key in metadata).
 * - Revoking a key ends its open streams on both processes with UNAUTHENTICATED within 1 s.
 * - grpc.health.v1 (overall and price.PriceService, no key) is NOT_SERVING while NATS is down
 *   and SERVING again once it is back.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, priceClient, trailers } from '../support/grpc.ts';
import { healthStatus, listServices, reflectedClient } from '../support/grpc-discovery.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';

const config = testConfig();
let server: TestNats;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
let targets: string[];

function startEdge(): Promise<string> {
  const p = startService(['gateway', 'grpc', '--region', 'us'], {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    GRPC_PORT_US: '0',
  });
  processes.push(p);
  return p.waitForLog((l) => l.msg === 'grpc listening', 60_000).then((l) => `127.0.0.1:${l.port}`);
}

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  accounts = await startTestAccounts(nats, config);
  targets = await Promise.all([startEdge(), startEdge()]);
}, 120_000);

afterAll(async () => {
  await killAll(processes, 'SIGTERM');
  accounts?.stop();
  await nats?.nc.close();
  await server?.cleanup();
});

it('is found by reflection and answers GetMidPrice to a client that knows no proto', async () => {
  const target = targets[0] as string;
  expect(await listServices(target)).toEqual(
    expect.arrayContaining(['price.PriceService', 'grpc.health.v1.Health']),
  );
  const publisher = publishAtRate(nats.js, ['BTC'], 200, { booksEvery: 2 });
  await eventually(() => publisher.published() >= 10);
  await publisher.stop();
  const client = await reflectedClient(target, 'price.PriceService');
  const { key } = await accounts.key('pro');
  const mid = await eventually(
    () =>
      new Promise<Record<string, unknown> | null>((resolve) =>
        client.GetMidPrice(
          { coin: 'BTC' },
          keyMetadata(key),
          (err: Error | null, r: Record<string, unknown>) => resolve(err ? null : r),
        ),
      ),
  );
  client.close();
  expect(mid).toMatchObject({ coin: 'BTC', source: 'synthetic' });
  expect(mid.price).toBeGreaterThan(0);
});

it('ends open streams on both processes with UNAUTHENTICATED within 1 s of a revocation', async () => {
  const owner = await accounts.key('quant');
  const clients = (targets as string[]).map(priceClient);
  const streams = clients.flatMap((c) =>
    [0, 1].map(() => collect(c.StreamEvents({ coins: ['BTC'] }, keyMetadata(owner.key)))),
  );
  await Promise.all(streams.map((s) => new Promise((r) => s.call.once('metadata', r))));
  const revokedAt = performance.now();
  await accounts.service.revokeKey(owner.accountId, owner.keyId);
  const ends = await Promise.all(streams.map((s) => s.ended.then((e) => ({ e, at: performance.now() }))));
  for (const { e } of ends) {
    expect(e?.code).toBe(status.UNAUTHENTICATED);
    expect(trailers(e ?? undefined)['x-error-code']).toBe('key_revoked');
  }
  expect(Math.max(...ends.map((x) => x.at)) - revokedAt).toBeLessThan(1_000);
  for (const c of clients) c.close();
});

it('health turns NOT_SERVING while NATS is down and SERVING when it returns', async () => {
  const target = targets[1] as string;
  await eventually(async () => (await healthStatus(target)) === 'SERVING');
  expect(await healthStatus(target, 'price.PriceService')).toBe('SERVING');
  await nats.nc.close();
  accounts.stop();
  await server.kill('SIGKILL');
  await eventually(async () => (await healthStatus(target)) === 'NOT_SERVING', 15_000, 'NOT_SERVING');
  expect(await healthStatus(target, 'price.PriceService')).toBe('NOT_SERVING');
  server = await server.crashAndRestart();
  await eventually(
    async () => (await healthStatus(target, 'price.PriceService')) === 'SERVING',
    30_000,
    'SERVING',
  );
  expect(await healthStatus(target)).toBe('SERVING');
});
