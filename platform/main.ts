/**
 * Composition root: `tsx platform/main.ts [all | gateway unified [--region us|jp] | gateway http | producer sim | worker]`.
 * Uses NATS_URL when set, otherwise an embedded nats-server under DATA_DIR/nats. SIGTERM/SIGINT:
 * every SSE client gets a terminal `reconnect`, then everything stops in reverse order.
 */
import { join, resolve } from 'node:path';
import { loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { connectNats } from './nats.ts';
import { type NatsServerHandle, NatsServerNotFoundError, startNatsServer } from './nats-server.ts';
import { type Region, type Role, type Stoppable, startRole } from './roles.ts';

const USAGE = 'usage: main [all | gateway unified [--region us|jp] | gateway http | producer sim | worker]';

function parseArgs(argv: string[], defaultRegion: Region): { role: Role; region: Region } {
  const regionAt = argv.indexOf('--region');
  const region = regionAt >= 0 ? argv[regionAt + 1] : defaultRegion;
  if (region !== 'us' && region !== 'jp') throw new Error(`--region must be us or jp\n${USAGE}`);
  const words = argv.filter((_, i) => regionAt < 0 || (i !== regionAt && i !== regionAt + 1)).join(' ');
  const role: Role | undefined = (
    {
      '': 'all',
      all: 'all',
      'gateway unified': 'gateway-unified',
      'gateway http': 'gateway-http',
      'producer sim': 'producer-sim',
      worker: 'worker',
    } as const
  )[words as ''];
  if (!role) throw new Error(`unknown role "${words}"\n${USAGE}`);
  return { role, region };
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL);
  const { role, region } = parseArgs(process.argv.slice(2), config.REGION);
  const tls = Boolean((config.TLS_CERT_FILE && config.TLS_KEY_FILE) || config.TLS_SELF_SIGNED);
  if (!isLoopback(config.HOST) && !tls && !config.ALLOW_PLAINTEXT_PUBLIC) {
    throw new Error(
      `HOST=${config.HOST} is not loopback and TLS is not configured; set ALLOW_PLAINTEXT_PUBLIC=true only behind a TLS-terminating balancer`,
    );
  }

  let embedded: NatsServerHandle | null = null;
  let url = config.NATS_URL;
  if (!url) {
    embedded = await startNatsServer({
      storeDir: resolve(join(config.DATA_DIR, 'nats')),
      ...(config.NATS_SERVER_BIN ? { binary: config.NATS_SERVER_BIN } : {}),
    });
    url = embedded.url;
    log.info({ url, store: embedded.storeDir }, 'embedded nats-server started (set NATS_URL to use another)');
  }
  const nats = await connectNats(url, `mdp-${role}`, log);
  const parts: Stoppable[] = await startRole(role, region, nats, config, log);
  log.info({ role, parts: parts.map((p) => p.name) }, 'running');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    for (const p of [...parts].reverse())
      await p.stop().catch((err) => log.error({ err: String(err), part: p.name }, 'stop failed'));
    await nats.nc.drain().catch(() => {});
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  const message =
    err instanceof NatsServerNotFoundError ? err.message : err instanceof Error ? err.message : String(err);
  process.stderr.write(`fatal: ${message}\n`);
  process.exit(1);
});
