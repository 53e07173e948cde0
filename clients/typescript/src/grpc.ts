/**
 * `@mdp/client/grpc`: `streamGrpc()`, the unified stream's iterator over gRPC
 * `price.PriceService/StreamEvents` (Node only: @grpc/grpc-js, the proto read from
 * `@mdp/contracts/proto/price.proto`, installed with this package as its dependency). Same items,
 * same `Position`, same backoff and same exactly-once rule as `stream()` (resuming-stream.ts); a
 * reconnection sends `after_seq` = the last platform sequence yielded and, once one of the
 * account's own events (`own: true`) was yielded, `after_own_seq` = the last own sequence. A replay by time goes as `start_ms`,
 * `end_ms` and `speed` on every call, next to `after_seq` (which wins on the server); its
 * `replay_complete` notice ends the iterator before the call's status OK.
 *
 * Statuses: those a later attempt can cure (UNAVAILABLE, INTERNAL, RESOURCE_EXHAUSTED, ABORTED,
 * DEADLINE_EXCEEDED, UNKNOWN, CANCELLED by the server, a stream that ended) reconnect, with the
 * `retry-after-ms` trailer as a floor on the wait; any other (UNAUTHENTICATED, PERMISSION_DENIED,
 * INVALID_ARGUMENT, NOT_FOUND, ...) ends the iterator with an MdpError whose `code` is the
 * `x-error-code` trailer (the catalogue code, e.g. `key_revoked`) and `requestId` the
 * `x-request-id` trailer; `details.grpc_status` keeps the status number.
 */
import { createRequire } from 'node:module';
import {
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientReadableStream,
  credentials,
  loadPackageDefinition,
  Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { EventType } from '@mdp/contracts/events';
import { MdpError, type MdpErrorCode } from './errors.ts';
import { itemsOfFeedMessage } from './grpc-messages.ts';
import type { ReplayWindow } from './replay-window.ts';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  type Ended,
  type Endpoints,
  endpointList,
  type ResumingOptions,
  ResumingStream,
  type WireItem,
  watchIdle,
} from './resuming-stream.ts';
import type {
  AnyStreamEvent,
  Position,
  StreamEvent,
  StreamEventType,
  StreamFilters,
} from './stream-types.ts';

/** `T`: the event types selected (market events by default; derived kinds type the events as bars or snapshots). */
export type GrpcStreamOptions<T extends StreamEventType = EventType> = StreamFilters<T> &
  ResumingOptions & {
    /** The gRPC edge, `host:port` (e.g. `127.0.0.1:50051`), or several in failover order (resuming-stream.ts `Endpoints`). */
    target: Endpoints;
    /** API key, sent as the `x-api-key` metadata. */
    key: string;
    /** TLS: true = the system's roots; credentials of your own (a private CA); absent = plaintext. */
    tls?: boolean | ChannelCredentials;
    /** Extra grpc-js channel options. */
    channelOptions?: ChannelOptions;
  };

const PROTO_PATH = createRequire(import.meta.url).resolve('@mdp/contracts/proto/price.proto');
/** As the edge reads the proto, plus defaults: absent proto3 scalars are their zero values, as sent. */
const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

type PriceClient = Client & {
  StreamEvents(request: Record<string, unknown>, md: Metadata): ClientReadableStream<Record<string, unknown>>;
};
type PriceClientConstructor = new (
  target: string,
  creds: ChannelCredentials,
  options?: ChannelOptions,
) => PriceClient;

let priceService: PriceClientConstructor | null = null;

/** The generated client class, built on first use (the proto is read once per process). */
function serviceClient(): PriceClientConstructor {
  priceService ??= (
    loadPackageDefinition(loadSync(PROTO_PATH, LOADER_OPTIONS)) as unknown as {
      price: { PriceService: PriceClientConstructor };
    }
  ).price.PriceService;
  return priceService;
}

/** Statuses a later attempt can cure; every other one ends the iterator. */
const RETRYABLE: ReadonlySet<number> = new Set([
  status.OK,
  status.CANCELLED,
  status.UNKNOWN,
  status.DEADLINE_EXCEEDED,
  status.RESOURCE_EXHAUSTED,
  status.ABORTED,
  status.INTERNAL,
  status.UNAVAILABLE,
]);

/** Statuses grpc-js itself reports for a connection lost or never made (no trailers from the edge). */
const TRANSPORT: ReadonlySet<number> = new Set([
  status.UNAVAILABLE,
  status.CANCELLED,
  status.DEADLINE_EXCEEDED,
]);

