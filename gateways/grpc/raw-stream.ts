/**
 * The HTTP/2 stream under a grpc-js server call, for writing pre-framed messages in one piece.
 * grpc-js (1.14) keeps it on the call's `BaseServerInterceptingCall`, behind any server
 * interceptors (call-http2-stream.ts), and marks there whether the response headers went out
 * (`metadataSent`); once grpc-js changes these internals there is none and the wire falls back to
 * `call.write` per message. test/unit/grpc-raw-stream.test.ts pins the shape on the installed
 * grpc-js, so an upgrade that moves it fails there rather than silently slowing streams down.
 */
import type { ServerHttp2Stream } from 'node:http2';
import { baseCallOf } from './call-http2-stream.ts';

export type RawStream = Pick<ServerHttp2Stream, 'write' | 'destroyed' | 'closed'>;

/** The call's HTTP/2 stream if its headers are out and grpc-js exposes it, else null. */
export function rawStreamOf(call: unknown): RawStream | null {
  const base = baseCallOf(call);
  if (base?.metadataSent !== true || typeof base.stream.write !== 'function') return null;
  return base.stream;
}
