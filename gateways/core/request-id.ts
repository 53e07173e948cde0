/** Request ids: `req_` + 20 random hex characters; a well-formed incoming x-request-id is kept. */
import { randomUUID } from 'node:crypto';

const INCOMING = /^[A-Za-z0-9_.:-]{8,128}$/;

/**
 * 80 random bits: the fully random hex digits of a v4 UUID (its version and variant digits left
 * out). `randomUUID` draws from a cached pool of entropy, an order of magnitude cheaper than
 * `randomBytes(10)`, on every request of every surface.
 */
export function newRequestId(): string {
  const u = randomUUID();
  return `req_${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(24, 32)}`;
}

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && INCOMING.test(header) ? header : newRequestId();
}
