/**
 * Keeps the `MD` archive (md-archive.ts) up with the stream: reads `MD` in order from the sequence
 * after the last segment (a restart goes on from there; a half-written segment is discarded and
 * read again), writes each stored event as an NDJSON row (the export's row: md-archive.ts), and
 * every `segmentSeqs` sequences, or after `flushMs` with something pending (a quiet feed), turns
 * them into a Parquet segment with DuckDB. Segments wholly before the stream's first sequence
 * (removed by its limits) are deleted; a new `MD` (its creation time differs) empties the archive.
 * One archiver per directory (a lock file with its pid); a failed write drops the pending segment
 * and reads it again after a backoff.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open as openFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { isStoredEvent } from '../../contracts/event-wire.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { parseFeedSubject } from '../../contracts/subjects.ts';
import { backoffMs } from '../../platform/backoff.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { sqlString } from '../generation/layout.ts';
import { readNdjsonSql, runDuckdbCopy } from './export-range.ts';
import {
  ARCHIVE_COLUMNS,
  archivedStream,
  listSegments,
  lockArchive,
  removeBroken,
  removeTemporaries,
  resetArchive,
  segmentName,
  tempName,
} from './md-archive.ts';
import { readStoredRange } from './range-reader.ts';

export type MdArchiverOptions = {
  dir: string;
  /** Sequences per segment (default 100,000). */
  segmentSeqs?: number;
  /** A pending segment older than this is written however short, ms (default 10 min). */
  flushMs?: number;
  /** Wait between looks at a stream with nothing new, ms (default 1 s). */
  pollMs?: number;
};

export type MdArchiver = {
  /** The last sequence archived (0: none yet). */
  through(): number;
  stop(): Promise<void>;
};

/** The DuckDB statement turning a segment's NDJSON into its Parquet file. */
export function segmentCopySql(ndjson: string, out: string): string {
  return (
    `COPY (SELECT * FROM ${readNdjsonSql(ndjson, ARCHIVE_COLUMNS)}) ` +
    `TO ${sqlString(out)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 122880)`
  );
}

/** What a row starts with for each subject: `"subj_…"` fields (null: not an event of `MD`). */
function subjectHeads(): (subject: string) => string | null {
  const seen = new Map<string, string | null>();
  return (subject) => {
    let head = seen.get(subject);
    if (head === undefined) {
      const p = parseFeedSubject(subject);
      head =
        p && p.owner === null
          ? `"subj_source":${JSON.stringify(p.source)},"subj_symbol":${JSON.stringify(p.symbol)},"subj_type":${JSON.stringify(p.eventType)},`
          : null;
      if (seen.size < 100_000) seen.set(subject, head);
    }
    return head;
  };
}

type Pending = {
  first: number;
  last: number;
  ndjson: string;
  out: WriteStream;
  since: number;
  /** Aborted by a failed write (a full disk): the read ends, and the segment is read again later. */
  failed: AbortController;
};

