/**
 * One server stream of the gRPC edge on the core's data plane, for StreamEvents, StreamMids and
 * the bidirectional Stream: guard (once, at initiation) → subscribe (coins resolved, `chain:*`
 * scopes, `coin_not_found` warnings) → openFeed (history + live merge from `after_seq`, in-band
 * notices) → the connection registry (heartbeats, revocation → UNAUTHENTICATED, shutdown →
 * UNAVAILABLE). Everything the client receives goes through a BufferedSink (bounded queue,
 * conflation, `upstream_lag`, then UNAVAILABLE; an event that cannot be encoded ends it with
 * INTERNAL, grpc-sink.ts). A failure before the stream opens is a status and no message.
 */

import { ApiError } from '../../contracts/errors.ts';
import type { Subscription } from '../../contracts/subscription.ts';
import { type AttachedFeed, attachFeed, sendStale, type WarnableSink } from '../core/attach-feed.ts';
import type { BufferedSink } from '../core/buffered-sink.ts';
import { assertNotRevoked, type Principal } from '../core/guard.ts';
import { runKey, selectionKey } from '../core/selection.ts';
import type { Framer } from '../core/sink-parts.ts';
import { type StaleFeed, type Subscribed, type SubscribeOptions, subscribe } from '../core/subscribe.ts';
import { type Admitted, admit, type CallLike, failure, type GrpcEdgeDeps } from './context.ts';
import { GrpcSink } from './grpc-sink.ts';
import { sendHeaders } from './headers.ts';
import { type GrpcStream, GrpcWire } from './wire.ts';

export type OpenedStream = { sink: BufferedSink; admitted: Admitted };

/** The sink of a call, before anything is subscribed (the bidirectional stream swaps feeds on it). */
export function sinkFor(
  deps: GrpcEdgeDeps,
  call: GrpcStream,
  requestId: string,
  framer: Framer,
  batch = false,
): BufferedSink {
  const sink = new GrpcSink(framer, new GrpcWire(call, requestId, batch), deps.registry.flusher, {
    maxBacklogBytes: deps.sink.maxBacklogBytes,
    closeGraceMs: deps.sink.closeGraceMs,
    ...(deps.onEventWritten ? { onEventWritten: deps.onEventWritten } : {}),
  });
  sink.reportTo(deps.log, requestId);
  return sink;
}

/** Subscribes `request` into `sink` (warnings first, core/attach-feed.ts); resolves once the feed is positioned. */
export async function feedInto(
  deps: GrpcEdgeDeps,
  sink: WarnableSink,
  request: Subscription,
  principal: Principal,
  check?: (s: Subscribed) => void,
  options: SubscribeOptions = {},
  onOwnPositioned?: (after: number) => void,
): Promise<AttachedFeed & { subscribed: Subscribed }> {
  const subscribed = await subscribe(deps, request, principal, options);
  check?.(subscribed);
  const opts = { what: 'grpc stream', ...(onOwnPositioned ? { onOwnPositioned } : {}) };
  return { ...(await attachFeed(deps, subscribed, sink, opts)), subscribed };
}

/**
 * Admits the call and opens its stream; `start` subscribes and returns what to close when the
 * stream ends. Any failure before the stream opens ends the call with its status. `batch`: the
 * client asked for `FeedMessage.batch` messages (Subscription `batch`).
 */
export async function openStream(
  deps: GrpcEdgeDeps,
  call: GrpcStream & CallLike,
  requestId: string,
  framer: Framer,
  start: (
    sink: BufferedSink,
    principal: Principal,
    gone: AbortSignal,
  ) => Promise<{ close(): void; stale?: StaleFeed[] }>,
  batch = false,
): Promise<OpenedStream | null> {
  let admitted: Admitted | null = null;
  // The client cancelled: no more JetStream requests on its behalf (coin resolution stops).
  const gone = new AbortController();
  const cancelled = () => gone.abort(new ApiError('cancelled', 'the client cancelled the call'));
  call.once('cancelled', cancelled);
  try {
    admitted = await admit(deps, call, requestId, true);
    const sink = sinkFor(deps, call, requestId, framer, batch);
    const opened = await start(sink, admitted.principal, gone.signal);
    try {
      assertNotRevoked(admitted.principal);
    } catch (err) {
      opened.close();
      throw err;
    }
    const started = deps.registry.start(sink, {
      principal: admitted.principal,
      headers: admitted.headers,
      onClose: () => opened.close(),
    });
    if (!started) return null;
    sendStale(sink, opened.stale ?? []);
    return { sink, admitted };
  } catch (err) {
    admitted?.principal.release();
    if (!call.cancelled) {
      sendHeaders(call, requestId);
      call.emit('error', failure(deps, call, requestId, err));
    }
    return null;
  }
}

/** StreamEvents / the first `open` of Stream: a subscription's feed into the sink. */
export async function startFeed(
  deps: GrpcEdgeDeps,
  sink: BufferedSink,
  request: Subscription,
  principal: Principal,
  signal?: AbortSignal,
): Promise<{ close(): void; stale: StaleFeed[] }> {
  // Shared before the feed attaches, so that a live stream joins its selection's group in the tail.
  const share = (s: Subscribed) => {
    sink.shareChunksAs(`grpc-feed|${selectionKey(s.selection)}`);
    sink.takeRunsOf(runKey('grpc-feed', s.selection));
  };
  const { feed, staleFeeds } = await feedInto(
    deps,
    sink,
    request,
    principal,
    share,
    signal ? { signal } : {},
  );
  return { close: () => feed.close(), stale: staleFeeds() };
}
