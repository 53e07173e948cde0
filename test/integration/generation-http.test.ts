/**
 * `POST /data/generate` end to end over HTTP with a real worker on the JOBS work queue: the spec's
 * response, artifacts downloadable with the key (Range, content length = bytes served), async
 * jobs with status and progress, bad manifests refused with details and nothing written.
 */
import { readdirSync } from 'node:fs';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { expectError } from '../support/http.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let key: string;

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
  key = (await stack.accounts.key('pro', { scopes: ['generate'] })).key;
});

afterAll(async () => {
  await stack?.close();
});

const generate = (body: unknown, opts: { async?: boolean; apiKey?: string } = {}) =>
  fetch(`${stack.http.url}/data/generate${opts.async ? '?async=true' : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': opts.apiKey ?? key },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const manifest = { config: { symbol: 'BTC', seed: 7, volatility_annual: 0.5 }, duration_seconds: 300 };

describe('POST /data/generate', () => {
  it('answers the spec response and serves the artifact with Range', async () => {
    const res = await generate(manifest);
    expect(res.status).toBe(200);
    const out = await res.json();
    expect(out).toMatchObject({ status: 'completed', storage_backend: 'local' });
    expect(out.job_id).toMatch(/^sim_batch_[0-9A-Za-z]{16}$/);
    expect(out.manifest_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(out.download_url).toBe(`${stack.http.url}/artifacts/${out.job_id}.parquet`);

    const file = await fetch(out.download_url, { headers: { 'x-api-key': key } });
    expect(file.status).toBe(200);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(bytes.length).toBe(out.content_length_bytes);
    expect(Number(file.headers.get('content-length'))).toBe(out.content_length_bytes);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const meta = await parquetMetadataAsync(buffer);
    const kv = Object.fromEntries((meta.key_value_metadata ?? []).map((e) => [e.key, e.value]));
    expect(kv).toMatchObject({
      job_id: out.job_id,
      manifest_hash: out.manifest_hash,
      row_count: String(out.row_count),
    });
    const rows = await parquetReadObjects({ file: buffer, compressors });
    expect(rows.length).toBe(out.row_count);

    const part = await fetch(out.download_url, { headers: { 'x-api-key': key, range: 'bytes=4-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 4-99/${out.content_length_bytes}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(4, 100));
    const tail = await fetch(out.download_url, { headers: { 'x-api-key': key, range: 'bytes=-4' } });
    expect(new TextDecoder().decode(await tail.arrayBuffer())).toBe('PAR1');
    const beyond = await fetch(out.download_url, {
      headers: { 'x-api-key': key, range: `bytes=${bytes.length}-` },
    });
    await expectError(beyond, 416, 'range_unsatisfiable'); // every error has the error body
    expect(beyond.headers.get('content-range')).toBe(`bytes */${out.content_length_bytes}`);
    await expectError(await fetch(out.download_url), 401, 'invalid_key');
    const stranger = (await stack.accounts.key('pro', { scopes: ['generate'] })).key;
    await expectError(
      await fetch(out.download_url, { headers: { 'x-api-key': stranger } }),
      404,
      'not_found',
    );
  });

  it('runs asynchronously with a status URL, progress and the same hash for the same manifest', async () => {
    const res = await generate({ ...manifest, driver: { window_seconds: 60 } }, { async: true });
    expect(res.status).toBe(202);
    const accepted = await res.json();
    expect(res.headers.get('location')).toBe(accepted.status_url);
    type Job = Record<string, unknown> & {
      status: string;
      progress: { rows_done: number; rows_total: number };
      result: { manifest_hash: string } | null;
    };
    const job = await eventually(
      async () => {
        const j: Job = await (await fetch(accepted.status_url, { headers: { 'x-api-key': key } })).json();
        return (j.status === 'completed' || j.status === 'failed') && j;
      },
      60_000,
      `job ${accepted.job_id} finished`,
      50,
    );
    expect(job.status).toBe('completed');
    expect(job.progress.rows_done).toBe(job.progress.rows_total);
    const sync = await (await generate(manifest)).json();
    expect(job.result?.manifest_hash).toBe(sync.manifest_hash);
  });

  it('hashes the manifest as sent: key order, whitespace and explicit defaults change nothing', async () => {
    const mcpKey = (await stack.accounts.key('pro', { scopes: ['mcp'] })).key;
    const hashOfText = async (text: string) => {
      const res = await fetch(`${stack.http.url}/mcp/config/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': mcpKey },
        body: text,
      });
      expect(res.status).toBe(200);
      const out = await res.json();
      expect(out.valid).toBe(true);
      return out.hash as string;
    };
    const compact = '{"config":{"symbol":"BTC","seed":7},"duration_seconds":300}';
    const hash = await hashOfText(compact);
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const text of [
      '{\n  "config": {\n    "symbol": "BTC",\n    "seed": 7\n  },\n  "duration_seconds": 300\n}\n',
      ' \t{ "duration_seconds" :300 ,\r\n"config" : { "seed" : 7 , "symbol":"BTC" } }\r\n ',
      '{"config":{"symbol":"BTC","seed":7,"tick_size":0.1},"duration_seconds":300}',
    ])
      expect(await hashOfText(text), JSON.stringify(text)).toBe(hash);
    // Control: the same text with one value changed hashes differently.
    expect(await hashOfText(compact.replace('"seed":7', '"seed":8'))).not.toBe(hash);
  });

  it.each([
    ['{"config": ', 400, 'parse_error', undefined],
    [[1, 2], 400, 'invalid_params', 'body'],
    [{}, 400, 'invalid_params', 'config'],
    [{ config: { seed: 1 }, duration_seconds: 60 }, 400, 'invalid_params', 'config.symbol'],
    [{ config: { symbol: 'BTC' }, duration_seconds: 0 }, 422, 'unprocessable', 'duration_seconds'],
    [{ config: { symbol: 'BTC' }, duration_seconds: 604_801 }, 422, 'unprocessable', 'duration_seconds'],
    [
      { config: { symbol: 'BTC', volatility_annual: 'high' }, duration_seconds: 60 },
      400,
      'invalid_params',
      'config.volatility_annual',
    ],
    [
      { config: { symbol: 'BTC', colour: 'red' }, duration_seconds: 60 },
      422,
      'unprocessable',
      'config.colour',
    ],
    [
      {
        config: { symbol: 'BTC', book_update_interval_ms: 10, trade_intensity: 1000 },
        duration_seconds: 604_800,
      },
      422,
      'unprocessable',
      'duration_seconds',
    ],
  ])('refuses %j with %i %s and writes nothing', async (body, status, code, field) => {
    const before = readdirSync(stack.artifacts).length;
    await expectError(await generate(body), status, code, field);
    expect(readdirSync(stack.artifacts).length).toBe(before);
  });

  it('needs the generate scope', async () => {
    const streamOnly = (await stack.accounts.key('pro', { scopes: ['stream'] })).key;
    await expectError(await generate(manifest, { apiKey: streamOnly }), 403, 'forbidden');
  });
});
