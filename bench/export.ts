/**
 * `npm run bench -- export` (issue 31 §3): an export of BENCH_EXPORT_EVENTS stored events
 * (default 1,000,000; 3 trades to 1 ten-level book, four coins) to Parquet, end to end as a worker
 * runs it (consumers/export/export-range.ts), against DuckDB alone writing the same rows from an
 * NDJSON file already on disk (the same statement, the same settings), in the same run, on one
 * private nats-server. The worker's export reads what its `MD` archive holds (Parquet segments,
 * consumers/export/md-archive.ts: written first here, by the archiver, and timed: its own rate)
 * with DuckDB; the export without the archive (ordered consumer → NDJSON → DuckDB) is measured
 * beside it. BENCH_EXPORT_ROUNDS rounds (default 3), the order rotated each round; every run
 * printed, medians compared: ratio = export events/s ÷ DuckDB-alone events/s (goal ≥ 0.8×). Also:
 * the read phase alone (MD → NDJSON), and whether every export of the run, from the archive or not,
 * wrote the same bytes.
 * BENCH_EXPORT_FORMAT: parquet (default) or csv. */
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  copySql,
  exportMetadata,
  exportRange,
  runDuckdbCopy,
  writeRangeNdjson,
} from '../consumers/export/export-range.ts';
import { startMdArchiver } from '../consumers/export/md-archiver.ts';
import { encodeStoredEvent } from '../contracts/event-wire.ts';
import type { MarketEvent } from '../contracts/events.ts';
import type { ExportFormat, ExportSelection } from '../contracts/export.ts';
import { STREAMS } from '../contracts/streams.ts';
import { mdSubject } from '../contracts/subjects.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { book, trade } from '../test/support/publisher.ts';
import { COINS, resetMdStream, startBenchNats } from './lib/feed.ts';
import { sleep } from './lib/ipc.ts';

const EVENTS = Number(process.env.BENCH_EXPORT_EVENTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_EXPORT_ROUNDS ?? 3);
const FORMAT = (process.env.BENCH_EXPORT_FORMAT ?? 'parquet') as ExportFormat;
/** Archive segments, as a worker writes them (MD_ARCHIVE_SEGMENT_SEQS's default). */
const SEGMENT = 100_000;

