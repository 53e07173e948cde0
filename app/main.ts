/**
 * Composition root: `tsx app/main.ts [all | gateway unified|jsonrpc|grpc|disksync [--region us|jp] | gateway http | producer sim | producer derived
 * | producer connector --venue binance|hyperliquid --symbols A,B | worker]`.
 * Uses NATS_URL when set, otherwise an embedded nats-server under DATA_DIR/nats, in a process
 * group of its own. SIGTERM/SIGINT: every client gets a terminal `reconnect`, every part stops in
 * reverse order while NATS is still up (the dashboard's service key is revoked), then NATS is
 * drained and the embedded server stopped last. An unhandled rejection or uncaught exception is
 * logged, counted and stops the process the same way with exit code 1. A stop that overruns
 * SHUTDOWN_DEADLINE_MS exits with code 1 and says which part was still stopping.
 */
import '../platform/v8-flags.ts';
import { join, resolve } from 'node:path';
import { type Config, loadConfig } from '../platform/config.ts';
import { createLifecycle } from '../platform/lifecycle.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import { connectNats } from '../platform/nats.ts';
import { describeNatsAuth, natsAuthOptions } from '../platform/nats-auth.ts';
import { type NatsServerHandle, NatsServerNotFoundError, startNatsServer } from '../platform/nats-server.ts';
import { type ConnectorArgs, parseConnectorArgs } from './connector.ts';
import { type Region, type Role, startRole } from './roles.ts';

const USAGE =
  'usage: main [all | gateway unified|jsonrpc|grpc|disksync|edges [--region us|jp] | gateway http | producer sim | producer derived | producer connector --venue binance|hyperliquid --symbols A,B | worker]';

/** Removes `--name value` from `argv` and returns the value (undefined when absent). */
function takeFlag(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at < 0) return undefined;
  return argv.splice(at, 2)[1];
}

function parseArgs(
  argv: string[],
  defaultRegion: Region,
): { role: Role; region: Region; connector?: ConnectorArgs } {
  const rest = [...argv];
  const region = takeFlag(rest, '--region') ?? defaultRegion;
  if (region !== 'us' && region !== 'jp') throw new Error(`--region must be us or jp\n${USAGE}`);
  const venue = takeFlag(rest, '--venue');
  const symbols = takeFlag(rest, '--symbols');
  const words = rest.join(' ');
  const role: Role | undefined = (
    {
      '': 'all',
      all: 'all',
      'gateway unified': 'gateway-unified',
      'gateway jsonrpc': 'gateway-jsonrpc',
      'gateway grpc': 'gateway-grpc',
      'gateway disksync': 'gateway-disksync',
      'gateway edges': 'gateway-edges',
      'gateway http': 'gateway-http',
      'producer sim': 'producer-sim',
      'producer derived': 'producer-derived',
      'producer connector': 'producer-connector',
      worker: 'worker',
    } as const
  )[words as ''] as Role | undefined;
  if (!role) throw new Error(`unknown role "${words}"\n${USAGE}`);
  if (role !== 'producer-connector') return { role, region };
  try {
    return { role, region, connector: parseConnectorArgs(venue, symbols) };
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${USAGE}`);
  }
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

function checkListenPolicy(config: Config): void {
  const tls = Boolean((config.TLS_CERT_FILE && config.TLS_KEY_FILE) || config.TLS_SELF_SIGNED);
  if (!isLoopback(config.HOST) && !tls && !config.ALLOW_PLAINTEXT_PUBLIC) {
    throw new Error(
      `HOST=${config.HOST} is not loopback and TLS is not configured; set ALLOW_PLAINTEXT_PUBLIC=true only behind a TLS-terminating balancer`,
    );
  }
}

async function natsUrlOf(
  config: Config,
  log: Logger,
): Promise<{ url: string; embedded: NatsServerHandle | null }> {
  if (config.NATS_URL) return { url: config.NATS_URL, embedded: null };
  const embedded = await startNatsServer({
    storeDir: resolve(join(config.DATA_DIR, 'nats')),
    ownProcessGroup: true,
    ...(config.NATS_SERVER_BIN ? { binary: config.NATS_SERVER_BIN } : {}),
  });
  log.info(
    { url: embedded.url, store: embedded.storeDir },
    'embedded nats-server started (set NATS_URL to use another)',
  );
  return { url: embedded.url, embedded };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL);
  const { role, region, connector } = parseArgs(process.argv.slice(2), config.REGION);
  checkListenPolicy(config);

  let embedded: NatsServerHandle | null = null;
  let drain: () => Promise<void> = async () => {};
  const lifecycle = createLifecycle({
    log,
    deadlineMs: config.SHUTDOWN_DEADLINE_MS,
    finally: async () => {
      await drain().catch(() => {});
      await embedded?.stop();
    },
    onDeadline: () => embedded?.process.kill('SIGKILL'),
    exit: (code) => process.exit(code),
  });
  lifecycle.install(process);

  const nats = await natsUrlOf(config, log);
  embedded = nats.embedded;
  log.info(describeNatsAuth(config), 'connecting to nats');
  const conn = await connectNats(nats.url, `mdp-${role}`, log, natsAuthOptions(config), {
    historyWire: config.NATS_HISTORY_WIRE,
  });
  drain = () => conn.nc.drain();
  lifecycle.parts.push(...(await startRole(role, region, conn, config, log, connector)));
  log.info({ role, parts: lifecycle.parts.map((p) => p.name) }, 'running');
}

main().catch((err) => {
  const message =
    err instanceof NatsServerNotFoundError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`fatal: ${message}\n`);
  process.exit(1);
});
