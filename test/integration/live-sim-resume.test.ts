/**
 * `GET /stream/live` resumes like every stream (the core's replay loop on the SIM stream): a
 * client cut after some events and reconnected with `Last-Event-ID` receives exactly the events
 * after the last one it read, the same sequences and contents a client that was never cut saw;
 * a position beyond the end is answered with a `position_beyond_end` notice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;
let key: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  http = await startTestHttp(nats, config, accounts);
  key = (await accounts.key('pro')).key;
});

afterAll(async () => {
  await http?.close();
  await base?.close();
});

/** Reads messages until `enough` holds (or `ms` pass: then fails naming what it waited for). */
async function read(
  url: string,
  enough: (got: SseMessage[]) => boolean,
  headers: Record<string, string> = {},
  ms = 20_000,
): Promise<SseMessage[]> {
  const got: SseMessage[] = [];
  let done: () => void = () => {};
  const reached = new Promise<void>((r) => (done = r));
  const s = await openSse(
    url,
    (m) => {
      got.push(m);
      if (enough(got)) done();
    },
    { 'x-api-key': key, ...headers },
  );
  expect(s.status).toBe(200);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for enough messages; got ${got.length}`)), ms);
  });
  try {
    await Promise.race([reached, timeout]);
  } finally {
    clearTimeout(timer);
    s.abort();
  }
  return got;
}

const events = (got: SseMessage[]) => got.filter((m) => m.event === 'message');

it('resumes exactly after the last event read when reconnected with Last-Event-ID', async () => {
  const url = `${http.url}/stream/live?symbol=BTC&seed=7`;
  // A client that is never cut, reading past where the cut client will stop and resume.
  const witnessDone = read(url, (got) => events(got).length >= 120);
  const first = events(await read(url, (got) => events(got).length >= 40));
  const cutAt = Number(first.at(-1)?.id);
  const resumed = events(
    await read(url, (got) => events(got).length >= 40, { 'last-event-id': String(cutAt) }),
  );
  const witness = events(await witnessDone);

  const ids = resumed.map((m) => Number(m.id));
  expect(ids.length).toBeGreaterThanOrEqual(40);
  expect(ids[0]).toBeGreaterThan(cutAt);
  expect(ids).toEqual([...ids].sort((x, y) => x - y));
  expect(new Set(ids).size).toBe(ids.length);
  // The witness saw the session's events in order: the resumed client starts with exactly the
  // witness's next event after the cut and goes on with the same sequences and contents.
  const after = witness.filter((m) => Number(m.id) > cutAt);
  const overlap = Math.min(after.length, resumed.length);
  expect(overlap).toBeGreaterThan(0);
  expect(resumed.slice(0, overlap).map((m) => [m.id, m.data])).toEqual(
    after.slice(0, overlap).map((m) => [m.id, m.data]),
  );
}, 60_000);

it('answers a position beyond the end with position_beyond_end, then goes on live', async () => {
  const url = `${http.url}/stream/live?symbol=ETH&seed=9`;
  const got = await read(url, (g) => events(g).length >= 1, { 'last-event-id': '999999999' });
  const notice = got.find((m) => m.event === 'notice');
  expect(notice, 'no notice before the first event').toBeDefined();
  expect(JSON.parse(notice?.data ?? '{}')).toMatchObject({
    code: 'position_beyond_end',
    requested_last_event_id: 999_999_999,
  });
  expect(got.indexOf(notice as SseMessage)).toBeLessThan(got.indexOf(events(got)[0] as SseMessage));
}, 60_000);
