/**
 * The status API: incidents, maintenance windows, the events on the `STATUS` stream that are
 * their truth, the records projected into KV `status`, and the error-log entries kept 30 days on
 * `ERRORS`. Pure: no I/O, no clock (callers pass the time).
 */
import { z } from 'zod';
import type { Scope } from './accounts.ts';
import { TRANSPORTS } from './limits.ts';

/**
 * Scopes an empty scope set never implies, and that only operator accounts (configuration
 * `OPERATOR_EMAILS`) may put on a key.
 */
export const OPERATOR_ONLY_SCOPES: ReadonlySet<Scope> = new Set<Scope>(['status:admin']);

export const REGIONS = ['us', 'jp'] as const;
export type Region = (typeof REGIONS)[number];

/**
 * What a maintenance window can cover: the data-feed transports (per region) and `simulation`,
 * the `{base_url}` simulation/MCP API, which is in no region (a window naming it covers it
 * whatever its regions). The console, the status API and `/metrics` are never covered.
 */
export const STATUS_TRANSPORTS = [...TRANSPORTS, 'simulation'] as const;
export type StatusTransport = (typeof STATUS_TRANSPORTS)[number];

export const INCIDENT_STATES = ['open', 'monitoring', 'resolved'] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

/** Incidents not yet resolved, and windows not yet ended, at once (every gateway holds them all). */
export const MAX_OPEN_INCIDENTS = 100;
export const MAX_PENDING_WINDOWS = 100;
/** Updates one incident keeps (the stream keeps every event). */
export const MAX_INCIDENT_UPDATES = 50;
/** Resolved incidents each gateway remembers for listings (newest first). */
export const RESOLVED_INCIDENTS_KEPT = 200;
/** Longest maintenance window, and how far ahead one may be scheduled. */
export const MAX_WINDOW_MS = 7 * 86_400_000;
export const MAX_SCHEDULE_AHEAD_MS = 90 * 86_400_000;

const text = (max: number) => z.string().trim().min(1).max(max);
const regionList = z.array(z.enum(REGIONS)).min(1).max(REGIONS.length);
const transportList = z.array(z.enum(STATUS_TRANSPORTS)).min(1).max(STATUS_TRANSPORTS.length);
const instant = z.iso.datetime({ offset: true });

export const CreateIncidentBody = z
  .object({
    title: text(200),
    message: text(2_000),
    impact: z.enum(['degraded', 'outage']).default('degraded'),
    regions: regionList.default([...REGIONS]),
    transports: transportList.default([...STATUS_TRANSPORTS]),
  })
  .strict();
export type CreateIncidentBody = z.infer<typeof CreateIncidentBody>;

/** An update: a message, and optionally the next state (open → monitoring → resolved). */
export const UpdateIncidentBody = z
  .object({ message: text(2_000), status: z.enum(INCIDENT_STATES).optional() })
  .strict();
export type UpdateIncidentBody = z.infer<typeof UpdateIncidentBody>;

export const CreateMaintenanceBody = z
  .object({
    regions: regionList,
    transports: transportList,
    starts_at: instant,
    ends_at: instant,
    message: text(2_000),
  })
  .strict()
  .refine((b) => Date.parse(b.ends_at) > Date.parse(b.starts_at), {
    message: 'ends_at must be after starts_at',
    path: ['ends_at'],
  })
  .refine((b) => Date.parse(b.ends_at) - Date.parse(b.starts_at) <= MAX_WINDOW_MS, {
    message: 'a window lasts at most 7 days',
    path: ['ends_at'],
  });
export type CreateMaintenanceBody = z.infer<typeof CreateMaintenanceBody>;

/** Ids: `inc_` / `mnt_` + 16 base62 characters. */
export const INCIDENT_ID = /^inc_[0-9A-Za-z]{16}$/;
export const WINDOW_ID = /^mnt_[0-9A-Za-z]{16}$/;

