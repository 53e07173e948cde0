/**
 * The dashboard proxy's stream caps. Every viewer's stream goes upstream under the process's one
 * service key, whose own cap (the Quant tier's) is shared by all viewers; so each viewer gets its
 * plan's cap across all its sessions, never more than `perViewerMax`, and the proxy refuses a new
 * stream itself once the service key's cap is reached, before upstream would. Per process, like the
 * edge guard's per-key stream count. Memory: one entry per viewer with an open stream (≤ `total`).
 */
import { ApiError } from '../../contracts/errors.ts';
import { TIER_LIMITS, type Tier } from '../../contracts/limits.ts';

/** The service key's cap (a Quant key) and the share one viewer may hold at most. */
export const SERVICE_STREAM_CAP = TIER_LIMITS.quant.concurrentStreams;
export const VIEWER_STREAM_MAX = Math.max(1, Math.floor(SERVICE_STREAM_CAP / 10));

export class ViewerStreams {
  private readonly open = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly serviceCap = SERVICE_STREAM_CAP,
    private readonly perViewerMax = VIEWER_STREAM_MAX,
  ) {}

  /** Counts one stream of `accountId` (plan `tier`); returns its release (idempotent), or throws 429. */
  acquire(accountId: string, tier: Tier): () => void {
    const cap = Math.min(TIER_LIMITS[tier].concurrentStreams, this.perViewerMax);
    const mine = this.open.get(accountId) ?? 0;
    if (mine >= cap)
      throw new ApiError(
        'subscription_limit',
        `this account already has ${mine} open dashboard streams (the ${tier} cap here is ${cap}); close one first`,
      );
    if (this.total >= this.serviceCap)
      throw new ApiError(
        'subscription_limit',
        'the dashboard proxy is at its stream capacity; retry shortly',
      );
    this.open.set(accountId, mine + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const n = (this.open.get(accountId) ?? 1) - 1;
      if (n > 0) this.open.set(accountId, n);
      else this.open.delete(accountId);
    };
  }

  streamsOf(accountId: string): number {
    return this.open.get(accountId) ?? 0;
  }
}
