/**
 * The client's one error type. Every failure the platform answers carries its error body's `code`
 * (the catalogue's `ErrorCode` for HTTP, the spec's `SseCode` mid-stream) and `request_id`, so a
 * support request can name the exact call. Failures the platform never answered (network, a body
 * that is not the error body) get codes of their own. No Node-only imports: browsers use it too.
 */
import type { ErrorCode, SseCode } from '@mdp/contracts/errors';

/** Codes of failures that never reached the platform or that it did not describe. */
export type ClientErrorCode = 'network_error' | 'invalid_response' | 'aborted';

export type MdpErrorCode = ErrorCode | SseCode | ClientErrorCode;

export type MdpErrorInit = {
  status?: number | null;
  requestId?: string | null;
  details?: Record<string, unknown>;
  retryAfterSeconds?: number | null;
  terminal?: boolean;
  cause?: unknown;
};

export class MdpError extends Error {
  override readonly name = 'MdpError';
  readonly code: MdpErrorCode;
  /** HTTP status; null mid-stream and for failures without a response. */
  readonly status: number | null;
  /** The error body's `request_id` (or the `x-request-id` header); null when there was none. */
  readonly requestId: string | null;
  /** Field-level diagnostics (400 and 422). */
  readonly details: Record<string, unknown> | undefined;
  /** `Retry-After` of a 429 or 503, seconds. */
  readonly retryAfterSeconds: number | null;
  /** Mid-stream errors: whether the server closed the stream after it. */
  readonly terminal: boolean;

  constructor(code: MdpErrorCode, message: string, init: MdpErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.status = init.status ?? null;
    this.requestId = init.requestId ?? null;
    this.details = init.details;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.terminal = init.terminal ?? true;
  }
}

export const isMdpError = (e: unknown): e is MdpError => e instanceof MdpError;

type ErrorBody = { error?: unknown; message?: unknown; request_id?: unknown; details?: unknown };

function retryAfter(res: Response): number | null {
  const v = res.headers.get('retry-after');
  if (v === null) return null;
  const n = Number(v);
  if (Number.isFinite(n)) return Math.max(0, n);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}

/** The MdpError of a non-2xx response, from the spec's error body (`{error, message, request_id, …}`). */
export async function errorFromResponse(res: Response): Promise<MdpError> {
  const text = await res.text().catch(() => '');
  let body: ErrorBody = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as ErrorBody;
  } catch {
    // not JSON: described below as invalid_response
  }
  const requestId = typeof body.request_id === 'string' ? body.request_id : res.headers.get('x-request-id');
  const init: MdpErrorInit = { status: res.status, requestId, retryAfterSeconds: retryAfter(res) };
  if (body.details && typeof body.details === 'object')
    init.details = body.details as Record<string, unknown>;
  if (typeof body.error !== 'string')
    return new MdpError('invalid_response', `HTTP ${res.status} without the error body`, init);
  const message = typeof body.message === 'string' ? body.message : `HTTP ${res.status}`;
  return new MdpError(body.error as ErrorCode, message, init);
}

/** A failure that got no response at all (connection refused or cut, DNS, TLS). */
export function networkError(cause: unknown): MdpError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new MdpError('network_error', `no response: ${message}`, { cause });
}
