/**
 * The HTTP/2 stream under a grpc-js server call, found through any server interceptors: grpc-js
 * (1.14) keeps it on the innermost `BaseServerInterceptingCall` (`stream`), which the call holds
 * as `call.call` directly, or behind one `ServerInterceptingCall` (`nextCall`) per interceptor,
 * as the edge's own `rejectUndecodable` puts there. Null once grpc-js moves these internals;
 * test/integration/grpc-terminal-slow.test.ts then fails (a paused client would hang again).
 */
import type { ServerHttp2Stream } from 'node:http2';

type Layer = { call?: unknown; nextCall?: unknown; stream?: unknown; metadataSent?: unknown };

/** Interceptors are few; the bound only guards against a cycle in unknown internals. */
const MAX_LAYERS = 16;

/** The innermost grpc-js call layer, the one that holds the HTTP/2 stream; null if none is found. */
export function baseCallOf(call: unknown): { stream: ServerHttp2Stream; metadataSent?: unknown } | null {
  let layer = (call as Layer | undefined)?.call as Layer | undefined;
  for (let i = 0; layer && i < MAX_LAYERS; i++) {
    const stream = layer.stream as Partial<ServerHttp2Stream> | undefined;
    if (stream && typeof stream.close === 'function' && typeof stream.respond === 'function')
      return layer as { stream: ServerHttp2Stream; metadataSent?: unknown };
    layer = layer.nextCall as Layer | undefined;
  }
  return null;
}

export function http2StreamOf(call: unknown): ServerHttp2Stream | null {
  return baseCallOf(call)?.stream ?? null;
}
