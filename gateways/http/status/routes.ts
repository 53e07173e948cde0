/**
 * The status API on `{base_url}`: `GET /api/v1/status` (`status:read`), the keyless
 * `GET /api/v1/public/status`, and the operators' incidents and maintenance windows
 * (`status:admin`, which no key holds without naming it and only operator accounts may mint; the
 * account must still be an operator's when the key is used). Never refused by a maintenance
 * window (maintenance.ts exempts these scopes).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { StatusBoard } from '../../../consumers/status/board.ts';
import { ApiError } from '../../../contracts/errors.ts';
import {
  CreateIncidentBody,
  CreateMaintenanceBody,
  INCIDENT_ID,
  UpdateIncidentBody,
  WINDOW_ID,
} from '../../../contracts/status.ts';
import type { AccountsService } from '../../../producers/accounts/service.ts';
import type { StatusService } from '../../../producers/status/service.ts';
import { parseWith } from '../../core/validate.ts';
import type { RequireKey } from '../require-key.ts';
import { type createStatusView, presentIncident, presentWindow } from './status-view.ts';

export type StatusRouteDeps = {
  requireKey: RequireKey;
  accounts: Pick<AccountsService, 'isOperator'>;
  service: StatusService;
  board: StatusBoard;
  view: ReturnType<typeof createStatusView>;
};

const BASE = '/api/v1/status';

export function registerStatusRoutes(app: FastifyInstance, deps: StatusRouteDeps): void {
  const admin = deps.requireKey('status:admin');
  /** The operator behind an admin key (re-checked on every call: a removed operator loses access). */
  const operator = async (req: FastifyRequest): Promise<string> => {
    const accountId = req.principal?.accountId ?? null;
    if (accountId === null || !(await deps.accounts.isOperator(accountId)))
      throw new ApiError('forbidden', 'the status admin API is for operator accounts');
    return accountId;
  };
  const known = (pattern: RegExp, id: string, what: string) => {
    if (!pattern.test(id)) throw new ApiError('not_found', `no ${what} ${id}`);
  };

  app.get('/api/v1/public/status', async () => deps.view.public());

  app.get(BASE, { preHandler: deps.requireKey('status:read') }, async (req) => {
    try {
      return await deps.view.full();
    } catch (err) {
      req.log.warn({ err: String(err) }, 'status: market data log unreadable');
      throw new ApiError('feed_unavailable', 'market data log unreachable; retry shortly');
    }
  });

  app.post(`${BASE}/incidents`, { preHandler: admin }, async (req, reply) => {
    const by = await operator(req);
    const incident = await deps.service.openIncident(by, parseWith(CreateIncidentBody, req.body ?? {}));
    return reply.code(201).send(presentIncident(incident, true));
  });

  app.get(`${BASE}/incidents`, { preHandler: admin }, async (req) => {
    await operator(req);
    return { incidents: deps.board.incidents().map((i) => presentIncident(i, true)) };
  });

  app.patch<{ Params: { id: string } }>(`${BASE}/incidents/:id`, { preHandler: admin }, async (req) => {
    await operator(req);
    known(INCIDENT_ID, req.params.id, 'incident');
    const body = parseWith(UpdateIncidentBody, req.body ?? {});
    return presentIncident(await deps.service.updateIncident(req.params.id, body), true);
  });

  app.post(`${BASE}/maintenance`, { preHandler: admin }, async (req, reply) => {
    const by = await operator(req);
    const window = await deps.service.scheduleMaintenance(
      by,
      parseWith(CreateMaintenanceBody, req.body ?? {}),
    );
    return reply.code(201).send(presentWindow(window, Date.now(), true));
  });

  app.get(`${BASE}/maintenance`, { preHandler: admin }, async (req) => {
    await operator(req);
    const now = Date.now();
    return { windows: deps.board.pendingWindows().map((w) => presentWindow(w, now, true)) };
  });

  app.delete<{ Params: { id: string } }>(
    `${BASE}/maintenance/:id`,
    { preHandler: admin },
    async (req, reply) => {
      await operator(req);
      known(WINDOW_ID, req.params.id, 'maintenance window');
      await deps.service.cancelMaintenance(req.params.id);
      return reply.code(204).send();
    },
  );
}
