import {
  ClosedConnectionError,
  ConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  CROSS_PROTOCOL_SCENARIOS,
  ERROR_CATALOGUE,
  type ErrorCode,
  type ErrorRow,
  GRPC_STATUS_NUMBER,
  GRPC_STATUSES,
  HTTP_STATUSES,
  httpErrorBody,
  isApiError,
  JSON_RPC_CODES,
  retryAfterSeconds,
  SERVER_RESET,
  SSE_CODES,
  type SseCode,
  sseErrorData,
  sseTerminal,
  toApiError,
  WS_CLOSE_CODES,
  WS_RESERVED_CLOSE_CODES,
} from '../../contracts/errors.ts';

// Copied from SPEC.md "Cross-protocol mapping".
// biome-ignore format: the spec's table
const SPEC_CROSS_PROTOCOL = [
  ['Invalid key',       401, -32001, 'UNAUTHENTICATED',    'auth_failed',     4001],
  ['Tier insufficient', 403, -32002, 'PERMISSION_DENIED',  'tier_restricted', 4003],
  ['Bad parameters',    400, -32602, 'INVALID_ARGUMENT',   'coin_not_found',  4005],
  ['Coin not found',    404, -32003, 'NOT_FOUND',          'coin_not_found',  4004],
  ['Rate limited',      429, -32000, 'RESOURCE_EXHAUSTED', 'rate_limit',      4029],
  ['Server error',      500, -32603, 'INTERNAL',           'internal',        1011],
  ['Maintenance',       503, -32010, 'UNAVAILABLE',        'maintenance',     4050],
] as const;

// Copied from SPEC.md "Errors": the codes of each table.
const SPEC_HTTP = [200, 201, 204, 400, 401, 403, 404, 405, 408, 413, 422, 429, 500, 502, 503, 504];
/** Statuses the platform adds to the spec's table, each documented in errors.ts. */
const EXTENSION_HTTP = [409, 416];
const ALL_HTTP = [...SPEC_HTTP, ...EXTENSION_HTTP].sort((a, b) => a - b);
const SPEC_JSON_RPC: Record<number, string> = {
  [-32700]: 'Parse Error',
  [-32600]: 'Invalid Request',
  [-32601]: 'Method Not Found',
  [-32602]: 'Invalid Params',
  [-32603]: 'Internal Error',
  [-32000]: 'Rate Limit Exceeded',
  [-32001]: 'Authentication Failed',
  [-32002]: 'Tier Restricted',
  [-32003]: 'Coin Not Found',
  [-32004]: 'Feed Unavailable',
  [-32005]: 'Subscription Limit',
  [-32006]: 'Batch Too Large',
  [-32007]: 'Snapshot Too Large',
  [-32008]: 'Invalid Time Range',
  [-32009]: 'Upstream Timeout',
  [-32010]: 'Maintenance Mode',
};
// biome-ignore format: name → number
const SPEC_GRPC: Record<string, number> = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
};
// biome-ignore format: code → terminal
const SPEC_SSE: Record<string, boolean> = {
  auth_failed: true, auth_expired: true, rate_limit: true, tier_restricted: true, coin_not_found: false,
  feed_stale: false, upstream_lag: false, internal: true, maintenance: true, reconnect: true,
};
// biome-ignore format: number list
const SPEC_WS = [1000, 1001, 1002, 1003, 1006, 1008, 1009, 1011, 1013,
  4001, 4002, 4003, 4004, 4005, 4006, 4007, 4008, 4009, 4029, 4050];

const rows: ErrorRow[] = Object.values(ERROR_CATALOGUE);
const sorted = (xs: Iterable<number | string>) => [...new Set(xs)].sort();

describe('the error catalogue reproduces the spec cross-protocol table', () => {
  it.each(SPEC_CROSS_PROTOCOL)('%s: HTTP %i, JSON-RPC %i, gRPC %s, SSE %s, WS %i', (scenario, ...codes) => {
    const code: ErrorCode = CROSS_PROTOCOL_SCENARIOS[scenario];
    const row = ERROR_CATALOGUE[code];
    expect([row.http, row.jsonRpc, row.grpc, row.sse, row.ws]).toEqual(codes);
  });

  it('names every scenario of the spec and no other', () => {
    expect(Object.keys(CROSS_PROTOCOL_SCENARIOS).sort()).toEqual(SPEC_CROSS_PROTOCOL.map((r) => r[0]).sort());
  });

  // A row may specialise a scenario (same codes everywhere, its own name and message); each such
  // row is listed here, so a new duplicate has to be a deliberate choice.
  const SPECIALISATIONS: Record<string, string[]> = { internal: ['generation_failed'] };

  it('has exactly one row for each scenario, besides the listed specialisations', () => {
    for (const [scenario, ...codes] of SPEC_CROSS_PROTOCOL) {
      const matches = rows
        .filter((r) => `${[r.http, r.jsonRpc, r.grpc, r.sse, r.ws]}` === `${codes}`)
        .map((r) => r.code);
      const primary = CROSS_PROTOCOL_SCENARIOS[scenario as keyof typeof CROSS_PROTOCOL_SCENARIOS];
      expect(matches.sort(), `${codes}`).toEqual([primary, ...(SPECIALISATIONS[primary] ?? [])].sort());
    }
  });
});

