/**
 * Reads a cache's events in order from the `CACHE` stream (an ordered consumer on its subject),
 * from a sequence up to the cache's last one. Used by the SSE replay and the Parquet export.
 */
import type { CacheManifest } from '../../contracts/caches.ts';
import { cacheSubject } from '../../contracts/caches.ts';
import type { MarketEvent } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { decode } from '../../platform/codec.ts';
import type { Nats } from '../../platform/nats.ts';

export type CachedEvent = { seq: number; event: MarketEvent };

/** Events with sequence ≥ `fromSeq` (default: the first), oldest first; pulls in batches. */
export async function* readCache(
  nats: Nats,
  manifest: CacheManifest,
  fromSeq = manifest.first_seq,
  signal?: AbortSignal,
): AsyncGenerator<CachedEvent> {
  const start = Math.max(fromSeq, manifest.first_seq);
  if (start > manifest.last_seq) return;
  const consumer = await nats.js.consumers.get(STREAMS.CACHE, {
    filter_subjects: cacheSubject(manifest.account_id, manifest.cache_key),
    opt_start_seq: start,
  });
  const messages = await consumer.consume({ max_messages: 5_000 });
  const stop = () => messages.stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const m of messages) {
      const seq = m.info.streamSequence;
      if (seq > manifest.last_seq) break;
      yield { seq, event: decode<MarketEvent>(m.data) };
      if (seq === manifest.last_seq) break;
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    messages.stop();
  }
}
