/**
 * `startDelayProxy`'s shape over a proxy that runs in bench/lib/delay-proxy-worker.ts: what
 * `startNatsRegions({ startProxy })` and the benchmark's own across-the-link proxy take, so the
 * link's timers run in a process of their own. `cut`, `restore` and a new delay take effect once
 * the worker has them (a message away), not at once.
 */
import type { DelayProxy } from '../../platform/delay-proxy.ts';
import { startWorker, type Worker } from './ipc.ts';

export type RemoteProxies = {
  start(target: { port: number }, opts: { delayMs: number; windowBytes?: number }): Promise<DelayProxy>;
  close(): Promise<void>;
};

export async function remoteProxies(): Promise<RemoteProxies> {
  const worker: Worker = await startWorker('delay-proxy-worker');
  return {
    async start(target, opts) {
      const { id, port } = await worker.call<{ id: number; port: number }>('start', {
        port: target.port,
        ...opts,
      });
      let delayMs = opts.delayMs;
      let cut = false;
      return {
        port,
        get delayMs() {
          return delayMs;
        },
        set delayMs(ms: number) {
          delayMs = ms;
          void worker.call('set', { id, delayMs: ms }).catch(() => {});
        },
        isCut: () => cut,
        cut() {
          cut = true;
          void worker.call('cut', { id }).catch(() => {});
        },
        restore() {
          cut = false;
          void worker.call('restore', { id }).catch(() => {});
        },
        close: () => worker.call<void>('close', { id }).catch(() => {}),
      };
    },
    close: () => worker.close(),
  };
}
