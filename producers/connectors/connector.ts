/**
 * One live exchange connector: a venue adapter (binance.ts, hyperliquid.ts) behind a WebSocket
 * that reconnects (ws-session.ts), its events published to `MD` in frame order through the
 * publish queue. Every frame is counted per venue by outcome; a frame in an unknown format is
 * refused, logged naming the field and counted, and the connector carries on.
 *
 * Before connecting, the connector reads back from `MD` how far it had published (log-floor.ts):
 * frames a venue replays after a restart are dropped as duplicates even when JetStream's duplicate
 * window has passed. Until then nothing is read from the venue.
 */
import type { Source } from '../../contracts/events.ts';
import type { Config } from '../../platform/config.ts';
import type { Logger } from '../../platform/logger.ts';
import { connectorFrames } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { nowUs } from '../publish.ts';
import { binanceVenue } from './binance.ts';
import { restSnapshotFetcher, type SnapshotFetcher } from './binance-snapshot.ts';
import { reportFormatError } from './format-errors.ts';
import { hyperliquidVenue } from './hyperliquid.ts';
import { LogFloor, recoverLogFloor } from './log-floor.ts';
import { PublishQueue } from './publish-queue.ts';
import type { Emit, VenueAdapter, VenueDeps } from './venue.ts';
import { startWsSession, type WsSession } from './ws-session.ts';

export const CONNECTOR_VENUES = ['binance', 'hyperliquid'] as const;
export type ConnectorVenue = (typeof CONNECTOR_VENUES)[number];

export type ConnectorSettings = Pick<
  Config,
  | 'BINANCE_WS_URL'
  | 'BINANCE_REST_URL'
  | 'HYPERLIQUID_WS_URL'
  | 'CONNECTOR_BOOK_DEPTH'
  | 'CONNECTOR_IDLE_TIMEOUT_MS'
  | 'CONNECTOR_RECONNECT_BASE_MS'
  | 'CONNECTOR_RECONNECT_MAX_MS'
>;

export type Connector = {
  readonly venue: Source;
  /** Messages stored in `MD` so far (JetStream duplicates not counted). */
  stored(): number;
  /** WebSocket connections opened so far. */
  opens(): number;
  /** Resolves when every event handed over so far is stored. */
  drained(): Promise<void>;
  stop(): Promise<void>;
};

function adapterFor(
  venue: ConnectorVenue,
  deps: VenueDeps,
  settings: ConnectorSettings,
  fetchSnapshot: SnapshotFetcher | undefined,
  log: Logger,
): VenueAdapter {
  if (venue === 'hyperliquid') return hyperliquidVenue({ ...deps, wsUrl: settings.HYPERLIQUID_WS_URL });
  const backoff = {
    baseMs: settings.CONNECTOR_RECONNECT_BASE_MS,
    maxMs: settings.CONNECTOR_RECONNECT_MAX_MS,
  };
  return binanceVenue({
    ...deps,
    wsUrl: settings.BINANCE_WS_URL,
    fetchSnapshot: fetchSnapshot ?? restSnapshotFetcher(settings.BINANCE_REST_URL, backoff, log),
  });
}

export function startConnector(
  nats: Nats,
  venue: ConnectorVenue,
  symbols: readonly string[],
  settings: ConnectorSettings,
  log: Logger,
  fetchSnapshot?: SnapshotFetcher,
): Connector {
  let receivedUs = 0;
  let session: WsSession | null = null;
  let floor = new LogFloor();
  const abort = new AbortController();
  const queue = new PublishQueue(nats, log, {
    venue,
    onFull: () => session?.pause(),
    onDrained: () => session?.resume(),
  });
  const emit: Emit = (event, id, position, tie) => {
    // Counted as handed over either way: like a JetStream duplicate, a refusal here is a replay.
    if (floor.holds(event.symbol, event.event_type, position, tie)) {
      queue.skip(event);
      return false;
    }
    queue.push(event, id, receivedUs);
    return true;
  };
  const adapter = adapterFor(
    venue,
    { symbols, emit, log, bookDepth: settings.CONNECTOR_BOOK_DEPTH },
    settings,
    fetchSnapshot,
    log,
  );
  const frames = {
    ok: connectorFrames.labels(venue, 'ok'),
    duplicate: connectorFrames.labels(venue, 'duplicate'),
  };

  const connect = (): WsSession =>
    startWsSession({
      venue,
      url: adapter.url,
      subscriptions: () => adapter.subscriptions(),
      ...(adapter.heartbeat ? { heartbeat: adapter.heartbeat } : {}),
      idleTimeoutMs: settings.CONNECTOR_IDLE_TIMEOUT_MS,
      backoff: { baseMs: settings.CONNECTOR_RECONNECT_BASE_MS, maxMs: settings.CONNECTOR_RECONNECT_MAX_MS },
      log,
      onFrame(text) {
        receivedUs = nowUs();
        try {
          frames[adapter.onFrame({ text, receivedAtMs: Math.floor(receivedUs / 1_000) })].inc();
        } catch (err) {
          reportFormatError(venue, log, err, text);
        }
      },
    });
  recoverLogFloor(nats, adapter.venue, adapter.symbols, log, abort.signal).then(
    (recovered) => {
      if (abort.signal.aborted) return;
      floor = recovered;
      session = connect();
      log.info({ venue, symbols, url: adapter.url }, `${venue} connector started`);
    },
    () => {}, // rejects only when stopped before it finished
  );

  return {
    venue: adapter.venue,
    stored: () => queue.storedCount,
    opens: () => session?.opens() ?? 0,
    drained: () => queue.drained(),
    async stop() {
      abort.abort();
      await session?.stop();
      adapter.stop?.();
      await queue.stop();
    },
  };
}
