/**
 * Stored events of a range → a Parquet or CSV file, with DuckDB. The platform's events are read
 * from the worker's `MD` archive as far as it holds the range (Parquet segments, md-archive.ts:
 * DuckDB reads them as it reads any file), the rest from `MD` (`first_seq` … `last_seq`) and, for
 * an export by an account, that account's own events
 * from `OWN` (the events `OWN` stored within the same instants [`from`, `to`]: `own_first_seq` …
 * `own_last_seq`), each by one pull consumer in stream order (range-reader.ts, the narrowest
 * subject filter of the selection: `md.…`, and `own.<account_id>.…`). Events are kept when they
 * match the selection (coin, source, event type, and owner: the platform's feed or the exporting
 * account's own events, never another account's) and written as NDJSON, each stored event's bytes
 * as they are with `seq` (its stream's sequence: `OWN`'s for an own event), `stored_ms` (the
 * stream's stored time) and `owner` put in front (no parse, no re-encode), into a temporary file
 * (or, with `pipe`, a named pipe that DuckDB reads at the same time). The two streams are merged
 * as they are read: rows by stored time, `MD`'s before `OWN`'s on the same millisecond, each
 * stream in its sequence order (a bounded queue per stream; a stream ahead pauses). DuckDB writes
 * the file with the fixed columns of contracts/export.ts, sorted (by `seq`, or as the merge orders
 * them when own events are in it), on one thread: row groups of exactly 122,880 rows, cut at the
 * same rows whether they came from the archive or from NATS. Nothing of the export itself (time, job id, host) goes into
 * the file, so the same stored events give the same bytes.
 */
import { execFileSync } from 'node:child_process';
import { constants, createReadStream, createWriteStream, openSync } from 'node:fs';
import { copyFile, link, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Writable } from 'node:stream';
import { isStoredEvent } from '../../contracts/event-wire.ts';
import {
  EXPORT_COLUMNS,
  EXPORT_LAYOUT_VERSION,
  EXPORT_MAX_ROWS,
  type ExportFormat,
  type ExportSelection,
} from '../../contracts/export.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { mdFilter, parseFeedSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import { seqAtOrBefore, seqBefore } from '../../platform/stream-time.ts';
import { sqlString as sql } from '../generation/layout.ts';
import { type DuckDBSettings, openDuckDB } from '../generation/part-writer.ts';
import { type ArchivePart, archivedStream, archiveSelectSql, coverage, listSegments } from './md-archive.ts';
import { type OnStored, type RangeRead, readStoredRange } from './range-reader.ts';

export type ExportRangeOptions = {
  selection: ExportSelection;
  format: ExportFormat;
  /** The range on `MD` (`firstSeq > lastSeq`: nothing stored in it). */
  firstSeq: number;
  lastSeq: number;
  /**
   * The range's instants (Unix ms, both included): with an account in the selection, its own
   * events `OWN` stored within them are exported too (`ownRange`). Without them, `MD`'s only.
   */
  fromMs?: number;
  toMs?: number;
  /** The range on `OWN` when already resolved (else from `fromMs`/`toMs`). */
  own?: OwnRange | null;
  /** Where the file is written (a local path). */
  out: string;
  /** Directory of the temporary NDJSON (default: the OS's). */
  tmpDir?: string;
  signal?: AbortSignal;
  /** Rows kept so far and the events left to scan at most. */
  onProgress?: (rowsDone: number, rowsTotalEstimate: number) => void;
  /** Refuses more rows than this (default EXPORT_MAX_ROWS). */
  maxRows?: number;
  /** Rows the export already has from the archive: they count in `maxRows` and in the progress. */
  rowsBefore?: number;
  /**
   * Whether DuckDB reads the NDJSON through a named pipe while the events are still being read
   * (default false: from a file written first). Off by default: DuckDB reads a pipe about half as
   * fast as a file (measured: 200k books, 1.6 s against 0.8 s), more than the overlap gains on two
   * cores. Both give the same bytes.
   */
  pipe?: boolean;
  /** DuckDB threads (default 1: one row group after another, always the same bytes). */
  threads?: number;
  /** The `MD` archive's directory (md-archive.ts): what it holds of the range is read from it. */
  archiveDir?: string;
};

