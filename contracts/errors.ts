/**
 * The error catalogue: the spec's error tables restated as data, and one row per error giving its
 * code in every protocol. Transports never choose a status themselves: they read the row.
 * Adding an error = adding one row. Pure: no I/O.
 */

/** The spec's error categories, snake_case. */
export type ErrorCategory = 'authentication' | 'authorization' | 'validation' | 'rate_limiting' | 'server';

/** Spec "HTTP statuses". `category` and `clientAction` are null where the spec writes "-". */
// biome-ignore format: a spec table, one row per line
export const HTTP_STATUSES = [
  { code: 200, category: null, meaning: 'Success', clientAction: null },
  { code: 201, category: null, meaning: 'Resource created', clientAction: null },
  { code: 204, category: null, meaning: 'Success without body', clientAction: null },
  { code: 400, category: 'validation', meaning: 'Malformed body or query', clientAction: 'Fix request' },
  { code: 401, category: 'authentication', meaning: 'Key missing, invalid, expired or revoked', clientAction: 'Use a valid key' },
  { code: 403, category: 'authorization', meaning: 'Key lacks scope or tier', clientAction: 'Change plan or scope' },
  { code: 404, category: 'validation', meaning: 'Resource (coin, feed, endpoint) missing', clientAction: 'Check identifier and path' },
  { code: 405, category: 'validation', meaning: 'Method not supported on the path', clientAction: 'Use the right method' },
  { code: 408, category: 'server', meaning: 'Request not completed in time', clientAction: 'Retry' },
  // Not in the spec's table: the console needs it for an email already registered (issue 3).
  { code: 409, category: 'validation', meaning: 'Conflicts with existing state', clientAction: 'Use another value' },
  { code: 413, category: 'validation', meaning: 'Body over 1 MB', clientAction: 'Shrink or split' },
  // Not in the spec's table: artifact downloads honour Range (RFC 9110 §15.5.17).
  { code: 416, category: 'validation', meaning: 'Range not satisfiable', clientAction: 'Ask for a range within the file' },
  { code: 422, category: 'validation', meaning: 'Well-formed but semantically wrong', clientAction: 'Check values' },
  { code: 429, category: 'rate_limiting', meaning: 'Bucket exhausted', clientAction: 'Wait Retry-After seconds' },
  { code: 500, category: 'server', meaning: 'Unexpected failure', clientAction: 'Retry with exponential backoff' },
  { code: 502, category: 'server', meaning: 'Upstream unreachable', clientAction: 'Try another region, retry after 5 s' },
  { code: 503, category: 'server', meaning: 'Maintenance or overload', clientAction: 'Retry after Retry-After' },
  { code: 504, category: 'server', meaning: 'Upstream deadline missed', clientAction: 'Retry' },
] as const;

/** Spec "JSON-RPC codes". */
// biome-ignore format: a spec table, one row per line
export const JSON_RPC_CODES = [
  { code: -32700, name: 'Parse Error', meaning: 'Invalid JSON' },
  { code: -32600, name: 'Invalid Request', meaning: 'Not a valid JSON-RPC 2.0 request' },
  { code: -32601, name: 'Method Not Found', meaning: 'Method absent on this endpoint' },
  { code: -32602, name: 'Invalid Params', meaning: 'Params missing, wrong type or failing validation' },
  { code: -32603, name: 'Internal Error', meaning: 'Server failure during execution' },
  { code: -32000, name: 'Rate Limit Exceeded', meaning: 'Bucket exhausted; data includes retry_after' },
  { code: -32001, name: 'Authentication Failed', meaning: 'Key missing or invalid' },
  { code: -32002, name: 'Tier Restricted', meaning: 'Needs a higher tier' },
  { code: -32003, name: 'Coin Not Found', meaning: 'Coin not tracked' },
  { code: -32004, name: 'Feed Unavailable', meaning: 'Feed offline or not initialized' },
  { code: -32005, name: 'Subscription Limit', meaning: 'Concurrent subscription cap for the key reached' },
  { code: -32006, name: 'Batch Too Large', meaning: 'Batch over 100 calls' },
  { code: -32007, name: 'Snapshot Too Large', meaning: 'Depth snapshot over the permitted size' },
  { code: -32008, name: 'Invalid Time Range', meaning: 'Start/end invalid or too large' },
  { code: -32009, name: 'Upstream Timeout', meaning: 'Upstream missed the deadline' },
  { code: -32010, name: 'Maintenance Mode', meaning: 'Scheduled maintenance' },
] as const;

