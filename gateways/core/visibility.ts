/**
 * Who may see which event, decided here once for every transport (SSE today; JSON-RPC, gRPC and
 * WebSocket read the same core). The platform's feed (owner null) is for every admitted key; an
 * event an account normalized with `stream: true` is its own, visible only to keys of that same
 * account. A viewer without an account (the open guard of benchmarks) sees the platform's feed
 * only. Pure.
 */
import type { Principal } from './guard.ts';

/** The account whose own events a principal may see besides the platform's (null: none). */
export const viewerOf = (principal: Pick<Principal, 'accountId'>): string | null =>
  principal.accountId ?? null;

export function visibleTo(owner: string | null, viewer: string | null | undefined): boolean {
  return owner === null || (viewer != null && owner === viewer);
}
