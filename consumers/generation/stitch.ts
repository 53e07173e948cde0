/**
 * The stitch: Parquet part files → one Parquet file, without decoding a row. Each part's column
 * chunks are copied byte for byte (compressed as written, ZSTD) and one footer is written whose
 * row groups are the parts' row groups, in part order, their offsets moved to where the copy put
 * them. Merging costs a sequential copy, whatever the codec.
 *
 * `planStitch` needs only the parts' footers (so a stitcher never reads a part twice, and the
 * artifact's size is known before the first byte is copied); `stitchBytes` streams the file.
 * `stitchToStore` copies parts as they arrive, and writes the footer after the last one.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import {
  footerStart,
  MAGIC,
  movedRowGroups,
  numRows,
  parseFileMetaData,
  schemaBytes,
  stitchedFileMetaData,
  TRAILER_BYTES,
  trailer,
} from './parquet-footer.ts';

/** A part to stitch: its FileMetaData and a way to read the bytes before it. */
export type StitchPart = {
  /** The part's FileMetaData (Thrift compact), as at the end of its file. */
  readonly footer: Uint8Array;
  /** Bytes between the leading `PAR1` and the footer (the column chunks). */
  readonly bodyLength: number;
  /** Streams those bytes. */
  body(): AsyncIterable<Uint8Array>;
};

/** The stitched file: its size, rows and closing bytes (FileMetaData, length, `PAR1`). */
export type StitchPlan = { readonly bytes: number; readonly rows: number; readonly trailer: Uint8Array };

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Lays the parts out in order and writes the footer that points at their row groups. */
export function planStitch(
  parts: readonly StitchPart[],
  keyValue: Readonly<Record<string, string>>,
): StitchPlan {
  const metas = parts.map((p) => parseFileMetaData(p.footer));
  const first = metas[0];
  if (!first) throw new Error('no part files to stitch');
  const schema = schemaBytes(first);
  const groups = [];
  let offset = MAGIC.length;
  let rows = 0n;
  for (const [i, meta] of metas.entries()) {
    if (!sameBytes(schemaBytes(meta), schema)) throw new Error(`part ${i} has another schema than part 0`);
    // A part's chunks start after its own `PAR1` (offset 4) and land at `offset` here.
    groups.push(...movedRowGroups(meta, BigInt(offset - MAGIC.length), groups.length));
    offset += (parts[i] as StitchPart).bodyLength;
    rows += numRows(meta);
  }
  const closing = trailer(stitchedFileMetaData(first, groups, keyValue));
  return { bytes: offset + closing.length, rows: Number(rows), trailer: closing };
}

/** The stitched file's bytes, in order: `PAR1`, every part's column chunks, the footer. */
export async function* stitchBytes(
  parts: readonly StitchPart[],
  plan: StitchPlan,
): AsyncGenerator<Uint8Array> {
  yield MAGIC;
  for (const part of parts) yield* part.body();
  yield plan.trailer;
}

/** A part file on local disk. */
export async function localPart(path: string): Promise<StitchPart> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const tail = new Uint8Array(TRAILER_BYTES);
    await file.read(tail, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    const start = footerStart(tail, size);
    const footer = new Uint8Array(size - TRAILER_BYTES - start);
    await file.read(footer, 0, footer.length, start);
    const bodyLength = start - MAGIC.length;
    return {
      footer,
      bodyLength,
      body: () => createReadStream(path, { start: MAGIC.length, end: start - 1, highWaterMark: 1 << 20 }),
    };
  } finally {
    await file.close();
  }
}

/**
 * A part stored in an artifact store (another worker wrote it): its footer is known, its column
 * chunks are read as one range, after the part's leading `PAR1`.
 */
export function storedPart(
  store: ArtifactStore,
  name: string,
  footer: Uint8Array,
  bodyLength: number,
): StitchPart {
  return {
    footer,
    bodyLength,
    async *body() {
      if (bodyLength === 0) return;
      const range = { start: MAGIC.length, end: MAGIC.length + bodyLength - 1 };
      const bytes = await store.read(name, range);
      if (!bytes) throw new Error(`part ${store.locate(name)} is missing`);
      yield* bytes as AsyncIterable<Uint8Array>;
    },
  };
}

/**
 * Stitches `parts` into `name` in `store`, in the order they come. An async iterable may yield
 * each part as soon as it is written: its chunks are copied at once, while later parts are still
 * being generated, and the footer is built when the last part is in (`keyValue(rows)` gives the
 * key-value metadata for the rows the parts hold). Stops at the next chunk once `signal` aborts,
 * and on any error from `parts` (the store then keeps nothing). Checks the rows against
 * `expectedRows()` (asked once every part is in) and the stored size against the plan; resolves
 * with the size.
 */
export async function stitchToStore(
  store: ArtifactStore,
  name: string,
  parts: AsyncIterable<StitchPart> | Iterable<StitchPart>,
  keyValue: (rows: number) => Readonly<Record<string, string>>,
  expectedRows: () => number,
  signal?: AbortSignal,
): Promise<number> {
  let plan: StitchPlan | null = null;
  async function* streamed(): AsyncGenerator<Uint8Array> {
    const seen: StitchPart[] = [];
    yield MAGIC;
    for await (const part of parts) {
      signal?.throwIfAborted();
      seen.push(part);
      yield* part.body();
    }
    const rows = expectedRows();
    plan = planStitch(seen, keyValue(rows));
    if (plan.rows !== rows) throw new Error(`parts hold ${plan.rows} rows, windows wrote ${rows}`);
    yield plan.trailer;
  }
  const bytes = await store.put(name, abortable(streamed(), signal));
  const planned = (plan as StitchPlan | null)?.bytes;
  if (bytes !== planned) throw new Error(`stored ${bytes} bytes of a ${planned}-byte artifact`);
  return bytes;
}

/** Stops a byte stream at the next chunk once `signal` aborts. */
async function* abortable(
  bytes: AsyncIterable<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of bytes) {
    signal?.throwIfAborted();
    yield chunk;
  }
}