/** Spec "gRPC statuses" (numbers are the standard gRPC status codes). */
// biome-ignore format: a spec table, one row per line
export const GRPC_STATUSES = [
  { number: 0, name: 'OK', meaning: 'Success' },
  { number: 1, name: 'CANCELLED', meaning: 'Client cancelled' },
  { number: 2, name: 'UNKNOWN', meaning: 'Unknown server error' },
  { number: 3, name: 'INVALID_ARGUMENT', meaning: 'Bad parameters' },
  { number: 4, name: 'DEADLINE_EXCEEDED', meaning: 'Deadline missed' },
  { number: 5, name: 'NOT_FOUND', meaning: 'Coin, feed or resource missing' },
  { number: 7, name: 'PERMISSION_DENIED', meaning: 'Scope or tier lacking' },
  { number: 8, name: 'RESOURCE_EXHAUSTED', meaning: 'Rate or concurrent-connection limit' },
  { number: 10, name: 'ABORTED', meaning: 'Conflict, for example concurrent snapshot' },
  { number: 11, name: 'OUT_OF_RANGE', meaning: 'Parameter out of range (for example depth above 1000)' },
  { number: 12, name: 'UNIMPLEMENTED', meaning: 'Method declared but unavailable' },
  { number: 13, name: 'INTERNAL', meaning: 'Internal error' },
  { number: 14, name: 'UNAVAILABLE', meaning: 'Maintenance or overload' },
  { number: 16, name: 'UNAUTHENTICATED', meaning: 'Key missing or invalid' },
] as const;

/** Spec "SSE error codes". On `terminal: true` the server closes the connection after the event. */
// biome-ignore format: a spec table, one row per line
export const SSE_CODES = [
  { code: 'auth_failed', terminal: true, meaning: 'Key missing, invalid or expired' },
  { code: 'auth_expired', terminal: true, meaning: 'Key revoked after connecting' },
  { code: 'rate_limit', terminal: true, meaning: 'Concurrent stream limit for the tier exceeded' },
  { code: 'tier_restricted', terminal: true, meaning: 'Event type not available on the tier' },
  { code: 'coin_not_found', terminal: false, meaning: 'Unknown coin requested; stream continues for valid coins' },
  { code: 'feed_stale', terminal: false, meaning: 'A source silent for over 60 seconds; recovers by itself' },
  { code: 'upstream_lag', terminal: false, meaning: 'Delivery delayed by upstream backpressure; events buffered' },
  { code: 'internal', terminal: true, meaning: 'Unrecoverable server error' },
  { code: 'maintenance', terminal: true, meaning: 'Planned shutdown' },
  { code: 'reconnect', terminal: true, meaning: 'Server asks client to reconnect at once' },
] as const;

