/**
 * The only place that reads the environment. Everything else receives a typed `Config`.
 * The comment above each variable is its documentation: docs/configuration.md is generated from
 * it (`npm run docs:config`), and a test fails when the two differ.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  CACHE_QUOTA_BYTES,
  CACHE_QUOTA_COUNT,
  CACHE_STREAM_MAX_AGE_S,
  CACHE_STREAM_MAX_BYTES,
  LIVE_SESSIONS_PER_ACCOUNT,
  LIVE_SESSIONS_PER_PROCESS,
  OWN_STREAM_MAX_AGE_S,
  OWN_STREAM_MAX_BYTES,
  OWN_STREAM_MAX_MSGS,
  PUBLISH_BYTES_PER_DAY,
  PUBLISH_EVENTS_PER_DAY,
} from '../contracts/base-url-limits.ts';

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

/** An IP address, or one with a `/prefix` (CIDR block). */
function isAddressOrCidr(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, ''));
  if (!family || extra !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** The secret's built-in value: fine for a laptop, refused anywhere else. */
export const DEFAULT_API_KEY_SECRET = 'development-only-secret-change-me';

export const ConfigSchema = z.object({
  /**
   * `development` enables local conveniences (default secret, demo key, self-service plans);
   * unset means production rules, so a deployment that forgets it is never a laptop.
   * `npm start` sets `development` explicitly.
   */
  NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
  /** pino level; logs are JSON lines on stdout. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** NATS server URL(s), comma-separated; unset → an embedded nats-server child (JetStream, loopback, free port, store DATA_DIR/nats). */
  NATS_URL: z.string().optional(),
  /** NATS credentials: a `.creds` file (JWT + nkey); never logged. */
  NATS_CREDS_FILE: z.string().optional(),
  /** NATS user (with NATS_PASSWORD). */
  NATS_USER: z.string().optional(),
  /** NATS password (with NATS_USER); never logged. */
  NATS_PASSWORD: z.string().optional(),
  /** NATS token; never logged. */
  NATS_TOKEN: z.string().optional(),
  /** TLS to NATS: the CA bundle to trust. */
  NATS_TLS_CA_FILE: z.string().optional(),
  /** TLS to NATS: client certificate, when the server asks for one. */
  NATS_TLS_CERT_FILE: z.string().optional(),
  /** TLS to NATS: the client certificate's key. */
  NATS_TLS_KEY_FILE: z.string().optional(),
  /**
   * History reads (catch-ups, resumes) over the platform's own lean NATS connection
   * (platform/nats-wire/) instead of nats.js: `false` reads them over nats.js like everything else.
   */
  NATS_HISTORY_WIRE: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Longest a stop may take (SIGTERM/SIGINT) before the process exits with code 1, ms. */
  SHUTDOWN_DEADLINE_MS: int(5_000, 100, 120_000),
  /** nats-server binary for the embedded server. */
  NATS_SERVER_BIN: z.string().optional(),
  /** Local state: embedded JetStream store, demo key, artifacts. */
  DATA_DIR: z.string().default('.data'),
  /** Listen address of every HTTP surface. */
  HOST: z.string().default('127.0.0.1'),
  /** PEM certificate: every listener serves HTTPS (TLS 1.2+, ECDHE AES-GCM/ChaCha20, and the TLS 1.3 suites). */
  TLS_CERT_FILE: z.string().optional(),
  /** PEM key of TLS_CERT_FILE. */
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
  /**
   * Balancers whose word on the client's address is believed (comma list of IPs and CIDR blocks,
   * e.g. `127.0.0.1,10.0.0.0/8`): their PROXY protocol header (v1/v2) and `X-Forwarded-For`.
   * Empty (default): nobody's; every client is its connection's peer.
   */
  TRUSTED_PROXIES: list('').refine((entries) => entries.every(isAddressOrCidr), {
    message: 'a comma list of IP addresses and CIDR blocks (e.g. 127.0.0.1,10.0.0.0/8)',
  }),
  /** `{base_url}`: console, simulation, MCP, caches, status, metrics (0 = any free port). */
  HTTP_PORT: port(8080),
  /** Unified stream the dashboard proxy forwards to; default: this host's US port. */
  UNIFIED_UPSTREAM_URL: z.url().optional(),
  /** Unified stream, US edge (0 = any free port). */
  UNIFIED_PORT_US: port(8081),
  /** Unified stream, JP edge (0 = any free port). */
  UNIFIED_PORT_JP: port(9081),
  /** A single-edge role's own `/metrics` listener (scope `metrics`); unset: none. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** JSON-RPC edge `{rpc_url}`, US (0 = any free port). */
  JSONRPC_PORT_US: port(8545),
  /** JSON-RPC edge `{rpc_jp_url}`, JP (0 = any free port). */
  JSONRPC_PORT_JP: port(9545),
  /** `eth_chainId` / `net_version` of the JSON-RPC edge (an id of no public EVM chain). */
  JSONRPC_CHAIN_ID: int(5_063_760, 1),
  /** Widest `md_trades` range (end_ms − start_ms), ms; wider is -32008. */
  JSONRPC_TRADES_MAX_RANGE_MS: int(3_600_000, 1),
  /** How long before it was stored an event's `timestamp_ms` may be (capture latency): `md_trades` reads that much wider, ms. */
  JSONRPC_TRADES_SKEW_MS: int(60_000, 0, 3_600_000),
  /** A polling filter not polled for this long is gone (its cursor expires from KV), seconds. */
  JSONRPC_FILTER_TTL_S: int(300, 1, 86_400),
  /** Events one `md_getFilterChanges` returns at most; the rest come with the next poll. */
  JSONRPC_FILTER_MAX_EVENTS: int(10_000, 1, 100_000),
  /** A call still waiting on the log or KV after this long ends -32009, ms. */
  JSONRPC_CALL_TIMEOUT_MS: int(10_000, 10, 600_000),
  /** gRPC edge `{grpc_host}`, US (0 = any free port). */
  GRPC_PORT_US: port(50051),
  /** gRPC edge `{grpc_jp_host}`, JP (0 = any free port). */
  GRPC_PORT_JP: port(51051),
  /** The gRPC server pings an idle connection this often (idle streams stay open), ms. */
  GRPC_KEEPALIVE_TIME_MS: int(30_000, 1_000),
  /** A keepalive ping not acknowledged within this long drops the connection, ms. */
  GRPC_KEEPALIVE_TIMEOUT_MS: int(10_000, 100),
  /** A client may ping at most this often; more than GRPC_MAX_PING_STRIKES faster pings get GOAWAY (ENHANCE_YOUR_CALM), ms. */
  GRPC_MIN_PING_INTERVAL_MS: int(10_000, 0),
  /** Pings faster than GRPC_MIN_PING_INTERVAL_MS a client may send before GOAWAY (ENHANCE_YOUR_CALM). */
  GRPC_MAX_PING_STRIKES: int(2, 0, 100),
  /** Disk-sync WebSocket edge `{disk_url}`, US (0 = any free port). */
  DISKSYNC_PORT_US: port(8082),
  /** Disk-sync WebSocket edge `{disk_jp_url}`, JP (0 = any free port). */
  DISKSYNC_PORT_JP: port(9082),
  /** The server pings every connection this often (and renews its key's lease), ms; at most a third of DISKSYNC_LEASE_TTL_MS. */
  DISKSYNC_PING_INTERVAL_MS: int(15_000, 50, 60_000),
  /** No pong for this long → close 4007, ms. */
  DISKSYNC_PONG_TIMEOUT_MS: int(30_000, 100, 600_000),
  /** A crashed holder's one-connection-per-key lease stops counting within this long, ms. */
  DISKSYNC_LEASE_TTL_MS: int(45_000, 300, 600_000),
  /**
   * NATS unreachable (lease renewals failing) this long → close 4009, ms; sooner when the key's
   * lease could run out first (¾ of DISKSYNC_LEASE_TTL_MS after its last renewal began).
   */
  DISKSYNC_NATS_GRACE_MS: int(30_000, 100, 600_000),
  /**
   * An edge whose NATS connection has been down this long ends its open streams with `reconnect`
   * and refuses new ones with `feed_unavailable` (clients go to another edge or region); 0 never. ms.
   */
  NATS_LOST_CLOSE_MS: int(10_000, 0, 600_000),
  /** Client messages per second a connection may send (burst: twice that); faster → close 4029. */
  DISKSYNC_MSG_RATE: int(20, 1, 10_000),
  /** Subscriptions one connection may hold at once; one more → close 4006. */
  DISKSYNC_MAX_SUBSCRIPTIONS: int(16, 1, 1_000),
  /** Unsent bytes per connection before a live consumer counts as too slow (close 1013). */
  DISKSYNC_MAX_BACKLOG_BYTES: int(8 * 1_048_576, 65_536),
  /** Region served by a single-role gateway process (`gateway unified`, `gateway jsonrpc`). */
  REGION: z.enum(['us', 'jp']).default('us'),
  /**
   * Set in a region other than home (its own NATS, a leaf node of the home region's): the home
   * region's JetStream domain. The process then reads mirrors of the home region's streams made
   * through that domain (app/region-copies.ts) and keeps its edges' leases in buckets of its own;
   * unset: this process is in the home region.
   */
  NATS_HOME_DOMAIN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/)
    .optional(),
  /**
   * In a region other than home: how long after its copy last heard from the home region it still
   * admits new requests and streams (keys are confirmed from its copy, which a cut link stops
   * updating, revocations included); past it they are refused with `region_unconfirmed` (503)
   * until the link is back. Open streams go on. ms.
   */
  REGION_CONFIRM_MS: int(120_000, 1_000, 86_400_000),
  /**
   * In the home region: the JetStream domains of the other regions' NATS (leaf nodes of this one),
   * comma-separated; the status (`/api/v1/status`, public too) shows how far each region's copy of
   * `MD` is behind, and the console's key list each key's last use there. Empty: one region.
   */
  NATS_REGION_DOMAINS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((d) => d.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/)).max(16)),
  /** Public `{base_url}` used in download and status URLs; default: from the request's Host. */
  PUBLIC_BASE_URL: z.url().optional(),
  /** Where Parquet artifacts are stored (storage backend `local`); default DATA_DIR/artifacts. */
  ARTIFACTS_DIR: z.string().optional(),
  /**
   * Where workers put artifacts and cache exports: `local` (ARTIFACTS_DIR, this machine only) or
   * `nats` (the JetStream Object Store bucket `artifacts`, readable from every process on the NATS).
   */
  ARTIFACT_STORE: z.enum(['local', 'nats']).default('local'),
  /** Size cap of the `artifacts` object store bucket, bytes (0: none; a full bucket fails the job). */
  ARTIFACT_STORE_MAX_BYTES: int(0, 0),
  /** Generation jobs run at once per worker process. */
  WORKER_CONCURRENCY: int(1, 1, 16),
  /** Windows (of any job) a worker process writes at once, each on its own worker thread. */
  WINDOW_CONCURRENCY: int(1, 1, 16),
  /** A worker silent this long (crashed) loses its job to another worker, ms. */
  JOB_ACK_WAIT_MS: int(30_000, 1_000, 600_000),
  /** Attempts a generation job or window gets when its worker dies (kill, crash); one more fails it. A graceful stop uses none. */
  JOB_MAX_DELIVERIES: int(3, 1, 100),
  /** Longest a synchronous generation waits before 504 naming the job; keep it below HTTP_HANDLER_TIMEOUT_MS, ms. */
  GENERATE_SYNC_DEADLINE_MS: int(50_000, 1, 3_600_000),
  /** Synchronous generation requests one gateway process waits on at once; beyond, 503. */
  GENERATE_SYNC_MAX_WAITERS: int(1_000, 1, 100_000),
  /** Generation jobs one account may have queued or running at once (all gateways); beyond, 429. */
  JOB_QUOTA_ACTIVE: int(4, 1, 1_000),
  /** Bytes of artifacts one account may keep stored (within the retention period); beyond, 429. */
  ARTIFACT_QUOTA_BYTES: int(10 * 1024 ** 3, 1),
  /** Artifacts and cache exports older than this are deleted by the retention sweep, seconds. */
  ARTIFACT_RETENTION_S: int(7 * 86_400, 60, 90 * 86_400),
  /** How often the retention sweep runs, seconds. */
  ARTIFACT_SWEEP_INTERVAL_S: int(3_600, 1, 86_400),
  /**
   * Workers keep an archive of `MD` in Parquet segments (consumers/export/md-archive.ts): a range
   * export reads what it holds with DuckDB and only the rest from NATS. `false`: exports read `MD`.
   */
  MD_ARCHIVE: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Where a worker keeps its `MD` archive (one worker process per directory); default DATA_DIR/md-archive. */
  MD_ARCHIVE_DIR: z.string().optional(),
  /** `MD` sequences per archive segment. */
  MD_ARCHIVE_SEGMENT_SEQS: int(100_000, 10, 10_000_000),
  /** A quiet feed's pending archive segment is written after this however short, seconds. */
  MD_ARCHIVE_FLUSH_S: int(600, 1, 86_400),
  /** Free bytes the artifacts disk must keep: no job is accepted or started below it (503). */
  MIN_FREE_DISK_BYTES: int(1024 ** 3, 0),
  /** HMAC secret for API keys and session tokens; the default is refused outside development. */
  API_KEY_SECRET: z.string().min(16).default(DEFAULT_API_KEY_SECRET),
  /** Version tag stored with every hash, so the secret can rotate. */
  API_KEY_SECRET_VERSION: int(1, 1, 999),
  /** Rotation: the previous secret, still accepted (hashes made under it are redone under the current one); keep it for at least the session lifetime. */
  API_KEY_SECRET_PREVIOUS: z.string().min(16).optional(),
  /** Version of API_KEY_SECRET_PREVIOUS; 0: the current version − 1. */
  API_KEY_SECRET_PREVIOUS_VERSION: int(0, 0, 999),
  /** Registration may choose plan and Japan access; unset: on in development only (else Basic, changed by an operator). */
  SELF_SERVICE_PLANS: z.enum(['true', 'false']).optional(),
  /**
   * Ignored (kept so old environments still parse): emails are not verified, so a listed address made
   * an operator of whoever registered it first. Operators are made by `npm run operator -- grant <email>`.
   */
  OPERATOR_EMAILS: list(''),
  /** Longest life of an API key with `status:admin` (its `expires_at` at most this after creation), s: 30 days. */
  ADMIN_KEY_MAX_TTL_S: int(30 * 86_400, 60, 365 * 86_400),
  /** Longest a console command waits for the account projection before 503 `account_update_pending`, ms. */
  ACCOUNT_PROJECTION_DEADLINE_MS: int(5_000, 100, 120_000),
  /** Console session lifetime, seconds. */
  SESSION_TTL_S: int(43_200, 60, 30 * 86_400),
  /** Coins the live simulator publishes and the gateway knows before it has seen them. */
  COINS: list('BTC,ETH,SOL,HYPE'),
  /** Seed of the live simulator. */
  SIM_SEED: int(42),
  /** Mean trades per second per coin of the live simulator. */
  SIM_TRADE_RATE: z.coerce.number().min(0).max(1_000).default(5),
  /** Book snapshot period of the live simulator, ms. */
  SIM_BOOK_INTERVAL_MS: int(100, 10, 60_000).refine((ms) => 60_000 % ms === 0, 'must divide 60000'),
  /**
   * A gateway process that dies without releasing its streams (kill -9, lost host) stops counting
   * against its keys' concurrent-stream caps within this long (its leases are renewed every third), ms.
   */
  STREAM_LEASE_TTL_MS: int(15_000, 300, 600_000),
  /** Replicas of every stream (3 on a 3-node cluster). */
  STREAM_REPLICAS: int(1, 1, 5),
  /** `MD` stream retention: oldest event kept, seconds. */
  MD_MAX_AGE_S: int(86_400, 1),
  /** `MD` stream retention: events kept. */
  MD_MAX_MSGS: int(50_000_000, 1),
  /** `MD` stream retention: bytes kept. */
  MD_MAX_BYTES: int(8 * 1024 ** 3, 1024),
  /** `OWN` stream (accounts' `stream: true` events) bytes, all accounts together; full, its oldest go. */
  OWN_MAX_BYTES: int(OWN_STREAM_MAX_BYTES, 1024),
  /** `OWN` stream retention, seconds; `published_batches` records expire with it. */
  OWN_MAX_AGE_S: int(OWN_STREAM_MAX_AGE_S, 60),
  /** `OWN` stream retention: events kept, all accounts together. */
  OWN_MAX_MSGS: int(OWN_STREAM_MAX_MSGS, 1),
  /** `CACHE` stream bytes, all accounts together (contracts/base-url-limits.ts); a full stream refuses new caches (503). */
  CACHE_MAX_BYTES: int(CACHE_STREAM_MAX_BYTES, 1024),
  /** `CACHE` stream retention, seconds; manifests expire with it. */
  CACHE_MAX_AGE_S: int(CACHE_STREAM_MAX_AGE_S, 60),
  /** Cached bytes one account may hold (all gateways); beyond, 429 `quota_exceeded`. */
  CACHE_QUOTA_BYTES: int(CACHE_QUOTA_BYTES, 1),
  /** Events one account may publish with `stream: true` per UTC day (all processes); beyond, 429. */
  PUBLISH_EVENTS_PER_DAY: int(PUBLISH_EVENTS_PER_DAY, 1),
  /** Bytes one account may publish with `stream: true` per UTC day (all processes); beyond, 429. */
  PUBLISH_BYTES_PER_DAY: int(PUBLISH_BYTES_PER_DAY, 1),
  /** Caches one account may hold (all gateways); beyond, 429 `quota_exceeded`. */
  CACHE_QUOTA_COUNT: int(CACHE_QUOTA_COUNT, 1, 10_000),
  /** Distinct `/stream/live` sessions one account's clients hold on one process (429 beyond). */
  LIVE_SESSIONS_PER_ACCOUNT: int(LIVE_SESSIONS_PER_ACCOUNT, 1, 10_000),
  /** Distinct `/stream/live` sessions one process holds (503 beyond). */
  LIVE_SESSIONS_PER_PROCESS: int(LIVE_SESSIONS_PER_PROCESS, 1, 100_000),
  /** Binance WebSocket of `producer connector` (USD-M futures: `wss://fstream.binance.com/ws`); tests point it at a local replay server. */
  BINANCE_WS_URL: z.url().default('wss://stream.binance.com:9443/ws'),
  /** REST depth snapshot; USD-M futures: `https://fapi.binance.com/fapi/v1/depth` with `BINANCE_WS_URL=wss://fstream.binance.com/ws`. */
  BINANCE_REST_URL: z.url().default('https://api.binance.com/api/v3/depth'),
  /** Hyperliquid WebSocket of `producer connector`. */
  HYPERLIQUID_WS_URL: z.url().default('wss://api.hyperliquid.xyz/ws'),
  /** Levels per side of the books a connector publishes from its local book. */
  CONNECTOR_BOOK_DEPTH: int(20, 1, 1_000),
  /** No frame (nor ping/pong) for this long → the venue connection is dropped and reopened, ms. */
  CONNECTOR_IDLE_TIMEOUT_MS: int(90_000, 100),
  /** Reconnect backoff after consecutive failures: the first wait (with jitter), ms. */
  CONNECTOR_RECONNECT_BASE_MS: int(500, 1, 60_000),
  /** Reconnect backoff: the longest wait, ms. */
  CONNECTOR_RECONNECT_MAX_MS: int(30_000, 1, 600_000),
  /** `retry:` sent to a unified stream client on connect, ms. */
  SSE_RETRY_MS: int(1_000, 0, 600_000),
  /** Heartbeat period of every stream (SSE comment, gRPC `heartbeat`), ms. */
  SSE_HEARTBEAT_MS: int(15_000, 100, 60_000),
  /** Silence after which a (source, coin) feed is reported `feed_stale`, ms. */
  SSE_FEED_STALE_MS: int(60_000, 100),
  /** Unsent bytes per client before books are conflated and `upstream_lag` is sent. */
  SSE_MAX_BACKLOG_BYTES: int(1_048_576, 1_024),
  /** In-memory recent-event ring per gateway, events (resumes within it need no JetStream consumer). */
  SSE_RING_SIZE: int(65_536, 16),
  /** Time a terminated client gets to read its last frames before its socket is destroyed, ms. */
  SSE_CLOSE_GRACE_MS: int(30_000, 0),
  /** A request body still arriving this long after the headers → 408 `request_timeout`, ms. */
  HTTP_BODY_TIMEOUT_MS: int(10_000, 10, 600_000),
  /** A request not answered this long after its body was read → 504 `upstream_timeout`, ms (streams exempt once open). */
  HTTP_HANDLER_TIMEOUT_MS: int(60_000, 10, 3_600_000),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Whether registration may choose its plan: `SELF_SERVICE_PLANS`, else development only. */
