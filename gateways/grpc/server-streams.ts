/**
 * The server-streaming methods. StreamEvents: trades, books, notices and warnings of a
 * Subscription, resumable with `after_seq` exactly like SSE Last-Event-ID. StreamMids: one
 * MidPriceResponse per book change of the named coins (every coin must be tracked: NOT_FOUND
 * otherwise, as a mid stream has no room for a warning); after `heartbeat_s` seconds without a
 * change the latest mids are sent again.
 */
import type { ServerWritableStream } from '@grpc/grpc-js';
import { ApiError } from '../../contracts/errors.ts';
import type { BufferedSink } from '../core/buffered-sink.ts';
import type { Principal } from '../core/guard.ts';
import { selectionKey } from '../core/selection.ts';
import { type GrpcEdgeDeps, requestIdOf } from './context.ts';
import { feedInto, openStream, startFeed } from './feed-stream.ts';
import { feedFramer, midsFramer } from './framer.ts';
import { batchRequested, subscriptionOf } from './subscription.ts';

type Req = Record<string, unknown>;
type Call = ServerWritableStream<Req, unknown>;

const DEFAULT_HEARTBEAT_S = 15;
const MAX_HEARTBEAT_S = 300;

/** Called by the mids framer for every mid it writes (a change or a re-send). */
type MidActivity = { touched: () => void };

export function serverStreamMethods(deps: GrpcEdgeDeps): Record<string, (call: Call) => void> {
  return {
    StreamEvents(call) {
      const requestId = requestIdOf(call);
      void openStream(
        deps,
        call,
        requestId,
        feedFramer(requestId),
        (sink, principal, gone) => startFeed(deps, sink, subscriptionOf(call.request), principal, gone),
        batchRequested(call.request),
      );
    },
    StreamMids(call) {
      const requestId = requestIdOf(call);
      const activity: MidActivity = { touched: () => {} };
      const framer = midsFramer(() => activity.touched());
      void openStream(deps, call, requestId, framer, (sink, principal, gone) =>
        startMids(deps, sink, call.request, principal, activity, gone),
      );
    },
  };
}

async function startMids(
  deps: GrpcEdgeDeps,
  sink: BufferedSink,
  req: Req,
  principal: Principal,
  activity: MidActivity,
  gone: AbortSignal,
): Promise<{ close(): void }> {
  const heartbeatS = Number(req.heartbeat_s) || DEFAULT_HEARTBEAT_S;
  if (heartbeatS > MAX_HEARTBEAT_S)
    throw new ApiError('invalid_params', `heartbeat_s must be at most ${MAX_HEARTBEAT_S}`, {
      field: 'heartbeat_s',
      reason: 'too large',
    });
  const request = { ...subscriptionOf({ coins: req.coins }), event_types: ['book' as const] };
  const { feed, subscribed } = await feedInto(
    deps,
    sink,
    request,
    principal,
    (s) => {
      if (s.warnings.length > 0)
        throw new ApiError('coin_not_found', `not tracked: ${s.warnings.map((w) => w.coin).join(', ')}`);
    },
    { signal: gone },
  );
  const { coins, sources } = subscribed.selection;
  sink.shareChunksAs(`grpc-mids|${selectionKey(subscribed.selection)}`);
  // One timer, re-armed by every mid written: it fires only after `heartbeat_s` seconds in which
  // no mid went out (a periodic check would let a change just after a tick stretch the silence
  // to nearly twice the period).
  const timer = setTimeout(() => {
    for (const [coin, bySource] of deps.latest.entries())
      if (!coins || coins.has(coin))
        for (const [src, state] of bySource)
          if (state.book && (!sources || sources.has(src))) sink.event(state.book);
    timer.refresh();
  }, heartbeatS * 1_000);
  timer.unref();
  activity.touched = () => timer.refresh();
  return {
    close() {
      activity.touched = () => {};
      clearTimeout(timer);
      feed.close();
    },
  };
}
