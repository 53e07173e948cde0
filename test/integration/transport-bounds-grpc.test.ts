/**
 * What one client can make the gRPC edge hold or ask of JetStream, with real grpc-js and http2
 * clients on a private nats-server (JetStream API requests counted by a subscriber of the test's own
 * on `$JS.API.STREAM.INFO.>`):
 * - HTTP/2: the server announces SETTINGS_MAX_CONCURRENT_STREAMS = 100 (unlimited before);
 * - grpc.health.v1 Watch (no key): a watch of a service the edge does not have gets SERVICE_UNKNOWN
 *   and stays open, as the health checking protocol says, holding only its call: 300 distinct names
 *   are 300 watches, none once cancelled (grpc-health-check kept a map entry per name); a watch of
 *   '' still follows the status; 1,000 watches at once of any names, one more is
 *   RESOURCE_EXHAUSTED (subscription_limit);
 * - the bidirectional Stream: a subscribe that takes the coins past 100 ends it INVALID_ARGUMENT
 *   (invalid_params); 20 changes of a stream over 5 of the account's own coins cost no further
 *   own-coin lookup (every change resolved every coin again before: 2 requests per coin);
 *   100 pings written at once are all answered, in order (reading pauses while changes wait).
 */
import http2 from 'node:http2';
import { type Client, credentials, loadPackageDefinition, status } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Subscription } from '@nats-io/transport-node';
import { protoPath as healthProto } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownSubject } from '../../contracts/subjects.ts';
import {
  GRPC_HEALTH_MAX_WATCHES,
  GRPC_MAX_CONCURRENT_STREAMS,
  MAX_COINS_PER_SUBSCRIPTION,
} from '../../contracts/transport-limits.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, type PriceClient, priceClient, trailers } from '../support/grpc.ts';
import { type InProcessGrpc, startInProcessGrpc } from '../support/grpc-edge.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: InProcessGrpc;
let client: PriceClient;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  edge = await startInProcessGrpc(nats, config);
  client = priceClient(edge.target);
}, 60_000);

afterAll(async () => {
  client?.close();
  await edge?.close();
  await base?.close();
});

/** A grpc.health.v1 client from the standard proto. */
// biome-ignore lint/suspicious/noExplicitAny: a client made at run time
function healthClient(target: string, ownConnection = false): Client & Record<string, any> {
  const def = loadSync(healthProto, { keepCase: true, enums: String, defaults: true, oneofs: true });
  // biome-ignore lint/suspicious/noExplicitAny: a client made at run time
  const Health = (loadPackageDefinition(def) as any).grpc.health.v1.Health;
  const options = ownConnection ? { 'grpc.use_local_subchannel_pool': 1 } : {};
  return new Health(target, credentials.createInsecure(), options);
}

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
    count: () => lookups,
    async stop(): Promise<number> {
      await nats.nc.flush();
      sub.unsubscribe();
      return lookups;
    },
  };
}

describe('HTTP/2', () => {
  it('announces at most 100 concurrent streams per connection', async () => {
    const session = http2.connect(`http://${edge.target}`);
    const settings = await new Promise<http2.Settings>((resolve, reject) => {
      session.once('remoteSettings', resolve);
      session.once('error', reject);
    });
    session.close();
    expect(settings.maxConcurrentStreams).toBe(GRPC_MAX_CONCURRENT_STREAMS);
  });
});

