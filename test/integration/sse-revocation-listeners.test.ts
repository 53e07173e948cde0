/**
 * An SSE stream listens on its key's revocation signal, which every stream of the key in the
 * process shares for the key's lifetime: closing a stream must remove its listener. LISTENER_CYCLES
 * (500 by default; `npm run test:full` runs 10,000) open/close cycles of `/stream/live` on one key
 * leave the signal with no listener and the registry empty, and a revocation still ends a stream
 * that is open. A leak of one listener per stream shows after the first batch of 25 already;
 * hundreds of cycles are enough, the 10,000 only look for a rarer path.
 */
import { getEventListeners } from 'node:events';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { type GuardedHttp, startGuardedHttp } from '../support/guarded-http.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

/** Open/close cycles: 500 in `npm test`, 10,000 in `npm run test:full`. */
const CYCLES = Number(process.env.LISTENER_CYCLES ?? 500);
/** Streams opened at once (below the Quant cap of concurrent streams). */
const PARALLEL = 25;

let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: GuardedHttp;
let key: string;
let owner: { keyId: string; accountId: string };

beforeAll(async () => {
  const config = testConfig();
  base = await startBase(config);
  ({ nats, accounts } = base);
  http = await startGuardedHttp(nats, config, accounts);
  ({ key, ...owner } = await accounts.key('quant'));
});

afterAll(async () => {
  await http?.close();
  await base?.close();
});

/** Opens `/stream/live`, resolves once the stream's headers arrived, then hangs up; returns the status. */
function openAndClose(): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL('/stream/live?symbol=BTC&seed=5', http.url);
    const req = request(url, { headers: { 'x-api-key': key }, agent: false }, (res) => {
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
}

const listeners = () => getEventListeners(http.signalOf(key), 'abort').length;

describe('SSE streams and the shared revocation signal', () => {
  it('hold one listener per open stream, and none once every stream has closed', async () => {
    const before = listeners();
    for (let done = 0; done < CYCLES; done += PARALLEL) {
      const statuses = await Promise.all(Array.from({ length: PARALLEL }, openAndClose));
      expect(new Set(statuses)).toEqual(new Set([200]));
    }
    await vi.waitFor(() => expect(http.registry.size).toBe(0), { timeout: 10_000 });
    expect(listeners()).toBe(before);
  }, 300_000);

  it('still end an open stream when the key is revoked', async () => {
    const url = new URL('/stream/live?symbol=BTC&seed=5', http.url);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(url, { headers: { 'x-api-key': key }, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve(text));
        res.on('error', reject);
        void vi
          .waitFor(() => expect(listeners()).toBe(1))
          .then(() => accounts.service.revokeKey(owner.accountId, owner.keyId))
          .catch(reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).toContain('"code":"auth_expired"');
    await vi.waitFor(() => expect(http.registry.size).toBe(0));
    expect(listeners()).toBe(0);
  }, 30_000);
});
