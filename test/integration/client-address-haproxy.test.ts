/**
 * The same rule behind a real HAProxy (skipped where no `haproxy` binary is installed: Debian's
 * `haproxy` package): a JSON-RPC edge with TRUSTED_PROXIES=127.0.0.1 behind HAProxy configured as
 * compose/haproxy.cfg configures its backends (`check send-proxy-v2`, `option httpchk GET /healthz`,
 * so health checks carry the PROXY header too). Two clients connect to HAProxy from different
 * loopback addresses (127.0.0.2 misbehaves, 127.0.0.3 does not): the bad one's failures spend its
 * own budget (429 past it), the good one is untouched (its bad key a 401, its valid key admitted).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import { KEY_FAILURES_PER_ADDRESS } from '../../contracts/console-limits.ts';
import { freePort } from '../../platform/free-port.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const haproxy = spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;

let base: BaseStack;
let accounts: TestAccounts;
let jsonRpc: TestJsonRpc;
let balancer: ChildProcess | null = null;
let dir = '';
let front = 0;
let key = '';

beforeAll(async () => {
  if (!haproxy) return;
  const config = testConfig({ TRUSTED_PROXIES: '127.0.0.1' });
  base = await startBase(config);
  const conn = base.nats;
  accounts = base.accounts;
  key = (await accounts.key('quant')).key;
  jsonRpc = await startTestJsonRpc(conn, config, { guard: 'keys' });
  front = await freePort();
  dir = mkdtempSync(join(tmpdir(), 'mdp-haproxy-'));
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(
    cfg,
    [
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend jsonrpc',
      `  bind 127.0.0.1:${front}`,
      '  default_backend jsonrpc',
      'backend jsonrpc',
      '  option httpchk GET /healthz',
      `  server r1 127.0.0.1:${new URL(jsonRpc.url).port} check inter 200 send-proxy-v2`,
      '',
    ].join('\n'),
  );
  balancer = spawn('haproxy', ['-db', '-f', cfg], { stdio: 'ignore' });
  // Up once a request passes: HAProxy listening and its checks (PROXY header included) answered.
  await eventually(
    () =>
      call('127.0.0.3', key).then(
        (status) => status === 200,
        () => false,
      ),
    20_000,
    'HAProxy forwarding to the edge (its health checks passed)',
  );
}, 60_000);

afterAll(async () => {
  balancer?.kill();
  await jsonRpc?.close();
  await base?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One JSON-RPC call through HAProxy from `localAddress`; its HTTP status. */
function call(localAddress: string, apiKey: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(rpc('eth_blockNumber'));
    const req = request(
      {
        host: '127.0.0.1',
        port: front,
        localAddress,
        method: 'POST',
        path: '/',
        agent: false,
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

it.skipIf(!haproxy)(
  'behind HAProxy with send-proxy-v2, one client misbehaving spends its own address only',
  async () => {
    for (let i = 0; i < KEY_FAILURES_PER_ADDRESS.burst; i++)
      expect(await call('127.0.0.2', generateApiKey())).toBe(401);
    expect(await call('127.0.0.2', generateApiKey())).toBe(429);
    expect(await call('127.0.0.3', generateApiKey()), "the other client's budget is whole").toBe(401);
    expect(await call('127.0.0.3', key)).toBe(200);
    expect(await call('127.0.0.2', key), 'a valid key is never refused by the budget').toBe(200);
  },
  60_000,
);