describe('grpc.health.v1 Watch', () => {
  it('keeps a watch of an unknown service open after SERVICE_UNKNOWN (the protocol); 300 names hold only their calls', async () => {
    // They stay open: 100 streams per connection, so 3 connections.
    const clients = [0, 1, 2].map(() => healthClient(edge.target, true));
    const watches = clients.flatMap((c, k) =>
      Array.from({ length: 100 }, (_, i) => collect(c.Watch({ service: `no.such.Service${k * 100 + i}` }))),
    );
    await eventually(() => watches.every((w) => w.messages.length > 0), 20_000, 'every watch answered');
    for (const w of watches) expect(w.messages).toEqual([{ status: 'SERVICE_UNKNOWN' }]);
    // Still open: the call is not ended (it was ended NOT_FOUND before), and counts in the cap.
    const ended = await Promise.race([
      Promise.all(watches.map((w) => w.ended)).then(() => true),
      new Promise((r) => setImmediate(r, false)),
    ]);
    expect(ended).toBe(false);
    expect(edge.app.health.watching()).toBe(300);
    const health = healthClient(edge.target);
    const overall = collect(health.Watch({ service: '' }));
    await eventually(() => overall.messages.length > 0, 10_000, 'the overall status');
    expect(overall.messages[0]).toEqual({ status: 'SERVING' });
    overall.call.cancel();
    for (const w of watches) w.call.cancel();
    // Nothing is kept once they go.
    await eventually(() => edge.app.health.watching() === 0, 10_000, 'the watches dropped');
    for (const c of [health, ...clients]) c.close();
  });

  it('keeps at most 1,000 watches open: one more is RESOURCE_EXHAUSTED', async () => {
    // 100 streams per connection: 10 connections of 100 watches each.
    const connections = Array.from({ length: GRPC_HEALTH_MAX_WATCHES / GRPC_MAX_CONCURRENT_STREAMS }, () =>
      healthClient(edge.target, true),
    );
    const watches = connections.flatMap((c) =>
      Array.from({ length: GRPC_MAX_CONCURRENT_STREAMS }, () => collect(c.Watch({ service: '' }))),
    );
    await eventually(() => watches.every((w) => w.messages.length > 0), 30_000, 'every watch answered');
    const extra = healthClient(edge.target, true);
    // Unknown names count in the same cap.
    const refused = collect(extra.Watch({ service: 'no.such.Service' }));
    const err = await refused.ended;
    expect(err?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(trailers(err ?? undefined)['x-error-code']).toBe('subscription_limit');
    for (const w of watches) w.call.cancel();
    for (const c of [...connections, extra]) c.close();
  }, 60_000);
});

describe('the bidirectional Stream', () => {
  it('ends INVALID_ARGUMENT when a subscribe takes its coins past 100', async () => {
    const { key } = await accounts.key('quant');
    const call = client.Stream(keyMetadata(key));
    const got = collect(call);
    call.write({ open: { coins: ['BTC'] } });
    call.write({ ping: { id: 'opened' } });
    await eventually(() => got.messages.some((m) => m.pong), 10_000, 'the stream open');
    const coins = Array.from({ length: MAX_COINS_PER_SUBSCRIPTION }, (_, i) => `QG${i}`);
    call.write({ subscribe: { coins } });
    const err = await got.ended;
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(trailers(err ?? undefined)['x-error-code']).toBe('invalid_params');
    expect(err?.details).toContain(`at most ${MAX_COINS_PER_SUBSCRIPTION} coins`);
  });

  it('resolves an account’s own coins once, not again on each change', async () => {
    const owner = await accounts.key('quant');
    const own = ['OWNA', 'OWNB', 'OWNC', 'OWND', 'OWNE'];
    await publishNow(
      nats.js,
      own.map((c, i) => trade(c, i)),
      (e) => ownSubject(owner.accountId, e.source, e.symbol, e.event_type),
    );
    const probe = await streamInfoProbe();
    const call = client.Stream(keyMetadata(owner.key));
    const got = collect(call);
    call.write({ open: { coins: own } });
    const types = ['trade', 'book'];
    for (let i = 0; i < 20; i++) {
      call.write({ subscribe: { event_types: [types[i % 2]] } });
      call.write({ ping: { id: `c${i}` } });
    }
    await eventually(
      () => got.messages.some((m) => (m.pong as { id?: string })?.id === 'c19'),
      20_000,
      'the changes applied',
    );
    const lookups = await probe.stop();
    expect(got.messages.filter((m) => m.warning)).toEqual([]);
    // Before: each of the 20 changes resolved the 5 own coins again (2 requests each).
    expect(lookups).toBe(1);
    call.cancel();
  });

  it('answers 100 pings written at once, in order', async () => {
    const { key } = await accounts.key('quant');
    const call = client.Stream(keyMetadata(key));
    const got = collect(call);
    call.write({ open: { coins: ['BTC'] } });
    for (let i = 0; i < 100; i++) call.write({ ping: { id: `p${i}` } });
    await eventually(() => got.messages.filter((m) => m.pong).length === 100, 20_000, 'every pong');
    expect(got.messages.filter((m) => m.pong).map((m) => (m.pong as { id: string }).id)).toEqual(
      Array.from({ length: 100 }, (_, i) => `p${i}`),
    );
    call.cancel();
  });
});
