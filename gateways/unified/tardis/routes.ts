/**
 * tardis-machine-compatible endpoints on the unified edge (its public documentation's paths and
 * message shapes, over our own normalized data, behind our keys and scopes):
 * - `GET /replay-normalized?options=…` → NDJSON, one normalized message a line, for the range;
 * - WebSocket `/ws-replay-normalized?options=…` → the same messages, one a text message, then a
 *   close 1000;
 * - WebSocket `/ws-stream-normalized?options=…` → live messages until the client closes.
 * A request is admitted as a stream of the unified edge (tier, scopes, `chain:*`, the
 * concurrent-stream cap, rate limits), its options become one Subscription (sources = the
 * exchanges, coins = the symbols, event types = what the data types are made from, `from`/`to`
 * as a replay by time: the same core as every transport), and each event is mapped per options
 * object (normalized.ts). `to` is exclusive, as tardis reads it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import { prettifyError } from 'zod';
import { ApiError, toApiError } from '../../../contracts/errors.ts';
import type { Subscription } from '../../../contracts/subscription.ts';
import {
  parseDataType,
  ReplayRequest,
  type StreamOptions,
  StreamRequest,
} from '../../../contracts/tardis.ts';
import { attachFeed } from '../../core/attach-feed.ts';
import type { BufferedSink } from '../../core/buffered-sink.ts';
import { clientAddress } from '../../core/client-address.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import { assertNotRevoked, type Guard, type Principal, rateLimitHeaders } from '../../core/guard.ts';
import type { FeedDeps } from '../../core/replay-source.ts';
import { requestIdFrom } from '../../core/request-id.ts';
import { subscribe } from '../../core/subscribe.ts';
import { ndjsonConnection, type TardisSinkOptions, wsCloseCode, wsConnection } from './connection.ts';
import { TardisMapper, type Wanted } from './normalized.ts';

export type TardisRouteDeps = FeedDeps & {
  guard: Guard;
  region: 'us' | 'jp';
  registry: ConnectionRegistry;
  sink: Omit<TardisSinkOptions, 'requestId'>;
};

type Parsed = { wanted: Wanted[]; request: Subscription };

/** The options as wanted data per exchange and one Subscription covering them all. */
function parseOptions(raw: unknown, replay: boolean): Parsed {
  if (typeof raw !== 'string')
    throw new ApiError('invalid_params', 'give the options query parameter (JSON)');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ApiError('invalid_params', 'options is not valid JSON');
  }
  const parsed = (replay ? ReplayRequest : StreamRequest).safeParse(value);
  if (!parsed.success)
    throw new ApiError('invalid_params', `invalid options: ${prettifyError(parsed.error)}`);
  const list = parsed.data as (StreamOptions & { from?: number; to?: number })[];
  const wanted = list.map((o) => ({
    exchange: o.exchange,
    symbols: o.symbols ? new Set(o.symbols) : null,
    dataTypes: o.dataTypes.map((d) => parseDataType(d) as NonNullable<ReturnType<typeof parseDataType>>),
  }));
  const kinds = new Set(wanted.flatMap((w) => w.dataTypes.map((d) => d.kind)));
  const eventTypes = [
    ...(kinds.has('trade') || kinds.has('trade_bar') ? ['trade' as const] : []),
    ...(kinds.has('book_change') || kinds.has('book_snapshot') ? ['book' as const] : []),
  ];
  const first = list[0] as { from?: number; to?: number };
  const request: Subscription = {
    sources: [...new Set(list.map((o) => o.exchange))],
    event_types: eventTypes,
    ...(list.every((o) => o.symbols) ? { coins: [...new Set(list.flatMap((o) => o.symbols ?? []))] } : {}),
    ...(first.from !== undefined ? { from_ms: first.from } : {}),
    ...(first.to !== undefined ? { to_ms: Math.max(first.from ?? 0, first.to - 1) } : {}),
  };
  return { wanted, request };
}

/** Admits, subscribes and starts one tardis stream into the sink `make` builds; false when it could not start. */
async function start(
  deps: TardisRouteDeps,
  principal: Principal,
  { wanted, request }: Parsed,
  make: (mapper: TardisMapper) => BufferedSink,
  takeOver?: () => void,
): Promise<boolean> {
  const subscribed = await subscribe(deps, request, principal);
  const conn = make(new TardisMapper(wanted));
  const { feed } = await attachFeed(deps, subscribed, conn, {
    what: 'tardis stream',
    onComplete: () => conn.finish({}),
  });
  try {
    assertNotRevoked(principal);
  } catch (err) {
    feed.close();
    throw err;
  }
  return deps.registry.start(conn, {
    principal,
    headers: principal.rateLimit ? rateLimitHeaders(principal.rateLimit) : {},
    onClose: () => feed.close(),
    ...(takeOver ? { takeOver } : {}),
  });
}

const admit = (
  deps: TardisRouteDeps,
  req: IncomingMessage,
  query: Record<string, unknown>,
  requestId: string,
) =>
  deps.guard.admit({
    surface: 'unified',
    region: deps.region,
    headers: req.headers,
    query,
    requestId,
    clientIp: clientAddress(req.socket, req.headers),
    capability: 'stream:read',
    stream: true,
  });

export function registerTardisRoutes(app: FastifyInstance, deps: TardisRouteDeps): { close(): void } {
  app.get('/replay-normalized', async (req, reply) => {
    const query = req.query as Record<string, unknown>;
    const principal = await admit(deps, req.raw, query, req.id);
    try {
      const parsed = parseOptions(query.options, true);
      await start(
        deps,
        principal,
        parsed,
        (mapper) =>
          ndjsonConnection(reply.raw, mapper, deps.registry.flusher, { ...deps.sink, requestId: req.id }),
        () => reply.hijack(),
      );
    } catch (err) {
      principal.release();
      throw err;
    }
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
  const paths: Record<string, boolean> = { '/ws-replay-normalized': true, '/ws-stream-normalized': false };
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const replay = paths[url.pathname];
    if (replay === undefined) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const requestId = requestIdFrom(req.headers['x-request-id']);
      const query = Object.fromEntries(url.searchParams);
      ws.on('error', () => {});
      (async () => {
        const principal = await admit(deps, req, query, requestId);
        try {
          const parsed = parseOptions(query.options, replay);
          await start(deps, principal, parsed, (mapper) =>
            wsConnection(ws, mapper, deps.registry.flusher, { ...deps.sink, requestId }),
          );
        } catch (err) {
          principal.release();
          throw err;
        }
      })().catch((err) => {
        const e = toApiError(err);
        if (e.code === 'internal') deps.log.error({ err: String(err) }, 'tardis stream failed');
        if (ws.readyState === ws.OPEN) {
          ws.send(JSON.stringify({ type: 'error', code: e.code, message: e.message, request_id: requestId }));
          ws.close(wsCloseCode(e.code), e.code);
        }
      });
    });
  });
  return { close: () => wss.close() };
}
