/**
 * Projections never move backwards and revocations are never forgotten: a gateway that starts (or
 * restarts) replays `ACCOUNTS` from sequence 1 without a revoked key reading `active` or a
 * logged-out session coming back, even for a moment; a revocation pushed to a gateway's key store
 * is remembered when the key was not in its cache and KV has not caught up; keys and sessions
 * hashed under the previous secret still verify and are rehashed under the current one; and the
 * key cache stays within its bound under a flood of random well-formed keys.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { KvWatchInclude } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsProjector, POSITION_EVERY_MS } from '../../consumers/accounts/projector.ts';
import {
  type AccountEvent,
  accountSubject,
  type KeyRecord,
  PROJECTION_POSITION_KEY,
  type SessionRecord,
} from '../../contracts/accounts.ts';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { KeyStore } from '../../gateways/core/key-store.ts';
import { createLogger } from '../../platform/logger.ts';
import { decode, encode } from '../../platform/msgpack.ts';
import { createSecrets } from '../../platform/secrets.ts';
import { AccountsService } from '../../producers/accounts/service.ts';
import { eventually } from '../support/eventually.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let stack: TestStack;
const log = createLogger('silent');

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.close();
});

describe('a replaying projector', () => {
  it('never shows a revoked key as active or a logged-out session as live', async () => {
    const { service, buckets } = stack.accounts;
    const { key, keyId, accountId } = await stack.accounts.key('pro');
    const keyHash = stack.accounts.secrets.keyHash(key);
    await service.revokeKey(accountId, keyId);
    const email = (await service.account(accountId))?.email ?? '';
    const { session_token } = await service.login({ email, password: 'Str0ng-Passw0rd!' });
    const sessionHash = stack.accounts.secrets.keyHash(session_token);
    await service.logout(session_token);

    // Everything written to the two buckets from now on.
    const seen: { bucket: string; key: string; value: unknown }[] = [];
    const watchers = await Promise.all(
      (['keys', 'sessions'] as const).map(async (name) => {
        const w = await buckets[name].raw.watch({ include: KvWatchInclude.UpdatesOnly });
        void (async () => {
          for await (const e of w)
            seen.push({ bucket: name, key: e.key, value: e.operation === 'PUT' ? decode(e.value) : null });
        })();
        return w;
      }),
    );

    const replay = await AccountsProjector.start(stack.nats, log); // a gateway starting now
    await replay.applied(await lastSeq(stack.nats, STREAMS.ACCOUNTS), 30_000);
    replay.stop();
    // A marker written after the replay: once the watchers see it, they have seen every replay write.
    await buckets.keys.put('replay-marker', { seq: 0 });
    await buckets.sessions.put('replay-marker', { seq: 0 });
    await eventually(async () => seen.filter((s) => s.key === 'replay-marker').length === 2);
    for (const w of watchers) w.stop();

    const keyWrites = seen.filter((s) => s.bucket === 'keys' && s.key === keyHash);
    expect(keyWrites.filter((s) => (s.value as KeyRecord | null)?.status !== 'revoked')).toEqual([]);
    const sessionWrites = seen.filter((s) => s.bucket === 'sessions' && s.key === sessionHash);
    expect(sessionWrites.filter((s) => !(s.value as SessionRecord | null)?.ended)).toEqual([]);
    expect(((await buckets.keys.get(keyHash)) as KeyRecord).status).toBe('revoked');
    await expect(service.sessionAccount(session_token)).rejects.toMatchObject({ code: 'session_invalid' });
  }, 60_000);
});

describe("a gateway's key store", () => {
  it('remembers a pushed revocation of a key it had not cached, while KV still says active', async () => {
    const own = await startStack();
    try {
      const store = await KeyStore.start(own.nats, own.accounts.secrets, log);
      const { key, keyId, accountId } = await own.accounts.key('pro');
      const hash = own.accounts.secrets.keyHash(key);
      own.accounts.projector.stop(); // KV will not follow: it keeps saying `active`
      const ev: AccountEvent = {
        type: 'key_revoked',
        account_id: accountId,
        key_id: keyId,
        key_hash: hash,
        at: Date.now(),
      };
      await own.nats.js.publish(accountSubject(accountId, 'key_revoked'), encode(ev));
      await own.nats.nc.flush(); // the store's subscription (same connection) has the event now
      expect(((await own.accounts.buckets.keys.get(hash)) as KeyRecord).status).toBe('active');
      expect((await store.lookup(key))?.status).toBe('revoked');
      await store.stop();
    } finally {
      await own.close();
    }
  }, 60_000);

  it('stays within its cache bound under random well-formed keys', async () => {
    // 5,000 lookups here (each one reads KV); test/unit/bounded-limiters.test.ts pushes 1M keys through the cache itself.
    const store = await KeyStore.start(stack.nats, stack.accounts.secrets, log, {
      maxKnown: 100,
      maxUnknown: 200,
    });
    const { key } = await stack.accounts.key('pro');
    let largest = 0;
    for (let i = 0; i < 5_000; i++) {
      expect(await store.lookup(generateApiKey())).toBeNull();
      largest = Math.max(largest, store.cacheSize);
    }
    expect(largest).toBeLessThanOrEqual(300);
    expect((await store.lookup(key))?.status).toBe('active');
    await store.stop();
  }, 120_000);
});

describe("a gateway's revocation signals", () => {
  it('are held only while a request or stream holds them, and still abort the held ones', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const store = await KeyStore.start(stack.nats, stack.accounts.secrets, log);
    const { key, keyId, accountId } = await stack.accounts.key('pro');
    const held = store.revocationSignal(store.hash(key));
    // 20,000 one-off requests of other keys: none keeps its signal.
    for (let i = 0; i < 20_000; i++) store.revocationSignal(store.hash(generateApiKey()));
    expect(store.holderCount).toBeGreaterThan(1);
    await eventually(async () => {
      gc();
      await new Promise((r) => setTimeout(r, 20));
      return store.holderCount <= 10;
    });
    await stack.accounts.service.revokeKey(accountId, keyId);
    await eventually(async () => held.aborted);
    await store.stop();
  }, 60_000);
});

describe('a projector restarting', () => {
  it('resumes after its stored position, and its accounts read back from KV go on as before', async () => {
    const { service } = stack.accounts;
    const { key, keyId, accountId } = await stack.accounts.key('pro');
    const email = (await service.account(accountId))?.email ?? '';
    await service.login({ email, password: 'Str0ng-Passw0rd!' });
    const loginSeq = await lastSeq(stack.nats, STREAMS.ACCOUNTS);
    // One more event after POSITION_EVERY_MS stores the position past everything above.
    await new Promise((r) => setTimeout(r, POSITION_EVERY_MS + 100));
    await stack.accounts.key('basic');
    const positionSeq = await lastSeq(stack.nats, STREAMS.ACCOUNTS);
    await eventually(
      async () =>
        ((await stack.accounts.buckets.accounts.get(PROJECTION_POSITION_KEY)) as { seq: number } | null)
          ?.seq === positionSeq,
    );
    const resumed = await AccountsProjector.start(stack.nats, log);
    expect(resumed.progress()).toMatchObject({
      start: positionSeq + 1,
      target: positionSeq,
      caught_up: true,
    });
    resumed.stop();
    // A position just before the login: the restarted projector replays it over a view that holds it.
    await stack.accounts.buckets.accounts.raw.put(PROJECTION_POSITION_KEY, encode({ seq: loginSeq - 1 }));
    const restarted = await AccountsProjector.start(stack.nats, log);
    expect(restarted.progress().start).toBe(loginSeq);
    await restarted.caughtUp();
    // The restarted projector applies later events of an account it never saw from the start.
    const other = new AccountsService({
      nats: stack.nats,
      projector: restarted,
      buckets: stack.accounts.buckets,
      secrets: stack.accounts.secrets,
      sessionTtlMs: 3_600_000,
      log,
    });
    await other.login({ email, password: 'Str0ng-Passw0rd!' });
    const view = await other.account(accountId);
    expect(view?.logins.length).toBe(2); // the first login is not counted twice
    await other.revokeKey(accountId, keyId);
    expect(
      ((await stack.accounts.buckets.keys.get(stack.accounts.secrets.keyHash(key))) as KeyRecord).status,
    ).toBe('revoked');
    restarted.stop();
  }, 60_000);
});

describe('secret rotation', () => {
  it('verifies a key and a session made under the previous secret, and rehashes both under the current one', async () => {
    const { key, accountId } = await stack.accounts.key('pro');
    const email = (await stack.accounts.service.account(accountId))?.email ?? '';
    const { session_token } = await stack.accounts.service.login({ email, password: 'Str0ng-Passw0rd!' });

    const old = { secret: stack.config.API_KEY_SECRET, version: stack.config.API_KEY_SECRET_VERSION };
    const rotated = createSecrets('a-brand-new-secret-for-v2', old.version + 1, [old]);
    const newKeyHash = rotated.keyHash(key);
    expect(newKeyHash.startsWith(`v${old.version + 1}.`)).toBe(true);

    const store = await KeyStore.start(stack.nats, rotated, log);
    expect((await store.lookup(key))?.status).toBe('active');
    await eventually(
      async () =>
        ((await stack.accounts.buckets.keys.get(newKeyHash)) as KeyRecord | null)?.status === 'active',
    );
    await store.stop();

    const service = new AccountsService({
      nats: stack.nats,
      projector: stack.accounts.projector,
      buckets: stack.accounts.buckets,
      secrets: rotated,
      sessionTtlMs: 3_600_000,
    });
    expect(await service.sessionAccount(session_token)).toBe(accountId);
    const newSessionHash = rotated.keyHash(session_token);
    await eventually(async () => (await stack.accounts.buckets.sessions.get(newSessionHash)) !== null);
    expect(await service.sessionAccount(session_token)).toBe(accountId);
    // A logout under the new secret ends the session under both hashes.
    await service.logout(session_token);
    await expect(service.sessionAccount(session_token)).rejects.toMatchObject({ code: 'session_invalid' });
    await expect(stack.accounts.service.sessionAccount(session_token)).rejects.toMatchObject({
      code: 'session_invalid',
    });
  }, 60_000);
});
