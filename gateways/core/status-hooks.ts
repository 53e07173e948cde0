/**
 * What a transport's fastify app does for the status API, in one call: every error response into
 * the error log; `/healthz` answers 503 `maintenance` (with Retry-After) while a window covers the
 * edge; and when a window covering it starts, every open stream of its registry ends with the
 * terminal `maintenance` error (SSE `event: error`, or whatever the transport maps the row to).
 * New requests are refused by the guard itself (maintenance.ts). Returns the detach function.
 */
import type { FastifyInstance } from 'fastify';
import type { ErrorRecorder, Region, StatusTransport } from '../../contracts/status.ts';
import type { ConnectionRegistry } from './connection-registry.ts';
import { installErrorLog, type RequestAccounts } from './error-log-hook.ts';
import type { Maintenance } from './maintenance.ts';

export type EdgeStatusParts = { maintenance: Maintenance; errors: ErrorRecorder; accounts: RequestAccounts };

export function attachEdgeStatus(
  app: FastifyInstance,
  parts: EdgeStatusParts,
  edge: {
    region: Region | null;
    transport: StatusTransport;
    registry?: Pick<ConnectionRegistry, 'terminateAll'>;
  },
): () => void {
  installErrorLog(app, {
    surface: edge.region ? `${edge.transport}-${edge.region}` : edge.transport,
    recorder: parts.errors,
    accounts: parts.accounts,
  });
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.routeOptions.url === '/healthz') parts.maintenance.assertOpen(edge.region, edge.transport);
    done();
  });
  const registry = edge.registry;
  if (!registry) return () => {};
  return parts.maintenance.onStart(edge.region, edge.transport, () => registry.terminateAll('maintenance'));
}
