/**
 * Disk-sync close codes that need an operator or a slow reader to provoke, on one private
 * nats-server, with the real `ws` client:
 * - 4050: a maintenance window scheduled through the real status API (`gateway http`) reaches a
 *   real `gateway disksync` process; its open connection is closed with 4050 (after an `error`
 *   message `maintenance`), a new one is refused with 4050 while the window lasts, and admitted
 *   again once the window is cancelled, with no restart;
 * - 1013 + backpressure (an in-process edge, so its ConnectionRegistry can be read): a live client
 *   that stops reading is closed with 1013 (`too_slow`) and has received a gapless prefix of the
 *   log (resumable with `from_seq`); what the gateway held for it — queued plus socket-buffered
 *   bytes, the connection's high-water mark, kept at every change — went past the backlog bound
 *   (backpressure was reached) and never past SOCKET_BUFFER + 2 × (bound + one frame) + one
 *   frame; a fast client on the same gateway receives every event;
 * - the log itself gone under the gateway (the MD stream deleted): a resume from `from_seq` that
 *   cannot be served is closed with 4009 `feed_unavailable`, never left open or closed with 1011
 *   (1011 is test/e2e/disksync-internal-error.test.ts: an event over the 4 MB frame limit).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { SOCKET_BUFFER } from '../../gateways/core/buffered-sink.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import {
  connectSync,
  type InProcessDisksync,
  refusal,
  type SyncClient,
  startDisksyncEdge,
  startInProcessDisksync,
  stopAll,
} from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import { type ServiceProcess, startService } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const OPERATOR = 'ops@example.com';
const PASSWORD = 'Str0ng-Passw0rd!';
const MAX_BACKLOG = 256 * 1024;
/** Larger than any one event frame the publisher below makes (a 40-level book is about 2 KiB). */
const FRAME = 8 * 1024;
const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
const clients: SyncClient[] = [];
let httpUrl: string;
let diskUrl: string;
let adminKey: string;
let inproc: InProcessDisksync;

function open(url: string, opts: Parameters<typeof connectSync>[1] = {}): SyncClient {
  const c = connectSync(url, opts);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  const op = await accounts.service.register({
    email: OPERATOR,
    password: PASSWORD,
    plan: 'pro',
    jp_access: false,
  });
  await accounts.grantOperator(OPERATOR);
  adminKey = (await accounts.service.createKey(op.account_id, { name: 'ops', scopes: ['status:admin'] })).key;
  const http = startService(['gateway', 'http'], {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    HTTP_PORT: '0',
  });
  processes.push(http);
  const edge = startDisksyncEdge(server.url, config.API_KEY_SECRET, 'us', {}, processes);
  [httpUrl, diskUrl, inproc] = await Promise.all([
    http.waitForLog((l) => l.msg === 'http (console) listening', 90_000).then((l) => l.url as string),
    edge.url,
    startInProcessDisksync(server.url, { maxBacklogBytes: MAX_BACKLOG }),
  ]);
}, 180_000);

afterAll(async () => {
  await stopAll(clients, processes, 'SIGTERM');
  await inproc?.close();
  await base?.close();
});

