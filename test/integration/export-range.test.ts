/**
 * `POST /data/export` end to end with a real worker on the JOBS queue: a known set of events is
 * published to `MD` (and accounts' own events to `OWN`) in three bursts (before, inside and after
 * a time range), the range is exported
 * as Parquet and as CSV through the HTTP API, downloaded, read back with DuckDB and compared row by
 * row with the stored events of the range read from the streams themselves (and nothing else: other
 * coins, another account's own events and the events outside the range are absent, the exporting
 * account's own are there, from `OWN` with `OWN`'s seq), in the order by stored time, `MD`'s
 * before `OWN`'s on a tie, then seq; the file's metadata names both ranges. From the worker's `MD`
 * archive (the whole range in segments, then only its start) the export gives the same bytes. The SHA-256 is the file's, exporting twice gives the same bytes, the
 * file is the owner's only and served with Range; bad input is a 4xx with the catalogue's code;
 * `export_range` through the official MCP SDK client answers the same job.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRange } from '../../consumers/export/export-range.ts';
import { listSegments } from '../../consumers/export/md-archive.ts';
import { startMdArchiver } from '../../consumers/export/md-archiver.ts';
import type { MarketEvent } from '../../contracts/events.ts';
import { EXPORT_COLUMNS } from '../../contracts/export.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { mdSubject, ownSubject, parseFeedSubject } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import { eventually } from '../support/eventually.ts';
import { expectError } from '../support/http.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let owner: { key: string; accountId: string };
let other: { key: string; accountId: string };
const dir = mkdtempSync(join(tmpdir(), 'export-test-'));
/** The range: Unix ms, both included. */
let from = 0;
let to = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A burst of events over BTC, ETH and SOL, with the owner's and the other account's own BTC events. */
async function burst(base: number): Promise<void> {
  const events: { event: MarketEvent; subject: string }[] = [];
  for (let i = 0; i < 60; i++) {
    const coin = ['BTC', 'ETH', 'SOL'][i % 3] as string;
    const n = base + i;
    const event: MarketEvent = i % 4 < 2 ? trade(coin, n) : book(coin, n, 1 + (i % 5));
    const who = i % 5;
    const subject =
      who === 0 && coin === 'BTC'
        ? ownSubject(owner.accountId, 'synthetic', coin, event.event_type)
        : who === 1 && coin === 'BTC'
          ? ownSubject(other.accountId, 'synthetic', coin, event.event_type)
          : mdSubject('synthetic', coin, event.event_type);
    events.push({ event, subject });
  }
  // One at a time, each with its subject (publishNow puts a whole batch on one function of it).
  const bySubject = new Map(events.map((e) => [e.event, e.subject]));
  await publishNow(
    stack.nats.js,
    events.map((e) => e.event),
    (e) => bySubject.get(e) as string,
  );
}

type Stored = { seq: number; storedMs: number; subject: string; event: Record<string, unknown> };

/** Every event stored on `stream`, in order, with its exact stored time (read by the test itself). */
async function storedOn(stream: string, filter: string): Promise<Stored[]> {
  const out: Stored[] = [];
  const consumer = await stack.nats.js.consumers.get(stream, { filter_subjects: filter });
  const messages = await consumer.consume();
  for await (const m of messages) {
    out.push({
      seq: m.seq,
      storedMs: Number(m.timestampNanos / 1_000_000n),
      subject: m.subject,
      event: JSON.parse(new TextDecoder().decode(m.data)),
    });
    if (m.info.pending === 0) break;
  }
  messages.stop();
  return out;
}

/**
 * Every event stored on `MD` and on `OWN`, in the export's order: by stored time, `MD`'s before
 * `OWN`'s on the same millisecond, then by seq.
 */
async function storedEvents(): Promise<Stored[]> {
  const md = await storedOn(STREAMS.MD, 'md.>');
  const own = await storedOn(STREAMS.OWN, 'own.>');
  const ownFirst = (x: Stored) => (x.subject.startsWith('own.') ? 1 : 0);
  return [...md, ...own].sort(
    (a, b) => a.storedMs - b.storedMs || ownFirst(a) - ownFirst(b) || a.seq - b.seq,
  );
}