export class ExportError extends Error {}

/** The first and last `OWN` sequence of an export's range (`firstSeq > lastSeq`: empty). */
export type OwnRange = { firstSeq: number; lastSeq: number };

/**
 * The `OWN` positions of the instants [`fromMs`, `toMs`], as `MD`'s are resolved (the stream's own
 * stored times): after the last own event stored before `fromMs`, up to the last stored at or
 * before `toMs`. Null without an account (nothing of `OWN` is read) or without the instants.
 */
export async function ownRange(
  nats: Nats,
  opts: Pick<ExportRangeOptions, 'selection' | 'fromMs' | 'toMs' | 'own'>,
): Promise<OwnRange | null> {
  if (opts.own !== undefined) return opts.own;
  if (!opts.selection.account_id || opts.fromMs === undefined || opts.toMs === undefined) return null;
  const [before, last] = await Promise.all([
    seqBefore(nats, STREAMS.OWN, opts.fromMs),
    seqAtOrBefore(nats, STREAMS.OWN, opts.toMs),
  ]);
  return { firstSeq: before + 1, lastSeq: last };
}

/** `read_json` of the NDJSON with the export's columns (or `columns`: the archive's). */
export function readNdjsonSql(
  ndjsonPath: string,
  columns: readonly (readonly [string, string])[] = EXPORT_COLUMNS,
): string {
  const typed = columns.map(([k, t]) => `${k}: ${sql(t)}`).join(', ');
  return `read_json(${sql(ndjsonPath)}, format = 'newline_delimited', columns = {${typed}})`;
}

/**
 * Where the rows come from besides the NDJSON: the archive's rows of the range (a SELECT of the
 * export's columns, md-archive.ts), and the order of the whole (`seq`, or by stored time with
 * `MD` first on a tie when the export has own events: the order the NDJSON's merge writes).
 */
export type CopySource = { archive?: string; order?: 'seq' | 'stored' };

const ORDER_BY = { seq: ' ORDER BY seq', stored: ' ORDER BY stored_ms, owner IS NOT NULL, seq' } as const;

/** The rows of the export: the NDJSON's, with the archive's before them, in the order asked. */
function rowsSql(ndjsonPath: string, source: CopySource): string {
  const order = source.order ? ORDER_BY[source.order] : '';
  if (!source.archive && !order) return readNdjsonSql(ndjsonPath);
  const columns = EXPORT_COLUMNS.map(([k]) => k).join(', ');
  const ndjson = `SELECT ${columns} FROM ${readNdjsonSql(ndjsonPath)}`;
  return `(SELECT * FROM (${source.archive ? `${source.archive} UNION ALL ` : ''}${ndjson})${order})`;
}

/** DuckDB's COPY of the NDJSON to the file: Parquet (ZSTD, key-value metadata) or CSV (header). */
export function copySql(
  ndjsonPath: string,
  outPath: string,
  format: ExportFormat,
  metadata: Record<string, string>,
  source: CopySource = {},
): string {
  const rows = rowsSql(ndjsonPath, source);
  if (format === 'parquet') {
    const meta = Object.entries(metadata)
      .map(([k, v]) => `${k}: ${sql(v)}`)
      .join(', ');
    return (
      `COPY (SELECT * FROM ${rows}) TO ${sql(outPath)} ` +
      `(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 122880, KV_METADATA {${meta}})`
    );
  }
  const select = EXPORT_COLUMNS.map(([k]) => (k === 'bids' || k === 'asks' ? `to_json(${k}) AS ${k}` : k));
  return (
    `COPY (SELECT ${select.join(', ')} FROM ${rows}) TO ${sql(outPath)} ` +
    `(FORMAT CSV, HEADER true, DELIMITER ',', QUOTE '"', NULLSTR '')`
  );
}

