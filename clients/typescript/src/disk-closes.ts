/**
 * The disk-sync close codes (docs/transports/disksync.md, contracts/errors.ts `ws` column) as the
 * iterator reads them: reconnect and resume with `from_seq`, or stop with the typed error. The
 * server sends an `error` frame with the catalogue code and request id before its own closes; the
 * codes here name the closes that come without one (a dropped connection is 1006).
 */
import type { MdpErrorCode } from './errors.ts';

export type CloseAction = { retry: boolean; code: MdpErrorCode };

// biome-ignore format: a table
const CLOSES: Readonly<Record<number, CloseAction>> = {
  1000: { retry: true,  code: 'network_error' },        // the server ended the connection
  1001: { retry: true,  code: 'reconnect' },            // server shutdown
  1006: { retry: true,  code: 'network_error' },        // lost without a close frame
  1011: { retry: true,  code: 'internal' },
  1013: { retry: true,  code: 'overload' },             // too slow a consumer: what arrived has no gap
  4007: { retry: true,  code: 'heartbeat_timeout' },
  4009: { retry: true,  code: 'upstream_unavailable' },
  4029: { retry: true,  code: 'rate_limited' },
  4050: { retry: true,  code: 'maintenance' },
  1002: { retry: false, code: 'invalid_request' },
  1003: { retry: false, code: 'parse_error' },
  1008: { retry: false, code: 'policy_violation' },
  1009: { retry: false, code: 'frame_too_large' },
  4001: { retry: false, code: 'invalid_key' },
  4002: { retry: false, code: 'key_revoked' },
  4003: { retry: false, code: 'tier_restricted' },
  4004: { retry: false, code: 'coin_not_found' },
  4005: { retry: false, code: 'invalid_params' },
  4006: { retry: false, code: 'subscription_limit' },
  4008: { retry: false, code: 'duplicate_connection' },
};

/** What a close means; an unknown code is retried as a lost connection. */
export const closeAction = (code: number): CloseAction =>
  CLOSES[code] ?? { retry: true, code: 'network_error' };

/** The close code of another connection holding the key's one-connection lease. */
export const DUPLICATE_CONNECTION = 4008;
