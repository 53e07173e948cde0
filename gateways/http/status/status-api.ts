/**
 * Everything status on `{base_url}`, in one call from the app: the STATUS projector and commands,
 * the status routes, the console's error look-up, every error response into the error log, and
 * the `{base_url}` streams (`simulation`) ended with the terminal `maintenance` event when a window
 * covering them starts.
 */
import type { FastifyInstance } from 'fastify';
import type { StatusBoard } from '../../../consumers/status/board.ts';
import { openStatusBucket, StatusProjector } from '../../../consumers/status/projector.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { AccountsService } from '../../../producers/accounts/service.ts';
import { StatusService } from '../../../producers/status/service.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import { attachEdgeStatus, type EdgeStatusParts } from '../../core/status-hooks.ts';
import type { ConsoleSessions } from '../console-session.ts';
import type { RequireKey } from '../require-key.ts';
import { registerErrorLookupRoute } from './errors-route.ts';
import { watchRegionCopies } from './region-copies.ts';
import { registerStatusRoutes } from './routes.ts';
import { createStatusView } from './status-view.ts';

/** The process's status parts (app/status-parts.ts). */
export type StatusParts = EdgeStatusParts & { board: StatusBoard };

export type StatusApiDeps = {
  nats: Nats;
  log: Logger;
  accounts: AccountsService;
  requireKey: RequireKey;
  registry: ConnectionRegistry;
  sessions: Pick<ConsoleSessions, 'account'>;
  parts: StatusParts;
  /** Longest a status command waits for its projection, ms. */
  deadlineMs: number;
  staleAfterMs: number;
  /** The other regions' JetStream domains (NATS_REGION_DOMAINS). */
  regionDomains?: readonly string[];
};

export async function registerStatusApi(app: FastifyInstance, deps: StatusApiDeps): Promise<() => void> {
  const { nats, parts } = deps;
  const projector = await StatusProjector.start(nats, deps.log);
  const service = new StatusService({
    nats,
    projector,
    bucket: await openStatusBucket(nats),
    board: parts.board,
    deadlineMs: deps.deadlineMs,
  });
  const regions = deps.regionDomains?.length ? watchRegionCopies(nats, deps.regionDomains) : null;
  const view = createStatusView({
    nats,
    board: parts.board,
    staleAfterMs: deps.staleAfterMs,
    ...(regions ? { regions: regions.list } : {}),
  });
  registerStatusRoutes(app, {
    requireKey: deps.requireKey,
    accounts: deps.accounts,
    service,
    board: parts.board,
    view,
  });
  registerErrorLookupRoute(app, { nats, sessions: deps.sessions });
  const unsubscribe = attachEdgeStatus(app, parts, {
    region: null,
    transport: 'simulation',
    registry: deps.registry,
  });
  return () => {
    unsubscribe();
    projector.stop();
    regions?.stop();
  };
}
