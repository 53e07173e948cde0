/**
 * Errors as gRPC statuses, read from the catalogue row (contracts/errors.ts), never chosen here.
 * Every error's trailers carry `x-error-code` (the catalogue code) and `x-request-id`; a
 * RESOURCE_EXHAUSTED also `retry-after-ms` and `x-ratelimit-remaining` (spec "gRPC statuses"), and
 * any other retryable refusal that knows when to come back (maintenance, overload) `retry-after-ms`:
 * the wait itself in milliseconds (a rate limit's next token, a window's end), not rounded to seconds.
 * 5xx rows never show internal messages (`publicMessage`).
 */
import { Metadata, type StatusObject } from '@grpc/grpc-js';
import {
  type ApiError,
  GRPC_STATUS_NUMBER,
  publicMessage,
  retryAfterMs,
  toApiError,
} from '../../contracts/errors.ts';
import { RateLimitedError } from '../core/guard.ts';

/** A status the grpc-js server sends as it is (`callback(err)`, `stream.emit('error', err)`). */
export type GrpcStatusError = StatusObject & { message: string };

function trailersOf(err: ApiError, requestId: string): Metadata {
  const md = new Metadata();
  md.set('x-error-code', err.code);
  md.set('x-request-id', requestId);
  const exhausted = err.row.grpc === 'RESOURCE_EXHAUSTED';
  const decision = err instanceof RateLimitedError ? err.decision : null;
  const retryMs = decision
    ? (decision.retryAfterMs ?? decision.retryAfterSeconds * 1_000)
    : retryAfterMs(err);
  if (retryMs !== null && Number.isFinite(retryMs))
    md.set('retry-after-ms', String(Math.max(1, Math.ceil(retryMs))));
  if (exhausted)
    md.set('x-ratelimit-remaining', String(decision ? Math.max(0, Math.floor(decision.remaining)) : 0));
  return md;
}

/** The status and trailers of any thrown value (non-ApiErrors are `internal`). */
export function toGrpcStatus(thrown: unknown, requestId: string): GrpcStatusError {
  const err = toApiError(thrown);
  const details = publicMessage(err);
  return {
    code: GRPC_STATUS_NUMBER[err.row.grpc],
    details,
    message: details,
    metadata: trailersOf(err, requestId),
  };
}

/** The metadata of a call as the guard reads headers (`x-api-key`, `authorization`, ...). */
export function headersOf(md: Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(md.getMap())) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The client's address from a grpc-js peer string (`ipv4:1.2.3.4:5`, `[::1]:5`, `1.2.3.4:5`). */
export function peerAddress(peer: string): string | undefined {
  const bare = peer.replace(/^ipv[46]:/, '');
  const m = /^\[?([^\]]+?)\]?:\d+$/.exec(bare);
  return m?.[1] ?? (bare || undefined);
}
