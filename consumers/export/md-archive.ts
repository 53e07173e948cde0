/**
 * The `MD` archive: the stream's events already in columns, as Parquet segments on this machine's
 * disk, so that an export reads what is archived with DuckDB (as fast as DuckDB reads a file) and
 * only the unarchived tail from NATS (md-archiver.ts writes them; export-range.ts reads them).
 *
 * A segment holds every stored event of a sequence range [`first`, `last`] of `MD` (a sequence with
 * no event in it is covered too: it was read and held nothing), named
 * `md-<first>-<last>.parquet` (12 digits each). Its rows have the export's columns
 * (contracts/export.ts; `owner` null) plus the subject's parts (`subj_source`, `subj_symbol`,
 * `subj_type`), so that a selection filters them exactly as an export filters subjects. A segment
 * is written under a temporary name and renamed: a reader never finds half of one.
 */
import { open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EXPORT_COLUMNS, type ExportSelection } from '../../contracts/export.ts';
import { sqlString } from '../generation/layout.ts';

export type Segment = { first: number; last: number; file: string };

/** The rows of a segment that an export takes: sequences [`from`, `to`] of `file` (which holds [`first`, `last`]). */
export type ArchivePart = Segment & { from: number; to: number };

const NAME = /^md-(\d{12})-(\d{12})\.parquet$/;
const TMP_SUFFIX = '.tmp';

export const ARCHIVE_COLUMNS = [
  ...EXPORT_COLUMNS,
  ['subj_source', 'VARCHAR'],
  ['subj_symbol', 'VARCHAR'],
  ['subj_type', 'VARCHAR'],
] as const;

const pad = (n: number) => String(n).padStart(12, '0');

export const segmentName = (first: number, last: number): string => `md-${pad(first)}-${pad(last)}.parquet`;
export const tempName = (name: string): string => `${name}${TMP_SUFFIX}`;

/** Every complete segment in `dir`, by first sequence; [] when there is no such directory. */
export async function listSegments(dir: string): Promise<Segment[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: Segment[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (m) out.push({ first: Number(m[1]), last: Number(m[2]), file: join(dir, name) });
  }
  return out.sort((a, b) => a.first - b.first || b.last - a.last);
}

/**
 * Which `MD` the archive is of: the stream's creation time, kept beside the segments. A stream
 * deleted and made again starts its sequences over; segments of the old one must not answer.
 */
const MARKER = 'MD.created';

export async function archivedStream(dir: string): Promise<string | null> {
  try {
    return (await readFile(join(dir, MARKER), 'utf8')).trim();
  } catch {
    return null;
  }
}

/** Empties the archive and marks it as the archive of the stream created at `created`. */
export async function resetArchive(dir: string, created: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => n.startsWith('md-')).map((n) => rm(join(dir, n), { force: true })));
  await writeFile(join(dir, MARKER), created);
}

/**
 * Removes segments that are not whole Parquet files (a crash after a segment was renamed but
 * before its bytes reached the disk): a Parquet file ends with `PAR1`.
 */
export async function removeBroken(dir: string): Promise<void> {
  for (const s of await listSegments(dir)) {
    let whole = false;
    const f = await open(s.file, 'r').catch(() => null);
    if (f) {
      const { size } = await f.stat();
      const tail = Buffer.alloc(4);
      if (size >= 12) await f.read(tail, 0, 4, size - 4);
      await f.close();
      whole = tail.toString('latin1') === 'PAR1';
    }
    if (!whole) await rm(s.file, { force: true });
  }
}

/**
 * One archiver per directory: a lock file with its pid. A lock whose process is gone (a crash) is
 * taken over; one held by a live process is refused.
 */
export async function lockArchive(dir: string): Promise<() => Promise<void>> {
  const lock = resolve(dir, 'archiver.lock');
  const held = await readFile(lock, 'utf8').catch(() => null);
  const pid = held === null ? Number.NaN : Number(held);
  if (lockedHere.has(lock) || (Number.isInteger(pid) && pid !== process.pid && alive(pid)))
    throw new Error(`the MD archive ${dir} is kept by process ${pid}: one archiver per directory`);
  lockedHere.add(lock);
  await writeFile(lock, String(process.pid));
  return async () => {
    lockedHere.delete(lock);
    await rm(lock, { force: true });
  };
}

/** Locks this process holds (its pid is in them, so the file alone cannot tell). */
const lockedHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes segments written half (a stop in the middle of one). */
export async function removeTemporaries(dir: string): Promise<void> {
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(
    names.filter((n) => n.endsWith(TMP_SUFFIX)).map((n) => rm(join(dir, n), { force: true })),
  );
}

/**
 * The parts of the archive that cover `MD` from `firstSeq` on without a hole, up to `lastSeq` at
 * most, and the last sequence they cover (`firstSeq − 1`: none). Segments may overlap (two
 * archivers on one directory): each part says which of its rows are taken, so none is taken twice.
 */
export function coverage(
  segments: readonly Segment[],
  firstSeq: number,
  lastSeq: number,
): { parts: ArchivePart[]; through: number } {
  const parts: ArchivePart[] = [];
  let through = firstSeq - 1;
  for (;;) {
    if (through >= lastSeq) break;
    const next = through + 1;
    // The segment holding `next` that reaches furthest.
    let best: Segment | null = null;
    for (const s of segments)
      if (s.first <= next && s.last >= next && (!best || s.last > best.last)) best = s;
    if (!best) break;
    const to = Math.min(best.last, lastSeq);
    parts.push({ ...best, from: next, to });
    through = to;
  }
  return { parts, through };
}

const inList = (column: string, values: readonly string[]) =>
  `${column} IN (${values.map(sqlString).join(', ')})`;

/**
 * The export's columns of the selection's rows of `parts`: one scan of every file when no two
 * segments overlap (each file then holds only its part of the range), else one SELECT per part.
 */
export function archiveSelectSql(parts: readonly ArchivePart[], sel: ExportSelection): string {
  const columns = EXPORT_COLUMNS.map(([k]) => k).join(', ');
  const where = [
    inList('subj_symbol', sel.coins),
    ...(sel.sources ? [inList('subj_source', sel.sources)] : []),
    ...(sel.event_types ? [inList('subj_type', sel.event_types)] : []),
  ].join(' AND ');
  const apart = parts.every((p, i) => i === 0 || p.first > (parts[i - 1] as ArchivePart).last);
  const first = parts[0];
  const last = parts.at(-1);
  if (apart && first && last)
    return `SELECT ${columns} FROM read_parquet([${parts.map((p) => sqlString(p.file)).join(', ')}]) WHERE seq BETWEEN ${first.from} AND ${last.to} AND ${where}`;
  return parts
    .map(
      (p) =>
        `SELECT ${columns} FROM read_parquet(${sqlString(p.file)}) WHERE seq BETWEEN ${p.from} AND ${p.to} AND ${where}`,
    )
    .join(' UNION ALL ');
}
