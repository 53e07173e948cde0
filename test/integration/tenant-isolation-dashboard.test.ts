/**
 * An account's own `stream: true` events through the dashboard proxy (`{base_url}/api/v1/unified/*`
 * with a console session; issue 28). The proxy reads the unified stream with the process's
 * service-level key (spec "Endpoints"), so every session is read as the service account: another
 * account's session, live, resumed from the unified gateway's ring (Last-Event-ID) and resumed from
 * JetStream history, never receives the owner's events, and the owner's session the same platform
 * events. That the owner's session sees its own events through the proxy is not so today (the todo
 * below): the unified stream only knows the service key's account.
 * The scenario is test/support/tenant-isolation.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createServiceKey, type ServiceKey } from '../../app/service-key.ts';
import { sseReader } from '../support/feed-readers.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import {
  isolationPhase,
  type OpenReader,
  type Phase,
  publishOwn,
  type ScenarioDeps,
} from '../support/tenant-isolation.ts';

const RING = 16;
let stack: TestStack;
let unified: TestGateway;
let service: ServiceKey;
let proxy: TestHttp;
const sessions = { owner: '', other: '' };
let deps: ScenarioDeps;

/** A Pro account's console session; with `key`, also a key of it to publish with. */
async function account(): Promise<{ session: string; accountId: string }> {
  const email = `t-${randomBytes(6).toString('hex')}@example.com`;
  const password = 'C0rrect-Horse-Battery';
  const { account_id } = await stack.accounts.service.register({
    email,
    password,
    plan: 'pro',
    jp_access: false,
  });
  return {
    session: (await stack.accounts.service.login({ email, password })).session_token,
    accountId: account_id,
  };
}

beforeAll(async () => {
  stack = await startStack();
  unified = await startTestGateway(stack.server.url, { SSE_RING_SIZE: String(RING) }, { guard: 'keys' });
  service = await createServiceKey(stack.accounts.service);
  proxy = await startTestHttp(stack.nats, stack.config, stack.accounts, {
    upstream: () => unified.url,
    serviceKey: () => service.key,
  });
  const owner = await account();
  sessions.owner = owner.session;
  sessions.other = (await account()).session;
  const publisher = await stack.accounts.service.createKey(owner.accountId, {
    name: 'publish',
    scopes: ['mcp'],
  });
  deps = {
    nats: stack.nats,
    ring: RING,
    tail: unified.tail,
    publishOwn: () => publishOwn(stack.http.url, publisher.key),
    ownerSeesOwn: false,
  };
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await service?.revoke();
  await unified?.close();
  await stack?.close();
});

/** The proxied stream of BTC for a session (open once the proxy has relayed the upstream's headers). */
const proxied: OpenReader = (who, after) =>
  sseReader(proxy.url, { authorization: `Bearer ${sessions[who]}` }, after, { coins: ['BTC'] });

describe("an account's own events through the dashboard proxy", () => {
  it.each(['live', 'ring', 'history'] as Phase[])(
    "never reach another account's session (%s)",
    async (phase) => {
      await isolationPhase(deps, proxied, phase);
    },
  );

  it.todo("reach the owner's own session (the proxy reads as the service account)");
});
