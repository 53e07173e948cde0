/**
 * Maintenance windows on the gRPC edge, scheduled through the real status API (`POST
 * /api/v1/status/maintenance` with a `status:admin` key of an operator account) and heard by the
 * edge through its status projection, with a real grpc-js client:
 * - a window for another transport (JSON-RPC of the same region, gRPC of the other region) leaves
 *   the edge serving: calls succeed, health SERVING;
 * - a gRPC window of the edge's region ends the open stream with UNAVAILABLE (`x-error-code`
 *   maintenance) when it starts; new calls and new streams get UNAVAILABLE with `retry-after-ms`
 *   counting to the window's end; grpc.health.v1 says NOT_SERVING (overall and for the service);
 * - when the window ends by itself, or when an active one is deleted, the same edge serves again
 *   and health is SERVING, with no restart.
 */
import { type Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, type PriceClient, priceClient, trailers, unary } from '../support/grpc.ts';
import { healthStatus } from '../support/grpc-discovery.ts';
import { type InProcessGrpc, startInProcessGrpc } from '../support/grpc-edge.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { startTestStatusApi, type TestStatusApi } from '../support/status-api.ts';

const OPERATOR = 'ops@example.com';
const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestStatusApi;
let edge: InProcessGrpc;
let client: PriceClient;
let adminKey: string;
let userKey: string;

type Window = { id: string; starts_at: string; ends_at: string };