/** Spec "WebSocket close codes": the RFC 6455 codes it names, then the application range 4000-4099. */
// biome-ignore format: a spec table, one row per line
export const WS_CLOSE_CODES = [
  { code: 1000, name: 'Normal Closure', meaning: 'Purpose fulfilled' },
  { code: 1001, name: 'Going Away', meaning: 'Endpoint going away (server restart or drain)' },
  { code: 1002, name: 'Protocol Error', meaning: 'Protocol error' },
  { code: 1003, name: 'Unsupported Data', meaning: 'Data of a type the endpoint cannot accept' },
  { code: 1006, name: 'Abnormal Closure', meaning: 'Connection lost without a close frame' },
  { code: 1008, name: 'Policy Violation', meaning: 'Message violates policy (for example oversized frame)' },
  { code: 1009, name: 'Message Too Big', meaning: 'Frame over 4 MB' },
  { code: 1011, name: 'Internal Error', meaning: 'Unexpected server condition' },
  { code: 1013, name: 'Try Again Later', meaning: 'Overload' },
  { code: 4001, name: 'Invalid API Key', meaning: 'Key not valid' },
  { code: 4002, name: 'Key Expired', meaning: 'Key expired after connect' },
  { code: 4003, name: 'Tier Not Authorized', meaning: 'Tier lacks Disk-Sync; Quant required' },
  { code: 4004, name: 'Coin Not Supported', meaning: 'Coin unavailable for sync' },
  { code: 4005, name: 'Invalid Subscription', meaning: 'Malformed subscription message' },
  { code: 4006, name: 'Subscription Limit', meaning: 'Per-connection subscription cap exceeded' },
  { code: 4007, name: 'Heartbeat Timeout', meaning: 'No pong within 30 seconds' },
  { code: 4008, name: 'Duplicate Connection', meaning: 'Another connection exists for the key' },
  { code: 4009, name: 'Upstream Failure', meaning: 'Upstream unreachable' },
  { code: 4029, name: 'Rate Limit Exceeded', meaning: 'Message send rate too high' },
  { code: 4050, name: 'Maintenance', meaning: 'Planned shutdown' },
] as const;

/**
 * Close codes that must never be sent (RFC 6455 §7.4.1): 1006 is what a client reports when the
 * connection dropped without a close frame, so no catalogue row may map to it (`ws` throws on it).
 */
export const WS_RESERVED_CLOSE_CODES = [1006] as const;

export type HttpStatus = (typeof HTTP_STATUSES)[number]['code'];
/** The 4xx and 5xx statuses of the spec: the only ones an error may carry. */
export type HttpErrorStatus = Exclude<HttpStatus, 200 | 201 | 204>;
export type JsonRpcCode = (typeof JSON_RPC_CODES)[number]['code'];
export type GrpcStatusName = (typeof GRPC_STATUSES)[number]['name'];
/** Every gRPC status an error may end with: all but OK. */
export type GrpcErrorName = Exclude<GrpcStatusName, 'OK'>;
export type SseCode = (typeof SSE_CODES)[number]['code'];
export type WsCloseCode = (typeof WS_CLOSE_CODES)[number]['code'];
/** A close code a server may put in a close frame. */
export type SendableWsCloseCode = Exclude<WsCloseCode, (typeof WS_RESERVED_CLOSE_CODES)[number]>;

/**
 * The one status the server causes outside the rows: a gRPC stream already ended (a terminal
 * status written) whose client still does not read `SSE_CLOSE_GRACE_MS` later is reset with
 * RST_STREAM CANCEL, since its trailers wait behind data flow control holds. gRPC clients report
 * that reset as CANCELLED, which the spec's table calls "Client cancelled": here it is not. Not
 * REFUSED_STREAM (clients would say UNAVAILABLE): that code promises no application processing
 * happened, so a proxy or a client may replay the call transparently, while this stream has
 * delivered events. Clients treat a CANCELLED they did not cause as UNAVAILABLE: resume with
 * `after_seq` = the last `seq` processed (the TypeScript client does).
 */
export const SERVER_RESET = Object.freeze({
  /** HTTP/2 RST_STREAM error code sent (NGHTTP2_CANCEL). */
  http2Code: 8,
  /** The status a gRPC client reports for it. */
  grpc: 'CANCELLED',
  /** What a client should make of it. */
  treatAs: 'UNAVAILABLE',
} as const satisfies { http2Code: number; grpc: GrpcStatusName; treatAs: GrpcStatusName });

/** gRPC status name → wire number, e.g. `UNAUTHENTICATED` → 16. */
export const GRPC_STATUS_NUMBER = Object.freeze(
  Object.fromEntries(GRPC_STATUSES.map((s) => [s.name, s.number])),
) as Readonly<Record<GrpcStatusName, number>>;

type RowSpec = readonly [HttpErrorStatus, JsonRpcCode, GrpcErrorName, SseCode, SendableWsCloseCode, string];

