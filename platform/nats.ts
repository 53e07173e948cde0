/**
 * NATS connection (reconnects forever) and idempotent JetStream stream setup.
 */
import {
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { type ConnectionOptions, connect, type NatsConnection, nanos } from '@nats-io/transport-node';
import type { StreamDefinition } from '../contracts/streams.ts';
import type { Logger } from './logger.ts';
import type { HistoryConnection } from './nats-wire/history-connection.ts';
import { historyConnections } from './nats-wire/history-connections.ts';
import { isNotReady, patiently } from './patient.ts';

export type Nats = {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** False between a disconnect and the next reconnect. */
  readonly connected: () => boolean;
  /** Runs `fn` after every reconnect; returns the unsubscribe function. */
  onReconnect(fn: () => void): () => void;
  /** Runs `fn` at every disconnect; returns the unsubscribe function. */
  onDisconnect(fn: () => void): () => void;
  /** When the connection went down (ms since the epoch), while it is down; null while connected. */
  readonly downSince: () => number | null;
  /**
   * Replicas of the KV buckets this process creates (1 when unset); `setupStreams` sets it from
   * STREAM_REPLICAS, so buckets are R3 on a 3-node cluster like the streams.
   */
  replicas?: number;
  /**
   * In a region other than home (app/region-copies.ts): the home region's JetStream domain and
   * API, across the leaf-node link. Undefined in the home region.
   */
  home?: { domain: string; jsm: JetStreamManager };
  /**
   * The connection history reads pull over (nats-wire/history-connection.ts), made when first
   * asked for and again after it ends; null where it cannot be had (a creds file, or it failed to
   * connect while nats.js could): those reads pull over `nc`.
   */
  history?: () => Promise<HistoryConnection | null>;
};

/** `auth`: credentials and TLS from configuration (`natsAuthOptions`); none for a private server. */
export async function connectNats(
  url: string,
  name: string,
  log: Logger,
  auth: Partial<ConnectionOptions> = {},
  opts: { historyWire?: boolean } = {},
): Promise<Nats> {
  const nc = await connect({
    ...auth,
    servers: url.split(',').map((s) => s.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: 10_000,
    // The first connection: a refused TLS handshake can go silent; fail start-up, never hang it.
    timeout: 10_000,
    noAsyncTraces: true,
  });
  let connected = true;
  let downSince: number | null = null;
  const reconnectListeners = new Set<() => void>();
  const disconnectListeners = new Set<() => void>();
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') {
        connected = s.type === 'reconnect';
        downSince = connected ? null : (downSince ?? Date.now());
        log.warn({ nats: s.type, server: s.server }, `nats ${s.type}`);
        for (const fn of connected ? reconnectListeners : disconnectListeners) fn();
      } else if (s.type === 'error') log.error({ nats: s.type, err: String(s.error) }, 'nats error');
    }
  })().catch(() => {});
  const jsm = await jetstreamManager(nc, { timeout: 5_000 });
  // On the server nats.js is connected to (a node cut off from the cluster would answer no pull),
  // and again on the one it reconnects to.
  const history = historyConnections(url, name, log, auth, () => nc.getServer());
  nc.closed().then(() => history.close());
  reconnectListeners.add(() => history.reset());
  return {
    ...(opts.historyWire === false ? {} : { history: history.get }),
    nc,
    js: jetstream(nc, { timeout: 5_000 }),
    jsm,
    connected: () => connected && !nc.isClosed(),
    onReconnect(fn) {
      reconnectListeners.add(fn);
      return () => reconnectListeners.delete(fn);
    },
    onDisconnect(fn) {
      disconnectListeners.add(fn);
      return () => disconnectListeners.delete(fn);
    },
    downSince: () => downSince,
  };
}

function toStreamConfig(def: StreamDefinition) {
  return {
    name: def.name,
    subjects: def.subjects,
    retention: def.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(def.maxAgeSeconds * 1_000),
    max_msgs: def.maxMsgs,
    max_bytes: def.maxBytes,
    duplicate_window: nanos(def.duplicateWindowSeconds * 1_000),
    num_replicas: def.replicas,
    discard: (def.discard === 'new' ? DiscardPolicy.New : DiscardPolicy.Old) as DiscardPolicy,
  };
}

/**
 * How long a stream is retried while the cluster cannot place it (a cluster that has just elected
 * its meta leader may not know its other servers yet: "no suitable peers for placement") or does
 * not answer (platform/patient.ts).
 */
const PLACEMENT_WAIT_MS = 30_000;

/**
 * Creates each stream, or updates it to the definition; safe to run from many processes at once,
 * and against a cluster still forming (see PLACEMENT_WAIT_MS). A stream already as defined is only
 * read (no administration request), so a role whose NATS user may not administer it (compose's
 * `nats-auth.conf` grants stream creation to the roles that own the streams) starts without a
 * permissions violation; where it may not create or update a stream that exists, it goes on with
 * the stream as it is (its owner brings it to the definition), and where the stream does not exist
 * yet it waits for its owner to create it.
 */
export async function ensureStreams(jsm: JetStreamManager, defs: StreamDefinition[]): Promise<void> {
  for (const def of defs)
    await patiently(
      `stream ${def.name}`,
      () =>
        addOrUpdate(jsm, def).catch(async (err: unknown) => {
          // It exists and this process could not change it (another made it, or this user may not):
          // its owner brings it to the definition. Placed nowhere yet, it is waited for.
          const exists = await jsm.streams.info(def.name).then(
            () => true,
            () => false,
          );
          if (!exists || /no suitable peers/i.test(String(err))) throw err;
        }),
      {
        withinMs: PLACEMENT_WAIT_MS,
        // Waited for: a cluster still electing or placing streams, or the stream's owner (this user may not create it).
        retryable: (err) =>
          isNotReady(err) || /permissions violation/i.test(`${String(err)} ${String((err as Error).cause)}`),
      },
    );
}

/** The fields of a stream's configuration the platform sets, comparable. */
function settable(cfg: {
  subjects?: string[];
  retention?: unknown;
  max_age?: number;
  max_msgs?: number;
  max_bytes?: number;
  duplicate_window?: number;
  num_replicas?: number;
  discard?: unknown;
}): string {
  return JSON.stringify([
    cfg.discard ?? 'old',
    [...(cfg.subjects ?? [])].sort(),
    cfg.retention,
    cfg.max_age,
    cfg.max_msgs,
    cfg.max_bytes,
    cfg.duplicate_window,
    cfg.num_replicas,
  ]);
}

async function addOrUpdate(jsm: JetStreamManager, def: StreamDefinition): Promise<void> {
  const cfg = toStreamConfig(def);
  const current = await jsm.streams.info(def.name).catch(() => null);
  if (current && settable(current.config) === settable(cfg)) return;
  try {
    await jsm.streams.add(cfg);
  } catch (err) {
    if (isNotReady(err)) throw err;
    // Exists already (or a concurrent creator won): bring it to the definition.
    const { retention: _r, storage: _s, ...updatable } = cfg;
    try {
      await jsm.streams.update(def.name, updatable);
    } catch (updateErr) {
      throw new Error(`${String(err)}; update: ${String(updateErr)}`, { cause: updateErr });
    }
  }
}

/** True when every stream exists (used by health checks). */
export async function streamsExist(jsm: JetStreamManager, names: string[]): Promise<boolean> {
  for (const name of names) {
    try {
      await jsm.streams.info(name);
    } catch {
      return false;
    }
  }
  return true;
}
