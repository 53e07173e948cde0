/**
 * Anonymous errors do not fill the shared error log (real `{base_url}` app with its status parts,
 * private nats-server): 300 requests without a key (from 300 addresses) are all refused 401 with the error body, but
 * the `ERRORS` stream holds at most ANONYMOUS_ERRORS_STORED_PER_MINUTE of them per minute (the
 * test may straddle one minute boundary: twice that), the rest only counted; an error of a known
 * account is still stored one by one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ANONYMOUS_ERRORS_STORED_PER_MINUTE } from '../../contracts/base-url-limits.ts';
import { NO_ACCOUNT } from '../../contracts/status.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { metricsRegistry } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { storedCount } from '../support/stored-seqs.ts';

const config = testConfig();
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  http = await startTestHttp(nats, config, accounts, undefined, { status: true });
});

afterAll(async () => {
  await http?.close();
  await natsBase?.close();
});

async function unstoredCount(): Promise<number> {
  const m = await metricsRegistry.getSingleMetric('mdp_error_log_anonymous_total')?.get();
  return m?.values.find((v) => v.labels.stored === 'false')?.value ?? 0;
}

it('stores a sample of anonymous errors and counts the rest', async () => {
  const before = await unstoredCount();
  const N = 300;
  // From as many addresses (a flood from one would be locked out per address, still anonymous).
  for (let i = 0; i < N; i++) {
    const res = await http.app.inject({
      method: 'GET',
      url: '/mcp/caches/stats',
      remoteAddress: `10.1.${i >> 8}.${i & 255}`,
    });
    expect(res.statusCode).toBe(401);
  }
  // One error of a known account, stored after every anonymous one this process published.
  const { key, accountId } = await accounts.key('pro');
  const known = await fetch(`${http.url}/data/jobs/sim_batch_0000000000000000`, {
    headers: { 'x-api-key': key },
  });
  await expectError(known, 404, 'not_found');
  await eventually(
    async () => (await storedCount(nats, STREAMS.ERRORS, `errlog.${accountId}.>`)) === 1,
    10_000,
    'the keyed error stored',
  );

  const anonymous = await storedCount(nats, STREAMS.ERRORS, `errlog.${NO_ACCOUNT}.>`);
  expect(anonymous).toBeGreaterThan(0);
  expect(anonymous).toBeLessThanOrEqual(2 * ANONYMOUS_ERRORS_STORED_PER_MINUTE);
  expect((await unstoredCount()) - before).toBe(N - anonymous);
});
