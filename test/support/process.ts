/** Runs `app/main.ts` as a real child process and reads its JSON log lines. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export type LogLine = Record<string, unknown> & { msg?: string };

export type ServiceProcess = {
  child: ChildProcess;
  logs: LogLine[];
  /** Everything the process wrote so far, stdout then stderr, as written. */
  output(): string;
  /** Resolves with the first log line matching `pred`. */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  exited: Promise<number | null>;
};

export function startService(args: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const lines: string[] = [];
  const waiters: {
    pred: (l: LogLine) => boolean;
    resolve: (l: LogLine) => void;
    reject: (e: Error) => void;
  }[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    lines.push(line);
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = { msg: line };
    }
    logs.push(parsed);
    for (const w of [...waiters]) if (w.pred(parsed)) w.resolve(parsed);
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Once its output has ended, a line still awaited never comes: say so at once, with why it ended.
  let closed: string | null = null;
  child.once('close', (code, signal) => {
    closed = `the process ended (${signal ?? `exit code ${code}`}) without it; stderr: ${stderr.slice(-2_000)}`;
    for (const w of waiters.splice(0)) w.reject(new Error(`${args.join(' ')}: ${closed}`));
  });
  return {
    child,
    logs,
    output: () => `${lines.join('\n')}\n${stderr}`,
    exited,
    waitForLog(pred, timeoutMs = 30_000) {
      const hit = logs.find(pred);
      if (hit) return Promise.resolve(hit);
      if (closed) return Promise.reject(new Error(`${args.join(' ')}: ${closed}`));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `${args.join(' ')}: no matching log line in ${timeoutMs} ms; stderr: ${stderr.slice(-2_000)}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          pred,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
      });
    },
  };
}

/**
 * Starts `count` real unified gateway processes (US, free ports) on one NATS with the test secret;
 * resolves with the processes (pushed to `into` at once, so a failing test can still kill them)
 * and their stream URLs.
 */
export async function startUnifiedGateways(
  count: number,
  natsUrl: string,
  apiKeySecret: string,
  into: ServiceProcess[],
  extraEnv: Record<string, string> = {},
): Promise<string[]> {
  const env = {
    NATS_URL: natsUrl,
    NODE_ENV: 'test',
    API_KEY_SECRET: apiKeySecret,
    UNIFIED_PORT_US: '0',
    ...extraEnv,
  };
  const started = Array.from({ length: count }, () =>
    startService(['gateway', 'unified', '--region', 'us'], env),
  );
  into.push(...started);
  return Promise.all(
    started.map(
      async (g) => (await g.waitForLog((l) => l.msg === 'unified stream listening', 90_000)).url as string,
    ),
  );
}

/**
 * Starts the real `{base_url}` app as its own process (`gateway http`, free port) on one NATS with
 * the test secret; pushes it to `into` at once and resolves with its URL.
 */
export async function startHttpGatewayProcess(
  natsUrl: string,
  apiKeySecret: string,
  into: ServiceProcess[],
  extraEnv: Record<string, string> = {},
): Promise<string> {
  const service = startService(['gateway', 'http'], {
    NATS_URL: natsUrl,
    NODE_ENV: 'test',
    API_KEY_SECRET: apiKeySecret,
    HTTP_PORT: '0',
    ...extraEnv,
  });
  into.push(service);
  return (await service.waitForLog((l) => l.msg === 'http (console) listening', 90_000)).url as string;
}

/** A child process of a test: the real service, the `mdp` command line, or any spawned child. */
export type Killable = { child: ChildProcess };

/** How a process ended; `forced` when it outlived its bound and was sent SIGKILL. */
export type Exit = { code: number | null; signal: NodeJS.Signals | null; forced: boolean };

/** Whether the process is still running (no exit code and no signal yet). */
export const running = (p: Killable): boolean => p.child.exitCode === null && p.child.signalCode === null;

/** Resolves once the process has exited (at once if it already has), with its code and signal. */
export function exitOf(p: Killable): Promise<Omit<Exit, 'forced'>> {
  const { child } = p;
  if (!running(p)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Sends `signal` (SIGKILL unless told) to a process still running and waits for it to exit; one not
 * gone within `withinMs` is sent SIGKILL and waited for (`forced: true`). A process already gone is
 * not signalled.
 */
export async function stopProcess(
  p: Killable,
  signal: NodeJS.Signals = 'SIGKILL',
  withinMs = 30_000,
): Promise<Exit> {
  if (running(p)) p.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), withinMs);
  });
  const exit = await Promise.race([exitOf(p), late]);
  clearTimeout(timer);
  if (exit) return { ...exit, forced: false };
  p.child.kill('SIGKILL');
  return { ...(await exitOf(p)), forced: true };
}

/**
 * `signal` (kill -9 unless told) to every process still running, resolved once all have exited
 * (a test's afterAll); any still running after `withinMs` is sent SIGKILL.
 */
export async function killAll(
  processes: Killable[],
  signal: NodeJS.Signals = 'SIGKILL',
  withinMs = 30_000,
): Promise<void> {
  await Promise.all(processes.map((p) => stopProcess(p, signal, withinMs)));
}