const progress = (line: string) => process.stderr.write(`  export: ${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Stores `n` events (3 trades : 1 book of 10 levels, over COINS) on `MD`; waits until all are stored. */
async function fill(nats: Nats, n: number): Promise<void> {
  const templates = Array.from({ length: 256 }, (_, k) => {
    const coin = COINS[k % COINS.length] as string;
    const ev: MarketEvent = k % 4 === 3 ? book(coin, k, 10) : trade(coin, k);
    return { subject: mdSubject(ev.source, ev.symbol, ev.event_type), data: encodeStoredEvent(ev) };
  });
  for (let i = 0; i < n; i++) {
    const t = templates[i & 255] as { subject: string; data: Uint8Array };
    nats.nc.publish(t.subject, t.data);
    if (i % 10_000 === 9_999) await nats.nc.flush();
  }
  await nats.nc.flush();
  for (;;) {
    const stored = (await nats.jsm.streams.info(STREAMS.MD)).state.messages;
    if (stored >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const dir = mkdtempSync(join(tmpdir(), 'mdp-bench-export-'));
  try {
    const { nats } = bench;
    await resetMdStream(nats);
    const t0 = performance.now();
    await fill(nats, EVENTS);
    const state = (await nats.jsm.streams.info(STREAMS.MD)).state;
    progress(`${state.messages} events stored in ${Math.round(performance.now() - t0)} ms`);
    const selection: ExportSelection = {
      coins: [...COINS].sort(),
      sources: null,
      event_types: null,
      account_id: null,
    };
    const range = { selection, firstSeq: state.first_seq, lastSeq: state.last_seq };

    // The baseline's input: the very rows an export writes, as NDJSON on disk (not timed).
    const ndjson = join(dir, 'rows.ndjson');
    const tRead = performance.now();
    const rows = await writeRangeNdjson(nats, range, createWriteStream(ndjson));
    const readMs = performance.now() - tRead;
    progress(`NDJSON of ${rows} rows, ${statSync(ndjson).size} bytes, read in ${Math.round(readMs)} ms`);
    const meta = exportMetadata(selection, range.firstSeq, range.lastSeq);

    // The worker's archive of MD, written as a worker writes it (timed: the archiver's own rate).
    const archiveDir = join(dir, 'archive');
    const tArchive = performance.now();
    const archiver = await startMdArchiver(nats, createLogger('silent', 'bench'), {
      dir: archiveDir,
      pollMs: 20,
      segmentSeqs: SEGMENT,
      // The last, short segment of a stream that is not a whole number of them: at once.
      flushMs: 1_000,
    });
    while (archiver.through() < state.last_seq) await sleep(20);
    const archiveMs = performance.now() - tArchive;
    await archiver.stop();
    progress(`archived through ${archiver.through()} in ${Math.round(archiveMs)} ms`);

    type Case = 'export' | 'export_from_md' | 'duckdb_only';
    const cases: Case[] = ['export', 'export_from_md', 'duckdb_only'];
    const ms: Record<Case, number[]> = { export: [], export_from_md: [], duckdb_only: [] };
    const hashes = new Set<string>();
    const runs: { round: number; case: string; ms: number; events_per_s: number; sha256: string }[] = [];
    const once = async (round: number, which: Case) => {
      const out = join(dir, `${which}-${round}.${FORMAT}`);
      const t = performance.now();
      if (which === 'duckdb_only') await runDuckdbCopy(copySql(ndjson, out, FORMAT, meta));
      else
        await exportRange(nats, {
          ...range,
          format: FORMAT,
          out,
          tmpDir: dir,
          ...(which === 'export' ? { archiveDir } : {}),
        });
      const took = performance.now() - t;
      ms[which].push(took);
      const hash = sha(out);
      // The exports' bytes (DuckDB alone writes the rows unsorted: its row groups fall elsewhere).
      if (which !== 'duckdb_only') hashes.add(hash);
      runs.push({
        round,
        case: which,
        ms: Math.round(took),
        events_per_s: Math.round(rows / (took / 1_000)),
        sha256: hash.slice(0, 16),
      });
      rmSync(out);
      progress(`round ${round} ${which}: ${Math.round(took)} ms`);
    };
    for (let round = 0; round < ROUNDS; round++)
      for (let k = 0; k < cases.length; k++) await once(round, cases[(round + k) % cases.length] as Case);
    const exportMedian = median(ms.export);
    const fromMdMedian = median(ms.export_from_md);
    const duckdbMedian = median(ms.duckdb_only);
    return {
      benchmark: 'export',
      events: rows,
      format: FORMAT,
      rounds: ROUNDS,
      cpus: cpus().length,
      load_avg: loadavg().map(round3),
      export: {
        median_ms: Math.round(exportMedian),
        events_per_s: Math.round(rows / (exportMedian / 1_000)),
      },
      export_from_md: {
        median_ms: Math.round(fromMdMedian),
        events_per_s: Math.round(rows / (fromMdMedian / 1_000)),
        ratio_vs_duckdb: round3(duckdbMedian / fromMdMedian),
      },
      archive: {
        through: archiver.through(),
        ms: Math.round(archiveMs),
        events_per_s: Math.round(archiver.through() / (archiveMs / 1_000)),
      },
      duckdb_only: {
        median_ms: Math.round(duckdbMedian),
        events_per_s: Math.round(rows / (duckdbMedian / 1_000)),
      },
      read_phase_ms: Math.round(readMs),
      ratio_export_vs_duckdb: round3(duckdbMedian / exportMedian),
      goal: 0.8,
      meets_goal: duckdbMedian / exportMedian >= 0.8,
      same_bytes_every_export: hashes.size === 1,
      runs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await bench.cleanup();
  }
}
