/**
 * A single-edge process (here `gateway unified`) serves its own `/metrics` on `METRICS_PORT`,
 * behind the guard with the `metrics` scope: its open streams are counted where they live (the
 * `{base_url}` process never sees them), a key without the scope gets 403 and no key 401.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let base: BaseStack;
let accounts: TestAccounts;
const services: ServiceProcess[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  base = await startBase(config);
  ({ accounts } = base);
});

afterAll(async () => {
  for (const s of streams) s.abort();
  await killAll(services);
  await base?.close();
});

/** The `mdp_open_streams` sample of `surface`, or 0. */
const openStreams = (text: string, surface: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`mdp_open_streams{surface="${surface}"}`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
};

it('a unified gateway process counts its own streams on its metrics port', { timeout: 120_000 }, async () => {
  const gateway = startService(['gateway', 'unified', '--region', 'us'], {
    NATS_URL: base.server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    UNIFIED_PORT_US: '0',
    METRICS_PORT: '0',
  });
  services.push(gateway);
  const streamUrl = (await gateway.waitForLog((l) => l.msg === 'unified stream listening', 90_000))
    .url as string;
  const metricsUrl = (await gateway.waitForLog((l) => l.msg === 'metrics listening', 30_000)).url as string;

  const scraper = (await accounts.key('pro', { scopes: ['metrics'] })).key;
  const reader = (await accounts.key('pro', { scopes: ['stream:read'] })).key;
  const scrape = async (): Promise<string> => {
    const res = await fetch(metricsUrl, { headers: { 'x-api-key': scraper } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  expect(openStreams(await scrape(), 'unified-us')).toBe(0);

  const stream = await openSse(`${streamUrl}?coin=BTC`, () => {}, { 'x-api-key': reader });
  streams.push(stream);
  expect(stream.status).toBe(200);
  await eventually(async () => openStreams(await scrape(), 'unified-us') === 1, 10_000, 'stream counted');
  stream.abort();
  await eventually(async () => openStreams(await scrape(), 'unified-us') === 0, 10_000, 'stream uncounted');

  await expectError(await fetch(metricsUrl), 401, 'invalid_key');
  await expectError(await fetch(metricsUrl, { headers: { 'x-api-key': reader } }), 403, 'forbidden');
});
