/**
 * The `MD` archive on a real nats-server: segments cover the stream's sequences without a hole or
 * an overlap and hold every stored event once with the export's columns (read back with DuckDB,
 * compared with the stream); a stop in the middle of a segment and a restart go on from the last
 * segment (nothing twice, nothing lost); a quiet feed's pending segment is written after the flush
 * time; a segment filled by many small reads (a live feed) adds no listener per read; segments
 * wholly before the stream's first sequence (removed by its limits) are deleted; a second archiver
 * on the directory is refused; a new `MD` (deleted and made again) empties it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setupStreams } from '../../app/streams.ts';
import { listSegments } from '../../consumers/export/md-archive.ts';
import { type MdArchiver, startMdArchiver } from '../../consumers/export/md-archiver.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { book, publishNow, trade } from '../support/publisher.ts';

const log = createLogger('silent', 'test');
const dir = mkdtempSync(join(tmpdir(), 'md-archive-test-'));
const archiveDir = join(dir, 'archive');
let server: TestNats;
let nats: Nats;
let archiver: MdArchiver | null = null;

const publish = (from: number, n: number) =>
  publishNow(
    nats.js,
    Array.from({ length: n }, (_, i) =>
      (from + i) % 3 === 0
        ? book(['BTC', 'ETH'][i % 2] as string, from + i, 3)
        : trade(['BTC', 'ETH'][i % 2] as string, from + i),
    ),
  );

const lastSeq = async () => (await nats.jsm.streams.info(STREAMS.MD)).state.last_seq;

/** Every archived row's (seq, symbol, event_type, price, bids' length), in file order. */
async function archivedRows(): Promise<
  { seq: number; symbol: string; type: string; levels: number | null }[]
> {
  const files = (await listSegments(archiveDir)).map((s) => `'${s.file}'`);
  if (files.length === 0) return [];
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(
      `SELECT seq, symbol, event_type, len(bids) AS levels, subj_symbol, subj_type FROM read_parquet([${files.join(', ')}]) ORDER BY seq`,
    );
    return reader.getRowObjects().map((r) => {
      expect(r.subj_symbol).toBe(r.symbol);
      expect(r.subj_type).toBe(r.event_type);
      return {
        seq: Number(r.seq),
        symbol: String(r.symbol),
        type: String(r.event_type),
        levels: r.levels === null ? null : Number(r.levels),
      };
    });
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** The stream's own events, read by the test. */
async function storedRows(): Promise<{ seq: number; symbol: string; type: string; levels: number | null }[]> {
  const out: { seq: number; symbol: string; type: string; levels: number | null }[] = [];
  const last = await lastSeq();
  const { state } = await nats.jsm.streams.info(STREAMS.MD);
  for (let seq = state.first_seq; seq <= last; seq++) {
    const m = await nats.jsm.streams.getMessage(STREAMS.MD, { seq });
    if (!m) throw new Error(`no message ${seq}`);
    const ev = m.json<{ symbol: string; event_type: string; bids?: unknown[] }>();
    out.push({ seq, symbol: ev.symbol, type: ev.event_type, levels: ev.bids ? ev.bids.length : null });
  }
  return out;
}

/** Segments follow each other: each starts right after the one before. */
async function contiguous(): Promise<void> {
  const segments = await listSegments(archiveDir);
  for (let i = 1; i < segments.length; i++)
    expect((segments[i] as { first: number }).first).toBe((segments[i - 1] as { last: number }).last + 1);
}

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, testConfig());
}, 30_000);

afterAll(async () => {
  await archiver?.stop();
  await nats?.nc.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('archives every stored event once, in segments that follow each other, across a restart', async () => {
  await publish(0, 95);
  archiver = await startMdArchiver(nats, log, { dir: archiveDir, segmentSeqs: 20, pollMs: 20 });
  await eventually(() => archiver?.through() === 80, 10_000, 'four segments of 20');
  // Stopped with 15 sequences pending: they are read again after the restart, not lost.
  await archiver.stop();
  expect((await listSegments(archiveDir)).map((s) => [s.first, s.last])).toEqual([
    [1, 20],
    [21, 40],
    [41, 60],
    [61, 80],
  ]);
  await publish(95, 30);
  archiver = await startMdArchiver(nats, log, { dir: archiveDir, segmentSeqs: 20, pollMs: 20, flushMs: 300 });
  // 125 stored: 100 and 120 by size, then the last 5 by the flush time of a quiet feed.
  await eventually(() => archiver?.through() === 125, 10_000, 'the quiet tail written after the flush time');
  await contiguous();
  expect(await archivedRows()).toEqual(await storedRows());
}, 60_000);

it('a segment filled by many small reads (a live feed) holds no listener per read', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  const dir2 = join(dir, 'live');
  const live = await startMdArchiver(nats, log, {
    dir: dir2,
    segmentSeqs: 1_000_000,
    pollMs: 10,
    flushMs: 60_000,
  });
  try {
    const at = await lastSeq();
    for (let i = 0; i < 15; i++) {
      await publish(1_000 + i, 1);
      // Each event read into the pending segment by a read of its own.
      await new Promise((r) => setTimeout(r, 40));
    }
    expect(await lastSeq()).toBe(at + 15);
  } finally {
    await live.stop();
    process.off('warning', onWarning);
  }
  expect(warnings.filter((w) => w === 'MaxListenersExceededWarning')).toEqual([]);
}, 30_000);

it('deletes segments the stream no longer holds', async () => {
  // The stream's limits removed everything before 45: segments ending before it go.
  await nats.jsm.streams.purge(STREAMS.MD, { seq: 45 });
  await publish(200, 1);
  await eventually(
    async () => (await listSegments(archiveDir))[0]?.first === 41,
    10_000,
    'the segments before the first sequence deleted',
  );
  await contiguous();
}, 30_000);

it('one archiver per directory: a second one on it is refused', async () => {
  await expect(startMdArchiver(nats, log, { dir: archiveDir })).rejects.toThrow(/one archiver per directory/);
});

it('a new MD (deleted and made again) empties the archive, which then follows the new one', async () => {
  await nats.jsm.streams.delete(STREAMS.MD);
  await setupStreams(nats, testConfig());
  await publish(300, 25);
  await eventually(async () => archiver?.through() === 25, 10_000, 'the new stream archived from its start');
  expect((await listSegments(archiveDir)).map((s) => [s.first, s.last])).toEqual([
    [1, 20],
    [21, 25],
  ]);
  expect(await archivedRows()).toEqual(await storedRows());
}, 30_000);
