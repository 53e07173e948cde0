/** A private nats-server per test file: free port, temporary store, removed afterwards. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NatsServerHandle, startNatsServer } from '../../platform/nats-server.ts';

export type TestNats = NatsServerHandle & {
  /** kill -9 then start again on the same port and store. */
  crashAndRestart(downMs?: number): Promise<TestNats>;
  cleanup(): Promise<void>;
};

export async function startTestNats(
  storeDir = mkdtempSync(join(tmpdir(), 'mdp-nats-')),
  port?: number,
  /** More flags (`-c <config file>`), kept across a restart. */
  extraArgs: string[] = [],
): Promise<TestNats> {
  const h = await startNatsServer({ storeDir, extraArgs, ...(port ? { port } : {}) });
  return {
    ...h,
    async crashAndRestart(downMs = 0) {
      await h.kill('SIGKILL');
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      return startTestNats(storeDir, h.port, extraArgs);
    },
    async cleanup() {
      await h.stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