/** The MdpError of a failed call, from its status and the edge's trailers. */
export function errorOfStatus(err: ServiceError): MdpError {
  const trailer = (name: string) => {
    const v = err.metadata?.get(name)[0];
    return typeof v === 'string' ? v : null;
  };
  const code = (trailer('x-error-code') ??
    (TRANSPORT.has(err.code) ? 'network_error' : 'invalid_response')) as MdpErrorCode;
  const retryMs = Number(trailer('retry-after-ms') ?? Number.NaN);
  return new MdpError(code, err.details || err.message, {
    requestId: trailer('x-request-id'),
    retryAfterSeconds: Number.isFinite(retryMs) ? retryMs / 1000 : null,
    details: { grpc_status: err.code },
    cause: err,
  });
}

function credentialsOf(tls: GrpcStreamOptions['tls']): ChannelCredentials {
  if (tls === undefined || tls === false) return credentials.createInsecure();
  return tls === true ? credentials.createSsl() : tls;
}

/**
 * One StreamEvents call after `position` and `ownPosition` (and over `window`): its items, then
 * how it ended. An own position alone (only own events came so far) starts the platform's feed live.
 */
async function* connectGrpc(
  opts: GrpcStreamOptions<StreamEventType>,
  creds: ChannelCredentials,
  position: Position | null,
  signal: AbortSignal,
  window: ReplayWindow,
  ownPosition: Position | null,
  target: string,
): AsyncGenerator<readonly WireItem[], Ended> {
  // A channel per connection with a subchannel of its own: grpc-js's reconnect backoff (shared
  // by every channel to a target otherwise) would add its waits to the iterator's.
  const Service = serviceClient();
  const client = new Service(target, creds, {
    'grpc.use_local_subchannel_pool': 1,
    ...opts.channelOptions,
  });
  const md = new Metadata();
  md.set('x-api-key', opts.key);
  const call = client.StreamEvents(
    {
      coins: opts.coins ?? [],
      event_types: opts.eventTypes ?? [],
      sources: opts.sources ?? [],
      ...(position !== null ? { after_seq: position } : {}),
      ...(ownPosition !== null ? { after_own_seq: ownPosition } : {}),
      ...(window.fromMs !== undefined ? { start_ms: window.fromMs } : {}),
      ...(window.toMs !== undefined ? { end_ms: window.toMs } : {}),
      ...(window.speed !== undefined ? { speed: window.speed } : {}),
      // Several messages to a FeedMessage.batch where the server has them together (a catch-up):
      // grpc-js's cost per message is then paid per batch.
      batch: true,
    },
    md,
  );
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  let idled = false;
  const idle = watchIdle(idleMs, () => {
    idled = true;
    call.cancel();
  });
  const cancel = () => call.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for await (const m of call as AsyncIterable<Record<string, unknown>>) {
      idle.touch();
      const items = itemsOfFeedMessage(m);
      if (items.length > 0) yield items;
    }
    return { retry: true, error: new MdpError('network_error', 'the server ended the stream') };
  } catch (err) {
    if (idled) return { retry: true, error: new MdpError('network_error', `no message for ${idleMs} ms`) };
    const error = errorOfStatus(err as ServiceError);
    return { retry: RETRYABLE.has((err as ServiceError).code), error };
  } finally {
    idle.stop();
    signal.removeEventListener('abort', cancel);
    call.cancel();
    client.close();
  }
}

/**
 * The unified stream over gRPC StreamEvents, as an async iterator that resumes on its own; its
 * events typed by `eventTypes` (market events by default). The last signature is the market one,
 * so `ReturnType<typeof streamGrpc>` stays the market stream's type.
 */
export function streamGrpc<T extends StreamEventType = EventType>(
  opts: GrpcStreamOptions<T>,
): ResumingStream<StreamEvent<T>>;
export function streamGrpc(opts: GrpcStreamOptions): ResumingStream;
export function streamGrpc(opts: GrpcStreamOptions<StreamEventType>): ResumingStream<AnyStreamEvent> {
  const creds = credentialsOf(opts.tls);
  return new ResumingStream<AnyStreamEvent>(
    opts,
    (position, signal, window, own, target) =>
      connectGrpc(opts, creds, position, signal, window, own, target),
    undefined,
    endpointList(opts.target),
  );
}

export { formatPosition, isOwn, parsePosition } from './own-events.ts';
export { ResumingStream } from './resuming-stream.ts';
export type * from './stream-types.ts';