/*
 * Choices where the spec fixes no value (the 7 rows of its cross-protocol table are reproduced exactly):
 * - SSE: failures before the first byte are HTTP statuses, so `sse` only matters mid-stream. Request
 *   problems use coin_not_found, as the spec itself does for bad parameters (the only non-terminal
 *   request code); scope problems use tier_restricted, the only permission code.
 * - JSON-RPC has no generic not-found or overload code: a missing resource is a bad param (-32602),
 *   overload, timeouts and drains are -32603.
 * - gRPC: an unknown method is UNIMPLEMENTED and an oversized message RESOURCE_EXHAUSTED, as gRPC
 *   itself reports them.
 * - HTTP: the spec lists no 409 or 501: a conflict is 503 (retry shortly, which is what ABORTED
 *   means); a declared-but-unavailable method is 405. A client cancel is 408, only ever logged.
 * - WebSocket: 1006 can never be sent; a client cancel is a normal closure (1000); scope errors are
 *   policy violations (1008), 4003 being Disk-Sync's tier code.
 * - `category` and `retryable` follow from the HTTP status via the spec's HTTP table (see toRow).
 * - The message doubles as the WebSocket close reason, so it must stay within 123 UTF-8 bytes.
 */
// biome-ignore format: one row per error, columns aligned like the spec's tables
const ROWS = {
  //                     HTTP JSONRPC gRPC                  SSE                WS    message
  invalid_key:          [401, -32001, 'UNAUTHENTICATED',    'auth_failed',     4001, 'API key missing or invalid.'],
  key_revoked:          [401, -32001, 'UNAUTHENTICATED',    'auth_expired',    4002, 'API key revoked or expired.'],
  key_expired:          [401, -32001, 'UNAUTHENTICATED',    'auth_expired',    4002, 'API key expired.'],
  // Console-only (never on a WebSocket), hence 1008 rather than the API-key code 4001.
  invalid_credentials:  [401, -32001, 'UNAUTHENTICATED',    'auth_failed',     1008, 'Email or password incorrect.'],
  session_invalid:      [401, -32001, 'UNAUTHENTICATED',    'auth_failed',     1008, 'Session token missing, invalid or expired.'],
  forbidden:            [403, -32002, 'PERMISSION_DENIED',  'tier_restricted', 1008, 'API key lacks the scope for this resource.'],
  tier_restricted:      [403, -32002, 'PERMISSION_DENIED',  'tier_restricted', 4003, 'This feature needs a higher tier.'],
  invalid_params:       [400, -32602, 'INVALID_ARGUMENT',   'coin_not_found',  4005, 'Invalid parameters.'],
  parse_error:          [400, -32700, 'INVALID_ARGUMENT',   'coin_not_found',  1003, 'Malformed JSON.'],
  invalid_request:      [400, -32600, 'INVALID_ARGUMENT',   'coin_not_found',  1002, 'Not a valid request.'],
  policy_violation:     [400, -32600, 'INVALID_ARGUMENT',   'coin_not_found',  1008, 'Message violates the connection policy.'],
  batch_too_large:      [400, -32006, 'INVALID_ARGUMENT',   'coin_not_found',  4005, 'Batch over 100 calls.'],
  email_taken:          [409, -32602, 'ABORTED',            'coin_not_found',  4005, 'Email already registered.'],
  key_limit:            [409, -32602, 'RESOURCE_EXHAUSTED', 'coin_not_found',  4005, 'Active API key limit reached; revoke a key first.'],
  coin_not_found:       [404, -32003, 'NOT_FOUND',          'coin_not_found',  4004, 'Coin not tracked.'],
  not_found:            [404, -32602, 'NOT_FOUND',          'coin_not_found',  4004, 'Resource not found.'],
  method_not_found:     [404, -32601, 'UNIMPLEMENTED',      'coin_not_found',  4005, 'Method not found.'],
  method_not_allowed:   [405, -32600, 'UNIMPLEMENTED',      'coin_not_found',  1003, 'Method not allowed on this path.'],
  unimplemented:        [405, -32601, 'UNIMPLEMENTED',      'coin_not_found',  1003, 'Method declared but not available.'],
  payload_too_large:    [413, -32600, 'RESOURCE_EXHAUSTED', 'coin_not_found',  1009, 'Request body over 1 MB.'],
  frame_too_large:      [413, -32600, 'RESOURCE_EXHAUSTED', 'coin_not_found',  1009, 'Frame over 4 MB.'],
  range_unsatisfiable:  [416, -32602, 'OUT_OF_RANGE',       'coin_not_found',  4005, 'Requested range not satisfiable.'],
  unprocessable:        [422, -32602, 'INVALID_ARGUMENT',   'coin_not_found',  4005, 'Request is well-formed but its values are invalid.'],
  out_of_range:         [422, -32602, 'OUT_OF_RANGE',       'coin_not_found',  4005, 'Parameter out of range.'],
  invalid_time_range:   [422, -32008, 'OUT_OF_RANGE',       'coin_not_found',  4005, 'Start/end invalid or range too large.'],
  snapshot_too_large:   [422, -32007, 'OUT_OF_RANGE',       'coin_not_found',  1009, 'Depth snapshot over the permitted size.'],
  rate_limited:         [429, -32000, 'RESOURCE_EXHAUSTED', 'rate_limit',      4029, 'Rate limit exceeded.'],
  subscription_limit:   [429, -32005, 'RESOURCE_EXHAUSTED', 'rate_limit',      4006, 'Concurrent stream or subscription limit reached.'],
  duplicate_connection: [429, -32005, 'RESOURCE_EXHAUSTED', 'rate_limit',      4008, 'Another connection exists for this key.'],
  quota_exceeded:       [429, -32005, 'RESOURCE_EXHAUSTED', 'rate_limit',      4006, 'Account quota reached: jobs queued or running, or stored artifact bytes.'],
  request_timeout:      [408, -32603, 'DEADLINE_EXCEEDED',  'reconnect',       1013, 'Request not completed in time.'],
  heartbeat_timeout:    [408, -32603, 'DEADLINE_EXCEEDED',  'reconnect',       4007, 'No pong within 30 seconds.'],
  cancelled:            [408, -32603, 'CANCELLED',          'reconnect',       1000, 'Request cancelled by the client.'],
  internal:             [500, -32603, 'INTERNAL',           'internal',        1011, 'Internal server error.'],
  generation_failed:    [500, -32603, 'INTERNAL',           'internal',        1011, 'Generation failed after its retries; the job status names the failing window.'],
  unknown:              [500, -32603, 'UNKNOWN',            'internal',        1011, 'Unknown server error.'],
  upstream_unavailable: [502, -32004, 'UNAVAILABLE',        'feed_stale',      4009, 'Upstream unreachable.'],
  feed_unavailable:     [503, -32004, 'UNAVAILABLE',        'feed_stale',      4009, 'Feed offline or not initialized.'],
  feed_stale:           [503, -32004, 'UNAVAILABLE',        'feed_stale',      4009, 'A source has been silent for over 60 seconds.'],
  maintenance:          [503, -32010, 'UNAVAILABLE',        'maintenance',     4050, 'Scheduled maintenance.'],
  overload:             [503, -32603, 'UNAVAILABLE',        'reconnect',       1013, 'Server overloaded; try again later.'],
  reconnect:            [503, -32603, 'UNAVAILABLE',        'reconnect',       1001, 'Server going away; reconnect.'],
  conflict:             [503, -32603, 'ABORTED',            'reconnect',       1013, 'Conflicting concurrent operation; retry.'],
  account_update_pending: [503, -32603, 'UNAVAILABLE',      'reconnect',       1013, 'Account change recorded but not visible yet; check the console before retrying.'],
  status_update_pending: [503, -32603, 'UNAVAILABLE',       'reconnect',       1013, 'Status change recorded but not visible yet; check the status before retrying.'],
  storage_full:         [503, -32603, 'UNAVAILABLE',        'reconnect',       1013, 'Not enough free disk space for artifacts; retry later.'],
  region_unconfirmed:   [503, -32603, 'UNAVAILABLE',        'reconnect',       1013, 'This region cannot reach the home region to confirm API keys; retry later or use another region.'],
  upstream_timeout:     [504, -32009, 'DEADLINE_EXCEEDED',  'upstream_lag',    4009, 'Upstream missed the deadline.'],
  upstream_lag:         [504, -32009, 'DEADLINE_EXCEEDED',  'upstream_lag',    4009, 'Delivery delayed by upstream backpressure.'],
  generation_timeout:   [504, -32009, 'DEADLINE_EXCEEDED',  'upstream_lag',    4009, 'Generation still running at the deadline; the job goes on: poll its status_url or resend the request (it attaches).'],
} as const satisfies Record<string, RowSpec>;

