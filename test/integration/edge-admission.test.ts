/**
 * What a client sees at admission on `{base_url}` and the unified stream (issue 8):
 * - `/stream/live` streams count in the key's stream cap, where a Basic key (live-data cap 0) with
 *   `stream` still has BASIC_SIMULATION_STREAMS (issue 27); the unified stream keeps its cap (Pro 10;
 *   the 11th is 429 with Retry-After);
 * - `region:*` scopes are data-feed scopes: `{base_url}` is in no region, so `region:jp` +
 *   `generate` works there;
 * - a key revoked between admission and the first byte never gets a stream: 401 `key_revoked`;
 * - unknown or malformed job, artifact and key ids are 404 with the error body; a DELETE with a
 *   JSON content type and no body acts as without the header.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { BASIC_SIMULATION_STREAMS } from '../../contracts/base-url-limits.ts';
import type { Guard } from '../../gateways/core/guard.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildHttpApp, type HttpApp } from '../../gateways/http/app.ts';
import { buildUnifiedApp, type UnifiedApp } from '../../gateways/unified/app.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
const log = createLogger('silent');
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let stopGuard: () => Promise<void>;
let tail: LiveTail;
let http: HttpApp;
let httpUrl: string;
let unified: UnifiedApp;
let unifiedUrl: string;
/** Keys (by value) that the guard revokes right after admitting them, before the route goes on. */
const revokeOnAdmission = new Map<string, { accountId: string; keyId: string }>();

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  const edge = await startEdgeGuard(nats, config, log);
  stopGuard = () => edge.part.stop();
  const guard: Guard = {
    async admit(req) {
      const principal = await edge.guard.admit(req);
      const key = revokeOnAdmission.get(String(req.headers['x-api-key']));
      if (key) {
        await accounts.service.revokeKey(key.accountId, key.keyId);
        if (!principal.revoked.aborted) await once(principal.revoked, 'abort');
      }
      return principal;
    },
  };
  http = await buildHttpApp({ nats, accounts: accounts.service, guard, config, log });
  httpUrl = await http.app.listen({ host: '127.0.0.1', port: 0 });
  http.setListenAddress(httpUrl);
  tail = await LiveTail.start(nats, log, { ringSize: 1_024, staleAfterMs: 60_000, expectedCoins: ['BTC'] });
  unified = buildUnifiedApp({ config, nats, tail, guard, log, region: 'us' });
  unifiedUrl = await unified.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await unified?.shutdown();
  tail?.stop();
  await http?.shutdown();
  await stopGuard?.();
  await natsBase?.close();
});

const live = (key: string) =>
  openSse(`${httpUrl}/stream/live?symbol=BTC&seed=3`, () => {}, { 'x-api-key': key });
const stream = (key: string) =>
  openSse(`${unifiedUrl}/api/v1/unified/stream`, () => {}, { 'x-api-key': key });

describe('stream caps', () => {
  it('lets a Basic key with the stream scope open BASIC_SIMULATION_STREAMS /stream/live at once, then 429', async () => {
    const { key } = await accounts.key('basic', { scopes: ['stream'] });
    const streams: SseStream[] = [];
    for (let i = 0; i <= BASIC_SIMULATION_STREAMS; i++) streams.push(await live(key));
    for (const s of streams) s.abort();
    expect(streams.map((s) => s.status)).toEqual([...Array(BASIC_SIMULATION_STREAMS).fill(200), 429]);
  });

  it('keeps the unified cap: the 11th concurrent Pro stream is 429 subscription_limit with Retry-After', async () => {
    const { key } = await accounts.key('pro');
    const open: SseStream[] = [];
    for (let i = 0; i < 10; i++) open.push(await stream(key));
    expect(open.map((s) => s.status)).toEqual(Array(10).fill(200));
    const res = await fetch(`${unifiedUrl}/api/v1/unified/stream`, { headers: { 'x-api-key': key } });
    for (const s of open) s.abort();
    await expectError(res, 429, 'subscription_limit');
    expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });
});

describe('region scopes on {base_url}, which is in no region', () => {
  it('lets region:jp + generate use generation, and region:jp + mcp the legacy routes', async () => {
    const gen = await accounts.key('pro', { jp: true, scopes: ['region:jp', 'generate'] });
    const job = await fetch(`${httpUrl}/data/jobs/sim_batch_${randomBytes(8).toString('hex')}`, {
      headers: { 'x-api-key': gen.key },
    });
    await expectError(job, 404, 'not_found'); // past the guard: the job just does not exist
    const mcp = await accounts.key('pro', { scopes: ['region:us', 'mcp'] });
    expect((await fetch(`${httpUrl}/mcp/presets`, { headers: { 'x-api-key': mcp.key } })).status).toBe(200);
  });
});

describe('a key revoked between admission and the first byte', () => {
  it('gets 401 key_revoked on /stream/live, not a stream', async () => {
    const k = await accounts.key('pro', { scopes: ['stream'] });
    revokeOnAdmission.set(k.key, k);
    const res = await fetch(`${httpUrl}/stream/live?symbol=BTC&seed=4`, { headers: { 'x-api-key': k.key } });
    await expectError(res, 401, 'key_revoked');
  });

  it('gets 401 key_revoked on the unified stream, not a stream', async () => {
    const k = await accounts.key('pro');
    revokeOnAdmission.set(k.key, k);
    const res = await fetch(`${unifiedUrl}/api/v1/unified/stream`, { headers: { 'x-api-key': k.key } });
    await expectError(res, 401, 'key_revoked');
  });
});

describe('resource ids', () => {
  it.each([
    ['GET', '/data/jobs/not-a-job'],
    ['GET', `/data/jobs/sim_batch_${'0'.repeat(16)}`],
    ['GET', '/data/jobs/sim_batch_..%2F..%2Fetc'],
    ['GET', '/artifacts/not-an-artifact'],
    ['GET', '/artifacts/not-an-artifact.parquet'],
    ['GET', `/artifacts/sim_batch_${'0'.repeat(16)}.parquet`],
    ['GET', '/artifacts/..%2Fsecrets.parquet'],
  ])('%s %s → 404 with the error body', async (method, path) => {
    const { key } = await accounts.key('pro');
    await expectError(
      await fetch(`${httpUrl}${path}`, { method, headers: { 'x-api-key': key } }),
      404,
      'not_found',
    );
  });

  it('answers unknown and malformed key ids with 404; DELETE with a JSON content type and no body revokes', async () => {
    const email = `ids-${randomBytes(4).toString('hex')}@example.com`;
    await accounts.service.register({
      email,
      password: 'C0rrect-Horse-Battery',
      plan: 'pro',
      jp_access: false,
    });
    const { session_token } = await accounts.service.login({ email, password: 'C0rrect-Horse-Battery' });
    const console = `${httpUrl}/api/v1/console/keys`;
    const headers = { authorization: `Bearer ${session_token}`, 'content-type': 'application/json' };
    for (const id of ['key_doesnotexist', 'not a key', '%2E%2E', 'x'.repeat(300)])
      await expectError(await fetch(`${console}/${id}`, { method: 'DELETE', headers }), 404, 'not_found');
    const created = await (
      await fetch(console, { method: 'POST', headers, body: JSON.stringify({ name: 'ci' }) })
    ).json();
    const del = await fetch(`${console}/${created.key_id}`, { method: 'DELETE', headers });
    expect(del.status).toBe(204);
    await expectError(
      await fetch(`${httpUrl}/mcp/presets`, { headers: { 'x-api-key': created.key } }),
      401,
      'key_revoked',
    );
  });
});
