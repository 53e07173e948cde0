/**
 * Where each surface takes its credential from (spec "Authentication" §3): `x-api-key` everywhere;
 * `Authorization: Bearer` on the unified stream and gRPC; the `api_key` query only on the
 * disk-sync WebSocket (and it is redacted from every log line).
 */
import type { GuardRequest } from './guard.ts';

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** The token of an `Authorization: Bearer <token>` header (API key or session token), or null. */
export function bearerToken(authorization: string | string[] | undefined): string | null {
  const auth = first(authorization);
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? (m[1] as string) : null;
}

export function presentedCredential(req: Pick<GuardRequest, 'surface' | 'headers' | 'query'>): string | null {
  const header = first(req.headers['x-api-key'])?.trim();
  if (header) return header;
  if (req.surface === 'unified' || req.surface === 'grpc') {
    const token = bearerToken(req.headers.authorization);
    if (token) return token;
  }
  if (req.surface === 'disksync' && typeof req.query.api_key === 'string' && req.query.api_key)
    return req.query.api_key;
  return null;
}