describe('the protocol tables restate the spec', () => {
  it('lists the spec HTTP statuses', () => {
    expect(HTTP_STATUSES.map((s) => s.code)).toEqual(ALL_HTTP);
  });

  it('has unique JSON-RPC codes, each with the spec name', () => {
    const codes = JSON_RPC_CODES.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(new Set(JSON_RPC_CODES.map((c) => c.name)).size).toBe(codes.length);
    expect(Object.fromEntries(JSON_RPC_CODES.map((c) => [c.code, c.name]))).toEqual(SPEC_JSON_RPC);
  });

  it('lists the spec gRPC statuses with their numbers', () => {
    expect(Object.fromEntries(GRPC_STATUSES.map((s) => [s.name, s.number]))).toEqual(SPEC_GRPC);
    expect(GRPC_STATUS_NUMBER).toEqual(SPEC_GRPC);
  });

  it('lists the spec SSE codes with their terminal flags', () => {
    expect(Object.fromEntries(SSE_CODES.map((s) => [s.code, s.terminal]))).toEqual(SPEC_SSE);
    for (const [code, terminal] of Object.entries(SPEC_SSE)) {
      expect(sseTerminal(code as SseCode)).toBe(terminal);
    }
  });

  it('lists the spec WebSocket close codes', () => {
    expect(WS_CLOSE_CODES.map((c) => c.code)).toEqual(SPEC_WS);
  });
});

describe('every code of the spec tables is reachable, and only those', () => {
  it('uses every 4xx/5xx HTTP status and no other', () => {
    expect(sorted(rows.map((r) => r.http))).toEqual(sorted(ALL_HTTP.filter((s) => s >= 400)));
  });

  it('uses every JSON-RPC code and no other', () => {
    expect(sorted(rows.map((r) => r.jsonRpc))).toEqual(sorted(Object.keys(SPEC_JSON_RPC).map(Number)));
  });

  it('uses every gRPC status except OK and no other', () => {
    expect(sorted(rows.map((r) => r.grpc))).toEqual(sorted(Object.keys(SPEC_GRPC).filter((n) => n !== 'OK')));
  });

  it('uses every SSE code and no other', () => {
    expect(sorted(rows.map((r) => r.sse))).toEqual(sorted(Object.keys(SPEC_SSE)));
  });

  it('uses every sendable WebSocket close code and never 1006, which RFC 6455 forbids sending', () => {
    const reserved: readonly number[] = WS_RESERVED_CLOSE_CODES;
    expect(reserved).toEqual([1006]);
    expect(sorted(rows.map((r) => r.ws))).toEqual(sorted(SPEC_WS.filter((c) => !reserved.includes(c))));
  });
});

describe('catalogue rows', () => {
  it('are keyed by their snake_case code', () => {
    for (const [key, row] of Object.entries(ERROR_CATALOGUE)) {
      expect(row.code).toBe(key);
      expect(key).toMatch(/^[a-z]+(_[a-z]+)*$/);
    }
  });

  it('take category from the spec HTTP table and are retryable exactly when its client action retries', () => {
    for (const row of rows) {
      const status = HTTP_STATUSES.find((s) => s.code === row.http);
      expect(row.category, row.code).toBe(status?.category);
      expect(row.retryable, row.code).toBe(/^(Retry|Wait|Try)/.test(status?.clientAction ?? ''));
    }
  });

  it('have WebSocket close reasons of at most 123 UTF-8 bytes', () => {
    for (const row of rows) {
      expect(row.wsReason.length, row.code).toBeGreaterThan(0);
      expect(Buffer.byteLength(row.wsReason, 'utf8'), row.code).toBeLessThanOrEqual(123);
    }
  });

  it('map revocation to SSE auth_expired and WS 4002, still 401 / UNAUTHENTICATED', () => {
    const row = ERROR_CATALOGUE.key_revoked;
    expect([row.http, row.grpc, row.sse, row.ws]).toEqual([401, 'UNAUTHENTICATED', 'auth_expired', 4002]);
  });
});

