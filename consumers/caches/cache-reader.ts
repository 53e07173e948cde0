/**
 * Reads a cache's events in order from the `CACHE` stream (an ordered consumer on its subjects),
 * from a sequence up to the cache's last one. Used by the `stream_cache` tool and the Parquet
 * export; the SSE replay reads through the gateways' core loop. The stored bytes are not parsed:
 * each event's JSON is the stored bytes with `seq` spliced in front (contracts/event-wire.ts).
 */
import type { CacheManifest } from '../../contracts/caches.ts';
import { cacheFilter, parseCacheSubject } from '../../contracts/caches.ts';
import { isStoredEvent, storedJsonWithSeq } from '../../contracts/event-wire.ts';
import { STREAMS } from '../../contracts/streams.ts';
import type { Nats } from '../../platform/nats.ts';

/** One cached event: its stream sequence, type (from the subject) and JSON with `seq` first. */
export type CachedEvent = { seq: number; eventType: string; json: string };

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
    filter_subjects: cacheFilter(manifest.account_id, manifest.cache_key),
    opt_start_seq: start,
  });
  const messages = await consumer.consume({ max_messages: 5_000 });
  const stop = () => messages.stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const m of messages) {
      const seq = m.info.streamSequence;
      if (seq > manifest.last_seq) break;
      const parts = parseCacheSubject(m.subject);
      if (parts && isStoredEvent(m.data))
        yield { seq, eventType: parts.eventType, json: storedJsonWithSeq(m.data, seq) };
      if (seq === manifest.last_seq) break;
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    messages.stop();
  }
}
