/**
 * A stream's messages re-framed as `FeedMessage.batch` (a Subscription with `batch: true`): a
 * run of gRPC message frames (frames.ts) becomes fewer frames, each one `FeedMessage` whose
 * `batch` (field 7) holds the run's `FeedMessage`s in order (`FeedBatch.messages`, field 1), up
 * to MAX_BATCH_BYTES a batch. A message that would be alone in its batch goes as it is. Each
 * message's bytes are copied once, behind its new tag and length; none is decoded. gRPC's
 * per-message cost (on grpc-js: several layers of callbacks per message at the client) is then
 * paid once per batch instead of once per event, which is what a catch-up of history is bound by.
 */

import { varintLength, writeVarint } from './varint.ts';

/** FeedMessage.batch: field 7, length-delimited. */
export const BATCH_TAG = 0x3a;
/** FeedBatch.messages: field 1, length-delimited. */
export const MESSAGE_TAG = 0x0a;
/** Most bytes of one batch's messages: below the sink's write pieces and any client's message cap. */
export const MAX_BATCH_BYTES = 60 * 1024;

/**
 * A shared chunk (the same Buffer written to every stream of one selection in a flush,
 * gateways/core/flusher.ts) is folded once for all of its batching streams, not once per stream.
 */
const folded = new WeakMap<Buffer, Buffer>();

/** `batchFrames` of a chunk a flush shares between streams, folded once. */
export function batchSharedFrames(wire: Buffer): Buffer {
  let out = folded.get(wire);
  if (!out) {
    out = batchFrames(wire);
    folded.set(wire, out);
  }
  return out;
}

/** The frames of `wire` (gRPC length-prefixed messages, uncompressed) with runs folded into batches. */
export function batchFrames(wire: Buffer): Buffer {
  const runs = runsOf(wire);
  if (runs.every((r) => r.count === 1)) return wire; // nothing to fold (none, or one message a run)
  let size = 0;
  for (const r of runs) size += r.count === 1 ? r.bytes : 5 + 1 + varintLength(r.inner) + r.inner;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const r of runs) {
    if (r.count === 1) {
      at += wire.copy(out, at, r.from, r.from + r.bytes);
      continue;
    }
    out[at] = 0;
    out.writeUInt32BE(1 + varintLength(r.inner) + r.inner, at + 1);
    out[at + 5] = BATCH_TAG;
    at = writeVarint(out, at + 6, r.inner);
    for (let f = r.from; f < r.from + r.bytes; ) {
      const len = wire.readUInt32BE(f + 1);
      out[at] = MESSAGE_TAG;
      at = writeVarint(out, at + 1, len);
      at += wire.copy(out, at, f + 5, f + 5 + len);
      f += 5 + len;
    }
  }
  return out;
}

/** A run of frames in one batch: where it starts, its frame bytes, its messages and their batch bytes. */
type Run = { from: number; bytes: number; count: number; inner: number };

function runsOf(wire: Buffer): Run[] {
  const runs: Run[] = [];
  let run: Run | null = null;
  for (let at = 0; at + 5 <= wire.length; ) {
    const len = wire.readUInt32BE(at + 1);
    const item = 1 + varintLength(len) + len;
    if (!run || run.inner + item > MAX_BATCH_BYTES) {
      run = { from: at, bytes: 0, count: 0, inner: 0 };
      runs.push(run);
    }
    run.bytes += 5 + len;
    run.count++;
    run.inner += item;
    at += 5 + len;
  }
  return runs;
}
