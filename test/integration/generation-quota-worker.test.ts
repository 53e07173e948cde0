/**
 * Quotas and downloads with a real worker: a finished job frees its slot of the jobs quota and
 * its bytes count against the account's stored-bytes quota (429 with Retry-After once over it);
 * an artifact made through POST /mcp/generate_dataset (scope `mcp`) downloads with that key, a key
 * of the same account with neither creating scope gets 403, another account 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
/** A gateway on the same NATS whose stored-bytes quota is one byte. */
let tight: TestHttp;

beforeAll(async () => {
  stack = await startStack({ JOB_QUOTA_ACTIVE: '1' }, { worker: true });
  tight = await startTestHttp(stack.nats, { ...stack.config, ARTIFACT_QUOTA_BYTES: 1 }, stack.accounts);
});

afterAll(async () => {
  await tight?.close();
  await stack?.close();
});

const manifest = { config: { symbol: 'BTC', seed: 11 }, duration_seconds: 60 };

/** Each call another manifest (`seed`): the same one again attaches to its job (job-retries.ts). */
const generate = (base: string, key: string, seed: number) =>
  fetch(`${base}/data/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ ...manifest, config: { ...manifest.config, seed } }),
  });

describe('quotas with a worker', () => {
  it('free a job’s slot when it completes, and count its bytes as stored', async () => {
    const { key } = await stack.accounts.key('pro');
    // JOB_QUOTA_ACTIVE is 1: the second job is admitted only because the first one finished.
    expect((await generate(stack.http.url, key, 11)).status).toBe(200);
    expect((await generate(stack.http.url, key, 12)).status).toBe(200);
    const res = await generate(tight.url, key, 13);
    const body = await expectError(res, 429, 'quota_exceeded');
    expect(body.message).toMatch(/stores \d+ bytes of artifacts; at most 1\b/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('artifact downloads', () => {
  it('accept a key with either creating scope, and keep the owner check', async () => {
    const owner = await stack.accounts.key('pro', { scopes: ['mcp'] });
    const made = await fetch(`${stack.http.url}/mcp/generate_dataset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': owner.key },
      body: JSON.stringify({ symbol: 'ETH', seed: 4, duration_seconds: 60 }),
    });
    expect(made.status).toBe(200);
    const { download_url, content_length_bytes } = await made.json();

    const file = await fetch(download_url, { headers: { 'x-api-key': owner.key } });
    expect(file.status).toBe(200);
    expect((await file.arrayBuffer()).byteLength).toBe(content_length_bytes);

    const streamOnly = await stack.accounts.service.createKey(owner.accountId, {
      name: 'stream only',
      scopes: ['stream'],
    });
    await expectError(
      await fetch(download_url, { headers: { 'x-api-key': streamOnly.key } }),
      403,
      'forbidden',
    );
    const stranger = await stack.accounts.key('pro', { scopes: ['mcp'] });
    await expectError(
      await fetch(download_url, { headers: { 'x-api-key': stranger.key } }),
      404,
      'not_found',
    );
  });
});
