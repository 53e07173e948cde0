/**
 * Operators are made by an explicit local act, not by registering an address (issue 27): with
 * `OPERATOR_EMAILS` naming an address, whoever registers it first gets no operator rights (no
 * `status:admin` key, no plan change); the `operator grant <email>` command (app/operator.ts, run
 * as a real process against the service's NATS) gives them, `operator revoke` takes them back.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const OPERATOR = 'ops@example.com';
const config = testConfig({ OPERATOR_EMAILS: OPERATOR });
let server: TestNats;
let base: BaseStack;
let accounts: TestAccounts;
let accountId: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ server, accounts } = base);
  accountId = (
    await accounts.service.register({
      email: OPERATOR,
      password: 'Str0ng-Passw0rd!',
      plan: 'pro',
      jp_access: false,
    })
  ).account_id;
});

afterAll(async () => {
  await base?.close();
});

/** Runs `npm run operator -- <args>` as the operator would, against this test's nats-server. */
function operatorCommand(
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/operator.ts', ...args], {
    env: {
      ...process.env,
      NATS_URL: server.url,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      API_KEY_SECRET: `operator-${randomBytes(16).toString('hex')}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const adminKey = () => accounts.service.createKey(accountId, { name: 'ops', scopes: ['status:admin'] });
const promote = async (by: string) => {
  const other = await accounts.key('basic');
  return accounts.service.setPlan(by, other.accountId, { plan: 'quant', jp_access: true });
};

describe('operator rights', () => {
  it('are not given by registering an OPERATOR_EMAILS address', async () => {
    expect(await accounts.service.isOperator(accountId)).toBe(false);
    await expect(adminKey()).rejects.toMatchObject({ code: 'forbidden' });
    await expect(promote(accountId)).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('are given by `operator grant <email>` and taken by `operator revoke <email>`', async () => {
    const granted = await operatorCommand('grant', OPERATOR);
    expect(granted.code, granted.stderr).toBe(0);
    expect(JSON.parse(granted.stdout)).toEqual({ account_id: accountId, operator: true });
    expect(await accounts.service.isOperator(accountId)).toBe(true);
    expect((await adminKey()).scopes).toEqual(['status:admin']);
    expect(await promote(accountId)).toMatchObject({ plan: 'quant', jp_access: true });

    const revoked = await operatorCommand('revoke', OPERATOR);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ account_id: accountId, operator: false });
    expect(await accounts.service.isOperator(accountId)).toBe(false);
    await expect(adminKey()).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('`operator grant` of an address nobody registered fails and grants nothing', async () => {
    const r = await operatorCommand('grant', 'nobody@example.com');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no account is registered with nobody@example.com');
  });
});
