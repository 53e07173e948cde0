/**
 * The gRPC feed edge of one region, built from its dependencies (tests listen on port 0):
 * price.PriceService (unary, server-streaming and bidirectional methods on the core data plane),
 * server reflection and grpc.health.v1 (both answer without a key), the TLS policy, keepalive
 * settings that tolerate idle streams, GOAWAY for a client that pings too often, at most
 * GRPC_MAX_CONCURRENT_STREAMS calls open per connection, and
 * INVALID_ARGUMENT for a request body that does not decode (undecodable.ts), and the client's
 * address from a trusted balancer's PROXY header (client-address.ts).
 */
import { Server, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { GRPC_MAX_CONCURRENT_STREAMS } from '../../contracts/transport-limits.ts';
import type { Config } from '../../platform/config.ts';
import type { TlsOptions } from '../../platform/tls.ts';
import { acceptProxyProtocol, TrustedProxies } from '../core/client-address.ts';
import { ConnectionRegistry } from '../core/connection-registry.ts';
import type { Maintenance } from '../core/maintenance.ts';
import { bidiStreamMethod } from './bidi-stream.ts';
import type { GrpcEdgeDeps } from './context.ts';
import { serverCredentials } from './credentials.ts';
import { type EdgeHealth, startEdgeHealth } from './health.ts';
import { noDelay } from './no-delay.ts';
import { guardPings, http2ServersOf } from './ping-guard.ts';
import { reflectedDefinition, servedDefinition } from './proto.ts';
import { serverStreamMethods } from './server-streams.ts';
import { unaryMethods } from './unary.ts';
import { rejectUndecodable, tolerantServices } from './undecodable.ts';

export type GrpcAppDeps = Omit<GrpcEdgeDeps, 'registry' | 'sink'> & {
  config: Config;
  tls?: TlsOptions | null;
  maintenance?: Maintenance | null;
};

export type GrpcApp = {
  server: Server;
  registry: ConnectionRegistry;
  /** grpc.health.v1 as served (tests read how many Watch calls it holds). */
  health: EdgeHealth;
  /** Binds `host:port` (0: any free port); resolves with the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Every open stream ends UNAVAILABLE (resume with after_seq), then the server stops. */
  shutdown(): Promise<void>;
};

const SHUTDOWN_GRACE_MS = 1_000;

export function buildGrpcApp(deps: GrpcAppDeps): GrpcApp {
  const { config } = deps;
  const registry = new ConnectionRegistry(config.SSE_HEARTBEAT_MS, `grpc-${deps.region}`, {
    nats: deps.nats,
    afterMs: config.NATS_LOST_CLOSE_MS,
  });
  const edge: GrpcEdgeDeps = {
    ...deps,
    registry,
    sink: {
      maxBacklogBytes: config.SSE_MAX_BACKLOG_BYTES,
      closeGraceMs: config.SSE_CLOSE_GRACE_MS,
      heartbeatMs: config.SSE_HEARTBEAT_MS,
    },
  };
  const server = new Server({
    'grpc.keepalive_time_ms': config.GRPC_KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': config.GRPC_KEEPALIVE_TIMEOUT_MS,
    'grpc.keepalive_permit_without_calls': 1,
    // Nothing reads channelz here (no channelz service is added): without it, grpc-js skips the
    // per-call and per-message trackers (timestamps, counters, closures) on every call.
    'grpc.enable_channelz': 0,
    // Calls one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    'grpc.max_concurrent_streams': GRPC_MAX_CONCURRENT_STREAMS,
    interceptors: [rejectUndecodable(edge)],
  });
  tolerantServices(server);
  server.addService(servedDefinition, {
    ...unaryMethods(edge),
    ...serverStreamMethods(edge),
    Stream: bidiStreamMethod(edge),
  } as UntypedServiceImplementation);
  new ReflectionService(reflectedDefinition).addToServer(server);
  const health = startEdgeHealth(deps.nats, deps.region, deps.maintenance ?? null);
  health.addToServer(server);
  const detachMaintenance =
    deps.maintenance?.onStart(deps.region, 'grpc', (w) =>
      // Open streams learn when to come back, as new calls do (`retry-after-ms` to the window's end,
      // to the millisecond: the gRPC framer keeps the fraction of a second).
      registry.terminateAll('maintenance', undefined, Math.max(0.001, (w.ends_at - Date.now()) / 1_000)),
    ) ?? (() => {});

  return {
    server,
    registry,
    health,
    listen(host, port) {
      return new Promise((resolve, reject) =>
        server.bindAsync(`${host}:${port}`, serverCredentials(deps.tls ?? null), (err, bound) => {
          if (err) return reject(err);
          const policy = {
            minIntervalMs: config.GRPC_MIN_PING_INTERVAL_MS,
            maxStrikes: config.GRPC_MAX_PING_STRIKES,
          };
          const trusted = new TrustedProxies(config.TRUSTED_PROXIES);
          for (const h2 of http2ServersOf(server)) {
            h2.on('session', (s) => guardPings(s, policy));
            noDelay(h2);
            acceptProxyProtocol(h2, trusted);
          }
          resolve(bound);
        }),
      );
    },
    async shutdown() {
      detachMaintenance();
      health.stop();
      registry.closeAll('server shutting down; reconnect with after_seq');
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