describe('ApiError', () => {
  it('defaults its message to the row and keeps code, row and details', () => {
    const err = new ApiError('coin_not_found', undefined, { field: 'coin' });
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe(ERROR_CATALOGUE.coin_not_found.message);
    expect(err.row).toBe(ERROR_CATALOGUE.coin_not_found);
    expect(err.details).toEqual({ field: 'coin' });
    expect(isApiError(err)).toBe(true);
    expect(isApiError(new Error('x'))).toBe(false);
  });

  it('wraps foreign errors as internal, keeping the cause', () => {
    const cause = new Error('db password wrong');
    const err = toApiError(cause);
    expect(err.code).toBe('internal');
    expect(err.cause).toBe(cause);
    const own = new ApiError('rate_limited');
    expect(toApiError(own)).toBe(own);
  });

  it('answers NATS not answering (nats.js timeouts, no responders, a closed connection) as 503, not 500', () => {
    const natsErrors = [
      new TimeoutError(),
      new RequestError('no responders', { cause: new NoRespondersError('$JS.API.INFO') }),
      new ClosedConnectionError(),
      new ConnectionError('connection refused'),
    ];
    for (const cause of natsErrors) {
      const err = toApiError(cause);
      expect(err.code, cause.name).toBe('feed_unavailable');
      expect(err.row.http).toBe(503);
      expect(retryAfterSeconds(err)).toBe(1);
      expect(err.cause).toBe(cause);
    }
  });
});

describe('httpErrorBody', () => {
  const now = new Date('2025-01-02T03:04:05.678Z');

  it('carries details for 400 and 422, {} when none were given', () => {
    const body = httpErrorBody(
      new ApiError('invalid_params', 'depth must be an integer', { field: 'depth' }),
      'r1',
      now,
    );
    expect(body).toEqual({
      error: 'invalid_params',
      message: 'depth must be an integer',
      details: { field: 'depth' },
      request_id: 'r1',
      timestamp: '2025-01-02T03:04:05.678Z',
    });
    expect(httpErrorBody(new ApiError('unprocessable'), 'r2', now).details).toEqual({});
  });

  it('omits details for every other status, even when given', () => {
    for (const code of ['invalid_key', 'coin_not_found', 'payload_too_large', 'rate_limited'] as const) {
      expect(httpErrorBody(new ApiError(code, undefined, { x: 1 }), 'r', now), code).not.toHaveProperty(
        'details',
      );
    }
  });

  it('never echoes a custom message on a 5xx', () => {
    for (const row of rows.filter((r) => r.http >= 500)) {
      const body = httpErrorBody(new ApiError(row.code, 'ECONNREFUSED 10.0.0.7:4222'), 'r', now);
      expect(body.message, row.code).toBe(row.message);
    }
  });

  it('always has a request id and an ISO 8601 timestamp', () => {
    const body = httpErrorBody(new ApiError('forbidden'), 'req-42');
    expect(body.request_id).toBe('req-42');
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });
});

describe('the server reset of an unread gRPC stream', () => {
  it('is said in the catalogue: RST_STREAM CANCEL, reported as CANCELLED, to be treated as UNAVAILABLE', () => {
    expect(SERVER_RESET).toEqual({ http2Code: 8, grpc: 'CANCELLED', treatAs: 'UNAVAILABLE' });
    // The spec's CANCELLED means "Client cancelled": the catalogue's own rows never send it for a server condition.
    const serverRows = rows.filter((r) => r.grpc === 'CANCELLED' && r.code !== 'cancelled');
    expect(serverRows).toEqual([]);
    expect(GRPC_STATUS_NUMBER[SERVER_RESET.treatAs]).toBe(14);
  });
});

describe('retryAfterSeconds', () => {
  it('gives every 429 and 503 a whole number of seconds ≥ 1, and nothing else one', () => {
    for (const row of rows) {
      const seconds = retryAfterSeconds(new ApiError(row.code));
      if (row.http === 429 || row.http === 503) {
        expect(Number.isInteger(seconds), row.code).toBe(true);
        expect(seconds, row.code).toBeGreaterThanOrEqual(1);
      } else expect(seconds, row.code).toBeNull();
    }
  });

  it("prefers the error's own figure", () => {
    const err = new ApiError('overload');
    err.retryAfterSeconds = 7;
    expect(retryAfterSeconds(err)).toBe(7);
  });
});

describe('sseErrorData', () => {
  it('takes code from the row and terminal from the spec SSE table', () => {
    for (const row of rows) {
      const data = sseErrorData(new ApiError(row.code), 'r');
      expect(data).toEqual({
        code: row.sse,
        message: row.message,
        request_id: 'r',
        terminal: SPEC_SSE[row.sse],
        // auth_expired covers a revoked and an expired key: the reason says which.
        ...(row.code === 'key_expired' ? { reason: 'key_expired' } : {}),
      });
    }
  });

  it('never echoes a custom message on a 5xx', () => {
    expect(sseErrorData(new ApiError('internal', 'stack trace'), 'r').message).toBe('Internal server error.');
    expect(sseErrorData(new ApiError('coin_not_found', 'unknown coin FOO'), 'r').message).toBe(
      'unknown coin FOO',
    );
  });
});
