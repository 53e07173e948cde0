/**
 * Request/response over the Node IPC channel between the benchmark (parent) and its worker
 * processes. Workers run TypeScript through `node --import tsx`; their stdout goes to the parent's
 * stderr so that the parent's stdout carries nothing but the result JSON.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { V8_FLAGS } from '../../platform/v8-flags.ts';

type Request = { id: number; cmd: string; args: unknown };
type Response = { id: number; ok: boolean; result?: unknown; error?: string };
type Ready = { ready: true };

export type Handlers = Record<string, (args: never) => unknown>;

export type Worker = {
  readonly child: ChildProcess;
  call<T = unknown>(cmd: string, args?: unknown, timeoutMs?: number): Promise<T>;
  /** Asks the worker to exit, then kills it if it has not within 3 s. */
  close(): Promise<void>;
};

/** Starts `bench/lib/<name>.ts` as a worker process and waits until it is ready. */
export async function startWorker(
  name: string,
  opts: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): Promise<Worker> {
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const child = fork(script, [], {
    execArgv: ['--import', 'tsx', ...V8_FLAGS, ...(opts.nodeArgs ?? [])],
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let exited = false;
  const exitedP = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      for (const p of pending.values()) p.reject(new Error(`worker ${name} exited (${code ?? signal})`));
      pending.clear();
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: Ready | Response) => {
      if ('ready' in m) resolve();
      else {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.ok) p?.resolve(m.result);
        else p?.reject(new Error(`${name}: ${m.error}`));
      }
    };
    child.on('message', onMessage);
    child.once('exit', () => reject(new Error(`worker ${name} exited before it was ready`)));
  });
  return {
    child,
    call<T>(cmd: string, args: unknown = {}, timeoutMs = 120_000): Promise<T> {
      if (exited) return Promise.reject(new Error(`worker ${name} has exited`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}.${cmd} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        child.send({ id, cmd, args } satisfies Request);
      });
    },
    async close() {
      if (exited) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      if (child.connected) child.disconnect();
      else child.kill('SIGTERM');
      await exitedP;
      clearTimeout(timer);
    },
  };
}

/** In a worker: answers the parent's requests; exits when the parent disconnects. */
export function serveWorker(handlers: Handlers, onExit: () => Promise<void> | void = () => {}): void {
  // The parent may have gone (it kills a worker that answers too late): drop the reply then.
  const send = (m: Response | Ready) => {
    if (process.connected) process.send?.(m, undefined, undefined, () => {});
  };
  process.on('message', async (m: Request) => {
    const h = handlers[m.cmd];
    try {
      if (!h) throw new Error(`unknown command ${m.cmd}`);
      const result = await h(m.args as never);
      send({ id: m.id, ok: true, result: result ?? null });
    } catch (err) {
      send({ id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  });
  process.on('disconnect', async () => {
    try {
      await onExit();
    } finally {
      process.exit(0);
    }
  });
  send({ ready: true });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