/** Records carry `seq`: the `STATUS` stream sequence of their last event (projection order). */
export type Incident = {
  seq: number;
  id: string;
  title: string;
  status: IncidentState;
  impact: 'degraded' | 'outage';
  regions: Region[];
  transports: StatusTransport[];
  created_at: number;
  updated_at: number;
  resolved_at: number | null;
  /** Newest last; at most MAX_INCIDENT_UPDATES. */
  updates: { at: number; status: IncidentState; message: string }[];
  created_by: string;
};

export type MaintenanceWindow = {
  seq: number;
  id: string;
  regions: Region[];
  transports: StatusTransport[];
  starts_at: number;
  ends_at: number;
  message: string;
  created_at: number;
  created_by: string;
  /** Set by DELETE: the window no longer applies (an active one ends at once). */
  cancelled_at: number | null;
};

/**
 * Events on `status.<kind>.<id>`: each carries the whole record after the change, so the
 * projection is a conditional put and commands check the subject's last sequence (no lost update).
 */
export type StatusEvent =
  | { type: 'incident_opened' | 'incident_updated'; incident: Omit<Incident, 'seq'>; at: number }
  | {
      type: 'maintenance_scheduled' | 'maintenance_cancelled';
      window: Omit<MaintenanceWindow, 'seq'>;
      at: number;
    };

export const incidentSubject = (id: string) => `status.incident.${id}`;
export const windowSubject = (id: string) => `status.maintenance.${id}`;
export const STATUS_EVENTS_ALL = 'status.>';
/** KV `status` keys. */
export const incidentKey = (id: string) => `incident.${id}`;
export const windowKey = (id: string) => `maintenance.${id}`;

/** Moves allowed by an update (staying in a state is an update without a move). */
const NEXT: Record<IncidentState, readonly IncidentState[]> = {
  open: ['open', 'monitoring', 'resolved'],
  monitoring: ['monitoring', 'open', 'resolved'],
  resolved: [],
};
export const canMove = (from: IncidentState, to: IncidentState): boolean => NEXT[from].includes(to);

/** Whether the window is in force at `now` (started, not ended, not cancelled). */
export const windowActive = (w: MaintenanceWindow, now: number): boolean =>
  w.cancelled_at === null && w.starts_at <= now && now < w.ends_at;

/** Whether a window covers a transport of a region (`region` null: a surface in no region). */
export function windowCovers(
  w: MaintenanceWindow,
  region: Region | null,
  transport: StatusTransport,
): boolean {
  if (!w.transports.includes(transport)) return false;
  return region === null || w.regions.includes(region);
}

/** One error response, kept 30 days on `ERRORS` (spec "Error logs are retained 30 days"). */
export type ErrorLogEntry = {
  request_id: string;
  code: string;
  status: number;
  method: string;
  route: string;
  surface: string;
  /** The account whose credential was presented, when one was recognised. */
  account_id: string | null;
  /** Unix ms. */
  at: number;
};

/** Where error-log entries go (producers/status/error-log.ts). */
export type ErrorRecorder = {
  /** `from`: the client's address, which anonymous errors are sampled by (never stored). */
  record(entry: ErrorLogEntry, from?: string): void;
};

/** Account token of errors no account can be held for (no or unknown credential). */
export const NO_ACCOUNT = '_';

/** Request ids may hold `.` and `:`, which NATS subjects cannot: the subject token is base64url. */
export const errorLogSubject = (accountId: string | null, requestId: string): string =>
  `errlog.${accountId ?? NO_ACCOUNT}.${Buffer.from(requestId).toString('base64url')}`;
export const ERROR_LOG_ALL = 'errlog.>';
export const ERROR_LOG_RETENTION_S = 30 * 86_400;

/** `GET /api/v1/console/errors?request_id=`. */
export const ErrorLookupQuery = z
  .object({ request_id: z.string().regex(/^[A-Za-z0-9_.:-]{8,128}$/) })
  .strict();
