/**
 * `grpc.health.v1.Health` of the edge, overall ('') and `price.PriceService`: SERVING while NATS is
 * connected and the streams exist (the check `/healthz` makes) and no maintenance window covers
 * the edge; NOT_SERVING otherwise. Re-checked every `everyMs`, so a Watch hears a change within it.
 *
 * It answers without a key, so what a client can make it hold is bounded here (not by
 * grpc-health-check's implementation, which keeps a map entry for every service name ever watched):
 * the two names are fixed; Check of another is NOT_FOUND; Watch of another sends SERVICE_UNKNOWN
 * and stays open, as the health checking protocol says (the name never becomes known here, so it
 * is sent nothing more; the name itself is not kept); at most GRPC_HEALTH_MAX_WATCHES Watch calls,
 * of any names, are open at once, one more is RESOURCE_EXHAUSTED (`subscription_limit`). A Watch's
 * watcher goes with its call.
 */
import type { Server, ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { service as healthService, type ServingStatus } from 'grpc-health-check';
import { ApiError } from '../../contracts/errors.ts';
import type { Region } from '../../contracts/status.ts';
import { GRPC_HEALTH_MAX_WATCHES } from '../../contracts/transport-limits.ts';
import type { Nats } from '../../platform/nats.ts';
import { healthy } from '../core/health-route.ts';
import type { Maintenance } from '../core/maintenance.ts';
import { type CallLike, requestIdOf } from './context.ts';
import { SERVICE_NAME } from './proto.ts';
import { toGrpcStatus } from './status.ts';

type Req = { service?: string };
type Res = { status: ServingStatus | 'SERVICE_UNKNOWN' };

export type EdgeHealth = {
  addToServer(server: Server): void;
  /** Watch calls open now (at most GRPC_HEALTH_MAX_WATCHES). */
  watching(): number;
  stop(): void;
};

export function startEdgeHealth(
  nats: Nats,
  region: Region,
  maintenance: Pick<Maintenance, 'active'> | null,
  everyMs = 1_000,
): EdgeHealth {
  let status: ServingStatus = 'NOT_SERVING';
  const names = new Set(['', SERVICE_NAME]);
  const watchers = new Set<(s: ServingStatus) => void>();
  let stopped = false;
  let checking = false;
  const set = (s: ServingStatus) => {
    if (s === status) return;
    status = s;
    for (const w of watchers) w(s);
  };
  const check = async () => {
    if (checking || stopped) return;
    checking = true;
    try {
      const ok = (await healthy(nats)) && !maintenance?.active(region, 'grpc');
      if (!stopped) set(ok ? 'SERVING' : 'NOT_SERVING');
    } finally {
      checking = false;
    }
  };
  void check();
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();

  const unknown = (name: string, call: CallLike) =>
    toGrpcStatus(new ApiError('not_found', `no health status for service ${name}`), requestIdOf(call));

  const handlers = {
    check(call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) {
      const name = call.request.service ?? '';
      if (!names.has(name)) callback(unknown(name, call));
      else callback(null, { status });
    },
    watch(call: ServerWritableStream<Req, Res>) {
      const known = names.has(call.request.service ?? '');
      if (watchers.size >= GRPC_HEALTH_MAX_WATCHES) {
        const err = new ApiError(
          'subscription_limit',
          `at most ${GRPC_HEALTH_MAX_WATCHES} health watches are open at once; use Check`,
        );
        call.emit('error', toGrpcStatus(err, requestIdOf(call)));
        return;
      }
      // An unknown service stays SERVICE_UNKNOWN: its watcher writes nothing, but counts in the cap.
      const watcher = known ? (s: ServingStatus) => call.write({ status: s }) : () => {};
      watchers.add(watcher);
      const drop = () => watchers.delete(watcher);
      call.once('cancelled', drop);
      call.once('close', drop);
      call.once('error', drop);
      call.write({ status: known ? status : 'SERVICE_UNKNOWN' });
    },
    list(_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
      callback(null, { statuses: Object.fromEntries([...names].map((n) => [n, { status }])) });
    },
  };

  return {
    addToServer(server) {
      server.addService(healthService, handlers as never);
    },
    watching: () => watchers.size,
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const w of watchers) watchers.delete(w);
    },
  };
}
