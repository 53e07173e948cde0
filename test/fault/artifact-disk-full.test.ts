/**
 * Disk full on the artifact directory: ARTIFACTS_DIR is a real 256 KiB tmpfs (mounted here; a
 * process without the right to mount skips this file and says why), the free-space guard off
 * (MIN_FREE_DISK_BYTES=0) so the write itself hits ENOSPC. A job larger than the disk fails with a
 * clear status and message, nothing half-written is left or served (404), and the rest of the
 * platform goes on: /healthz answers and a job that fits completes and is served.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { type JobWorker, startJobWorker } from '../../consumers/generation/job-worker.ts';
import { LocalArtifactStore } from '../../platform/artifact-store/local.ts';
import { createLogger } from '../../platform/logger.ts';
import { eventually } from '../support/eventually.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const disk = mkdtempSync(join(tmpdir(), 'mdp-full-'));
const parts = mkdtempSync(join(tmpdir(), 'mdp-parts-'));
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
  rmSync(disk, { recursive: true, force: true });
  rmSync(parts, { recursive: true, force: true });
});

type Job = { status: string; error?: { code?: string; message?: string }; result?: { download_url: string } };

it.skipIf(!mounted)(
  'a full artifact disk fails the job cleanly and the platform goes on',
  {
    timeout: 240_000,
  },
  async () => {
    stack = await startStack({ ARTIFACTS_DIR: disk, MIN_FREE_DISK_BYTES: '0' });
    worker = await startJobWorker(stack.nats, createLogger('silent'), {
      artifactsDir: disk,
      store: new LocalArtifactStore(disk),
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
  },
);
