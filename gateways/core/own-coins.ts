/**
 * Coins a viewer may name in a coin filter besides the platform's known ones: those its own
 * account has published (`stream: true`). Looked up in the stream's subject index, only for a
 * coin the platform does not know, so no per-account state is held in memory; another account's
 * coins stay unknown (coin_not_found), exactly as if they did not exist.
 */
import { STREAMS } from '../../contracts/streams.ts';
import { accountCoinFilter } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';

export async function ownsCoin(nats: Nats, viewer: string | null, coin: string): Promise<boolean> {
  if (!viewer) return false;
  const info = await nats.jsm.streams.info(STREAMS.MD, { subjects_filter: accountCoinFilter(viewer, coin) });
  return Object.keys(info.state.subjects ?? {}).length > 0;
}
