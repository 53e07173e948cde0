/**
 * A projection write that never moves a record backwards. Each record carries `seq`, the stream
 * sequence of the event it reflects; a write of event `seq` lands only if the stored record is
 * older (or absent), and it lands by compare-and-set on the KV revision just read, so two
 * projectors racing on one key cannot interleave an older value over a newer one: the loser re-reads
 * and finds the newer record. Hence any number of projectors (one per HTTP gateway, restarted ones
 * replaying from sequence 1) converge on the same records, and no reader ever sees one go back.
 */
import type { KV } from '@nats-io/kv';
import { decode, encode } from './msgpack.ts';

export type WriteOutcome = 'written' | 'skipped';

/** JetStream's "wrong last sequence" (another writer got there first). */
const WRONG_LAST_SEQUENCE = [10071, 10164];

function isConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    (typeof code === 'number' && WRONG_LAST_SEQUENCE.includes(code)) ||
    /wrong last sequence/i.test(String((err as Error | null)?.message))
  );
}

function storedSeq(value: Uint8Array): number {
  try {
    const seq = (decode<{ seq?: unknown }>(value) as { seq?: unknown } | null)?.seq;
    return typeof seq === 'number' ? seq : 0;
  } catch {
    return 0;
  }
}

/** Conflicts in a row before giving up (each means a newer writer made progress). */
const MAX_CONFLICTS = 20;

/**
 * Writes `value` (stamped with `seq`) at `key` unless the stored record reflects `seq` or a later
 * event; with `onlyIfAbsent`, unless any record is stored. Throws what KV throws (the caller decides
 * whether to retry).
 */
export async function writeIfNewer(
  kv: KV,
  key: string,
  value: { seq: number },
  opts: { onlyIfAbsent?: boolean } = {},
): Promise<WriteOutcome> {
  const bytes = encode(value);
  for (let conflicts = 0; ; conflicts++) {
    const entry = await kv.get(key);
    const live = entry !== null && entry.operation === 'PUT' && entry.value.length > 0;
    if (live && (opts.onlyIfAbsent || storedSeq(entry.value) >= value.seq)) return 'skipped';
    try {
      if (entry && entry.revision > 0) await kv.update(key, bytes, entry.revision);
      else await kv.create(key, bytes);
      return 'written';
    } catch (err) {
      if (!isConflict(err) || conflicts >= MAX_CONFLICTS) throw err;
    }
  }
}
