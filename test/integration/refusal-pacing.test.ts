/**
 * A client that loops on a refusal cannot take the edge from everyone else (issue 27): the edge
 * guard answers an address's first refusals at once (`REFUSALS_AT_ONCE_PER_ADDRESS`, 100 then 50
 * a second) and holds the rest (`REFUSAL_DELAY_MS`; 3 s here, far longer than a request takes,
 * so the order below does not depend on the machine's speed). Against a real JSON-RPC edge: 150
 * keyless requests at once from one address → about 100 answered 401, the rest held; meanwhile a
 * valid key from the same address is answered at once, and is never a strike. A second address's refusals are its own. The pacer's
 * own rules (held answers bounded) are checked directly.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REFUSALS_AT_ONCE_PER_ADDRESS } from '../../contracts/console-limits.ts';
import { createApiKeyGuard } from '../../gateways/core/api-key-guard.ts';
import { KeyStore } from '../../gateways/core/key-store.ts';
import { createRateLimiter } from '../../gateways/core/rate-limit/rate-limiter.ts';
import { RefusalPacer } from '../../gateways/core/refusal-pacer.ts';
import { createLogger } from '../../platform/logger.ts';
import { createSecrets } from '../../platform/secrets.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { post, rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const HOLD_MS = 3_000;
let base: BaseStack;
let edge: TestJsonRpc;
let keys: KeyStore;
let closeLimiter = async () => {};
// Refilled slowly (one a second), so what is answered at once does not depend on how fast the
// machine sends the burst: the budget's 100, then about 50 held.
const pacer = new RefusalPacer(HOLD_MS, 10_000, { rate: 1, burst: REFUSALS_AT_ONCE_PER_ADDRESS.burst });

beforeAll(async () => {
  base = await startBase(testConfig({ TRUSTED_PROXIES: '127.0.0.1' }));
  const log = createLogger('silent');
  keys = await KeyStore.start(
    base.nats,
    createSecrets(base.config.API_KEY_SECRET, base.config.API_KEY_SECRET_VERSION),
    log,
  );
  const limiter = await createRateLimiter(base.nats);
  closeLimiter = () => limiter.close();
  const guard = createApiKeyGuard({ keys, limiter, refusals: pacer });
  edge = await startTestJsonRpc(base.nats, base.config, { guard });
}, 60_000);

afterAll(async () => {
  await edge?.close();
  await keys?.stop();
  await closeLimiter();
  await base?.close();
});

it("holds a looping address's refusals past its budget, while a valid key from it goes on at once", async () => {
  const { key } = await base.accounts.key('quant');
  const body = rpc('eth_blockNumber');
  const burst = 150;
  let answered = 0;
  const keyless = Array.from({ length: burst }, () =>
    post(edge.url, body).then(
      (r) => {
        answered++;
        return r.status;
      },
      () => 0,
    ),
  );
  await eventually(() => answered >= REFUSALS_AT_ONCE_PER_ADDRESS.burst, 10_000, 'the first refusals', 5);
  await eventually(() => answered + pacer.holding === burst, 10_000, 'every request answered or held', 5);
  const held = pacer.holding;
  expect(held).toBeGreaterThan(0);
  // The same address, a valid key: admitted at once, while the loop's answers wait.
  const valid = await post(edge.url, body, { 'x-api-key': key });
  expect(valid.status).toBe(200);
  expect(answered).toBeLessThan(burst);
  expect(answered + held).toBe(burst);
  // Another address (a trusted proxy's X-Forwarded-For) has its own budget: refused at once.
  const other = await post(edge.url, body, { 'x-forwarded-for': '203.0.113.9' });
  expect(other.status).toBe(401);
  expect(pacer.holding).toBe(held);
  // Every held request is answered in the end, as the refusal it is.
  expect(new Set(await Promise.all(keyless))).toEqual(new Set([401]));
  expect(pacer.holding).toBe(0);
});

it('never holds more than its bound, and never an address it has not seen refused', () => {
  const small = new RefusalPacer(HOLD_MS, 2, { rate: 1, burst: 1 });
  expect(small.pace(undefined)).toBeNull();
  expect(small.pace('198.51.100.1')).toBeNull(); // its one at once
  expect(small.pace('198.51.100.1')).toBeInstanceOf(Promise);
  expect(small.pace('198.51.100.1')).toBeInstanceOf(Promise);
  expect(small.pace('198.51.100.1')).toBeNull(); // two held: the bound, answered at once
  expect(small.holding).toBe(2);
  expect(small.pace('198.51.100.2')).toBeNull(); // another address: its own budget
});
