/**
 * A key that expires while in use is reported as expired, not revoked: wherever a request or call
 * in flight meets its key's signal aborted (key-expiry.ts `untilExpiry`), the error is `key_expired`
 * when the key expired and `key_revoked` when it was revoked. Covered: the stream-opening check
 * (`assertNotRevoked`, SSE, gRPC and disk-sync streams, /stream/live), a JSON-RPC call in flight and
 * one about to start (CallScope), and a `{base_url}` request in flight (require-key's onSend).
 * Streams already open end through the connection registry, checked by key-expiry's e2e test.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../contracts/errors.ts';
import { assertNotRevoked, openGuard, type Principal } from '../../gateways/core/guard.ts';
import { untilExpiry } from '../../gateways/core/key-expiry.ts';
import { installKeyAuth } from '../../gateways/http/require-key.ts';
import { CallScope } from '../../gateways/jsonrpc/call-scope.ts';

/** A key's signal, aborted once it expires (a moment from now), or revoked (the returned `revoke`). */
function keySignal(expiresInMs: number | null) {
  const revocation = new AbortController();
  const watch = untilExpiry(revocation.signal, expiresInMs === null ? null : Date.now() + expiresInMs);
  return { signal: watch.signal, revoke: () => revocation.abort() };
}

const aborted = (s: AbortSignal) =>
  new Promise<void>((r) => (s.aborted ? r() : s.addEventListener('abort', () => r(), { once: true })));

async function principalOf(revoked: AbortSignal): Promise<Principal> {
  return { ...(await openGuard.admit({} as never)), accountId: 'acct_x', keyId: 'key_x', revoked };
}

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    return e instanceof ApiError ? e.code : String(e);
  }
  return undefined;
};

describe('a key that expires in use answers key_expired; a revoked one key_revoked', () => {
  it('at a stream opening (assertNotRevoked)', async () => {
    const expiring = keySignal(20);
    await aborted(expiring.signal);
    expect(codeOf(() => assertNotRevoked({ revoked: expiring.signal } as Principal))).toBe('key_expired');
    const revoked = keySignal(60_000);
    revoked.revoke();
    expect(codeOf(() => assertNotRevoked({ revoked: revoked.signal } as Principal))).toBe('key_revoked');
  });

  it('a JSON-RPC call in flight, and one about to start (CallScope)', async () => {
    const expiring = keySignal(20);
    const scope = new CallScope(await principalOf(expiring.signal), 60_000);
    const inFlight = scope.race(new Promise(() => {}));
    await expect(inFlight).rejects.toMatchObject({ code: 'key_expired' });
    expect(codeOf(() => scope.assertLive())).toBe('key_expired');
    scope.end();

    const revoked = keySignal(60_000);
    const other = new CallScope(await principalOf(revoked.signal), 60_000);
    const pending = other.race(new Promise(() => {}));
    await new Promise((r) => setImmediate(r)); // the scope arms its listener a turn later
    revoked.revoke();
    await expect(pending).rejects.toMatchObject({ code: 'key_revoked' });
    other.end();

    const revokedFirst = keySignal(60_000);
    revokedFirst.revoke();
    const late = new CallScope(await principalOf(revokedFirst.signal), 60_000);
    expect(codeOf(() => late.assertLive())).toBe('key_revoked');
  });

  it('a {base_url} request in flight (require-key)', async () => {
    let signal: AbortSignal = new AbortController().signal;
    const app = Fastify();
    const requireKey = installKeyAuth(app, { admit: () => principalOf(signal) });
    app.get('/slow', { preHandler: requireKey(null) }, async () => {
      await aborted(signal);
      return { ok: true };
    });
    try {
      signal = keySignal(20).signal;
      const expired = await app.inject({ method: 'GET', url: '/slow' });
      expect(expired.statusCode).toBe(401);
      expect(expired.json()).toMatchObject({ error: 'key_expired' });

      const revoked = keySignal(60_000);
      signal = revoked.signal;
      const pending = app.inject({ method: 'GET', url: '/slow' });
      setTimeout(revoked.revoke, 20);
      const res = await pending;
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: 'key_revoked' });
    } finally {
      await app.close();
    }
  });
});
