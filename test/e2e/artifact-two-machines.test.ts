/**
 * Two machines on one NATS, with ARTIFACT_STORE=nats: a worker process and an HTTP gateway process,
 * each with its own DATA_DIR (no shared disk). The artifact the worker stored is downloaded through
 * the gateway byte for byte, with a Range request in the middle, and equals the object in the
 * bucket and a local regeneration of the same manifest and job id (the generation is deterministic).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { OBJECT_STORES } from '../../contracts/streams.ts';
import { NatsArtifactStore } from '../../platform/artifact-store/nats.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const workerDir = mkdtempSync(join(tmpdir(), 'mdp-machine-worker-'));
const gatewayDir = mkdtempSync(join(tmpdir(), 'mdp-machine-gateway-'));
const localDir = mkdtempSync(join(tmpdir(), 'mdp-machine-local-'));
const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
const services: ServiceProcess[] = [];
let httpUrl: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  const common = {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    ARTIFACT_STORE: 'nats',
    MIN_FREE_DISK_BYTES: '0',
  };
  const worker = startService(['worker'], { ...common, DATA_DIR: workerDir });
  const http = startService(['gateway', 'http'], { ...common, DATA_DIR: gatewayDir, HTTP_PORT: '0' });
  services.push(worker, http);
  await worker.waitForLog((l) => l.msg === 'running', 90_000);
  httpUrl = (await http.waitForLog((l) => l.msg === 'http (console) listening', 90_000)).url as string;
}, 120_000);

afterAll(async () => {
  await killAll(services, 'SIGTERM');
  await base?.close();
  for (const d of [workerDir, gatewayDir, localDir]) rmSync(d, { recursive: true, force: true });
});

const parquetFiles = (dir: string): string[] =>
  (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.endsWith('.parquet'));

it('downloads through the gateway exactly what the worker stored, Range included', async () => {
  const key = (await accounts.key('quant', { scopes: ['generate'] })).key;
  const body = {
    config: { symbol: 'BTC', seed: 21 },
    duration_seconds: 1800,
    driver: { window_seconds: 600 },
  };
  const res = await fetch(`${httpUrl}/data/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const out = (await res.json()) as {
    job_id: string;
    download_url: string;
    storage_backend: string;
    content_length_bytes: number;
  };
  expect(out.storage_backend).toBe('nats');
  const headers = { 'x-api-key': key };
  const size = out.content_length_bytes;

  // Whole, then a range from the middle spanning chunk boundaries, then the rest.
  const whole = Buffer.from(await (await fetch(out.download_url, { headers })).arrayBuffer());
  expect(whole.length).toBe(size);
  const start = Math.floor(size / 3);
  const end = Math.floor((2 * size) / 3);
  const middle = await fetch(out.download_url, { headers: { ...headers, range: `bytes=${start}-${end}` } });
  expect(middle.status).toBe(206);
  expect(middle.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
  const pieces = [
    Buffer.from(
      await (
        await fetch(out.download_url, { headers: { ...headers, range: `bytes=0-${start - 1}` } })
      ).arrayBuffer(),
    ),
    Buffer.from(await middle.arrayBuffer()),
    Buffer.from(
      await (
        await fetch(out.download_url, { headers: { ...headers, range: `bytes=${end + 1}-` } })
      ).arrayBuffer(),
    ),
  ];
  expect(Buffer.concat(pieces).equals(whole)).toBe(true);

  // What the worker stored: the object in the bucket, and the same generation run here.
  const store = await NatsArtifactStore.open(nats, OBJECT_STORES.artifacts);
  const chunks: Buffer[] = [];
  for await (const c of (await store.read(`${out.job_id}.parquet`)) as AsyncIterable<Uint8Array>)
    chunks.push(Buffer.from(c));
  expect(Buffer.concat(chunks).equals(whole)).toBe(true);
  const local = await generateDataset({
    manifest: normalizeManifest(body).manifest,
    jobId: out.job_id,
    outPath: join(localDir, 'again.parquet'),
    tmpDir: join(localDir, 'tmp'),
  });
  expect((await readFile(local.path)).equals(whole)).toBe(true);

  // Neither machine kept it on its disk.
  expect([...parquetFiles(workerDir), ...parquetFiles(gatewayDir)]).toEqual([]);
}, 300_000);
