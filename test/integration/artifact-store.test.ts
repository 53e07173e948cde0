/**
 * ARTIFACT_STORE=nats: the worker puts the artifact into the JetStream Object Store and the
 * gateway serves it from there (`storage_backend: "nats"`, Content-Length, Range 206/416, owner
 * check), nothing on the local disk; the store streams ranges across chunk boundaries; deleting
 * frees the chunks; retention sweeps the bucket; a job whose upload fails is `failed`.
 */
import { readdirSync } from 'node:fs';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBJECT_STORES } from '../../contracts/streams.ts';
import { NatsArtifactStore } from '../../platform/artifact-store/nats.ts';
import { eventually } from '../support/eventually.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let key: string;
let store: NatsArtifactStore;

beforeAll(async () => {
  stack = await startStack({ ARTIFACT_STORE: 'nats', ARTIFACT_RETENTION_S: '3600' }, { worker: true });
  key = (await stack.accounts.key('pro', { scopes: ['generate'] })).key;
  store = await NatsArtifactStore.open(stack.nats, OBJECT_STORES.artifacts);
});

afterAll(async () => {
  await stack?.close();
});

const manifest = { config: { symbol: 'ETH', seed: 3, book_update_interval_ms: 50 }, duration_seconds: 600 };

async function generate(apiKey = key) {
  const res = await fetch(`${stack.http.url}/data/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(manifest),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    job_id: string;
    download_url: string;
    row_count: number;
    content_length_bytes: number;
    storage_backend: string;
  };
}

const bytesOf = async (body: AsyncIterable<Uint8Array>): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
};

const streamBytes = (chunks: Uint8Array[]) =>
  (async function* () {
    yield* chunks;
  })();

describe('the nats object store', () => {
  it('reads any range across chunk boundaries, and a delete frees the chunks', async () => {
    const data = Buffer.alloc(700_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;
    const size = await store.put(
      'test/range.bin',
      streamBytes([data.subarray(0, 1000), data.subarray(1000)]),
    );
    expect(size).toBe(data.length);
    for (const [start, end] of [
      [0, data.length - 1],
      [131_071, 131_073],
      [300_000, 650_000],
      [data.length - 1, data.length - 1],
    ] as const) {
      const body = await store.read('test/range.bin', { start, end });
      expect((await bytesOf(body as AsyncIterable<Uint8Array>)).equals(data.subarray(start, end + 1))).toBe(
        true,
      );
    }
    const bucketBytes = async () =>
      (await stack.nats.jsm.streams.info(`OBJ_${OBJECT_STORES.artifacts}`)).state.bytes;
    const before = await bucketBytes();
    expect(await store.delete('test/range.bin')).toBe(true);
    expect(before - (await bucketBytes())).toBeGreaterThanOrEqual(data.length);
    expect(await store.read('test/range.bin')).toBeNull();
    expect(await store.delete('test/range.bin')).toBe(false);
  });
});

describe('ARTIFACT_STORE=nats through the gateway', () => {
  let out: Awaited<ReturnType<typeof generate>>;
  beforeAll(async () => {
    out = await generate();
  });

  it('stores the artifact in the bucket, not on the local disk, and says storage_backend "nats"', async () => {
    expect(out.storage_backend).toBe('nats');
    expect((await store.stat(`${out.job_id}.parquet`))?.size).toBe(out.content_length_bytes);
    expect(readdirSync(stack.artifacts).filter((n) => n.endsWith('.parquet'))).toEqual([]);
    const status = await (
      await fetch(`${stack.http.url}/data/jobs/${out.job_id}`, { headers: { 'x-api-key': key } })
    ).json();
    expect(status.result.storage_backend).toBe('nats');
  });

  it('serves it whole with Content-Length, readable as Parquet', async () => {
    const res = await fetch(out.download_url, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBe(out.content_length_bytes);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBe(out.content_length_bytes);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const meta = await parquetMetadataAsync(buffer);
    expect(Number(meta.num_rows)).toBe(out.row_count);
    expect((await parquetReadObjects({ file: buffer, compressors })).length).toBe(out.row_count);
  });

  it('answers Range with 206 (the same bytes as the whole file) and 416 beyond the end', async () => {
    const whole = Buffer.from(
      await (await fetch(out.download_url, { headers: { 'x-api-key': key } })).arrayBuffer(),
    );
    const start = 130_000;
    const end = Math.min(whole.length - 1, 300_000);
    const part = await fetch(out.download_url, {
      headers: { 'x-api-key': key, range: `bytes=${start}-${end}` },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${whole.length}`);
    expect(Number(part.headers.get('content-length'))).toBe(end - start + 1);
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(start, end + 1))).toBe(true);
    const tail = await fetch(out.download_url, { headers: { 'x-api-key': key, range: 'bytes=-100' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(whole.length - 100))).toBe(true);
    const beyond = await fetch(out.download_url, {
      headers: { 'x-api-key': key, range: `bytes=${whole.length}-` },
    });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${whole.length}`);
  });

  it('serves it to its owner only', async () => {
    const other = (await stack.accounts.key('pro', { scopes: ['generate'] })).key;
    expect((await fetch(out.download_url, { headers: { 'x-api-key': other } })).status).toBe(404);
  });

  it('is swept by retention like a local file: gone from the bucket, then 404', async () => {
    const later = await generate();
    // An artifact the sweep sees as older than the retention: sweep with a clock a day ahead.
    const { removeFilesOlderThan } = await import('../../consumers/generation/retention-sweep.ts');
    const removed = await removeFilesOlderThan([store], Date.now() + 86_400_000);
    expect(removed).toContain(`nats:${OBJECT_STORES.artifacts}/${later.job_id}.parquet`);
    expect(await store.stat(`${later.job_id}.parquet`)).toBeNull();
    expect((await fetch(later.download_url, { headers: { 'x-api-key': key } })).status).toBe(404);
  });
});

describe('a failed upload', () => {
  it('fails the job (storage_full), never completes it without a file', async () => {
    // Shrink the bucket below one artifact: the worker's put fails part way.
    const name = `OBJ_${OBJECT_STORES.artifacts}`;
    const info = await stack.nats.jsm.streams.info(name);
    await stack.nats.jsm.streams.update(name, { ...info.config, max_bytes: 50_000 });
    try {
      const res = await fetch(`${stack.http.url}/data/generate?async=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        // A manifest of its own: the same one again would attach to the completed job above.
        body: JSON.stringify({ ...manifest, config: { ...manifest.config, seed: 4 } }),
      });
      const { job_id } = (await res.json()) as { job_id: string };
      const job = await eventually(
        async () => {
          const j = await (
            await fetch(`${stack.http.url}/data/jobs/${job_id}`, { headers: { 'x-api-key': key } })
          ).json();
          return (j.status === 'failed' || j.status === 'completed') && j;
        },
        120_000,
        'the job to finish',
      );
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('storage_full');
      expect(await store.stat(`${job_id}.parquet`)).toBeNull();
      expect(
        (await fetch(`${stack.http.url}/artifacts/${job_id}.parquet`, { headers: { 'x-api-key': key } }))
          .status,
      ).toBe(404);
    } finally {
      await stack.nats.jsm.streams.update(name, { ...info.config, max_bytes: -1 });
    }
  });
});
