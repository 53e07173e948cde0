/**
 * The edge guard on the unified stream: missing / malformed / unknown / revoked / valid key ×
 * scope × tier × region → exact status and catalogue code, with the complete error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

let nats: TestNats;
let us: TestGateway;
let jp: TestGateway;
let accounts: TestAccounts;
const keys: Record<string, string> = {};

beforeAll(async () => {
  nats = await startTestNats();
  us = await startTestGateway(nats.url, {}, { guard: 'keys', region: 'us' });
  jp = await startTestGateway(nats.url, {}, { guard: 'keys', region: 'jp' });
  accounts = await startTestAccounts(us.nats, us.config);
  keys.basic = (await accounts.key('basic')).key;
  keys.pro = (await accounts.key('pro')).key;
  keys.quantJp = (await accounts.key('quant', { jp: true })).key;
  keys.quantNoJp = (await accounts.key('quant')).key;
  keys.regionOnly = (await accounts.key('pro', { scopes: ['region:us'] })).key;
  keys.streamUs = (await accounts.key('pro', { jp: true, scopes: ['stream:read', 'region:us'] })).key;
  keys.streamAny = (await accounts.key('pro', { jp: true, scopes: ['stream:read'] })).key;
  keys.hyperliquid = (await accounts.key('pro', { scopes: ['stream:read', 'chain:hyperliquid'] })).key;
  const revoked = await accounts.key('pro');
  await accounts.service.revokeKey(revoked.accountId, revoked.keyId);
  keys.revoked = revoked.key;
});

afterAll(async () => {
  accounts?.stop();
  await us?.close();
  await jp?.close();
  await nats?.cleanup();
});

const open = async (gw: TestGateway, headers: Record<string, string>, query = '') => {
  const ctl = new AbortController();
  const res = await fetch(`${gw.url}/api/v1/unified/stream${query}`, { headers, signal: ctl.signal });
  return { res, close: () => ctl.abort() };
};

/** The key with its last (checksum) character replaced by a different one: never the original. */
function corruptChecksum(key: string): string {
  const last = key.at(-1);
  return `${key.slice(0, -1)}${last === '0' ? '1' : '0'}`;
}

describe('401: who are you', () => {
  it.each([
    ['no key', {}, 'invalid_key'],
    ['a malformed key', { 'x-api-key': 'mdp_not-a-key' }, 'invalid_key'],
    ['a key with a bad checksum', { 'x-api-key': corruptChecksum(generateApiKey()) }, 'invalid_key'],
    ['an unknown well-formed key', { 'x-api-key': generateApiKey() }, 'invalid_key'],
    ['a session token', { authorization: 'Bearer mds_abcdefghijklmnop' }, 'invalid_key'],
  ])('%s → 401 %s', async (_name, headers, code) => {
    const { res } = await open(us, headers as Record<string, string>);
    await expectError(res, 401, code);
    expect(res.headers.get('www-authenticate')).toBeNull();
  });

  it('refuses malformed and mistyped keys without a lookup; an unknown well-formed key needs one', async () => {
    const store = us.keys as NonNullable<TestGateway['keys']>;
    const lookupsFor = async (key: string) => {
      const before = store.lookups;
      await expectError((await open(us, { 'x-api-key': key })).res, 401, 'invalid_key');
      return store.lookups - before;
    };
    const valid = keys.pro as string;
    for (const bad of [
      'mdp_not-a-key',
      corruptChecksum(valid),
      corruptChecksum(generateApiKey()),
      `${valid}x`,
    ])
      expect(await lookupsFor(bad), bad).toBe(0);
    // Positive control: the counter does see the lookups of well-formed keys.
    expect(await lookupsFor(generateApiKey())).toBe(1);
  });

  it('a revoked key → 401 key_revoked', async () => {
    const { res } = await open(us, { 'x-api-key': keys.revoked as string });
    await expectError(res, 401, 'key_revoked');
  });
});

describe('403: not allowed', () => {
  it.each([
    ['a Basic key (unified needs Pro+)', 'us', 'basic', 'tier_restricted'],
    ['a plan without Japan access on JP', 'jp', 'quantNoJp', 'tier_restricted'],
    ['scopes without stream:read', 'us', 'regionOnly', 'forbidden'],
    ['region:us scope on JP', 'jp', 'streamUs', 'forbidden'],
  ])('%s → 403 %s', async (_name, region, key, code) => {
    const { res } = await open(region === 'us' ? us : jp, { 'x-api-key': keys[key] as string });
    await expectError(res, 403, code);
  });

  it('a chain-scoped key asking for another source → 403 forbidden', async () => {
    const { res } = await open(us, { 'x-api-key': keys.hyperliquid as string }, '?source=binance');
    await expectError(res, 403, 'forbidden');
  });
});

describe('200: allowed', () => {
  it.each([
    ['Pro via x-api-key', 'us', 'pro', 'x-api-key'],
    ['Pro via Bearer', 'us', 'pro', 'bearer'],
    ['Quant with Japan access on JP', 'jp', 'quantJp', 'x-api-key'],
    ['stream:read on JP (no region scope)', 'jp', 'streamAny', 'x-api-key'],
    ['stream:read + region:us on US', 'us', 'streamUs', 'x-api-key'],
    ['chain:hyperliquid, own source', 'us', 'hyperliquid', 'x-api-key'],
  ])('%s', async (_name, region, key, carrier) => {
    const k = keys[key] as string;
    const headers: Record<string, string> =
      carrier === 'bearer' ? { authorization: `Bearer ${k}` } : { 'x-api-key': k };
    const { res, close } = await open(region === 'us' ? us : jp, headers);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    if (key !== 'quantJp') expect(Number(res.headers.get('x-ratelimit-limit'))).toBe(2_000);
    close();
  });
});
