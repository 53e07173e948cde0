/**
 * Reads a cache's events in order from the `CACHE` stream, from a sequence up to the cache's last
 * one, through the one ordered reader (platform/ordered-reader.ts: reopens across NATS restarts,
 * never a duplicate). Used by the `stream_cache` tool and the Parquet export; the SSE replay
 * reads through the gateways' core loop. The stored bytes are not parsed: each event's JSON is
 * the stored bytes with `seq` spliced in front (contracts/event-wire.ts).
 */
import type { CacheManifest } from '../../contracts/caches.ts';
import { cacheFilter, parseCacheSubject } from '../../contracts/caches.ts';
import { isStoredEvent, storedJsonWithSeq } from '../../contracts/event-wire.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';

/** One cached event: its stream sequence, type (from the subject) and JSON with `seq` first. */
export type CachedEvent = { seq: number; eventType: string; json: string };

/** Events read ahead of the consumer at most (the reader waits beyond it). */
const READ_AHEAD = 5_000;

/** Events with sequence ≥ `fromSeq` (default: the first), oldest first. */
export async function* readCache(
  nats: Nats,
  manifest: CacheManifest,
  fromSeq = manifest.first_seq,
  signal?: AbortSignal,
  log: Logger = createLogger('silent'),
): AsyncGenerator<CachedEvent> {
  const start = Math.max(fromSeq, manifest.first_seq);
  if (start > manifest.last_seq || signal?.aborted) return;
  const ahead: CachedEvent[] = [];
  let finished = false;
  // Who waits for whom: the consumer for an event, the reader for room ahead.
  const waiting: { consumer: (() => void) | null; reader: (() => void) | null } = {
    consumer: null,
    reader: null,
  };
  const wake = () => {
    waiting.consumer?.();
    waiting.consumer = null;
  };
  const makeRoom = () => {
    waiting.reader?.();
    waiting.reader = null;
  };
  const reader = readOrdered(
    nats,
    { stream: STREAMS.CACHE, filter: cacheFilter(manifest.account_id, manifest.cache_key), startSeq: start },
    (m) => {
      const seq = m.info.streamSequence;
      const parts = seq <= manifest.last_seq ? parseCacheSubject(m.subject) : null;
      if (parts && isStoredEvent(m.data))
        ahead.push({ seq, eventType: parts.eventType, json: storedJsonWithSeq(m.data, seq) });
      if (seq >= manifest.last_seq) {
        finished = true;
        reader.stop();
      }
      wake();
      if (ahead.length < READ_AHEAD) return;
      return new Promise<void>((resolve) => {
        waiting.reader = resolve;
      });
    },
    log,
  );
  const stop = () => {
    finished = true;
    reader.stop();
    makeRoom();
    wake();
  };
  signal?.addEventListener('abort', stop, { once: true });
  reader.done.then(() => {
    finished = true;
    wake();
  });
  try {
    for (;;) {
      const next = ahead.shift();
      if (next) {
        if (ahead.length < READ_AHEAD / 2) makeRoom();
        yield next;
        continue;
      }
      if (finished || signal?.aborted) return;
      await new Promise<void>((resolve) => {
        waiting.consumer = resolve;
      });
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    stop();
  }
}
