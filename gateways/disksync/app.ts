/**
 * The disk-sync WebSocket edge of one region (`{disk_url}/`), built from its dependencies: a
 * fastify app (TLS like every listener, `/healthz`, request hygiene) whose server also takes
 * WebSocket upgrades on `/`. Every upgrade is completed first; admission follows on the open socket
 * (edge guard: credential from `x-api-key` or the `api_key` query, Quant only, JP access, scopes,
 * rate limit, maintenance; then the key's one-connection lease), so that every refusal reaches
 * the client as an `error` message and a close with the spec's code, never as an HTTP status.
 * The connection is then registered (heartbeats, revocation → 4002, maintenance → 4050,
 * shutdown → 1001) and its messages handled by a Session.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { closeReason, DISKSYNC_CLOSES, MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import { ApiError, toApiError } from '../../contracts/errors.ts';
import type { ErrorRecorder } from '../../contracts/status.ts';
import type { Config } from '../../platform/config.ts';
import { type Logger, redactUrl } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TlsOptions } from '../../platform/tls.ts';
import { BufferedSink } from '../core/buffered-sink.ts';
import { acceptProxyProtocol, clientAddress, TrustedProxies } from '../core/client-address.ts';
import { ConnectionRegistry } from '../core/connection-registry.ts';
import type { RequestAccounts } from '../core/error-log-hook.ts';
import type { Guard } from '../core/guard.ts';
import { registerHealthRoute } from '../core/health-route.ts';
import { createHttpApp } from '../core/http-hygiene.ts';
import type { LiveTail } from '../core/live-tail.ts';
import { requestIdFrom } from '../core/request-id.ts';
import { WsConnection } from './connection.ts';
import { EarlyMessages } from './early-messages.ts';
import { type FramerState, wsFramer } from './framer.ts';
import type { KeyLeases } from './lease.ts';
import { Session, type SessionSettings } from './session.ts';
import { WsWire } from './wire.ts';

export type DisksyncSettings = SessionSettings & {
  pingIntervalMs: number;
  pongTimeoutMs: number;
  natsGraceMs: number;
  /** NATS_LOST_CLOSE_MS (nats-loss.ts); absent: never. */
  natsLostCloseMs?: number;
  maxBacklogBytes: number;
  /** `TRUSTED_PROXIES`: whose PROXY header names the client (client-address.ts); none when absent. */
  trustedProxies?: readonly string[];
};

/** The edge's settings as configuration gives them (every `DISKSYNC_*` but the ports and lease). */
export function disksyncSettings(config: Config): DisksyncSettings {
  return {
    pingIntervalMs: config.DISKSYNC_PING_INTERVAL_MS,
    pongTimeoutMs: config.DISKSYNC_PONG_TIMEOUT_MS,
    natsGraceMs: config.DISKSYNC_NATS_GRACE_MS,
    natsLostCloseMs: config.NATS_LOST_CLOSE_MS,
    maxBacklogBytes: config.DISKSYNC_MAX_BACKLOG_BYTES,
    maxSubscriptions: config.DISKSYNC_MAX_SUBSCRIPTIONS,
    messagesPerSecond: config.DISKSYNC_MSG_RATE,
    trustedProxies: config.TRUSTED_PROXIES,
  };
}

export type DisksyncAppDeps = {
  nats: Nats;
  tail: LiveTail;
  guard: Guard;
  leases: KeyLeases;
  log: Logger;
  region: 'us' | 'jp';
  settings: DisksyncSettings;
  tls?: TlsOptions | null;
  errors?: { recorder: ErrorRecorder; accounts: RequestAccounts };
  onEventWritten?: (latencyNs: number) => void;
};

