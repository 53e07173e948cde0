/**
 * The JSON-RPC 2.0 envelope of every JSON-RPC surface (POST /mcp, the JSON-RPC feed edge), pure:
 * body text → calls, and the response shapes. Errors are catalogue rows (`parse_error` -32700,
 * `invalid_request` -32600, `batch_too_large` -32006, …); the code on the wire is the row's
 * `jsonRpc` column.
 *
 * Success responses come in two styles (ARCHITECTURE "MCP"): `plain` is the spec's literal shape
 * with `"error": null`; `streamable` omits `error` (strict JSON-RPC 2.0), because the official MCP
 * SDK client (which sends `Accept: …, text/event-stream`) rejects unknown keys on a success
 * response. `encodeResult` writes a strict success around a result already encoded as JSON, so a
 * result shared by many calls is encoded once.
 */
import { ApiError, publicMessage } from '../../contracts/errors.ts';
import { MAX_JSONRPC_BATCH } from '../../contracts/limits.ts';

/** A request id as the client sent it; echoed unchanged (0 and "" are valid ids). */
export type JsonRpcId = string | number | null;

/** One well-formed call. A notification (no `id` member) is never answered. */
export type JsonRpcCall = {
  id: JsonRpcId;
  method: string;
  /** `params` as sent: an object, an array or undefined. */
  params: unknown;
  notification: boolean;
};

export type ResponseStyle = 'plain' | 'streamable';

export type JsonRpcErrorObject = { code: number; message: string; data: Record<string, unknown> };
export type JsonRpcSuccess = { jsonrpc: '2.0'; id: JsonRpcId; result: unknown; error?: null };
export type JsonRpcFailure = { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcErrorObject };
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

/** A decoded body: the items of a batch (or the one item), or an error answering the whole body. */
export type DecodedBody = { ok: true; batch: boolean; items: unknown[] } | { ok: false; error: ApiError };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses the body text; empty or malformed JSON, an empty batch and an oversized batch fail here. */
export function decodeBody(text: string): DecodedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const reason = text.trim() === '' ? 'empty body' : (e as Error).message;
    return { ok: false, error: new ApiError('parse_error', `invalid JSON: ${reason}`, { reason }) };
  }
  if (!Array.isArray(value)) return { ok: true, batch: false, items: [value] };
  if (value.length === 0)
    return { ok: false, error: new ApiError('invalid_request', 'empty batch: send at least one call') };
  if (value.length > MAX_JSONRPC_BATCH)
    return {
      ok: false,
      error: new ApiError('batch_too_large', `batch of ${value.length} calls; at most ${MAX_JSONRPC_BATCH}`, {
        limit: MAX_JSONRPC_BATCH,
      }),
    };
  return { ok: true, batch: true, items: value };
}

const isId = (v: unknown): v is JsonRpcId =>
  v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

const invalid = (id: JsonRpcId, message: string) => ({
  id,
  error: new ApiError('invalid_request', message),
});

/** Reads one item of the body as a call, or the error to answer it with (and the id to echo). */
export function readCall(item: unknown): JsonRpcCall | { id: JsonRpcId; error: ApiError } {
  if (!isObject(item)) return invalid(null, 'a request must be a JSON object');
  const hasId = 'id' in item;
  if (hasId && !isId(item.id)) return invalid(null, 'id must be a string, a number or null');
  const id = hasId ? (item.id as JsonRpcId) : null;
  if (item.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (typeof item.method !== 'string' || item.method === '') return invalid(id, 'method must be a string');
  if (item.params !== undefined && (item.params === null || typeof item.params !== 'object'))
    return invalid(id, 'params must be an object or an array');
  return { id, method: item.method, params: item.params, notification: !hasId };
}

/** A success response in the caller's style. */
export function resultResponse(id: JsonRpcId, result: unknown, style: ResponseStyle): JsonRpcSuccess {
  return style === 'plain' ? { jsonrpc: '2.0', id, result, error: null } : { jsonrpc: '2.0', id, result };
}

/** An error response (never with `result`); `data` carries the catalogue code, request id and details. */
export function errorResponse(id: JsonRpcId, err: ApiError, requestId: string): JsonRpcFailure {
  const details = err.row.http < 500 ? (err.details ?? {}) : {};
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: err.row.jsonRpc,
      message: publicMessage(err),
      data: { error: err.code, request_id: requestId, ...details },
    },
  };
}

/** A strict success response around `resultJson` (already JSON), as JSON text. */
export function encodeResult(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${typeof id === 'number' ? String(id) : JSON.stringify(id)},"result":${resultJson}}`;
}

/**
 * The body of a failure of the whole request (a missing or bad key, tier or region, a body too
 * large, a rate limit, maintenance), sent with the row's real HTTP status: a JSON-RPC error with
 * id null whose data carries the catalogue code, the request id, the time and, on a 429 or 503,
 * `retry_after` in seconds (`retryAfter`: the figure of the Retry-After header, null for none).
 */
export function requestFailureBody(
  err: ApiError,
  requestId: string,
  retryAfter: number | null,
  now = new Date(),
): JsonRpcFailure {
  return {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: err.row.jsonRpc,
      message: publicMessage(err),
      data: {
        error: err.code,
        request_id: requestId,
        timestamp: now.toISOString(),
        ...(retryAfter !== null ? { retry_after: retryAfter } : {}),
      },
    },
  };
}

/** Streamable-HTTP clients announce themselves by accepting `text/event-stream`. */
export function responseStyle(accept: string | undefined): ResponseStyle {
  return accept && /\btext\/event-stream\b/i.test(accept) ? 'streamable' : 'plain';
}
