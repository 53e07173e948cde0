/**
 * The inter-region link of `bench/regions.ts` in a process of its own: delay proxies
 * (platform/delay-proxy.ts) whose timers no edge, client or publisher of the benchmark's process
 * can make late, so the link takes the delay it is given and the benchmark measures what a region
 * adds to it. `start` answers a proxy's id and port; `set`, `cut`, `restore`, `close` act on one.
 */
import { type DelayProxy, startDelayProxy } from '../../platform/delay-proxy.ts';
import { serveWorker } from './ipc.ts';

const proxies = new Map<number, DelayProxy>();
let nextId = 1;
const of = (id: number) => {
  const p = proxies.get(id);
  if (!p) throw new Error(`no proxy ${id}`);
  return p;
};

serveWorker(
  {
    start: async ({
      port,
      delayMs,
      windowBytes,
    }: {
      port: number;
      delayMs: number;
      windowBytes?: number;
    }) => {
      const p = await startDelayProxy({ port }, { delayMs, ...(windowBytes ? { windowBytes } : {}) });
      const id = nextId++;
      proxies.set(id, p);
      return { id, port: p.port };
    },
    set: ({ id, delayMs }: { id: number; delayMs: number }) => {
      of(id).delayMs = delayMs;
    },
    cut: ({ id }: { id: number }) => of(id).cut(),
    restore: ({ id }: { id: number }) => of(id).restore(),
    close: async ({ id }: { id: number }) => {
      await of(id).close();
      proxies.delete(id);
    },
  },
  async () => {
    await Promise.all([...proxies.values()].map((p) => p.close()));
  },
);
