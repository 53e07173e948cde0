/**
 * Anonymous errors are sampled per client address (real `{base_url}` app with its status parts,
 * private nats-server): one address sending 50 keyless requests has at most
 * ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE of its errors stored per minute (twice that if the
 * test straddles a minute), and another address's first error is stored after that flood (with one
 * sample per process, the flood had spent the minute's whole allowance and it was only counted).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE } from '../../contracts/base-url-limits.ts';
import { errorLogSubject, NO_ACCOUNT } from '../../contracts/status.ts';
import { STREAMS } from '../../contracts/streams.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
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

async function keyless(address: string): Promise<string> {
  const res = await http.app.inject({ method: 'GET', url: '/mcp/caches/stats', remoteAddress: address });
  expect(res.statusCode).toBe(401);
  return (res.json() as { request_id: string }).request_id;
}

it("one noisy anonymous address does not silence another's first error", async () => {
  const noisy: string[] = [];
  // 50 failures stay under the per-address lockout of failed key attempts (keyless is not a strike).
  for (let i = 0; i < 50; i++) noisy.push(await keyless('10.9.0.1'));
  const quiet = await keyless('10.9.0.2');
  await eventually(
    async () => (await storedCount(nats, STREAMS.ERRORS, errorLogSubject(null, quiet))) === 1,
    10_000,
    "the quiet address's first error stored",
  );
  let noisyStored = 0;
  for (const id of noisy) noisyStored += await storedCount(nats, STREAMS.ERRORS, errorLogSubject(null, id));
  expect(noisyStored).toBeGreaterThan(0);
  expect(noisyStored).toBeLessThanOrEqual(2 * ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE);
  expect(await storedCount(nats, STREAMS.ERRORS, `errlog.${NO_ACCOUNT}.>`)).toBe(noisyStored + 1);
});