export async function startMdArchiver(nats: Nats, log: Logger, opts: MdArchiverOptions): Promise<MdArchiver> {
  const { dir } = opts;
  const segmentSeqs = opts.segmentSeqs ?? 100_000;
  const flushMs = opts.flushMs ?? 600_000;
  const pollMs = opts.pollMs ?? 1_000;
  await mkdir(dir, { recursive: true });
  const unlock = await lockArchive(dir);
  await removeTemporaries(dir);
  await removeBroken(dir);
  const existing = await listSegments(dir);
  let through = existing.reduce((m, s) => Math.max(m, s.last), 0);
  /** Which `MD` the segments are of (md-archive.ts); read once, written here only. */
  let stream = await archivedStream(dir);
  const heads = subjectHeads();
  const stop = new AbortController();
  let pending: Pending | null = null;

  const open = (first: number): Pending => {
    const ndjson = join(dir, tempName(`md-${first}.ndjson`));
    const out = createWriteStream(ndjson, { highWaterMark: 1 << 20 });
    const failed = new AbortController();
    out.once('error', (err) => failed.abort(err));
    return { first, last: first - 1, ndjson, out, since: Date.now(), failed };
  };

  /** Reads [p.last + 1, to] into `p`'s NDJSON. */
  const readInto = async (p: Pending, to: number) => {
    let draining = false;
    p.failed.signal.throwIfAborted();
    const read = await readStoredRange(
      nats,
      {
        filter: '',
        firstSeq: p.last + 1,
        lastSeq: to,
        signal: AbortSignal.any([stop.signal, p.failed.signal]),
      },
      (subject, data, seq, storedMs) => {
        const head = heads(subject);
        if (head === null || !isStoredEvent(data) || data.length <= 2) return true;
        const line = Buffer.concat([
          Buffer.from(`{"seq":${seq},"stored_ms":${storedMs},"owner":null,${head}`, 'latin1'),
          data.subarray(1),
          NEWLINE,
        ]);
        if (p.out.write(line)) return true;
        if (!draining) {
          draining = true;
          p.out.once('drain', () => {
            draining = false;
            read.resume();
          });
        }
        return false;
      },
    );
    await read.done;
    p.failed.signal.throwIfAborted();
    p.last = to;
  };

  /** Writes `p` as a segment; `streamLast` (the stream's newest sequence) says how far behind it is. */
  const close = async (p: Pending, streamLast: number) => {
    await new Promise<void>((resolve, reject) =>
      p.out.end((err?: Error | null) => (err ? reject(err) : resolve())),
    );
    const name = segmentName(p.first, p.last);
    const tmp = join(dir, tempName(name));
    await runDuckdbCopy(segmentCopySql(p.ndjson, tmp));
    // On the disk before it has its name: a crash never leaves a named segment half written.
    const f = await openFile(tmp, 'r');
    await f.datasync().finally(() => f.close());
    await rename(tmp, join(dir, name));
    await rm(p.ndjson, { force: true });
    through = p.last;
    // One line a segment (every 100,000 sequences): the progress of a long catch-up at start.
    log.info({ first: p.first, last: p.last, behind: streamLast - p.last }, 'md archive: segment written');
  };

  const dropBefore = async (firstSeq: number) => {
    for (const s of await listSegments(dir)) if (s.last < firstSeq) await rm(s.file, { force: true });
  };

  const pause = (ms: number) => wait(ms, undefined, { signal: stop.signal }).catch(() => {});
  const loop = async () => {
    let failures = 0;
    while (!stop.signal.aborted) {
      try {
        const { state, created } = await nats.jsm.streams.info(STREAMS.MD);
        if (stream !== created) {
          // A new `MD` (deleted and made again): its sequences start over, the old segments go.
          discard();
          await resetArchive(dir, created);
          stream = created;
          through = 0;
        }
        await dropBefore(state.first_seq);
        if (!pending) pending = open(Math.max(through + 1, state.first_seq));
        const to = Math.min(state.last_seq, pending.first + segmentSeqs - 1);
        if (to > pending.last) await readInto(pending, to);
        const full = pending.last - pending.first + 1 >= segmentSeqs;
        const old = pending.last >= pending.first && Date.now() - pending.since >= flushMs;
        failures = 0;
        if (full || old) {
          const p = pending;
          pending = null;
          await close(p, state.last_seq);
          continue;
        }
        await pause(pollMs);
      } catch (err) {
        if (stop.signal.aborted) break;
        log.warn({ err: String(err) }, 'md archive: read or write failed; reading the segment again');
        discard();
        await pause(backoffMs(failures++, { maxMs: 30_000 }));
      }
    }
  };
  /** Drops the pending segment (read again later); its file is removed in the background. */
  const discard = () => {
    if (!pending) return;
    pending.out.destroy();
    void rm(pending.ndjson, { force: true }).catch(() => {});
    pending = null;
  };
  const running = loop();
  return {
    through: () => through,
    async stop() {
      stop.abort();
      await running;
      discard();
      await unlock();
    },
  };
}

const NEWLINE = Buffer.from('\n');
