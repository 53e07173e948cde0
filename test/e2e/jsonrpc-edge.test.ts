/**
 * The JSON-RPC edge as deployed: real `gateway jsonrpc` processes (two US, one JP) on one private
 * nats-server, with events published from this process.
 * - viem, unchanged, reads eth_blockNumber and eth_chainId through the edge, the key in a header;
 * - a filter made on one process and polled alternately on both, while events are published,
 *   delivers every matching stored event once: no gap, no duplicate;
 * - the JP port refuses a plan without Japan access (403, -32002, in the error log) and serves one with it.
 */

import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ErrorLogEntry, errorLogSubject } from '../../contracts/status.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { call, post, type RpcAnswer, rpc } from '../support/jsonrpc.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const CHAIN_ID = 31_415;
const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
let us: string[];
let jp: string;

function startEdge(region: 'us' | 'jp'): Promise<string> {
  const p = startService(['gateway', 'jsonrpc', '--region', region], {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    JSONRPC_PORT_US: '0',
    JSONRPC_PORT_JP: '0',
    JSONRPC_CHAIN_ID: String(CHAIN_ID),
  });
  processes.push(p);
  return p.waitForLog((l) => l.msg === 'json-rpc listening', 60_000).then((l) => l.url as string);
}

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  [us, jp] = await Promise.all([Promise.all([startEdge('us'), startEdge('us')]), startEdge('jp')]);
}, 120_000);

afterAll(async () => {
  await killAll(processes, 'SIGTERM');
  await base?.close();
});

describe('viem', () => {
  it('reads eth_blockNumber and eth_chainId through the edge with the key header', async () => {
    const { key } = await accounts.key('basic');
    const publisher = publishAtRate(nats.js, ['BTC'], 200);
    while (publisher.published() < 20) await new Promise((r) => setTimeout(r, 20));
    await publisher.stop();
    const stored = BigInt(await lastSeq(nats));
    const client = createPublicClient({
      transport: http(us[0], { fetchOptions: { headers: { 'x-api-key': key } }, retryCount: 0 }),
    });
    expect(await client.getChainId()).toBe(CHAIN_ID);
    let block = await client.getBlockNumber({ cacheTime: 0 });
    for (let i = 0; i < 100 && block < stored; i++) {
      await new Promise((r) => setTimeout(r, 50));
      block = await client.getBlockNumber({ cacheTime: 0 });
    }
    expect(block).toBe(stored);
  });

  it('surfaces a refused key as an error carrying -32001', async () => {
    const client = createPublicClient({
      transport: http(us[0], { fetchOptions: { headers: { 'x-api-key': 'wrong' } }, retryCount: 0 }),
    });
    await expect(client.getChainId()).rejects.toThrow(/401|API key/);
  });
});

describe('a filter across two gateway processes', () => {
  it('delivers every matching event once while polls alternate between the processes', async () => {
    const { key } = await accounts.key('pro');
    const auth = { 'x-api-key': key };
    const created = await call(
      us[0] as string,
      'md_newFilter',
      [{ coins: ['ETH', 'SOL'], event_types: ['trade'] }],
      auth,
    );
    const id = created.result as string;
    const after = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['ETH', 'SOL', 'BTC'], 300);
    const seqs: number[] = [];
    const poll = async (i: number) => {
      const answer = await call(us[i % 2] as string, 'md_getFilterChanges', [id], auth);
      expect(answer.error).toBeUndefined();
      for (const e of answer.result as { seq: number; symbol: string; event_type: string }[]) {
        expect(['ETH', 'SOL']).toContain(e.symbol);
        expect(e.event_type).toBe('trade');
        seqs.push(e.seq);
      }
    };
    let i = 0;
    const until = Date.now() + 4_000;
    while (Date.now() < until) {
      await poll(i++);
      await new Promise((r) => setTimeout(r, 50));
    }
    await publisher.stop();
    const last = await lastSeq(nats);
    const expected: number[] = [];
    for (let seq = after + 1; seq <= last; seq++) {
      const m = await nats.jsm.streams.getMessage('MD', { seq });
      if (m && /^md\.[^.]+\.(ETH|SOL)\.trade$/.test(m.subject)) expected.push(seq);
    }
    for (let tries = 0; seqs.length < expected.length && tries < 100; tries++) await poll(i++);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual(expected);
  });
});

describe('the JP port', () => {
  it('refuses a plan without Japan access with 403 and -32002, and serves one with it', async () => {
    const without = await accounts.key('quant');
    const res = await post(jp, rpc('eth_chainId'), { 'x-api-key': without.key });
    expect(res.status).toBe(403);
    expect((res.json as RpcAnswer).error).toMatchObject({ code: -32002, data: { error: 'tier_restricted' } });
    // The refusal is in the error log, under the key's account and the request id.
    const requestId = res.headers.get('x-request-id') as string;
    const logged = await eventually(
      () =>
        nats.jsm.streams
          .getMessage('ERRORS', { last_by_subj: errorLogSubject(without.accountId, requestId) })
          .catch(() => null),
      10_000,
      'the error log entry',
    );
    expect(decode<ErrorLogEntry>(logged.data)).toMatchObject({
      request_id: requestId,
      code: 'tier_restricted',
      status: 403,
      surface: 'jsonrpc-jp',
    });
    const withJapan = (await accounts.key('basic', { jp: true })).key;
    expect((await call(jp, 'eth_chainId', [], { 'x-api-key': withJapan })).result).toBe(
      `0x${CHAIN_ID.toString(16)}`,
    );
  });
});