async function schedule(startsInMs: number, endsInMs: number, regions: string[], transports: string[]) {
  const now = Date.now();
  const res = await fetch(`${http.url}/api/v1/status/maintenance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': adminKey },
    body: JSON.stringify({
      regions,
      transports,
      starts_at: new Date(now + startsInMs).toISOString(),
      ends_at: new Date(now + endsInMs).toISOString(),
      message: 'database upgrade',
    }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Window;
}

async function cancel(w: Window): Promise<void> {
  const res = await fetch(`${http.url}/api/v1/status/maintenance/${w.id}`, {
    method: 'DELETE',
    headers: { 'x-api-key': adminKey },
  });
  expect(res.status).toBe(204);
}

const blockNumber = () => unary(client, 'GetBlockNumber', {}, keyMetadata(userKey));
const health = async () => [
  await healthStatus(edge.target),
  await healthStatus(edge.target, 'price.PriceService'),
];
const serving = async () => (await health()).every((s) => s === 'SERVING');
const notServing = async () => (await health()).every((s) => s === 'NOT_SERVING');

/** A StreamEvents stream, resolved once its headers arrived (the edge admitted and opened it). */
async function openedStream() {
  const s = collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(userKey)));
  const headers = await Promise.race([
    new Promise<Metadata>((r) => s.call.once('metadata', r)),
    s.ended.then((e) => {
      throw new Error(`stream refused: ${e?.code} ${e?.details}`);
    }),
  ]);
  return { ...s, headers };
}

/** The refusal of a new call (unary `GetBlockNumber` or a stream) and when it was asked. */
async function refusedCall(
  kind: 'unary' | 'stream',
): Promise<{ err: ServiceError; before: number; after: number }> {
  const before = Date.now();
  let err: ServiceError | null | undefined;
  if (kind === 'unary') err = (await blockNumber()).error;
  else {
    const s = collect(client.StreamEvents({}, keyMetadata(userKey)));
    err = await s.ended;
    expect(s.messages, 'a refused stream delivers no message').toEqual([]);
  }
  const after = Date.now();
  if (!err) throw new Error(`${kind} call was not refused`);
  return { err, before, after };
}

/** The refusal is UNAVAILABLE `maintenance` with retry-after-ms counting to the window's end. */
function expectMaintenanceRefusal(r: { err: ServiceError; before: number; after: number }, w: Window): void {
  expect(r.err.code).toBe(status.UNAVAILABLE);
  const t = trailers(r.err);
  expect(t['x-error-code']).toBe('maintenance');
  expect(t['x-request-id']).toMatch(/^req_/);
  const retryMs = Number(t['retry-after-ms']);
  const endsAt = Date.parse(w.ends_at);
  // The milliseconds to the end, not rounded to seconds: never before the end, never after it.
  expect(retryMs).toBeGreaterThanOrEqual(endsAt - r.after);
  expect(retryMs).toBeLessThanOrEqual(endsAt - r.before);
}

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  const op = await accounts.service.register({
    email: OPERATOR,
    password: 'Str0ng-Passw0rd!',
    plan: 'pro',
    jp_access: false,
  });
  await accounts.grantOperator(OPERATOR);
  adminKey = (await accounts.service.createKey(op.account_id, { name: 'ops', scopes: ['status:admin'] })).key;
  userKey = (await accounts.key('pro')).key;
  http = await startTestStatusApi(nats, config, accounts);
  edge = await startInProcessGrpc(nats, config, 'us');
  client = priceClient(edge.target);
  await eventually(serving, 20_000, 'health SERVING at start');
}, 60_000);

afterAll(async () => {
  client?.close();
  await edge?.close();
  await http?.close();
  await base?.close();
});

describe('a maintenance window for gRPC', () => {
  it('leaves the edge alone when it covers another transport or the other region', async () => {
    const jsonrpc = await schedule(-1_000, 3_600_000, ['us'], ['jsonrpc']);
    const jp = await schedule(-1_000, 3_600_000, ['jp'], ['grpc']);
    // Both windows have reached this edge's process (its projection)…
    await eventually(
      () => edge.maintenance.active('us', 'jsonrpc') && edge.maintenance.active('jp', 'grpc'),
      10_000,
      'the windows projected',
    );
    // …and the edge still serves, through at least one health re-check (every second).
    const stream = await openedStream();
    const checkedAfter = Date.now() + 1_500;
    await eventually(() => Date.now() > checkedAfter, 5_000, 'a health re-check');
    expect(await health()).toEqual(['SERVING', 'SERVING']);
    expect((await blockNumber()).value?.number).toBeGreaterThanOrEqual(0);
    expect(await Promise.race([stream.ended.then(() => 'ended'), Promise.resolve('open')])).toBe('open');
    stream.call.cancel();
    expect((await stream.ended)?.code).toBe(status.CANCELLED);
    await cancel(jsonrpc);
    await cancel(jp);
  });

  it('ends the open stream when it starts, refuses new calls until its end, then serves again', async () => {
    const stream = await openedStream();
    expect(stream.headers.get('x-request-id')[0]).toMatch(/^req_/);
    // Starts in 1.5 s (a timer in the edge's process), ends 10 s from now.
    const window = await schedule(1_500, 10_000, ['us'], ['grpc']);
    const ended = await stream.ended;
    const endedAt = Date.now();
    expect(ended?.code).toBe(status.UNAVAILABLE);
    expect(trailers(ended ?? undefined)['x-error-code']).toBe('maintenance');
    // The ended stream is told when to come back too: retry-after-ms to the window's end.
    const streamRetryMs = Number(trailers(ended ?? undefined)['retry-after-ms']);
    expect(streamRetryMs).toBeGreaterThanOrEqual(Date.parse(window.ends_at) - endedAt);
    // In milliseconds: no more than from the window's start to its end (its timer, as below, ±50 ms).
    expect(streamRetryMs).toBeLessThanOrEqual(Date.parse(window.ends_at) - Date.parse(window.starts_at) + 50);
    // Not before the window started (the edge's timer fires at its start, not at scheduling).
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(window.starts_at) - 50);

    expectMaintenanceRefusal(await refusedCall('unary'), window);
    expectMaintenanceRefusal(await refusedCall('stream'), window);
    await eventually(notServing, 10_000, 'health NOT_SERVING during the window');

    // The window ends by itself: the same edge serves again.
    await eventually(async () => (await blockNumber()).value, 30_000, 'GetBlockNumber after the window');
    await eventually(serving, 10_000, 'health SERVING after the window');
    const again = await openedStream();
    again.call.cancel();
  }, 60_000);

  it('serves again at once when an active window is deleted', async () => {
    const window = await schedule(-1_000, 3_600_000, ['us'], ['grpc']);
    await eventually(async () => (await blockNumber()).error, 10_000, 'the window in force');
    const refused = await refusedCall('unary');
    expectMaintenanceRefusal(refused, window);
    expect(Number(trailers(refused.err)['retry-after-ms'])).toBeGreaterThan(3_000_000);
    await eventually(notServing, 10_000, 'health NOT_SERVING during the window');

    await cancel(window);
    await eventually(async () => (await blockNumber()).value, 10_000, 'GetBlockNumber after the deletion');
    await eventually(serving, 10_000, 'health SERVING after the deletion');
    const again = await openedStream();
    again.call.cancel();
  }, 60_000);
});
