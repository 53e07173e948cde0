/**
 * Launches a private nats-server (JetStream on, loopback, a free port, a given store) and stops
 * it with the process. Used by `npm start` when NATS_URL is unset and by every integration test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.ts';

export type NatsServerOptions = {
  /** Store directory for JetStream; created if missing. */
  storeDir: string;
  /** 0 (default) picks a free port. */
  port?: number;
  binary?: string;
  /** Milliseconds to wait for the server to accept connections. */
  readyTimeoutMs?: number;
  /**
   * Run in a process group of its own, so a Ctrl-C to the terminal's group (SIGINT to every
   * process in it) reaches only the app, which then stops the server last, after its own shutdown
   * has used NATS. Still killed when this process exits.
   */
  ownProcessGroup?: boolean;
  /**
   * More command-line flags (cluster membership: `--server_name`, `--cluster`, `--routes`). The log
   * must stay on stderr (no `-l`, `--syslog`): readiness is read off it.
   */
  extraArgs?: string[];
};

export type NatsServerHandle = {
  url: string;
  port: number;
  storeDir: string;
  process: ChildProcess;
  /** SIGTERM, then SIGKILL after 5 s; resolves when the process has exited. */
  stop(): Promise<void>;
  /** Sends a signal and resolves on exit (`SIGKILL` simulates a crash). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** The last 4 KB the server wrote to stderr (its log). */
  log(): string;
};

export class NatsServerNotFoundError extends Error {
  constructor() {
    super(
      'nats-server not found. Install it with `apt-get install nats-server` (Debian/Ubuntu), ' +
        'set NATS_SERVER_BIN to its path, or set NATS_URL to use a running server.',
    );
  }
}

export function findNatsServer(explicit?: string): string {
  const candidates = explicit
    ? [explicit]
    : [
        ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'nats-server')),
        '/usr/sbin/nats-server',
        '/usr/local/bin/nats-server',
      ];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new NatsServerNotFoundError();
  return found;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tcpConnect({ host: '127.0.0.1', port }, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function killAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * A port picked free can be taken before the server binds it (the OS hands the same ephemeral
 * range to outgoing connections, e.g. one cluster node's route dial to another): such a start is
 * worth one more try on fresh ports.
 */
export class PortTakenError extends Error {}

/** The error of a server that did not start (or died starting), given what it logged. */
export function startError(what: string, log: string): Error {
  const said = `${what}: ${log.trim() || 'no output'}`;
  return log.includes('address already in use') ? new PortTakenError(said) : new Error(said);
}

/** Tries of a start whose port was taken (here, and a cluster's first start). */
export const PORT_ATTEMPTS = 3;

export async function startNatsServer(opts: NatsServerOptions): Promise<NatsServerHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(opts, opts.port || (await freePort()));
    } catch (err) {
      if (!(err instanceof PortTakenError) || opts.port || attempt >= PORT_ATTEMPTS) throw err;
    }
  }
}

async function launch(opts: NatsServerOptions, port: number): Promise<NatsServerHandle> {
  const binary = findNatsServer(opts.binary);
  mkdirSync(opts.storeDir, { recursive: true });
  const args = [
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '-js',
    '-sd',
    opts.storeDir,
    ...(opts.extraArgs ?? []),
  ];
  const child = spawn(binary, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: opts.ownProcessGroup ?? false,
  });
  live.add(child);
  killAllOnExit();
  // Ready when the server says it listens on each of its ports (a connection alone could reach
  // another process on a taken port) and still runs (the route listener starts after the client's).
  // Read off the whole output as it comes, not the tail kept for errors (a restored store's lines
  // could push them out of it).
  let clientListening = false;
  let routesListening = !args.includes('--cluster');
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = stderr + chunk.toString();
    clientListening ||= text.includes(`Listening for client connections on 127.0.0.1:${port}`);
    routesListening ||= text.includes('Listening for route connections');
    stderr = text.slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(() => live.delete(child));

  const listening = () => clientListening && routesListening && child.exitCode === null;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 10_000);
  while (!listening() || !(await canConnect(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw startError(`nats-server did not start on port ${port}`, stderr);
    }
    await new Promise((r) => setTimeout(r, 25));
  }

  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const stop = async () => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await kill('SIGTERM');
    clearTimeout(timer);
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir: opts.storeDir,
    process: child,
    stop,
    kill,
    log: () => stderr,
  };
}
