/**
 * What every call of the gRPC edge does before its method runs, and how it fails: a request id
 * (a well-formed incoming `x-request-id` is kept), the edge guard (credential from `x-api-key` or
 * `authorization: Bearer`, tier, region, scopes, rate limit, and for streams the concurrent-stream
 * cap) run once when the call or stream starts, and every refusal mapped through the catalogue
 * (status.ts) and recorded in the error log.
 */
import type { Metadata } from '@grpc/grpc-js';
import { toApiError } from '../../contracts/errors.ts';
import type { ErrorRecorder } from '../../contracts/status.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { clientAddress } from '../core/client-address.ts';
import type { ConnectionRegistry } from '../core/connection-registry.ts';
import type { RequestAccounts } from '../core/error-log-hook.ts';
import { type Guard, type Principal, rateLimitHeaders } from '../core/guard.ts';
import type { LatestState } from '../core/latest-state.ts';
import type { LiveTail } from '../core/live-tail.ts';
import { requestIdFrom } from '../core/request-id.ts';
import { MARKET_DATA_SCOPE } from '../core/scopes.ts';
import { http2StreamOf } from './call-http2-stream.ts';
import { type GrpcStatusError, headersOf, peerAddress, toGrpcStatus } from './status.ts';

export type GrpcSinkSettings = { maxBacklogBytes: number; closeGraceMs: number; heartbeatMs: number };

export type GrpcEdgeDeps = {
  nats: Nats;
  tail: LiveTail;
  latest: LatestState;
  guard: Guard;
  log: Logger;
  region: 'us' | 'jp';
  registry: ConnectionRegistry;
  sink: GrpcSinkSettings;
  /** The error log (spec: every error kept 30 days), when the process has one. */
  errors?: { recorder: ErrorRecorder; accounts: RequestAccounts };
  onEventWritten?: (latencyNs: number) => void;
};

/** What a call's handler needs of grpc-js's call object. */
export type CallLike = { metadata: Metadata; getPeer(): string; getPath(): string };

export type Admitted = { requestId: string; principal: Principal; headers: Record<string, string> };

export function requestIdOf(call: CallLike): string {
  const v = call.metadata.get('x-request-id')[0];
  return requestIdFrom(typeof v === 'string' ? v : undefined);
}

/** Runs the guard for a call (`stream`: counts against the concurrent-stream cap until released). */
export async function admit(
  deps: GrpcEdgeDeps,
  call: CallLike,
  requestId: string,
  stream: boolean,
): Promise<Admitted> {
  const principal = await deps.guard.admit({
    surface: 'grpc',
    region: deps.region,
    headers: headersOf(call.metadata),
    query: {},
    requestId,
    ...withPeer(call),
    // Unary calls read the market as streams do: the same scope (scopes.ts).
    capability: MARKET_DATA_SCOPE,
    stream,
  });
  const headers = principal.rateLimit ? rateLimitHeaders(principal.rateLimit) : {};
  return { requestId, principal, headers };
}

/** The client (client-address.ts: a trusted balancer's PROXY header, else the peer); grpc-js's peer string as a fallback. */
function withPeer(call: CallLike): { clientIp?: string } {
  const socket = http2StreamOf(call)?.session?.socket;
  const ip = (socket && clientAddress(socket, headersOf(call.metadata))) || peerAddress(call.getPeer());
  return ip ? { clientIp: ip } : {};
}

/** The status of a failed call, recorded in the error log. */
export function failure(
  deps: GrpcEdgeDeps,
  call: CallLike,
  requestId: string,
  thrown: unknown,
): GrpcStatusError {
  const err = toApiError(thrown);
  if (err.row.http >= 500)
    deps.log.warn({ err: String(thrown), requestId, path: call.getPath() }, 'grpc call failed');
  const errors = deps.errors;
  if (errors)
    errors.recorder.record(
      {
        request_id: requestId,
        code: err.code,
        status: err.row.http,
        method: 'POST',
        route: call.getPath(),
        surface: `grpc-${deps.region}`,
        account_id: errors.accounts.take(requestId),
        at: Date.now(),
      },
      withPeer(call).clientIp,
    );
  return toGrpcStatus(err, requestId);
}