/** Every error code; the `error` field of the HTTP error body. */
export type ErrorCode = keyof typeof ROWS;

/** One error in every protocol. */
export type ErrorRow = {
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly http: HttpErrorStatus;
  readonly jsonRpc: JsonRpcCode;
  readonly grpc: GrpcErrorName;
  readonly sse: SseCode;
  readonly ws: SendableWsCloseCode;
  /** Whether repeating the same request later may succeed (the spec's client action says retry or wait). */
  readonly retryable: boolean;
  /** Default human-readable message; the only message any 5xx ever shows. */
  readonly message: string;
  /** UTF-8 reason of the WebSocket close frame, at most 123 bytes. */
  readonly wsReason: string;
};

const HTTP_CATEGORY = new Map<number, ErrorCategory | null>(HTTP_STATUSES.map((s) => [s.code, s.category]));

function toRow(code: ErrorCode, [http, jsonRpc, grpc, sse, ws, message]: RowSpec): ErrorRow {
  const category = HTTP_CATEGORY.get(http);
  if (!category) throw new Error(`no category for HTTP ${http}`);
  // The spec's client action is "Retry"/"Wait"/"Retry with backoff" exactly for 408, 429 and 5xx.
  const retryable = http === 408 || http === 429 || http >= 500;
  // The close frame carries the same text as the message.
  const wsReason = message;
  return Object.freeze({ code, category, http, jsonRpc, grpc, sse, ws, retryable, message, wsReason });
}

