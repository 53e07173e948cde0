/**
 * A Parquet file's footer (https://github.com/apache/parquet-format: `PAR1`, column chunks,
 * FileMetaData in Thrift compact, its length as u32 LE, `PAR1`) and the few FileMetaData fields
 * a stitch changes: row count, row groups (their byte offsets) and key-value metadata. Everything
 * else (schema, statistics, encodings, created_by, column orders) is carried over as read.
 */
import {
  CT,
  getField,
  readStruct,
  type TList,
  type TStruct,
  type TValue,
  withField,
  writeStruct,
} from './thrift-compact.ts';

export const MAGIC = new TextEncoder().encode('PAR1');
/** Footer length (u32 LE) + `PAR1`. */
export const TRAILER_BYTES = 8;

/** FileMetaData field ids. */
const FILE = { schema: 2, numRows: 3, rowGroups: 4, keyValue: 5 } as const;
/** RowGroup field ids. */
const ROW_GROUP = { columns: 1, numRows: 3, fileOffset: 5, ordinal: 7 } as const;
/** ColumnChunk field ids: file offset, metadata, and the page index (offset index 4/5, column index 6/7). */
const COLUMN_CHUNK = { fileOffset: 2, metaData: 3, pageIndex: [4, 5, 6, 7] } as const;
/** ColumnMetaData fields that are absolute file offsets: data, index, dictionary page, bloom filter. */
const COLUMN_OFFSETS = [9, 10, 11, 14] as const;

/** Where a part's footer starts, from the last 8 bytes of the file and its size. */
export function footerStart(trailer: Uint8Array, fileSize: number): number {
  if (trailer.length !== TRAILER_BYTES || !MAGIC.every((b, i) => trailer[4 + i] === b))
    throw new Error('not a Parquet file: no PAR1 at its end');
  const length = new DataView(trailer.buffer, trailer.byteOffset, 4).getUint32(0, true);
  const start = fileSize - TRAILER_BYTES - length;
  if (start < MAGIC.length) throw new Error('corrupt Parquet file: footer longer than the file');
  return start;
}

export const parseFileMetaData = (bytes: Uint8Array): TStruct => readStruct(bytes).struct;

const list = (s: TStruct, id: number): TValue[] => (getField(s, id) as TList | undefined)?.items ?? [];

/** Rows of a FileMetaData. */
export const numRows = (meta: TStruct): bigint => (getField(meta, FILE.numRows) as bigint | undefined) ?? 0n;

/** The schema's encoding: parts can be stitched only if theirs are equal. */
export const schemaBytes = (meta: TStruct): Uint8Array =>
  writeStruct({ fields: meta.fields.filter((f) => f.id === FILE.schema) });

/** Moves an offset field; 0 (offset 0 is the leading `PAR1`) means unset, as DuckDB writes ColumnChunk.file_offset. */
const shiftField = (s: TStruct, id: number, delta: bigint): TStruct => {
  const v = getField(s, id);
  return typeof v === 'bigint' && v > 0n ? withField(s, id, CT.I64, v + delta) : s;
};

/**
 * The row groups of `meta`, moved by `delta` bytes and numbered from `firstOrdinal`. The page
 * index is dropped: its offset index holds absolute page offsets inside the copied bytes, which a
 * byte-for-byte copy cannot change (the bytes stay, unreferenced).
 */
export function movedRowGroups(meta: TStruct, delta: bigint, firstOrdinal: number): TStruct[] {
  return list(meta, FILE.rowGroups).map((value, i) => {
    let group = shiftField(value as TStruct, ROW_GROUP.fileOffset, delta);
    if (getField(group, ROW_GROUP.ordinal) !== undefined)
      group = withField(group, ROW_GROUP.ordinal, CT.I16, firstOrdinal + i);
    const columns = list(group, ROW_GROUP.columns).map((c) => {
      let chunk = shiftField(c as TStruct, COLUMN_CHUNK.fileOffset, delta);
      for (const id of COLUMN_CHUNK.pageIndex) chunk = withField(chunk, id, CT.I64, undefined);
      let column = getField(chunk, COLUMN_CHUNK.metaData) as TStruct | undefined;
      if (!column) return chunk;
      for (const id of COLUMN_OFFSETS) column = shiftField(column, id, delta);
      return withField(chunk, COLUMN_CHUNK.metaData, CT.STRUCT, column);
    });
    return withField(group, ROW_GROUP.columns, CT.LIST, { elemType: CT.STRUCT, items: columns });
  });
}

/**
 * The stitched file's FileMetaData: `first`'s fields (version, schema, created_by, column
 * orders), with the given row groups, their row count and `keyValue` as key-value metadata.
 */
export function stitchedFileMetaData(
  first: TStruct,
  rowGroups: readonly TStruct[],
  keyValue: Readonly<Record<string, string>>,
): Uint8Array {
  const utf8 = new TextEncoder();
  const rows = rowGroups.reduce((sum, g) => sum + ((getField(g, ROW_GROUP.numRows) as bigint) ?? 0n), 0n);
  const pairs = Object.entries(keyValue).map(
    ([key, value]): TStruct => ({
      fields: [
        { id: 1, type: CT.BINARY, value: utf8.encode(key) },
        { id: 2, type: CT.BINARY, value: utf8.encode(value) },
      ],
    }),
  );
  let meta = withField(first, FILE.numRows, CT.I64, rows);
  meta = withField(meta, FILE.rowGroups, CT.LIST, { elemType: CT.STRUCT, items: [...rowGroups] });
  meta = withField(
    meta,
    FILE.keyValue,
    CT.LIST,
    pairs.length ? { elemType: CT.STRUCT, items: pairs } : undefined,
  );
  return writeStruct(meta);
}

/** Footer bytes + length + `PAR1`: what ends a Parquet file whose FileMetaData is `meta`. */
export function trailer(meta: Uint8Array): Uint8Array {
  const out = new Uint8Array(meta.length + TRAILER_BYTES);
  out.set(meta, 0);
  new DataView(out.buffer).setUint32(meta.length, meta.length, true);
  out.set(MAGIC, meta.length + 4);
  return out;
}
