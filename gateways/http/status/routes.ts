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
import type { RouteDoc } from '../openapi/route-doc.ts';
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
const json = { mediaType: 'application/json', description: 'JSON' } as const;
type Documented = { config: { openapi: RouteDoc } };
const doc = (summary: string, more: Partial<RouteDoc>): Documented => ({
  config: { openapi: { summary, tag: 'status', auth: 'key', response: json, errors: [], ...more } },
});
/** An operator's call: the key needs `status:admin` and its account must be an operator's. */
const admin = (summary: string, more: Partial<RouteDoc> = {}): Documented =>
  doc(summary, { scope: 'status:admin', ...more, errors: ['forbidden', ...(more.errors ?? [])] });

export function registerStatusRoutes(app: FastifyInstance, deps: StatusRouteDeps): void {
  const preHandler = deps.requireKey('status:admin');
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

  const publicDoc = doc('Keyless summary: regions and transports, incidents, maintenance (no account data)', {
    auth: 'none',
  });
  app.get('/api/v1/public/status', publicDoc, async () => deps.view.public());

  const fullDoc = doc('Per region, transport, source and coin; the MD range; incidents; maintenance', {
    scope: 'status:read',
    errors: ['feed_unavailable'],
  });
  app.get(BASE, { preHandler: deps.requireKey('status:read'), ...fullDoc }, async (req) => {
    try {
      return await deps.view.full();
    } catch (err) {
      req.log.warn({ err: String(err) }, 'status: market data log unreadable');
      throw new ApiError('feed_unavailable', 'market data log unreachable; retry shortly');
    }
  });

  const opened = { body: CreateIncidentBody, status: 201, errors: ['invalid_params'] } as const;
  app.post(`${BASE}/incidents`, { preHandler, ...admin('Open an incident', opened) }, async (req, reply) => {
    const by = await operator(req);
    const incident = await deps.service.openIncident(by, parseWith(CreateIncidentBody, req.body ?? {}));
    return reply.code(201).send(presentIncident(incident, true));
  });

  app.get(`${BASE}/incidents`, { preHandler, ...admin('Incidents with their updates') }, async (req) => {
    await operator(req);
    return { incidents: deps.board.incidents().map((i) => presentIncident(i, true)) };
  });

  const updated = { body: UpdateIncidentBody, errors: ['invalid_params', 'not_found'] } as const;
  const patchOpts = { preHandler, ...admin('Update an incident: open → monitoring → resolved', updated) };
  app.patch<{ Params: { id: string } }>(`${BASE}/incidents/:id`, patchOpts, async (req) => {
    await operator(req);
    known(INCIDENT_ID, req.params.id, 'incident');
    const body = parseWith(UpdateIncidentBody, req.body ?? {});
    return presentIncident(await deps.service.updateIncident(req.params.id, body), true);
  });

  const scheduled = { body: CreateMaintenanceBody, status: 201, errors: ['invalid_params'] } as const;
  const scheduleOpts = { preHandler, ...admin('Schedule a maintenance window', scheduled) };
  app.post(`${BASE}/maintenance`, scheduleOpts, async (req, reply) => {
    const by = await operator(req);
    const window = await deps.service.scheduleMaintenance(
      by,
      parseWith(CreateMaintenanceBody, req.body ?? {}),
    );
    return reply.code(201).send(presentWindow(window, Date.now(), true));
  });

  app.get(`${BASE}/maintenance`, { preHandler, ...admin('Upcoming and active windows') }, async (req) => {
    await operator(req);
    const now = Date.now();
    return { windows: deps.board.pendingWindows().map((w) => presentWindow(w, now, true)) };
  });

  app.delete<{ Params: { id: string } }>(
    `${BASE}/maintenance/:id`,
    {
      preHandler,
      ...admin('Cancel a window (service resumes at once)', { status: 204, errors: ['not_found'] }),
    },
    async (req, reply) => {
      await operator(req);
      known(WINDOW_ID, req.params.id, 'maintenance window');
      await deps.service.cancelMaintenance(req.params.id);
      return reply.code(204).send();
    },
  );
}
