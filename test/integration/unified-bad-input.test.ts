/**
 * Bad input on the unified stream: every refusal is a clear HTTP error with the spec's body before
 * the first byte; positions out of range get an explicit notice; nothing restarts silently from 0.
 * The key is checked before the query (a keyless bad request is 401, not 400), and unknown query
 * parameters (a cache-buster) are ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate, trade } from '../support/publisher.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { lastSeq as storedLastSeq } from '../support/stored-seqs.ts';

let nats: TestNats;
let gw: TestGateway;
/** The same gateway behind the real API-key guard. */
let keyed: TestGateway;
let lastSeq = 0;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url);
  keyed = await startTestGateway(nats.url, {}, { guard: 'keys' });
  const p = publishAtRate(gw.nats.js, ['BTC', 'ETH'], 2_000);
  await eventually(() => p.published() >= 500, 20_000, '500 events published');
  await p.stop();
  lastSeq = await storedLastSeq(gw.nats);
});

afterAll(async () => {
  await keyed?.close();
  await gw?.close();
  await nats?.cleanup();
});

const streamUrl = (q = '') => `${gw.url}/api/v1/unified/stream${q}`;

/** Reads messages until `n` have arrived (or the stream ends). */
async function firstMessages(
  url: string,
  n: number,
  headers: Record<string, string> = {},
): Promise<SseMessage[]> {
  const got: SseMessage[] = [];
  let resolveN: () => void = () => {};
  const enough = new Promise<void>((r) => (resolveN = r));
  const s = await openSse(url, (m) => got.push(m) >= n && resolveN(), headers);
  expect(s.status).toBe(200);
  await Promise.race([enough, s.done]);
  s.abort();
  return got;
}

describe('query validation', () => {
  it.each([
    ['?event_type=quote', 'event_type'],
    ['?source=nyse', 'source'],
    ['?coin=BT.C', 'coin'],
    ['?coin=', 'coin'],
    ['?last_event_id=abc', 'last_event_id'],
  ])('%s → 400 invalid_params naming %s', async (q, field) => {
    await expectError(await fetch(streamUrl(q)), 400, 'invalid_params', field);
  });

  it('ignores unknown parameters (a cache-buster): the stream opens and streams', async () => {
    const msgs = await firstMessages(streamUrl('?coin=BTC&last_event_id=0&_=1767225600000&foo=1'), 2);
    expect(msgs.length).toBeGreaterThanOrEqual(2);
    expect(new Set(msgs.map((m) => `${m.event} ${JSON.parse(m.data).symbol}`))).toEqual(
      new Set(['message BTC']),
    );
  });

  it.each([
    ['?event_type=quote', {}],
    ['?coin=BT.C&foo=1', { 'last-event-id': 'abc' }],
  ])('checks the key first: keyless %s → 401 invalid_key, not 400', async (q, headers) => {
    const res = await fetch(`${keyed.url}/api/v1/unified/stream${q}`, { headers });
    await expectError(res, 401, 'invalid_key');
  });

  it.each(['abc', '-5', '1.5', '99999999999999999999', '0x10'])('Last-Event-ID %s → 400', async (id) => {
    await expectError(
      await fetch(streamUrl(), { headers: { 'last-event-id': id } }),
      400,
      'invalid_params',
      'Last-Event-ID',
    );
  });

  it('an unknown coin alone → 404 coin_not_found', async () => {
    await expectError(await fetch(streamUrl('?coin=NOPE')), 404, 'coin_not_found');
  });

  it('an unknown coin among known ones → non-terminal coin_not_found, stream goes on', async () => {
    const msgs = await firstMessages(streamUrl('?coin=btc,NOPE&last_event_id=0'), 3);
    expect(msgs[0]?.event).toBe('error');
    expect(JSON.parse(msgs[0]?.data ?? '{}')).toMatchObject({
      code: 'coin_not_found',
      terminal: false,
      coin: 'NOPE',
    });
    // The stream did not end after the warning: at least the two events asked for came, all BTC.
    expect(msgs.length).toBeGreaterThanOrEqual(3);
    const events = msgs.slice(1).map((m) => JSON.parse(m.data));
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const e of events) expect(e.symbol).toBe('BTC');
  });

  it('unknown paths and methods answer JSON 404 and 405', async () => {
    await expectError(await fetch(`${gw.url}/api/v1/nope`), 404, 'not_found');
    const res = await fetch(streamUrl(), { method: 'POST' });
    expect(res.headers.get('allow')).toContain('GET');
    await expectError(res, 405, 'method_not_allowed');
  });
});

describe('positions out of range', () => {
  it('beyond the end → notice, then the next event after the newest', async () => {
    const msgs: SseMessage[] = [];
    let notified: () => void = () => {};
    let second: () => void = () => {};
    const gotNotice = new Promise<void>((r) => (notified = r));
    const gotEvent = new Promise<void>((r) => (second = r));
    const s = await openSse(
      streamUrl(),
      (m) => {
        msgs.push(m);
        if (msgs.length === 1) notified();
        if (msgs.length === 2) second();
      },
      { 'last-event-id': '900000000000000' },
    );
    expect(s.status).toBe(200);
    await gotNotice;
    await publishEvents(
      gw.nats.js,
      [{ event: trade('BTC', 999_999), id: 'bad-input-next', ingestUs: nowUs() }],
      createLogger('silent'),
    );
    await gotEvent;
    s.abort();
    expect(msgs[0]?.event).toBe('notice');
    expect(JSON.parse(msgs[0]?.data ?? '{}')).toMatchObject({
      code: 'position_beyond_end',
      resumed_after: lastSeq,
      last_seq: lastSeq,
    });
    expect(msgs[1]?.event).toBe('message');
    expect(Number(msgs[1]?.id)).toBe(lastSeq + 1);
    expect(JSON.parse(msgs[1]?.data ?? '{}')).toMatchObject({
      seq: lastSeq + 1,
      trade_id: trade('BTC', 999_999).trade_id,
    });
    lastSeq += 1;
  });

  it('no longer retained → notice naming the oldest retained event, then events from it', async () => {
    await gw.nats.jsm.streams.purge(STREAMS.MD, { keep: 100 });
    const first = lastSeq - 99;
    const msgs = await firstMessages(streamUrl(), 3, { 'last-event-id': '5' });
    expect(msgs[0]?.event).toBe('notice');
    expect(JSON.parse(msgs[0]?.data ?? '{}')).toMatchObject({
      code: 'position_not_retained',
      resumed_after: first - 1,
      first_seq: first,
    });
    expect(msgs.slice(1, 3).map((m) => Number(m.id))).toEqual([first, first + 1]);
  });

  it('the query form works like the header, and the header wins when both are sent', async () => {
    const byQuery = await firstMessages(streamUrl(`?last_event_id=${lastSeq - 3}`), 1);
    expect(Number(byQuery[0]?.id)).toBe(lastSeq - 2);
    const both = await firstMessages(streamUrl(`?last_event_id=${lastSeq - 3}`), 1, {
      'last-event-id': String(lastSeq - 1),
    });
    expect(Number(both[0]?.id)).toBe(lastSeq);
  });
});

describe('health', () => {
  it('GET /healthz → 200 {"status":"ok"}', async () => {
    const res = await fetch(`${gw.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