/** The rows an export of BTC and ETH by `owner` over [from, to] must hold, in order. */
function expectedRows(stored: Stored[]): Record<string, unknown>[] {
  return stored
    .filter((s) => s.storedMs >= from && s.storedMs <= to)
    .filter((s) => {
      const p = parseFeedSubject(s.subject);
      return p && ['BTC', 'ETH'].includes(p.symbol) && (p.owner === null || p.owner === owner.accountId);
    })
    .map((s) => {
      const row: Record<string, unknown> = {};
      const e = s.event;
      for (const [name] of EXPORT_COLUMNS) row[name] = e[name] ?? null;
      row.seq = s.seq;
      row.stored_ms = s.storedMs;
      row.owner = parseFeedSubject(s.subject)?.owner ?? null;
      return row;
    });
}

/** The Parquet file's key-value metadata. */
async function metadataOf(path: string): Promise<Record<string, string>> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(
      `SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${path}')`,
    );
    return Object.fromEntries(reader.getRowObjects().map((r) => [String(r.k), String(r.v)]));
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** The file's rows as JSON values, via DuckDB (Parquet as written; CSV with bids/asks parsed). */
async function rowsOf(path: string, format: 'parquet' | 'csv'): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const json = `${path}.json`;
  try {
    const types = EXPORT_COLUMNS.map(([k, t]) => `${k}: '${t.includes('[]') ? 'VARCHAR' : t}'`).join(', ');
    const source =
      format === 'parquet'
        ? `read_parquet('${path}')`
        : `read_csv('${path}', header = true, nullstr = '', columns = {${types}})`;
    await conn.run(`COPY (SELECT * FROM ${source}) TO '${json}' (FORMAT JSON)`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  const text = await readFile(json, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const row = JSON.parse(line) as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [name] of EXPORT_COLUMNS) {
        const v = row[name] ?? null;
        out[name] =
          format === 'csv' && typeof v === 'string' && (name === 'bids' || name === 'asks')
            ? JSON.parse(v)
            : v;
      }
      return out;
    });
}

