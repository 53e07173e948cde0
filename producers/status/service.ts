/**
 * Status commands (operators with `status:admin`): open and update incidents, schedule and cancel
 * maintenance windows. Each command reads the record, checks the change, publishes an event that
 * carries the whole new record on the record's own subject with the subject's last sequence
 * expected (two operators racing: one gets 503 `conflict`, nothing is lost), and answers once the
 * projection shows it.
 */

import { randomBase62 } from '../../contracts/api-key-format.ts';
import { ApiError } from '../../contracts/errors.ts';
import {
  type CreateIncidentBody,
  type CreateMaintenanceBody,
  canMove,
  type Incident,
  incidentKey,
  incidentSubject,
  MAX_INCIDENT_UPDATES,
  MAX_OPEN_INCIDENTS,
  MAX_PENDING_WINDOWS,
  MAX_SCHEDULE_AHEAD_MS,
  type MaintenanceWindow,
  type StatusEvent,
  type UpdateIncidentBody,
  windowKey,
  windowSubject,
} from '../../contracts/status.ts';
import type { Bucket } from '../../platform/kv.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

/**
 * What the service reads of the status projection (consumers/status, wired by app/): the board's
 * open incidents and pending windows for the caps, and read-your-writes on the projector.
 */
export type StatusServiceDeps = {
  nats: Nats;
  projector: { applied(seq: number, deadlineMs: number): Promise<unknown> };
  bucket: Bucket<unknown>;
  board: { openIncidents(): readonly unknown[]; pendingWindows(): readonly unknown[] };
  /** Longest a command waits for its projection before 503 `status_update_pending`, ms. */
  deadlineMs: number;
};

const unprocessable = (field: string, reason: string) =>
  new ApiError('unprocessable', `invalid ${field}: ${reason}`, { field, reason });

export class StatusService {
  constructor(private readonly deps: StatusServiceDeps) {}

  async openIncident(by: string, body: CreateIncidentBody): Promise<Incident> {
    if (this.deps.board.openIncidents().length >= MAX_OPEN_INCIDENTS)
      throw unprocessable('body', `at most ${MAX_OPEN_INCIDENTS} unresolved incidents; resolve one first`);
    const at = Date.now();
    const incident: Omit<Incident, 'seq'> = {
      id: `inc_${randomBase62(16)}`,
      title: body.title,
      status: 'open',
      impact: body.impact,
      regions: [...new Set(body.regions)],
      transports: [...new Set(body.transports)],
      created_at: at,
      updated_at: at,
      resolved_at: null,
      updates: [{ at, status: 'open', message: body.message }],
      created_by: by,
    };
    const seq = await this.publish(
      incidentSubject(incident.id),
      { type: 'incident_opened', incident, at },
      0,
    );
    return { ...incident, seq };
  }

  async updateIncident(id: string, body: UpdateIncidentBody): Promise<Incident> {
    const current = (await this.deps.bucket.get(incidentKey(id))) as Incident | null;
    if (!current) throw new ApiError('not_found', `no incident ${id}`);
    const status = body.status ?? current.status;
    if (!canMove(current.status, status))
      throw unprocessable(
        'status',
        `an incident moves open → monitoring → resolved; this one is ${current.status}`,
      );
    const at = Date.now();
    const { seq: last, ...rest } = current;
    const incident: Omit<Incident, 'seq'> = {
      ...rest,
      status,
      updated_at: at,
      resolved_at: status === 'resolved' ? at : null,
      updates: [...current.updates, { at, status, message: body.message }].slice(-MAX_INCIDENT_UPDATES),
    };
    const seq = await this.publish(incidentSubject(id), { type: 'incident_updated', incident, at }, last);
    return { ...incident, seq };
  }

  async scheduleMaintenance(by: string, body: CreateMaintenanceBody): Promise<MaintenanceWindow> {
    const at = Date.now();
    const startsAt = Date.parse(body.starts_at);
    const endsAt = Date.parse(body.ends_at);
    if (endsAt <= at) throw unprocessable('ends_at', 'the window must end in the future');
    if (startsAt > at + MAX_SCHEDULE_AHEAD_MS)
      throw unprocessable('starts_at', 'a window may be scheduled at most 90 days ahead');
    if (this.deps.board.pendingWindows().length >= MAX_PENDING_WINDOWS)
      throw unprocessable('body', `at most ${MAX_PENDING_WINDOWS} upcoming windows; cancel one first`);
    const window: Omit<MaintenanceWindow, 'seq'> = {
      id: `mnt_${randomBase62(16)}`,
      regions: [...new Set(body.regions)],
      transports: [...new Set(body.transports)],
      starts_at: startsAt,
      ends_at: endsAt,
      message: body.message,
      created_at: at,
      created_by: by,
      cancelled_at: null,
    };
    const seq = await this.publish(
      windowSubject(window.id),
      { type: 'maintenance_scheduled', window, at },
      0,
    );
    return { ...window, seq };
  }

  /** Cancels a window (an active one ends at once); cancelling twice changes nothing. */
  async cancelMaintenance(id: string): Promise<void> {
    const current = (await this.deps.bucket.get(windowKey(id))) as MaintenanceWindow | null;
    if (!current) throw new ApiError('not_found', `no maintenance window ${id}`);
    if (current.cancelled_at !== null) return;
    const at = Date.now();
    const { seq: last, ...rest } = current;
    const window = { ...rest, cancelled_at: at };
    await this.publish(windowSubject(id), { type: 'maintenance_cancelled', window, at }, last);
  }

  /** Publishes when the subject's last sequence is `expectedLast` (0: no event yet); waits for the projection. */
  private async publish(subject: string, ev: StatusEvent, expectedLast: number): Promise<number> {
    let seq: number;
    try {
      seq = (
        await this.deps.nats.js.publish(subject, encode(ev), {
          expect: { lastSubjectSequence: expectedLast },
        })
      ).seq;
    } catch (err) {
      if (/wrong last sequence/i.test(String((err as Error | null)?.message)))
        throw new ApiError(
          'conflict',
          'changed by someone else at the same time; read it again and retry',
          undefined,
          {
            cause: err,
          },
        );
      throw err;
    }
    await this.deps.projector.applied(seq, this.deps.deadlineMs);
    return seq;
  }
}
