/**
 * A private nats-server per test file: free port, temporary store, removed afterwards. Ready when
 * JetStream answers, not only when the server listens: a suite once failed its first JetStream
 * request (5 s) on a server that had just said it listened, on a loaded machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { type NatsServerHandle, startNatsServer } from '../../platform/nats-server.ts';

/** Asks `$JS.API.INFO` (1 s each) until it answers, for at most `ms`. */
async function jetStreamAnswers(url: string, ms = 20_000): Promise<void> {
  const nc = await connect({ servers: url, name: 'test-ready' });
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      try {
        await nc.request('$JS.API.INFO', '', { timeout: 1_000 });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`JetStream at ${url} did not answer: ${err}`);
        await new Promise((r) => setTimeout(r, 50)); // "no responders" comes back at once
      }
    }
  } finally {
    await nc.close();
  }
}

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
  // A server of a config file (`-c`) may want credentials this check does not have: its tests wait themselves.
  if (extraArgs.length === 0) await jetStreamAnswers(h.url);
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