describe('4050: a maintenance window', () => {
  const schedule = async (startsInMs: number, endsInMs: number, transports: string[]) => {
    const now = Date.now();
    const res = await fetch(`${httpUrl}/api/v1/status/maintenance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': adminKey },
      body: JSON.stringify({
        regions: ['us'],
        transports,
        starts_at: new Date(now + startsInMs).toISOString(),
        ends_at: new Date(now + endsInMs).toISOString(),
        message: 'database upgrade',
      }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string };
  };
  const cancel = async (id: string) => {
    const res = await fetch(`${httpUrl}/api/v1/status/maintenance/${id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': adminKey },
    });
    expect(res.status).toBe(204);
  };
  /** Whether a new connection of `key` is admitted (caught up) or refused (its close code). */
  const probe = async (key: string): Promise<true | number> => {
    const c = open(diskUrl, { key });
    c.send({ op: 'subscribe', id: 'p' });
    const admitted = await Promise.race([
      c.control('caught_up').then(() => true as const),
      c.closed.then((x) => x.code),
    ]);
    await c.close();
    return admitted;
  };

  it('closes the open connection with 4050, refuses new ones with 4050, admits again once cancelled', async () => {
    const { key } = await accounts.key('quant');
    const c = open(diskUrl, { key });
    c.send({ op: 'subscribe', id: 's' });
    await c.control('caught_up');

    // A window of another transport leaves the connection alone.
    const other = await schedule(-1_000, 3_600_000, ['jsonrpc']);
    expect(await probe((await accounts.key('quant')).key)).toBe(true);
    await cancel(other.id);

    const window = await schedule(-1_000, 3_600_000, ['disksync']);
    const closed = await refusal(c);
    expect(closed).toMatchObject({
      code: 4050,
      error: { type: 'error', code: 'maintenance', close_code: 4050 },
    });
    expect(closed.reason.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(closed.reason)).toBeLessThanOrEqual(123);

    // The upgrade completes, then the `error` message and 4050.
    const refused = await refusal(open(diskUrl, { key }));
    expect(refused).toMatchObject({ code: 4050, error: { code: 'maintenance', close_code: 4050 } });

    await cancel(window.id);
    await eventually(async () => (await probe(key)) === true, 30_000, 'admitted after the window');
  }, 90_000);
});

describe('1013: a live client that stops reading', () => {
  it('is closed with 1013 after a gapless prefix, memory stays bounded, a fast client gets everything', async () => {
    const { registry } = inproc.edge;
    const fast = open(inproc.url);
    fast.send({ op: 'subscribe', id: 'f' });
    const slow = open(inproc.url);
    slow.send({ op: 'subscribe', id: 's' });
    const fastFrom = (await fast.control('subscribed')).after_seq as number;
    const slowFrom = (await slow.control('subscribed')).after_seq as number;
    await Promise.all([fast.control('caught_up'), slow.control('caught_up')]);
    await eventually(() => registry.size === 2, 5_000, 'both connections registered');
    slow.ws.pause(); // stops reading: the server's socket buffers fill up

    const publisher = publishAtRate(inproc.nats.js, ['BTC', 'ETH'], 1_000, { booksEvery: 2, bookLevels: 40 });
    await eventually(() => registry.size === 1, 60_000, 'the slow client closed by the server', 5);
    await publisher.stop();
    slow.ws.resume();
    const closed = await refusal(slow);
    expect(closed).toMatchObject({ code: 1013, error: { code: 'too_slow', close_code: 1013 } });
    expect(closed.reason).toMatch(/from_seq/);

    // What it received is the log from where it started, no gap: it resumes with from_seq.
    const slowSeqs = slow.events.map((e) => e.seq);
    expect(slowSeqs.length).toBeGreaterThan(0);
    expect(slowSeqs).toEqual(Array.from({ length: slowSeqs.length }, (_, i) => slowFrom + 1 + i));

    // Backpressure was reached, and what the gateway held stayed under the bound.
    const highWater = registry.maxHighWaterBytes();
    expect(highWater, 'the slow client never reached backpressure').toBeGreaterThan(MAX_BACKLOG);
    expect(highWater).toBeLessThanOrEqual(SOCKET_BUFFER + 2 * (MAX_BACKLOG + FRAME) + FRAME);

    // The fast client, on the same gateway, got every event, in order, and is still open.
    const last_seq = await lastSeq(inproc.nats);
    await eventually(() => fast.events.at(-1)?.seq === last_seq, 30_000, 'the fast client caught up');
    expect(fast.events.map((e) => e.seq)).toEqual(
      Array.from({ length: last_seq - fastFrom }, (_, i) => fastFrom + 1 + i),
    );
    expect(registry.size).toBe(1);
    expect(fast.ws.readyState).toBe(fast.ws.OPEN);
    await fast.close();
  }, 120_000);
});

describe('the log gone under the gateway (no 1011: a catalogue row)', () => {
  it('a resume the log can no longer serve (the MD stream deleted) is closed with 4009 feed_unavailable', async () => {
    await nats.jsm.streams.delete(STREAMS.MD);
    const c = open(inproc.url);
    c.send({ op: 'subscribe', id: 'r', from_seq: 1 });
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4009, error: { code: 'feed_unavailable', close_code: 4009 } });
    expect(Buffer.byteLength(r.reason)).toBeLessThanOrEqual(123);
  }, 30_000);
});