/** The catalogue: one frozen row per error code. */
export const ERROR_CATALOGUE = Object.freeze(
  Object.fromEntries(Object.entries(ROWS).map(([code, spec]) => [code, toRow(code as ErrorCode, spec)])),
) as Readonly<Record<ErrorCode, ErrorRow>>;

/** The spec's cross-protocol table: scenario (as the spec writes it) → the one row reproducing it. */
export const CROSS_PROTOCOL_SCENARIOS = {
  'Invalid key': 'invalid_key',
  'Tier insufficient': 'tier_restricted',
  'Bad parameters': 'invalid_params',
  'Coin not found': 'coin_not_found',
  'Rate limited': 'rate_limited',
  'Server error': 'internal',
  Maintenance: 'maintenance',
} as const satisfies Record<string, ErrorCode>;

const SSE_TERMINAL = new Map<SseCode, boolean>(SSE_CODES.map((s) => [s.code, s.terminal]));

/** Whether the server closes the SSE connection after an error event with this code (spec table). */
export function sseTerminal(code: SseCode): boolean {
  return SSE_TERMINAL.get(code) ?? true; // unreachable for typed codes; terminal is the safe side
}

/** The one error type every layer throws; transports map it by reading `row`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  /**
   * Not enumerable: loggers walk an error's enumerable fields and treat any object with a `message`
   * as an error to tag, which a frozen row refuses (every 5xx logged would throw).
   */
  declare readonly row: ErrorRow;
  /** Field-level diagnostics (a field name and a reason); shown to HTTP clients only on 400 and 422. */
  readonly details?: Record<string, unknown>;
  /** For a 429 or 503: when a retry may succeed, seconds (see `retryAfterSeconds`). */
  retryAfterSeconds?: number;
  /** The same wait unrounded, milliseconds, where known (gRPC `retry-after-ms`; see `retryAfterMs`). */
  retryAfterMs?: number;

  /** `options.cause` keeps the underlying failure for logs; it is never sent to clients. */
  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    const row = ERROR_CATALOGUE[code];
    super(message ?? row.message, options);
    this.code = code;
    Object.defineProperty(this, 'row', { value: row, enumerable: false });
    if (details !== undefined) this.details = details;
  }
}

