/**
 * Disk full on the artifact directory, the free-space guard off (MIN_FREE_DISK_BYTES=0) so the
 * write itself hits ENOSPC. A job larger than the disk fails with a clear status and message,
 * nothing half-written is left or served (404), and the rest of the platform goes on: /healthz
 * answers and a job that fits completes and is served. Two disks: one that needs no privilege (the
 * store's file writes fail with ENOSPC past 256 KiB, through its `openWrite` seam: runs
 * everywhere), and a real 256 KiB tmpfs where this process may mount one (else that case is
 * skipped and says why).
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { type JobWorker, startJobWorker } from '../../consumers/generation/job-worker.ts';
import { LocalArtifactStore, type OpenWrite } from '../../platform/artifact-store/local.ts';
import { createLogger } from '../../platform/logger.ts';
import { eventually } from '../support/eventually.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const disk = mkdtempSync(join(tmpdir(), 'mdp-full-'));
const seamDisk = mkdtempSync(join(tmpdir(), 'mdp-full-seam-'));
const parts = mkdtempSync(join(tmpdir(), 'mdp-parts-'));
const DISK_BYTES = 256 * 1024;

/** Files written through it fail with ENOSPC past `capacity` bytes, each as on a full disk. */
function fillsUpAt(capacity: number): OpenWrite {
  return (path) => {
    const file = createWriteStream(path);
    let written = 0;
    return new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (written + chunk.length > capacity) {
          const err = Object.assign(new Error(`ENOSPC: no space left on device, write`), {
            code: 'ENOSPC',
            errno: -28,
            syscall: 'write',
          });
          // What the disk took before it filled stays in the file, as on a real one.
          file.write(chunk.subarray(0, capacity - written), () => done(err));
          written = capacity;
          return;
        }
        written += chunk.length;
        file.write(chunk, done);
      },
      final(done) {
        file.end(done);
      },
      destroy(err, done) {
        file.destroy();
        done(err);
      },
    });
  };
}
const mounted = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', disk], { stdio: 'ignore' });
    return true;
  } catch {
    console.log('artifact-disk-full: cannot mount a tmpfs here (needs root); skipped');
    return false;
  }
})();
let stack: TestStack | null = null;
let worker: JobWorker | null = null;

afterAll(async () => {
  await worker?.stop();
  await stack?.close();
  if (mounted) execFileSync('umount', [disk]);
  for (const d of [disk, seamDisk, parts]) rmSync(d, { recursive: true, force: true });
});

type Job = { status: string; error?: { code?: string; message?: string }; result?: { download_url: string } };

async function fullDiskScenario(disk: string, store: LocalArtifactStore): Promise<void> {
  await worker?.stop();
  await stack?.close();
  stack = await startStack({ ARTIFACTS_DIR: disk, MIN_FREE_DISK_BYTES: '0' });
  worker = await startJobWorker(stack.nats, createLogger('silent'), {
    artifactsDir: disk,
    store,
    tmpDir: parts,
    minFreeDiskBytes: 0,
  });
  const { key } = await stack.accounts.key('quant');
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const generate = async (duration: number) => {
    const res = await fetch(`${stack?.http.url}/data/generate?async=true`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ config: { symbol: 'BTC', seed: 7 }, duration_seconds: duration }),
    });
    expect(res.status).toBe(202);
    const { status_url, job_id } = (await res.json()) as { status_url: string; job_id: string };
    const job = await eventually(
      async () => {
        const j = (await (await fetch(status_url, { headers })).json()) as Job;
        return j.status === 'completed' || j.status === 'failed' ? j : null;
      },
      180_000,
      `job ${job_id} finished`,
      250,
    );
    return { job, jobId: job_id };
  };

  const big = await generate(6 * 3_600);
  expect(big.job.status).toBe('failed');
  expect(big.job.error?.message).toMatch(/fill|full|space/i);
  expect(JSON.stringify(big.job)).not.toMatch(/\n\s+at |\.ts:\d+/);
  expect((await fetch(`${stack.http.url}/artifacts/${big.jobId}.parquet`, { headers })).status).toBe(404);
  // Nothing left on the disk: no artifact, no temporary file, no window part (empty folders aside).
  const left = readdirSync(disk, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  expect(left.map((e) => join(e.parentPath, e.name))).toEqual([]);
  console.log(JSON.stringify({ failedJob: big.job.error }));

  expect((await fetch(`${stack.http.url}/mcp/health`)).status).toBe(200);
  const small = await generate(5);
  expect(small.job.status).toBe('completed');
  const file = await fetch(`${stack.http.url}/artifacts/${small.jobId}.parquet`, { headers });
  expect(file.status).toBe(200);
  expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(0);
}

it(
  'a disk that fills up (ENOSPC from the store writes, no privilege needed) fails the job cleanly and the platform goes on',
  {
    timeout: 240_000,
  },
  () => fullDiskScenario(seamDisk, new LocalArtifactStore(seamDisk, fillsUpAt(DISK_BYTES))),
);

it.skipIf(!mounted)(
  'a full tmpfs artifact disk fails the job cleanly and the platform goes on',
  {
    timeout: 240_000,
  },
  () => fullDiskScenario(disk, new LocalArtifactStore(disk)),
);
