/**
 * Keepalive abuse on the gRPC edge (gateways/grpc/ping-guard.ts), with HTTP/2 PING frames sent by
 * node:http2 directly (grpc-js clients rate-limit their own pings):
 * - a connection that pings faster than GRPC_MIN_PING_INTERVAL_MS more than GRPC_MAX_PING_STRIKES
 *   times gets GOAWAY with ENHANCE_YOUR_CALM and the debug data `too_many_pings`, then is closed;
 * - a connection that pings no faster than allowed keeps its session;
 * - the process goes on serving: a grpc-js stream on another connection is untouched and new
 *   calls succeed.
 */
import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, type PriceClient, type TestGrpc, unary } from '../support/grpc.ts';
import { type GrpcStack, startGrpcStack } from '../support/grpc-stack.ts';

const MIN_INTERVAL_MS = 200;
const config = testConfig({
  GRPC_MIN_PING_INTERVAL_MS: String(MIN_INTERVAL_MS),
  GRPC_MAX_PING_STRIKES: '2',
  SSE_HEARTBEAT_MS: '200',
});
let edge: TestGrpc;
let client: PriceClient;
let key: string;
const sessions: ClientHttp2Session[] = [];

type Goaway = { errorCode: number; opaque: string };

/** A raw HTTP/2 connection to the edge, recording the GOAWAY it gets and when it closes. */
function rawSession() {
  const session = connect(`http://${edge.target}`);
  sessions.push(session);
  session.on('error', () => {}); // a session the server closes may error; what matters is below
  const goaway = new Promise<Goaway>((resolve) =>
    session.on('goaway', (errorCode, _last, opaque) =>
      resolve({ errorCode, opaque: opaque?.toString() ?? '' }),
    ),
  );
  const closed = new Promise<void>((resolve) => session.on('close', resolve));
  const connected = new Promise<void>((resolve) => session.once('connect', () => resolve()));
  const ping = () =>
    new Promise<boolean>((resolve) => {
      try {
        if (!session.ping((err) => resolve(!err))) resolve(false);
      } catch {
        resolve(false);
      }
    });
  return { session, goaway, closed, connected, ping };
}

const waitMs = async (ms: number) => {
  const until = Date.now() + ms;
  await eventually(() => Date.now() >= until, ms + 5_000, `${ms} ms to pass`, 10);
};

let stack: GrpcStack;

beforeAll(async () => {
  stack = await startGrpcStack(config, 'pro');
  ({ edge, client, key } = stack);
}, 60_000);

afterAll(async () => {
  for (const s of sessions) s.destroy();
  await stack?.close();
});

describe('the ping guard', () => {
  it('sends GOAWAY ENHANCE_YOUR_CALM (too_many_pings) to a connection that pings too often', async () => {
    // A stream on another connection, open through the abuse.
    const bystander = collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(key)));
    await eventually(() => bystander.messages.some((m) => m.kind === 'heartbeat'), 10_000, 'a heartbeat');

    const rude = rawSession();
    await rude.connected;
    // Twenty pings at once: far more than two strikes within the minimum interval.
    const acks = Array.from({ length: 20 }, () => rude.ping());
    const goaway = await rude.goaway;
    expect(goaway.errorCode).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    expect(goaway.opaque).toBe('too_many_pings');
    await rude.closed;
    await Promise.all(acks);

    // The bystander's stream is still open and heartbeating; new calls succeed.
    const seen = bystander.messages.length;
    await eventually(() => bystander.messages.length > seen, 10_000, 'a later heartbeat');
    expect(await Promise.race([bystander.ended.then(() => 'ended'), Promise.resolve('open')])).toBe('open');
    expect((await unary(client, 'GetBlockNumber', {}, keyMetadata(key))).value).toBeDefined();
    bystander.call.cancel();
    await bystander.ended;
  });

  it('keeps a connection that pings no faster than allowed', async () => {
    const polite = rawSession();
    let goaway: Goaway | null = null;
    void polite.goaway.then((g) => {
      goaway = g;
    });
    await polite.connected;
    for (let i = 0; i < 6; i++) {
      expect(await polite.ping(), `ping ${i} acknowledged`).toBe(true);
      await waitMs(2 * MIN_INTERVAL_MS);
    }
    expect(goaway).toBeNull();
    expect(polite.session.closed).toBe(false);
    polite.session.close();
  });
});