/** Whether `e` is an ApiError (anything else is mapped to `internal` by `toApiError`). */
export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/** Any thrown value as an ApiError: non-ApiErrors become `internal`, keeping the original as cause. */
/**
 * nats.js errors (by name) that mean NATS is not answering right now (a node lost, a leader being
 * elected, a reconnect): a transient outage, never a defect of the request or the code.
 */
export const NATS_TRANSIENT_ERRORS: ReadonlySet<string> = new Set([
  'TimeoutError',
  'NoResponders',
  'ClosedConnectionError',
  'DrainingConnectionError',
  'ConnectionError',
  'RequestError',
]);

export const isNatsTransient = (e: unknown): boolean =>
  NATS_TRANSIENT_ERRORS.has((e as Error | null)?.name ?? '');

/**
 * Any thrown value as a catalogue error: an ApiError as it is; NATS not answering as 503
 * `feed_unavailable` (retry shortly, with Retry-After), not 500; anything else `internal`.
 */
export function toApiError(e: unknown): ApiError {
  if (isApiError(e)) return e;
  if (isNatsTransient(e))
    return new ApiError('feed_unavailable', 'the data store did not answer; retry shortly', undefined, {
      cause: e,
    });
  return new ApiError('internal', undefined, undefined, { cause: e });
}

/** The message a client may see: a 5xx always shows its generic row message, never internals. */
export function publicMessage(err: ApiError): string {
  return err.row.http >= 500 ? err.row.message : err.message;
}

/** Spec "HTTP error body". */
export type HttpErrorBody = {
  error: ErrorCode;
  message: string;
  /** Present only for 400 and 422. */
  details?: Record<string, unknown>;
  request_id: string;
  /** ISO 8601. */
  timestamp: string;
};

/**
 * `Retry-After` seconds of a 429 or 503 (every one carries it: spec "HTTP statuses", "Limits");
 * null for other statuses. Without a better figure from the error itself (a rate-limit decision
 * knows its own), one second: the spec's reconnect wait when no SSE `retry` was given.
 */
export function retryAfterSeconds(err: ApiError): number | null {
  if (err.row.http !== 429 && err.row.http !== 503) return null;
  return err.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_S;
}

/** The wait of a 429 or 503 in milliseconds (its own figure, else its Retry-After's); null for other statuses. */
export function retryAfterMs(err: ApiError): number | null {
  const seconds = retryAfterSeconds(err);
  return seconds === null ? null : (err.retryAfterMs ?? seconds * 1_000);
}

/** The Retry-After of a 429 or 503 that knows no better figure, seconds. */
export const DEFAULT_RETRY_AFTER_S = 1;

/** The HTTP error body of `err`; `details` appears exactly for 400 and 422 (`{}` when none). */
export function httpErrorBody(err: ApiError, requestId: string, now: Date = new Date()): HttpErrorBody {
  const details = err.row.http === 400 || err.row.http === 422 ? { details: err.details ?? {} } : {};
  return {
    error: err.code,
    message: publicMessage(err),
    ...details,
    request_id: requestId,
    timestamp: now.toISOString(),
  };
}

/** Spec Events §2: the `data` of an SSE `event: error` message. */
/** `reason`: `key_expired` when `auth_expired` ends a stream because its key expired (else: revoked). */
export type SseErrorData = {
  code: SseCode;
  message: string;
  request_id: string;
  terminal: boolean;
  reason?: 'key_expired';
};

/** The SSE error event data of `err`; `terminal` comes from the spec's SSE table. */
export function sseErrorData(err: ApiError, requestId: string): SseErrorData {
  const code = err.row.sse;
  const data = { code, message: publicMessage(err), request_id: requestId, terminal: sseTerminal(code) };
  return err.code === 'key_expired' ? { ...data, reason: 'key_expired' } : data;
}
