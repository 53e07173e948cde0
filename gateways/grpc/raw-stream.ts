/**
 * The HTTP/2 stream under a grpc-js server call, for writing pre-framed messages in one piece.
 * grpc-js (1.14) keeps it on the call's `BaseServerInterceptingCall` (`call.call.stream`) and
 * marks there whether the response headers went out (`metadataSent`); with a server interceptor
 * in between, or once grpc-js changes these internals, there is none and the wire falls back to
 * `call.write` per message. test/unit/grpc-raw-stream.test.ts pins the shape on the installed
 * grpc-js, so an upgrade that moves it fails there rather than silently slowing streams down.
 */
import type { ServerHttp2Stream } from 'node:http2';

export type RawStream = Pick<ServerHttp2Stream, 'write' | 'destroyed' | 'closed'>;

type BaseCall = { stream?: unknown; metadataSent?: unknown };

/** The call's HTTP/2 stream if its headers are out and grpc-js exposes it, else null. */
export function rawStreamOf(call: unknown): RawStream | null {
  const base = (call as { call?: BaseCall }).call;
  if (base?.metadataSent !== true) return null;
  const stream = base?.stream as Partial<ServerHttp2Stream> | undefined;
  if (!stream || typeof stream.write !== 'function' || typeof stream.respond !== 'function') return null;
  return stream as RawStream;
}
