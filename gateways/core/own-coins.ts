/**
 * Coins a viewer may name in a coin filter besides the platform's known ones: those its own
 * account has published (`stream: true`). Read from `OWN`'s subject index with ONE
 * `STREAM.INFO` for the whole account (`own.<account>.*.*.*`), whatever the number of coins asked
 * about, and only when some coin is not the platform's: no per-account state is held in memory
 * between subscriptions. Another account's coins stay unknown (coin_not_found), exactly as if
 * they did not exist. A caller that has gone (its signal aborted) stops before the request and
 * gets the abort as the error.
 */
import { STREAMS } from '../../contracts/streams.ts';
import { ownCoinFilter } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';

/** The symbols the viewer's own account has events under (empty without a viewer). */
export async function ownCoins(
  nats: Nats,
  viewer: string | null,
  signal?: AbortSignal,
): Promise<ReadonlySet<string>> {
  if (!viewer) return new Set();
  signal?.throwIfAborted();
  const info = await nats.jsm.streams.info(STREAMS.OWN, { subjects_filter: ownCoinFilter(viewer, '*') });
  signal?.throwIfAborted();
  const coins = new Set<string>();
  // own.<account>.<source>.<symbol>.<event_type>
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const symbol = subject.split('.')[3];
    if (symbol) coins.add(symbol);
  }
  return coins;
}

/**
 * The viewer's own coins, asked about `spellings` (the coins a subscription names that the platform
 * does not know, each as given and upper case): a set holding those of them the account owns.
 */
export type OwnCoinLookup = (spellings: readonly string[]) => Promise<ReadonlySet<string>>;

/** A lookup that asks JetStream at most once, when first needed (one request, or one subscription). */
export function ownCoinLookup(nats: Nats, viewer: string | null, signal?: AbortSignal): OwnCoinLookup {
  let pending: Promise<ReadonlySet<string>> | null = null;
  return () => {
    pending ??= ownCoins(nats, viewer, signal);
    return pending;
  };
}

/**
 * A lookup for a long-lived subscription that changes (gRPC `Stream`): coins found before are
 * remembered, and JetStream is asked (once) only when a spelling was not found before, so a change
 * of subscription never resolves again the coins it already had.
 */
export function rememberingLookup(nats: Nats, viewer: string | null, signal?: AbortSignal): OwnCoinLookup {
  // Only the latest question's answers are remembered: bounded like a subscription's coins.
  let found: ReadonlySet<string> = new Set();
  let missed: ReadonlySet<string> = new Set();
  return async (spellings) => {
    const fresh = spellings.some((c) => !found.has(c) && !missed.has(c));
    const own = fresh ? await ownCoins(nats, viewer, signal) : found;
    found = new Set(spellings.filter((c) => own.has(c)));
    missed = new Set(spellings.filter((c) => !own.has(c)));
    return found;
  };
}