export function buildDisksyncApp(deps: DisksyncAppDeps) {
  const { settings, region } = deps;
  const surface = `disksync-${region}`;
  const app = createHttpApp({ loggerInstance: deps.log }, surface, deps.tls ?? null);
  acceptProxyProtocol(app.server, new TrustedProxies(settings.trustedProxies ?? []));
  registerHealthRoute(app, deps.nats);
  const registry = new ConnectionRegistry(settings.pingIntervalMs, 'disksync', {
    nats: deps.nats,
    afterMs: settings.natsLostCloseMs ?? 0,
  });
  // UTF-8 is checked by the session, so that a text frame that is not UTF-8 is the spec's 4005
  // (malformed) with its `error` message, not ws's bare 1007.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
    skipUTF8Validation: true,
  });
  let shuttingDown = false;

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (shuttingDown) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      accept(ws, req).catch((err) => deps.log.error({ err: String(err) }, 'disksync connection failed'));
    });
  });

  async function accept(ws: WebSocket, req: IncomingMessage): Promise<void> {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    // The upgrade's URL may carry the key (`api_key`): only ever logged redacted.
    deps.log.debug({ url: redactUrl(req.url ?? '/'), requestId }, 'disksync upgrade');
    const state: FramerState & { shuttingDown: () => boolean } = {
      encoding: 'json',
      lagged: false,
      shuttingDown: () => shuttingDown,
    };
    const wire = new WsWire(ws, state, requestId);
    withReasons(ws, wire);
    // Messages sent before admission completes wait for it, within bounds (early-messages.ts).
    const early = new EarlyMessages();
    let onMessage = (data: Buffer, isBinary: boolean): void => {
      if (!early.push(data, isBinary) && early.refusal) wire.fail(early.refusal);
    };
    const refusedEarly = () => {
      if (early.refusal) throw early.refusal;
    };
    ws.on('message', (data: Buffer, isBinary: boolean) => onMessage(data, isBinary));
    ws.on('error', () => {});
    const query = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
    let principal: Awaited<ReturnType<Guard['admit']>> | null = null;
    try {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/')
        throw new ApiError('not_found', 'the disk-sync endpoint is /');
      principal = await deps.guard.admit({
        surface: 'disksync',
        region,
        headers: req.headers,
        query,
        requestId,
        clientIp: clientAddress(req.socket, req.headers),
        capability: 'stream:read',
        stream: false,
      });
      refusedEarly();
      const keyId = principal.keyId;
      const lease =
        keyId === null
          ? unlimitedLease
          : await deps.leases.acquire(keyId).catch((err) => {
              throw new ApiError('upstream_unavailable', 'NATS unreachable.', undefined, { cause: err });
            });
      if (!lease) throw new ApiError('duplicate_connection', 'Another connection exists for this key.');
      if (early.refusal) {
        lease.release();
        refusedEarly();
      }
      const held = principal;
      let session: Session | null = null;
      const sink = new BufferedSink(
        wsFramer(
          state,
          () => conn.tooSlow(),
          (ev, bytes) => {
            const where = { seq: ev.seq, symbol: ev.symbol, eventType: ev.eventType, source: ev.source };
            deps.log.error(
              { requestId, ...where, bytes },
              'disksync: event over the frame limit; closing 1011',
            );
            conn.terminate('internal');
          },
        ),
        wire,
        registry.flusher,
        {
          maxBacklogBytes: settings.maxBacklogBytes,
          closeGraceMs: 5_000,
          ...(deps.onEventWritten ? { onEventWritten: deps.onEventWritten } : {}),
        },
      );
      const conn = new WsConnection(sink, ws, lease, state, settings);
      session = new Session(deps, sink, held, state);
      const started = registry.start(conn, {
        principal: held,
        onClose: () => {
          session?.close();
          lease.release();
        },
      });
      if (!started) return;
      const s = session;
      onMessage = (data, isBinary) => s.handle(data, isBinary);
      for (const [data, isBinary] of early.take()) s.handle(data, isBinary);
    } catch (err) {
      principal?.release();
      const e = toApiError(err);
      record(e, requestId, req);
      if (
        e.row.http >= 500 &&
        e.code !== 'upstream_unavailable' &&
        e.code !== 'maintenance' &&
        e.code !== 'overload'
      )
        deps.log.error({ err: String(err), requestId }, 'disksync admission failed');
      wire.fail(e);
    }
  }

  function record(err: ApiError, requestId: string, req: IncomingMessage): void {
    const errors = deps.errors;
    if (!errors) return;
    errors.recorder.record(
      {
        request_id: requestId,
        code: err.code,
        status: err.row.http,
        method: 'GET',
        route: new URL(req.url ?? '/', 'http://x').pathname,
        surface,
        account_id: errors.accounts.take(requestId),
        at: Date.now(),
      },
      clientAddress(req.socket, req.headers),
    );
  }

  return {
    app,
    registry,
    async shutdown(): Promise<void> {
      shuttingDown = true;
      registry.closeAll(DISKSYNC_CLOSES.shutdown.reason);
      // Clients get a moment to answer the close frames; whoever does not is dropped.
      const open = [...wss.clients].filter((ws) => ws.readyState !== ws.CLOSED);
      await Promise.race([
        Promise.all(open.map((ws) => new Promise((r) => ws.once('close', r)))),
        new Promise((r) => setTimeout(r, 1_000).unref()),
      ]);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await app.close();
    },
  };
}

export type DisksyncApp = ReturnType<typeof buildDisksyncApp>;

/** A principal without a key (the open guard of benchmarks) holds no lease. */
const unlimitedLease = {
  renew: async () => 'renewed' as const,
  release() {},
  heldUntil: () => Number.POSITIVE_INFINITY,
};

/**
 * `ws` closes by itself, with no reason, on a client frame over maxPayload (1009) and on protocol
 * errors: every close of this socket gets its reason (and 1009 its `error` message) here.
 */
function withReasons(ws: WebSocket, wire: WsWire): void {
  const close = ws.close.bind(ws);
  ws.close = (code?: number, reason?: string | Buffer) => {
    if (code === DISKSYNC_CLOSES.frame_too_big.ws && reason === undefined) {
      wire.failRaw('frame_too_big', DISKSYNC_CLOSES.frame_too_big.ws, DISKSYNC_CLOSES.frame_too_big.reason);
      return;
    }
    close(code, reason ?? (code === undefined ? undefined : closeReason(`Closed (${code}).`)));
  };
}