const post = (body: unknown, key = owner.key) =>
  fetch(`${stack.http.url}/data/export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });

type Result = {
  download_url: string;
  content_length_bytes: number;
  sha256: string;
  row_count: number;
  format: string;
};

type JobView = { status: string; result: Result | null; progress: { rows_done: number; rows_total: number } };

/** The job once completed (a failed job fails the test at once). */
const completed = (statusUrl: string): Promise<JobView> =>
  eventually(
    async () => {
      const s = (await (await fetch(statusUrl, { headers: { 'x-api-key': owner.key } })).json()) as JobView;
      if (s.status === 'failed') throw new Error(`export failed: ${JSON.stringify(s)}`);
      return s.status === 'completed' ? s : null;
    },
    30_000,
    'the export job completed',
  );

/** Exports and waits for the job; resolves with its result and the downloaded bytes. */
async function exportAndDownload(
  body: Record<string, unknown>,
): Promise<{ result: Result; bytes: Buffer; job: { first_seq: number; last_seq: number } }> {
  const res = await post(body);
  expect(res.status).toBe(202);
  const job = (await res.json()) as {
    job_id: string;
    status_url: string;
    first_seq: number;
    last_seq: number;
  };
  expect(job.job_id).toMatch(/^export_[0-9A-Za-z]{16}$/);
  expect(res.headers.get('location')).toBe(job.status_url);
  const done = await completed(job.status_url);
  const result = done.result as Result;
  expect(done.progress.rows_done).toBe(result.row_count);
  const file = await fetch(result.download_url, { headers: { 'x-api-key': owner.key } });
  expect(file.status).toBe(200);
  const bytes = Buffer.from(await file.arrayBuffer());
  expect(Number(file.headers.get('content-length'))).toBe(result.content_length_bytes);
  return { result, bytes, job };
}

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
  owner = await stack.accounts.key('pro', { scopes: ['generate'] });
  other = await stack.accounts.key('pro', { scopes: ['generate'] });
  await burst(0);
  await sleep(20);
  from = Date.now();
  await sleep(5);
  await burst(1_000);
  await sleep(5);
  await burst(2_000);
  await sleep(5);
  to = Date.now();
  await sleep(20);
  await burst(3_000);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /data/export', () => {
  for (const format of ['parquet', 'csv'] as const) {
    it(`exports exactly the stored events of the range as ${format}, the same bytes twice`, async () => {
      const body = { coins: ['ETH', 'BTC'], from: new Date(from).toISOString(), to, format };
      const { result, bytes } = await exportAndDownload(body);
      expect(result.format).toBe(format);
      expect(bytes.length).toBe(result.content_length_bytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(result.sha256);
      const path = join(dir, `range.${format}`);
      writeFileSync(path, bytes);

      const expected = expectedRows(await storedEvents());
      // The range holds the middle bursts' selected events: some of each kind, the owner's own included.
      expect(expected.length).toBeGreaterThan(40);
      expect(expected.some((r) => r.owner === owner.accountId)).toBe(true);
      expect(expected.some((r) => r.event_type === 'book')).toBe(true);
      const rows = await rowsOf(path, format);
      expect(rows.length).toBe(result.row_count);
      expect(rows).toEqual(expected);
      // Each stream in its own order; the owner's own events are OWN's, with OWN's sequence.
      const mdRows = rows.filter((r) => r.owner === null).map((r) => r.seq as number);
      const ownRows = rows.filter((r) => r.owner !== null).map((r) => r.seq as number);
      expect(mdRows).toEqual([...mdRows].sort((a, b) => a - b));
      expect(ownRows).toEqual([...ownRows].sort((a, b) => a - b));
      const ownStored = await storedOn(STREAMS.OWN, `own.${owner.accountId}.>`);
      const ownInRange = ownStored.filter((x) => x.storedMs >= from && x.storedMs <= to);
      expect(ownRows).toEqual(ownInRange.map((x) => x.seq));
      expect(rows.some((r) => r.owner === other.accountId || r.symbol === 'SOL')).toBe(false);
      // Nothing outside the range: every row's time and event index are the middle bursts'.
      expect(rows.every((r) => (r.stored_ms as number) >= from && (r.stored_ms as number) <= to)).toBe(true);
      expect(rows.every((r) => (r.timestamp_ms as number) >= 1_767_225_601_000)).toBe(true);
      expect(rows.every((r) => (r.timestamp_ms as number) < 1_767_225_603_000)).toBe(true);

      const again = await exportAndDownload(body);
      expect(again.result.sha256).toBe(result.sha256);
      expect(again.bytes.equals(bytes)).toBe(true);
      // Through a named pipe (DuckDB reading while the events are read): the same bytes.
      const viaPipe = join(dir, `pipe.${format}`);
      const selection = {
        coins: ['BTC', 'ETH'],
        sources: null,
        event_types: null,
        account_id: owner.accountId,
      };
      const { first_seq, last_seq } = again.job;
      const exportTo = (out: string, how: { pipe?: boolean; archiveDir?: string; maxRows?: number }) =>
        exportRange(stack.nats, {
          selection,
          format,
          firstSeq: first_seq,
          lastSeq: last_seq,
          fromMs: from,
          toMs: to,
          out,
          ...how,
        });
      await exportTo(viaPipe, { pipe: true });
      expect(readFileSync(viaPipe).equals(bytes)).toBe(true);
      // From the MD archive: the whole range in segments, then only its start (the rest read
      // from MD): the same bytes each time.
      const archiveDir = join(dir, `archive-${format}`);
      const archiver = await startMdArchiver(stack.nats, createLogger('silent', 'test'), {
        dir: archiveDir,
        segmentSeqs: 17,
        pollMs: 20,
      });
      try {
        await eventually(
          () => archiver.through() >= last_seq,
          10_000,
          "the archive reaching the range's end",
        );
      } finally {
        await archiver.stop();
      }
      const viaArchive = join(dir, `archive.${format}`);
      const exportArchived = () => exportTo(viaArchive, { archiveDir });
      await exportArchived();
      expect(readFileSync(viaArchive).equals(bytes)).toBe(true);
      // Archived rows count in the export's bound like the others.
      await expect(exportTo(viaArchive, { archiveDir, maxRows: 3 })).rejects.toThrow(/more than 3 events/);
      for (const s of await listSegments(archiveDir)) if (s.first > first_seq + 20) rmSync(s.file);
      const kept = await listSegments(archiveDir);
      expect(kept.some((s) => s.first <= first_seq && s.last >= first_seq)).toBe(true);
      expect(Math.max(...kept.map((s) => s.last))).toBeLessThan(last_seq);
      await exportArchived();
      expect(readFileSync(viaArchive).equals(bytes)).toBe(true);
      const rowCount = (await rowsOf(path, format)).length;
      await expect(exportTo(viaArchive, { archiveDir, maxRows: rowCount - 1 })).rejects.toThrow(
        `more than ${(rowCount - 1).toLocaleString('en-US')} events`,
      );
      await exportTo(viaArchive, { archiveDir, maxRows: rowCount });
      if (format === 'parquet') {
        // `first_seq`/`last_seq`: the range on MD; `own_*`: the same instants on OWN.
        const ownAll = await storedOn(STREAMS.OWN, 'own.>');
        const ownIn = ownAll.filter((x) => x.storedMs >= from && x.storedMs <= to).map((x) => x.seq);
        expect(await metadataOf(path)).toMatchObject({
          first_seq: String(first_seq),
          last_seq: String(last_seq),
          own_first_seq: String(ownIn[0]),
          own_last_seq: String(ownIn.at(-1)),
        });
      }
    }, 60_000);
  }

  it('serves the file to its owner only, with Range', async () => {
    const { result, bytes } = await exportAndDownload({ coins: ['BTC'], from, to });
    const part = await fetch(result.download_url, {
      headers: { 'x-api-key': owner.key, range: 'bytes=0-3' },
    });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).toString()).toBe('PAR1');
    expect(bytes.subarray(-4).toString()).toBe('PAR1');
    await expectError(
      await fetch(result.download_url, { headers: { 'x-api-key': other.key } }),
      404,
      'not_found',
    );
    await expectError(await fetch(result.download_url), 401, 'invalid_key');
  });

  it('an empty range is an empty file with the columns', async () => {
    const { result, bytes } = await exportAndDownload({ coins: ['DOGE'], from, to, format: 'csv' });
    expect(result.row_count).toBe(0);
    expect(bytes.toString()).toBe(`${EXPORT_COLUMNS.map(([k]) => k).join(',')}\n`);
  });

  it('refuses bad input with the catalogue code, the field and a request id', async () => {
    await expectError(await post({ coins: 'BTC', from, to }), 400, 'invalid_params', 'coins');
    await expectError(await post({ from, to }), 400, 'invalid_params', 'coins');
    await expectError(await post({ coins: [], from, to }), 422, 'unprocessable', 'coins');
    const many = Array.from({ length: 21 }, (_, i) => `C${i}`);
    await expectError(await post({ coins: many, from, to }), 422, 'unprocessable', 'coins');
    await expectError(await post({ coins: ['BTC'], from: 'yesterday', to }), 422, 'unprocessable', 'from');
    await expectError(
      await post({ coins: ['BTC'], from, to, format: 'xlsx' }),
      422,
      'unprocessable',
      'format',
    );
    await expectError(await post({ coins: ['BTC'], from, to, limit: 1 }), 422, 'unprocessable');
    await expectError(await post({ coins: ['BTC'], from: to, to: from }), 422, 'invalid_time_range', 'from');
    await expectError(
      await post({ coins: ['BTC'], from: to - 40 * 86_400_000, to }),
      422,
      'invalid_time_range',
      'to',
    );
    await expectError(
      await post({ coins: ['BTC'], from, to: Date.now() + 3_600_000 }),
      422,
      'invalid_time_range',
      'to',
    );
    const noScope = await stack.accounts.key('pro', { scopes: ['stream'] });
    await expectError(await post({ coins: ['BTC'], from, to }, noScope.key), 403, 'forbidden');
    await expectError(await post({ coins: ['BTC'], from, to }, 'mdp_live_nope'), 401, 'invalid_key');
  });
});

describe('export_range (MCP)', () => {
  it('queues the same export through the official MCP SDK client', async () => {
    const client = new Client({ name: 'export-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.http.url}/mcp`), {
        requestInit: { headers: { 'X-API-Key': owner.key } },
      }),
    );
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toContain('export_range');
      const called = await client.callTool({
        name: 'export_range',
        arguments: { coins: ['BTC', 'ETH'], from, to, format: 'parquet' },
      });
      expect(called.isError).toBeFalsy();
      const job = JSON.parse((called.content as { text: string }[])[0]?.text ?? 'null');
      expect(job).toMatchObject({ status: 'queued', job_id: expect.stringMatching(/^export_/) });
      const direct = await exportAndDownload({ coins: ['BTC', 'ETH'], from, to });
      const done = await completed(job.status_url);
      expect(done.result?.sha256).toBe(direct.result.sha256);
      const bad = await client.callTool({
        name: 'export_range',
        arguments: { coins: ['BTC'], from: to, to: from },
      });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as { text: string }[])[0]?.text ?? 'null').error).toBe(
        'invalid_time_range',
      );
    } finally {
      await client.close();
    }
  }, 60_000);
});