/**
 * What an export's DuckDB may hold in memory; past it, its sort spills to the export's temporary
 * directory (a range may hold millions of rows, and a worker runs other jobs beside it).
 */
const EXPORT_MEMORY_LIMIT = '1GB';

/** Runs one statement in a fresh DuckDB instance; resolves with its first row's first value. */
async function runDuckdb(statement: string, settings: DuckDBSettings = {}): Promise<unknown> {
  const db = await openDuckDB(settings);
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(statement);
    return reader.getRows()[0]?.[0];
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Runs one COPY in a fresh DuckDB instance. */
export async function runDuckdbCopy(statement: string, settings: DuckDBSettings = {}): Promise<void> {
  await runDuckdb(statement, settings);
}

/** The error of a range holding more rows of the selection than an export may write. */
const tooManyRows = (maxRows: number) =>
  new ExportError(
    `the range holds more than ${maxRows.toLocaleString('en-US')} events of the selection: export a shorter range or fewer coins`,
  );

/**
 * The Parquet key-value metadata of an export: what was asked and what was read, nothing else.
 * `first_seq`/`last_seq` are the range on `MD` (the platform's feed); an export by an account also
 * says the range it read on `OWN` (`own_first_seq`/`own_last_seq`).
 */
export function exportMetadata(
  sel: ExportSelection,
  firstSeq: number,
  lastSeq: number,
  own: OwnRange | null = null,
): Record<string, string> {
  return {
    export_layout: EXPORT_LAYOUT_VERSION,
    coins: sel.coins.join(','),
    sources: sel.sources?.join(',') ?? '*',
    event_types: sel.event_types?.join(',') ?? '*',
    first_seq: String(firstSeq),
    last_seq: String(lastSeq),
    ...(own ? { own_first_seq: String(own.firstSeq), own_last_seq: String(own.lastSeq) } : {}),
  };
}

/** Whether an event on `subject` is in the selection: its owner as JSON (`null` or `"acc_…"`), or false. */
export function selectionMatcher(sel: ExportSelection): (subject: string) => string | false {
  const coins = new Set(sel.coins);
  const sources = sel.sources ? new Set(sel.sources) : null;
  const types = sel.event_types ? new Set(sel.event_types) : null;
  // Subjects repeat: the answer (false, or the owner as a JSON value) is kept per subject.
  const seen = new Map<string, string | false>();
  return (subject) => {
    let v = seen.get(subject);
    if (v === undefined) {
      const p = parseFeedSubject(subject);
      const ok =
        p !== null &&
        coins.has(p.symbol) &&
        (!sources || sources.has(p.source)) &&
        (!types || types.has(p.eventType)) &&
        (p.owner === null || p.owner === sel.account_id);
      v = ok ? (p.owner === null ? 'null' : JSON.stringify(p.owner)) : false;
      if (seen.size < 100_000) seen.set(subject, v);
    }
    return v;
  };
}

/**
 * The subject filter of one consumer covering the selection (one filter: nats-server 2.9): on
 * `MD`, or with `owner` on that account's own events (`OWN`).
 */
export const selectionFilter = (sel: ExportSelection, owner?: string): string =>
  mdFilter(
    {
      symbols: sel.coins,
      ...(sel.sources ? { sources: sel.sources } : {}),
      ...(sel.event_types ? { eventTypes: sel.event_types } : {}),
    },
    owner,
  );

/** Matching events a stream may hold queued while the other is behind (it pauses beyond). */
const QUEUE_MAX = 10_000;

type QueuedRow = { owner: string; data: Uint8Array; seq: number; ms: number };

/** Bytes gathered before one write to the NDJSON (a write per event costs more than the event). */
const BATCH_BYTES = 1 << 20;

/**
 * Writes the selection's events of [`firstSeq`, `lastSeq`] on `MD` (and of `opts.own` on `OWN`,
 * merged: see the file's comment) as NDJSON to `sink` (ended when done, or destroyed on
 * failure); resolves with the rows written. Lines are gathered into 1 MiB batches; the reads
 * pause while the sink is full.
 */
export async function writeRangeNdjson(
  nats: Nats,
  opts: Omit<ExportRangeOptions, 'out' | 'format' | 'fromMs' | 'toMs'>,
  sink: Writable,
): Promise<number> {
  const { selection, firstSeq, lastSeq, signal } = opts;
  const account = selection.account_id;
  const own = account && opts.own && opts.own.firstSeq <= opts.own.lastSeq ? opts.own : null;
  const maxRows = opts.maxRows ?? EXPORT_MAX_ROWS;
  const before = opts.rowsBefore ?? 0;
  const finished = new Promise<void>((resolve, reject) => {
    sink.once('close', resolve);
    sink.once('error', reject);
  });
  const match = selectionMatcher(selection);
  let batch = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  let rows = 0;
  let scanned = 0;
  let estimate = 0;
  /** The sink is full: the reads pause until it drains. */
  let full = false;
  /** `MD`'s read and `OWN`'s. */
  const reads: [RangeRead | null, RangeRead | null] = [null, null];
  /** Merging: each stream's matching rows not yet written (from `heads[i]` on), and whether it has ended. */
  const queues: [QueuedRow[], QueuedRow[]] = [[], []];
  const heads: [number, number] = [0, 0];
  const ended: [boolean, boolean] = [firstSeq > lastSeq, own === null];
  const queued = (i: 0 | 1) => queues[i].length - heads[i];
  /** Resumes each read that may go on (sink not full, its queue not full). */
  const resume = () => {
    if (full) return;
    if (own === null) reads[0]?.resume();
    else for (const i of [0, 1] as const) if (queued(i) < QUEUE_MAX / 2) reads[i]?.resume();
  };
  /** Hands the batch to the sink; false when the sink is full (the reads pause until it drains). */
  const flush = (): boolean => {
    if (used === 0) return true;
    const room = sink.write(batch.subarray(0, used));
    batch = Buffer.allocUnsafe(BATCH_BYTES);
    used = 0;
    if (!room && !full) {
      full = true;
      sink.once('drain', () => {
        full = false;
        resume();
      });
    }
    return room;
  };
  /** Writes one row; false when the sink is full. */
  const write = (owner: string, data: Uint8Array, seq: number, storedMs: number): boolean => {
    if (++rows + before > maxRows) throw tooManyRows(maxRows);
    const head = `{"seq":${seq},"stored_ms":${storedMs},"owner":${owner},`;
    const need = head.length + data.length + 1;
    let room = true;
    if (used + need > batch.length) {
      room = flush();
      if (need > batch.length) batch = Buffer.allocUnsafe(need);
    }
    used += batch.write(head, used, 'latin1');
    batch.set(data.subarray(1), used);
    used += data.length - 1;
    batch[used++] = 0x0a; // \n
    if ((rows & 0x3fff) === 0)
      opts.onProgress?.(before + rows, before + Math.max(rows, estimate - scanned + rows));
    return room && !full;
  };
  /** Writes the queued rows in order while the next one is known: by stored time, `MD` first on a tie. */
  const pump = () => {
    for (;;) {
      const a = queues[0][heads[0]];
      const b = queues[1][heads[1]];
      let next: QueuedRow;
      if (a && (b ? a.ms <= b.ms : ended[1])) {
        next = a;
        heads[0]++;
      } else if (b && (a || ended[0])) {
        next = b;
        heads[1]++;
      } else break;
      write(next.owner, next.data, next.seq, next.ms);
    }
    for (const i of [0, 1] as const)
      if (heads[i] >= 4_096) {
        queues[i].splice(0, heads[i]);
        heads[i] = 0;
      }
    resume();
  };
  const onStored =
    (i: 0 | 1): OnStored =>
    (subject, data, seq, storedMs) => {
      scanned++;
      const owner = match(subject);
      if (owner === false || !isStoredEvent(data) || data.length <= 2) return true;
      if (own === null) return write(owner, data, seq, storedMs);
      // Kept past this callback: a copy (the message's bytes are the connection's read buffer).
      queues[i].push({ owner, data: data.slice(), seq, ms: storedMs });
      pump();
      return !full && queued(i) < QUEUE_MAX;
    };
  // Both reads stop when either fails (or the caller aborts).
  const stop = new AbortController();
  const abort = () => stop.abort(signal?.reason);
  signal?.addEventListener('abort', abort, { once: true });
  if (signal?.aborted) abort();
  try {
    if (firstSeq <= lastSeq)
      reads[0] = await readStoredRange(
        nats,
        { filter: selectionFilter(selection), firstSeq, lastSeq, signal: stop.signal },
        onStored(0),
      );
    // Failures are awaited below; none is left unhandled while `OWN`'s read starts.
    reads[0]?.done.catch(() => {});
    if (own && account)
      reads[1] = await readStoredRange(
        nats,
        {
          stream: STREAMS.OWN,
          filter: selectionFilter(selection, account),
          firstSeq: own.firstSeq,
          lastSeq: own.lastSeq,
          signal: stop.signal,
        },
        onStored(1),
      );
    estimate =
      Math.min(reads[0]?.pending ?? 0, Math.max(0, lastSeq - firstSeq + 1)) +
      (own ? Math.min(reads[1]?.pending ?? 0, own.lastSeq - own.firstSeq + 1) : 0);
    opts.onProgress?.(before, before + estimate);
    const untilEnd = (i: 0 | 1) =>
      (reads[i]?.done ?? Promise.resolve()).then(() => {
        ended[i] = true;
        if (own !== null) pump();
      });
    await Promise.all([untilEnd(0), untilEnd(1)]);
    signal?.throwIfAborted();
    flush();
    sink.end();
    await finished;
    return rows;
  } catch (err) {
    stop.abort(err);
    sink.destroy();
    await finished.catch(() => {});
    throw err;
  } finally {
    signal?.removeEventListener('abort', abort);
  }
}

/**
 * The archive's parts covering the range from its start (or from `MD`'s first sequence, where
 * the stream no longer holds the range's start: the archive never gives what `MD` no longer has),
 * and the last sequence they cover; null when the archive holds none of it.
 */
async function archivedPart(
  nats: Nats,
  opts: Pick<ExportRangeOptions, 'firstSeq' | 'lastSeq'>,
  dir: string,
  into: string,
): Promise<{ parts: ArchivePart[]; through: number } | null> {
  if (opts.firstSeq > opts.lastSeq) return null;
  const segments = await listSegments(dir);
  if (segments.length === 0) return null;
  const { state, created } = await nats.jsm.streams.info(STREAMS.MD);
  // The archive of another `MD` (deleted and made again since) answers nothing.
  if ((await archivedStream(dir)) !== created) return null;
  const got = coverage(segments, Math.max(opts.firstSeq, state.first_seq), opts.lastSeq);
  if (got.parts.length === 0) return null;
  // Linked into the export's own directory: the archiver's retention cannot remove them meanwhile.
  const parts = await Promise.all(
    got.parts.map(async (p) => {
      const file = join(into, basename(p.file));
      await link(p.file, file).catch(() => copyFile(p.file, file));
      return { ...p, file };
    }),
  );
  return { parts, through: got.through };
}

/** A named pipe at `path`, or false where none can be made (no `mkfifo`). */
function makeFifo(path: string): boolean {
  try {
    execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Exports the range to `opts.out`; resolves with the rows written and the file's size. DuckDB
 * reads the NDJSON from a file written first, or with `pipe` from a named pipe while the events
 * are still being read (where one can be made). Both give the same bytes.
 */
export async function exportRange(
  nats: Nats,
  opts: ExportRangeOptions,
): Promise<{ rows: number; bytes: number }> {
  const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), 'export-'));
  try {
    const ndjson = join(dir, 'events.ndjson');
    const own = await ownRange(nats, opts);
    const meta = exportMetadata(opts.selection, opts.firstSeq, opts.lastSeq, own);
    const hasOwn = own !== null && own.firstSeq <= own.lastSeq;
    // What the archive holds of the range is read from it; `MD` is read from where it ends.
    const archived = opts.archiveDir ? await archivedPart(nats, opts, opts.archiveDir, dir) : null;
    const settings: DuckDBSettings = {
      threads: opts.threads ?? 1,
      memoryLimit: EXPORT_MEMORY_LIMIT,
      tempDirectory: join(dir, 'duckdb'),
    };
    // The archive's rows count against the export's bound, and in its progress, like the others.
    const maxRows = opts.maxRows ?? EXPORT_MAX_ROWS;
    const fromArchive = archived
      ? Number(await runDuckdb(`SELECT count(*) FROM (${archiveSelectSql(archived.parts, opts.selection)})`))
      : 0;
    if (fromArchive > maxRows) throw tooManyRows(maxRows);
    // Always sorted, archive or not: DuckDB cuts row groups where its input's chunks fall, and a
    // sort's output falls the same way whatever the rows came from (exactly ROW_GROUP_SIZE each).
    const source: CopySource = {
      ...(archived ? { archive: archiveSelectSql(archived.parts, opts.selection) } : {}),
      order: hasOwn ? 'stored' : 'seq',
    };
    const copy = copySql(ndjson, opts.out, opts.format, meta, source);
    if (archived)
      opts = { ...opts, firstSeq: Math.max(opts.firstSeq, archived.through + 1), rowsBefore: fromArchive };
    let rows: number;
    if (opts.pipe === true && makeFifo(ndjson)) {
      const copying = runDuckdbCopy(copy, settings);
      let copyFailed = false;
      void copying.catch(() => {
        copyFailed = true;
        // DuckDB never opened the pipe, or stopped reading it: open it here so that the writer's
        // open returns and its writes drain, then the write fails on `copyFailed`.
        try {
          const fd = openSync(ndjson, constants.O_RDONLY | constants.O_NONBLOCK); // never waits
          createReadStream('', { fd })
            .on('error', () => {})
            .resume();
        } catch {
          // the pipe is gone: nothing waits on it
        }
      });
      // Opening for writing waits for DuckDB to open the pipe for reading (POSIX): no line is
      // written, and the pipe is never closed, before its reader is there (a pipe closed with no
      // reader loses what it holds, and a reader opening it later waits for a writer forever).
      const handle = await open(ndjson, constants.O_WRONLY);
      const sink = createWriteStream('', { fd: handle, highWaterMark: 4 << 20 });
      try {
        if (copyFailed) throw new Error('the DuckDB copy failed');
        rows = await writeRangeNdjson(nats, { ...opts, own }, sink);
      } catch (err) {
        sink.destroy();
        await copying.catch(() => {});
        throw err;
      }
      await copying;
    } else {
      rows = await writeRangeNdjson(
        nats,
        { ...opts, own },
        createWriteStream(ndjson, { highWaterMark: 1 << 20 }),
      );
      opts.signal?.throwIfAborted();
      await runDuckdbCopy(copy, settings);
    }
    rows += fromArchive;
    opts.signal?.throwIfAborted();
    opts.onProgress?.(rows, rows);
    return { rows, bytes: (await stat(opts.out)).size };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
