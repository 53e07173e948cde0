/**
 * Retention: the `{base_url}` app deletes artifacts and cache exports older than
 * ARTIFACT_RETENTION_S when it starts and at every sweep; younger files and subdirectories stay.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const RETENTION_S = 3_600;
const DAY_S = 86_400;

let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;
const artifacts = mkdtempSync(join(tmpdir(), 'mdp-retention-'));
const exportsDir = join(artifacts, 'cache-exports');

/** Writes `path` with a modification time `ageS` seconds ago. */
function fileAged(path: string, ageS: number): string {
  writeFileSync(path, 'PAR1');
  const t = Date.now() / 1000 - ageS;
  utimesSync(path, t, t);
  return path;
}

let oldArtifact: string;
let oldExport: string;
let freshArtifact: string;

beforeAll(async () => {
  mkdirSync(join(exportsDir, 'a-subdirectory'), { recursive: true });
  oldArtifact = fileAged(join(artifacts, 'sim_batch_0000000000000001.parquet'), DAY_S);
  oldExport = fileAged(join(exportsDir, 'cache_old.parquet'), DAY_S);
  freshArtifact = fileAged(join(artifacts, 'sim_batch_0000000000000002.parquet'), 60);
  const config = testConfig({ ARTIFACTS_DIR: artifacts, ARTIFACT_RETENTION_S: String(RETENTION_S) });
  base = await startBase(config);
  ({ nats, accounts } = base);
  http = await startTestHttp(nats, config, accounts);
});

afterAll(async () => {
  await http?.close();
  await base?.close();
  rmSync(artifacts, { recursive: true, force: true });
});

describe('the retention sweep', () => {
  it('removes artifacts and cache exports older than the retention age when the app starts', async () => {
    await vi.waitFor(() => expect([existsSync(oldArtifact), existsSync(oldExport)]).toEqual([false, false]));
    expect(existsSync(freshArtifact)).toBe(true);
    expect(existsSync(join(exportsDir, 'a-subdirectory'))).toBe(true);
  });

  it('removes a file once it is older than the retention age, at the next sweep', async () => {
    const aged = fileAged(join(exportsDir, 'cache_aged.parquet'), RETENTION_S + 60);
    const young = fileAged(join(exportsDir, 'cache_young.parquet'), RETENTION_S - 600);
    expect(await http.retention.sweep()).toEqual([aged]);
    expect(existsSync(young)).toBe(true);
  });
});
