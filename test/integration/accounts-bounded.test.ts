/**
 * The account system stays bounded: at most 25 active keys per account (409 `key_limit`), key
 * records kept apart from the account record (which does not grow with keys), a console call that
 * waits for a stalled projection answers 503 `account_update_pending` instead of hanging, a poison
 * event is logged and counted and later revocations still land, and a registration whose publish
 * failed gives its email back.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsProjector } from '../../consumers/accounts/projector.ts';
import { accountKeyKey } from '../../consumers/accounts/reducer.ts';
import {
  type AccountEvent,
  type AccountKeyRecord,
  accountSubject,
  type KeyRecord,
  MAX_ACTIVE_KEYS_PER_ACCOUNT,
} from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { metricsRegistry } from '../../platform/metrics.ts';
import { encode } from '../../platform/msgpack.ts';
import { startTestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { expectError } from '../support/http.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.close();
});

const PASSWORD = 'C0rrect-Horse-Battery';

describe('keys per account', () => {
  it(`caps active keys at ${MAX_ACTIVE_KEYS_PER_ACCOUNT}; revoking one makes room`, async () => {
    const { service } = stack.accounts;
    const { account_id } = await service.register({
      email: 'cap@example.com',
      password: PASSWORD,
      plan: 'pro',
      jp_access: false,
    });
    const keys = [];
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_ACCOUNT; i++)
      keys.push(await service.createKey(account_id, { name: `k${i}`, scopes: [] }));
    const refused = await service.createKey(account_id, { name: 'one too many', scopes: [] }).catch((e) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.code).toBe('key_limit');
    expect(refused.row.http).toBe(409);

    await service.revokeKey(account_id, keys[0]?.key_id ?? '');
    expect((await service.createKey(account_id, { name: 'replacement', scopes: [] })).key).toMatch(/^mdp_/);
  });

  it('keeps key records apart: the account record does not grow with keys', async () => {
    const { service, buckets } = stack.accounts;
    const { account_id } = await service.register({
      email: 'size@example.com',
      password: PASSWORD,
      plan: 'pro',
      jp_access: false,
    });
    const size = async () => encode(await buckets.accounts.get(account_id)).length;
    const before = await size();
    const created = [];
    for (let i = 0; i < 5; i++)
      created.push(await service.createKey(account_id, { name: `key ${i}`, scopes: [] }));
    expect(await size()).toBe(before);
    const record = (await buckets.accountKeys.get(
      accountKeyKey(account_id, created[4]?.key_id ?? ''),
    )) as AccountKeyRecord;
    expect(record).toMatchObject({ name: 'key 4', status: 'active' });
    expect((await service.listKeys(account_id)).map((k) => k.name)).toEqual(created.map((k) => k.name));
  });
});

describe('failed registration', () => {
  it('gives the email back when the registration event cannot be published', async () => {
    const { service } = stack.accounts;
    // Over NATS's payload limit: the publish fails for real.
    const failed = await service
      .register({
        email: 'retry@example.com',
        password: PASSWORD,
        plan: 'basic',
        jp_access: false,
        referrer: 'x'.repeat(2_000_000),
      })
      .catch((e) => e);
    expect(failed).toBeInstanceOf(Error);
    const again = await service.register({
      email: 'retry@example.com',
      password: PASSWORD,
      plan: 'basic',
      jp_access: false,
    });
    expect(again.account_id).toMatch(/^acc_/);
  });
});

describe('poison events', () => {
  it('are logged and counted, and later revocations still reach the keys bucket', async () => {
    const { service, buckets } = stack.accounts;
    const victim = await stack.accounts.key('pro');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // A second projector (as on a second gateway), with its log captured.
    const projector = await AccountsProjector.start(stack.nats, pino({ level: 'warn' }, sink));
    const poisonCount = async () =>
      (
        await metricsRegistry.getSingleMetric('mdp_account_projection_poison_events_total')?.get()
      )?.values.reduce((n, v) => n + v.value, 0) ?? 0;
    const before = await poisonCount();

    // Two events that each fit a message, but whose projected account record does not.
    const accountId = 'acc_poisonPoisonPois';
    const big = 'y'.repeat(600_000);
    const publish = (ev: AccountEvent) =>
      stack.nats.js.publish(accountSubject(ev.account_id, ev.type), encode(ev));
    await publish({
      type: 'registered',
      account_id: accountId,
      email: 'poison@example.com',
      password_hash: 'x',
      plan: 'basic',
      jp_access: false,
      attribution: { referrer: big },
      at: 1,
    });
    await publish({
      type: 'login_recorded',
      account_id: accountId,
      session_hash: 'v1.poison',
      expires_at: 2,
      attribution: { referrer: big },
      at: 2,
    });

    await service.revokeKey(victim.accountId, victim.keyId);
    const hash = (await service.listKeys(victim.accountId))[0]?.key_hashes[0] ?? '';
    await eventually(async () => ((await buckets.keys.get(hash)) as KeyRecord | null)?.status === 'revoked');
    const last = await lastSeq(stack.nats, 'ACCOUNTS');
    await projector.applied(last, 30_000);
    projector.stop();

    expect(await poisonCount()).toBeGreaterThan(before);
    const poison = lines.map((l) => JSON.parse(l)).find((l) => /poison/.test(l.msg));
    expect(poison).toMatchObject({ event_type: 'login_recorded', bucket: 'accounts' });
    expect(typeof poison.seq).toBe('number');
  }, 60_000);
});

describe('projection deadline', () => {
  it('answers 503 account_update_pending with Retry-After when the projection does not follow', async () => {
    const own = await startStack({ ACCOUNT_PROJECTION_DEADLINE_MS: '300' });
    try {
      const base = `${own.http.url}/api/v1/console`;
      await own.accounts.service.register({
        email: 'stall@example.com',
        password: PASSWORD,
        plan: 'pro',
        jp_access: false,
      });
      const { session_token } = await own.accounts.service.login({
        email: 'stall@example.com',
        password: PASSWORD,
      });
      own.accounts.projector.stop(); // the projection stops following the stream
      const res = await fetch(`${base}/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session_token}` },
        body: JSON.stringify({ name: 'while stalled' }),
      });
      const body = await expectError(res, 503, 'account_update_pending');
      expect(body.message).toMatch(/not visible yet/);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await own.close();
    }
  }, 30_000);

  it('applies to the service itself (no caller waits forever)', async () => {
    const accounts = await startTestAccounts(stack.nats, stack.config, { projectionDeadlineMs: 200 });
    accounts.projector.stop();
    const err = await accounts.service
      .register({ email: 'stall2@example.com', password: PASSWORD, plan: 'basic', jp_access: false })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('account_update_pending');
  }, 30_000);
});

describe('system accounts', () => {
  it('resolve to one account when several processes start together', async () => {
    const others = await Promise.all([1, 2, 3].map(() => startTestAccounts(stack.nats, stack.config)));
    try {
      const body = {
        email: 'system@service.internal',
        password: PASSWORD,
        plan: 'quant',
        jp_access: true,
      } as const;
      const ids = await Promise.all(others.map((a) => a.service.ensureSystemAccount(body)));
      expect(new Set(ids).size).toBe(1);
      expect(await stack.accounts.service.accountIdOf(body.email)).toBe(ids[0]);
    } finally {
      for (const a of others) a.stop();
    }
  }, 30_000);
});
