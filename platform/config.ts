/**
 * The only place that reads the environment. Everything else receives a typed `Config`.
 * Every variable here is listed in the README's configuration table.
 */
import { z } from 'zod';

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);
const port = (def: number) => int(def, 0, 65_535);
const list = (def: string) =>
  z
    .string()
    .default(def)
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    );

/** The secret's built-in value: fine for a laptop, refused anywhere else. */
export const DEFAULT_API_KEY_SECRET = 'development-only-secret-change-me';

export const ConfigSchema = z.object({
  /** `development` enables local conveniences; anything else is production. */
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** NATS server URL; unset → an embedded nats-server child is started. */
  NATS_URL: z.string().optional(),
  /** nats-server binary for the embedded server. */
  NATS_SERVER_BIN: z.string().optional(),
  /** Local state: embedded JetStream store, demo key, artifacts. */
  DATA_DIR: z.string().default('.data'),
  /** Listen address of every HTTP surface. */
  HOST: z.string().default('127.0.0.1'),
  /** PEM certificate and key for every edge listener (TLS 1.2+, ECDHE AES-GCM/ChaCha20 only). */
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  /** Serve TLS with a generated self-signed certificate (testing, internal hops). */
  TLS_SELF_SIGNED: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Allow a non-loopback HOST without TLS (only behind a TLS-terminating balancer). */
  ALLOW_PLAINTEXT_PUBLIC: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** `{base_url}`: console API (and the simulation/MCP service with the next issues). */
  HTTP_PORT: port(8080),
  /** Unified stream the dashboard proxy forwards to; default: this host's US port. */
  UNIFIED_UPSTREAM_URL: z.url().optional(),
  UNIFIED_PORT_US: port(8081),
  UNIFIED_PORT_JP: port(9081),
  /** Region served by a single-role gateway process (`gateway unified`). */
  REGION: z.enum(['us', 'jp']).default('us'),
  /** Public `{base_url}` used in download and status URLs; default: from the request's Host. */
  PUBLIC_BASE_URL: z.url().optional(),
  /** Where Parquet artifacts are stored (storage backend `local`); default DATA_DIR/artifacts. */
  ARTIFACTS_DIR: z.string().optional(),
  /** Generation jobs run at once per worker process. */
  WORKER_CONCURRENCY: int(1, 1, 16),
  /** A worker silent this long (crashed) loses its job to another worker, ms. */
  JOB_ACK_WAIT_MS: int(30_000, 1_000, 600_000),
  /** HMAC secret for API keys and session tokens; the default is refused outside development. */
  API_KEY_SECRET: z.string().min(16).default(DEFAULT_API_KEY_SECRET),
  /** Version tag stored with every hash, so the secret can rotate. */
  API_KEY_SECRET_VERSION: int(1, 1, 999),
  /** Console session lifetime, seconds. */
  SESSION_TTL_S: int(43_200, 60, 30 * 86_400),
  /** Coins the live simulator publishes and the gateway knows before it has seen them. */
  COINS: list('BTC,ETH,SOL,HYPE'),
  SIM_SEED: int(42),
  /** Mean trades per second per coin of the live simulator. */
  SIM_TRADE_RATE: z.coerce.number().min(0).max(1_000).default(5),
  /** Book snapshot period of the live simulator, ms. */
  SIM_BOOK_INTERVAL_MS: int(100, 10, 60_000).refine((ms) => 60_000 % ms === 0, 'must divide 60000'),
  /** Replicas of every stream (3 on a 3-node cluster). */
  STREAM_REPLICAS: int(1, 1, 5),
  /** MD stream retention. */
  MD_MAX_AGE_S: int(86_400, 1),
  MD_MAX_MSGS: int(50_000_000, 1),
  MD_MAX_BYTES: int(8 * 1024 ** 3, 1024),
  /** Unified stream behaviour. */
  SSE_RETRY_MS: int(1_000, 0, 600_000),
  SSE_HEARTBEAT_MS: int(15_000, 100, 60_000),
  SSE_FEED_STALE_MS: int(60_000, 100),
  /** Unsent bytes per client before books are conflated and `upstream_lag` is sent. */
  SSE_MAX_BACKLOG_BYTES: int(1_048_576, 1_024),
  /** In-memory recent-event ring per gateway, events (resumes within it need no JetStream consumer). */
  SSE_RING_SIZE: int(65_536, 16),
  /** Time a terminated client gets to read its last frames before its socket is destroyed, ms. */
  SSE_CLOSE_GRACE_MS: int(30_000, 0),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Parses the environment; throws a readable error listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.NODE_ENV !== 'development' && parsed.data.API_KEY_SECRET === DEFAULT_API_KEY_SECRET) {
    throw new Error(
      'invalid configuration:\n  API_KEY_SECRET: set a secret of your own (the default is for development only)',
    );
  }
  return parsed.data;
}
