/**
 * The gRPC Framers of the buffered sink (gateways/core/sink-parts.ts): `FeedMessage` frames for
 * StreamEvents and Stream, `MidPriceResponse` frames for StreamMids. An event's frame is encoded
 * once per process and memoised in `ev.wire` (every client of the process shares the bytes):
 * straight from its JSON text where feed-protobuf.ts can, else parsed and encoded by protobufjs.
 * Terminal conditions are statuses, never messages (the sink hands them to the wire as values).
 */
import type { ErrorCode } from '../../contracts/errors.ts';
import type { FeedEvent } from '../core/feed-event.ts';
import type { Frame, Framer } from '../core/sink-parts.ts';
import { feedFrameOfJson } from './feed-protobuf.ts';
import { joinFrames, messageFrame } from './frames.ts';
import { feedMessageOf, midOf } from './messages.ts';
import { encodeFeedMessage, encodeMid } from './proto.ts';

const feedFrame = (m: Record<string, unknown>): Buffer => messageFrame(encodeFeedMessage(m));

/** JSON.parse + protobufjs: any event feed-protobuf.ts does not take (and its error, if not JSON). */
function generalFeedFrame(ev: FeedEvent): Frame {
  const m = feedMessageOf(ev);
  return m ? feedFrame(m) : '';
}

/** The notice code the bidirectional stream uses to answer a ping through the sink's queue. */
export const PONG = 'pong';

export function feedFramer(requestId: string): Framer {
  return {
    preamble: () => '',
    event(ev: FeedEvent): Frame {
      let frame = ev.wire.grpc as Frame | undefined;
      if (frame === undefined) {
        frame = feedFrameOfJson(ev.eventType, ev.json) ?? generalFeedFrame(ev);
        ev.wire.grpc = frame;
      }
      return frame;
    },
    notice(n: Record<string, unknown>): Frame {
      if (n.code === PONG) return feedFrame({ pong: { id: n.id, timestamp_ms: Date.now() } });
      return feedFrame({ notice: n });
    },
    warning(code: ErrorCode, message: string | undefined, extra: Record<string, unknown>): Frame {
      return feedFrame({ warning: { ...extra, code, message: message ?? '', request_id: requestId } });
    },
    heartbeat: () => feedFrame({ heartbeat: { timestamp_ms: Date.now() } }),
    end: () => '',
    join: joinFrames,
    concatenates: true,
  };
}

/** StreamMids: one MidPriceResponse per book; notices and warnings have no place in it. */
export function midsFramer(onMid: () => void = () => {}): Framer {
  return {
    preamble: () => '',
    event(ev: FeedEvent): Frame {
      onMid();
      let frame = ev.wire['grpc-mid'] as Frame | undefined;
      if (frame === undefined) {
        const mid = ev.eventType === 'book' ? midOf(ev) : null;
        frame = mid ? messageFrame(encodeMid(mid)) : '';
        ev.wire['grpc-mid'] = frame;
      }
      return frame;
    },
    notice: () => '',
    warning: () => '',
    heartbeat: () => null,
    end: () => '',
    join: joinFrames,
  };
}