export const selfServicePlans = (c: Config): boolean =>
  c.SELF_SERVICE_PLANS === undefined ? c.NODE_ENV === 'development' : c.SELF_SERVICE_PLANS === 'true';

/** The rotation's previous secret, when configured. */
export const previousSecrets = (c: Config): { secret: string; version: number }[] =>
  c.API_KEY_SECRET_PREVIOUS
    ? [
        {
          secret: c.API_KEY_SECRET_PREVIOUS,
          version: c.API_KEY_SECRET_PREVIOUS_VERSION || c.API_KEY_SECRET_VERSION - 1,
        },
      ]
    : [];

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
  // A disk-sync holder ends itself ¾ of the lease's TTL after its last renewal began (disksync/lease.ts):
  // with a renewal every ping, it must have room for a renewal that fails and the one after it.
  if (parsed.data.DISKSYNC_PING_INTERVAL_MS * 3 > parsed.data.DISKSYNC_LEASE_TTL_MS) {
    throw new Error(
      'invalid configuration:\n  DISKSYNC_PING_INTERVAL_MS: at most a third of DISKSYNC_LEASE_TTL_MS (leases are renewed every ping)',
    );
  }
  const prev = previousSecrets(parsed.data)[0];
  if (prev && (prev.version === parsed.data.API_KEY_SECRET_VERSION || prev.version < 1)) {
    throw new Error(
      'invalid configuration:\n  API_KEY_SECRET_PREVIOUS_VERSION: the previous secret needs its own version (≥ 1, not API_KEY_SECRET_VERSION)',
    );
  }
  return parsed.data;
}
