/**
 * Fuzzing the unified stream's query and Last-Event-ID over real HTTP (the real app behind the
 * open guard, a real nats-server with a few events): any query string and any header value is
 * answered with a 200 event stream or a clear 4xx JSON error (400 invalid_params, 404
 * coin_not_found), never a 5xx, a hang or a stack trace.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { connectTestNats, startTestGateway, type TestGateway, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { trade } from '../support/publisher.ts';
import { expectClean, FUZZ_RUNS, fuzzAssert, fuzzText, fuzzTimeout, within } from './fuzz.ts';

let server: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  server = await startTestNats();
  const nats = await connectTestNats(server.url, testConfig());
  const events = [0, 1, 2, 3, 4].map((i) => ({ event: trade('BTC', i), id: `fuzz.${i}`, ingestUs: nowUs() }));
  await publishEvents(nats.js, events, createLogger('silent'));
  await nats.nc.close();
  gw = await startTestGateway(server.url);
});

afterAll(async () => {
  await gw?.close();
  await server?.cleanup();
});

const PARAMS = ['coin', 'event_type', 'source', 'last_event_id'];
const VALUES = [
  'BTC',
  'btc',
  'ETH,BTC',
  'DOGE',
  'trade',
  'book',
  'trade,book',
  'synthetic',
  'binance',
  '0',
  '3',
  '99',
];

/** A query: known parameters with known, mangled or arbitrary values, and now and then an unknown one. */
const query = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...PARAMS), fc.string({ maxLength: 12 })),
      fc.oneof(fc.constantFrom(...VALUES), fuzzText()),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => new URLSearchParams(pairs).toString());

/** Header values fetch can send (no control characters, Latin-1). */
const headerValue = fc.option(
  fc
    .oneof(
      fc.constantFrom('0', '1', '3', '-1', '9007199254740993', '1e3', ' 2', 'abc'),
      fc.string({ maxLength: 24 }),
    )
    .map((s) => s.replace(/[^\x20-\x7e]/g, '').trim()),
  { nil: undefined },
);

it(`answers ${FUZZ_RUNS} generated queries and Last-Event-IDs with a stream or a clear 4xx`, {
  timeout: fuzzTimeout(),
}, async () => {
  const statuses = new Map<number, number>();
  await fuzzAssert(
    fc.asyncProperty(query, headerValue, async (q, lastEventId) => {
      const what = `?${q} Last-Event-ID=${JSON.stringify(lastEventId)}`;
      const ctl = new AbortController();
      const res = await within(
        fetch(`${gw.url}/api/v1/unified/stream?${q}`, {
          headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
          signal: ctl.signal,
        }),
        what,
      );
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) {
        expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
        ctl.abort();
        return;
      }
      expectClean(res.status, await within(res.text(), what), what);
      expect([400, 404]).toContain(res.status);
    }),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, statuses: Object.fromEntries(statuses) }));
  expect(statuses.get(200)).toBeGreaterThan(0);
  expect(statuses.get(400)).toBeGreaterThan(0);
});
