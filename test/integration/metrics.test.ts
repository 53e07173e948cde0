/**
 * `GET /metrics` (scope `metrics`): Prometheus text with requests by route and status, latency
 * histograms, open streams per surface, auth failures and rate-limit rejections.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import { openSse } from '../support/sse.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.close();
});

/** The value of one sample line (labels in any order), or 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.indexOf('}'));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

it('exposes request, stream, auth and rate-limit metrics to a key with the metrics scope', async () => {
  const pro = (await stack.accounts.key('pro', { scopes: ['metrics', 'stream'] })).key;
  const scrape = async () => {
    const res = await fetch(`${stack.http.url}/metrics`, { headers: { 'x-api-key': pro } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  const before = await scrape();
  await expectError(
    await fetch(`${stack.http.url}/metrics`, { headers: { 'x-api-key': 'mdp_bad' } }),
    401,
    'invalid_key',
  );
  const noScope = (await stack.accounts.key('pro', { scopes: ['generate'] })).key;
  await expectError(
    await fetch(`${stack.http.url}/metrics`, { headers: { 'x-api-key': noScope } }),
    403,
    'forbidden',
  );
  const basic = (await stack.accounts.key('basic')).key;
  const limited = await Promise.all(
    Array.from({ length: 60 }, () =>
      fetch(`${stack.http.url}/metrics`, { headers: { 'x-api-key': basic } }).then((r) => r.status),
    ),
  );
  // 60 at once on a fresh Basic key (burst 25, 10/s): at most 25 + 10·t pass, so unless the 60
  // take over 3 s, at least 5 are refused; the counters must count exactly those.
  const refused = limited.filter((s) => s === 429).length;
  expect(refused).toBeGreaterThanOrEqual(5);
  const live = await openSse(`${stack.http.url}/stream/live?symbol=SOL&seed=1`, () => {}, {
    'x-api-key': pro,
  });
  expect(live.status).toBe(200);

  const after = await scrape();
  live.abort();
  expect(sample(after, 'mdp_open_streams', { surface: 'http' })).toBe(1);
  expect(
    sample(after, 'mdp_auth_failures_total', { code: 'invalid_key' }) -
      sample(before, 'mdp_auth_failures_total', { code: 'invalid_key' }),
  ).toBe(1);
  expect(sample(after, 'mdp_auth_failures_total', { code: 'forbidden' })).toBeGreaterThanOrEqual(1);
  expect(
    sample(after, 'mdp_rate_limit_rejections_total', { tier: 'basic' }) -
      sample(before, 'mdp_rate_limit_rejections_total', { tier: 'basic' }),
  ).toBe(refused);
  expect(
    sample(after, 'mdp_http_requests_total', {
      surface: 'http',
      route: '/metrics',
      method: 'GET',
      status: '200',
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    sample(after, 'mdp_http_requests_total', {
      surface: 'http',
      route: '/metrics',
      method: 'GET',
      status: '429',
    }) -
      sample(before, 'mdp_http_requests_total', {
        surface: 'http',
        route: '/metrics',
        method: 'GET',
        status: '429',
      }),
  ).toBe(refused);
  expect(after).toMatch(
    /mdp_http_request_duration_seconds_bucket\{le="0.005",surface="http",route="\/metrics",method="GET"\} \d+/,
  );
  expect(after).toContain('mdp_process_resident_memory_bytes');
});
