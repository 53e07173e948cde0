/** Request ids: `req_` + 20 random hex characters; a well-formed incoming x-request-id is kept. */
import { randomBytes } from 'node:crypto';

const INCOMING = /^[A-Za-z0-9_.:-]{8,128}$/;

export function newRequestId(): string {
  return `req_${randomBytes(10).toString('hex')}`;
}

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && INCOMING.test(header) ? header : newRequestId();
}
