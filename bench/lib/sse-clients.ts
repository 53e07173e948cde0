/**
 * Worker: the client side of the unified benchmark, in its own process. Opens many SSE
 * connections over plain sockets read into one shared buffer (raw-sse-get.ts) with a hand-written
 * parser cheap enough for ~1M events/s (a resume reads through node:http), and
 * measures publish → receipt latency from each event's `publish_us` against this process's wall
 * clock (taken once per received chunk). Also runs the raw JetStream baselines: an ordered
 * consumer (latency) and an ordered push consumer (replay throughput).
 */

import { Agent, get } from 'node:http';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { parseStoredEvent } from '../../contracts/event-wire.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { MD_ALL } from '../../contracts/subjects.ts';
import { Histogram } from './histogram.ts';
import { serveWorker, sleep } from './ipc.ts';
import { ProcStats, wallUs } from './proc-stats.ts';
import { countWithPushConsumer, pushCountFields } from './push-count.ts';
import { type RawSse, rawSseGet } from './raw-sse-get.ts';

const PUB = Buffer.from('"publish_us":');
const NLNL = Buffer.from('\n\n');
const CH_I = 0x69; // 'i' of `id:`
const CH_E = 0x65; // 'e' of `event:`
const CH_0 = 0x30;
const CH_BRACE = 0x7d;
const CH_NL = 0x0a;

/** Whether `buf` holds `tail` ending at index `at` (inclusive). */
function endsWith(buf: Buffer, at: number, tail: Buffer): boolean {
  const from = at - tail.length + 1;
  if (from < 0) return false;
  for (let i = 0; i < tail.length; i++) if (buf[from + i] !== tail[i]) return false;
  return true;
}

/** Where in `chunk` the frame that `left` began ends (just past its blank line); -1: not in it. */
function cutFrameEnd(left: Buffer, chunk: Buffer): number {
  if (left[left.length - 1] === CH_NL && chunk[0] === CH_NL) return 1;
  const e = chunk.indexOf(NLNL);
  return e < 0 ? -1 : e + 2;
}

/** Counters shared by every connection of this process, for the current window. */
const latency = new Histogram();
/** The raw JetStream consumer's latencies, kept apart so it can run beside SSE clients. */
const natsLatency = new Histogram();
let natsEvents = 0;
const proc = new ProcStats();
const counters = {
  events: 0,
  /** Socket reads ('data' events) of every connection: how finely the server's writes arrive. */
  chunks: 0,
  gaps: 0,
  duplicates: 0,
  malformed: 0,
  closed: 0,
  errors: {} as Record<string, number>,
  notices: {} as Record<string, number>,
};
let windowStart = performance.now();
/** Sequence every connection must reach for `waitAll` (bursts). */
let target = Number.POSITIVE_INFINITY;
/**
 * Whether each event's `publish_us` is read and its latency recorded. A saturating burst only
 * counts and checks order: reading the latency was most of this parser's cost per event (about
 * 130 of 150 ns), CPU that the server under test shares on a 2-core machine.
 */
let timing = true;
/** Since the current connections were opened (not reset by `reset`): did any client get dropped? */
const lifetime = { closed: 0, errors: {} as Record<string, number> };

function resetCounters(): void {
  latency.reset();
  natsLatency.reset();
  natsEvents = 0;
  proc.reset();
  counters.events = 0;
  counters.chunks = 0;
  counters.gaps = 0;
  counters.duplicates = 0;
  counters.malformed = 0;
  counters.closed = 0;
  counters.errors = {};
  counters.notices = {};
  windowStart = performance.now();
}

/** Events per socket read, over every connection since the last reset. */
const perRead = (): number => Math.round((counters.events / Math.max(1, counters.chunks)) * 10) / 10;

/** One SSE connection: frames are parsed straight from the bytes; only control frames become strings. */
class SseConn {
  private leftover: Buffer | null = null;
  lastSeq = 0;
  events = 0;
  ended = false;
  raw: RawSse | null = null;
  onEvent: ((seq: number) => void) | null = null;
  /** When this connection received the event with sequence ≥ `target` (0: not yet). */
  reachedAt = 0;

  chunk(chunk: Buffer): void {
    const now = wallUs();
    counters.chunks++;
    let buf = chunk;
    let from = 0;
    const left = this.leftover;
    if (left) {
      // Only the frame cut by the read's edge is joined (a copy of the whole read per read was a
      // fifth of this process's CPU, with its collection): the rest of the read is parsed in place.
      this.leftover = null;
      const cut = cutFrameEnd(left, chunk);
      if (cut < 0) {
        this.leftover = Buffer.concat([left, chunk]);
        return;
      }
      const head = Buffer.concat([left, chunk.subarray(0, cut)]);
      const stopped = this.parse(head, 0, now);
      // Not one whole frame after all: the rest of it goes on with the read, joined.
      if (stopped < head.length) buf = Buffer.concat([head.subarray(stopped), chunk.subarray(cut)]);
      else from = cut;
    }
    const at = this.parse(buf, from, now);
    // Copied: a read is a view of the buffer every connection reads into (raw-sse-get.ts).
    if (at < buf.length) this.leftover = Buffer.from(buf.subarray(at));
  }

  /** Parses the whole frames of `buf` from `pos`; returns where the first incomplete one starts. */
  private parse(buf: Buffer, start: number, now: number): number {
    const len = buf.length;
    let pos = start;
    while (pos < len) {
      const c = buf[pos];
      if (c === CH_I) {
        // `id: <seq>\ndata: {..."publish_us":<µs>}\n\n`
        let p = pos + 4;
        let seq = 0;
        for (; p < len; p++) {
          const d = (buf[p] as number) - CH_0;
          if (d < 0 || d > 9) break;
          seq = seq * 10 + d;
        }
        // The data line holds no newline (compact JSON), so its end is one byte search away, and
        // `publish_us` is its last member: its digits are read backwards from the closing brace.
        // (A search for `"publish_us":` itself was a third of this process's CPU at 1M events/s.)
        const nl = buf.indexOf(CH_NL, p + 1);
        if (nl < 0 || nl + 1 >= len) break;
        let end: number;
        let us = 0;
        if (buf[nl + 1] === CH_NL && !timing) {
          end = nl + 2;
        } else if (buf[nl + 1] === CH_NL && buf[nl - 1] === CH_BRACE) {
          let r = nl - 2;
          for (let mul = 1; r > p; r--, mul *= 10) {
            const d = (buf[r] as number) - CH_0;
            if (d < 0 || d > 9) break;
            us += d * mul;
          }
          if (!endsWith(buf, r, PUB)) counters.malformed++;
          end = nl + 2;
        } else {
          const e = buf.indexOf(NLNL, p);
          if (e < 0) break;
          counters.malformed++;
          end = e + 2;
        }
        this.event(seq, now - us);
        pos = end;
      } else {
        const e = buf.indexOf(NLNL, pos);
        if (e < 0) break;
        if (c === CH_E) this.control(buf.toString('utf8', pos, e));
        pos = e + 2;
      }
    }
    return pos;
  }

  private event(seq: number, latencyUs: number): void {
    if (this.lastSeq !== 0) {
      if (seq <= this.lastSeq) counters.duplicates++;
      else if (seq !== this.lastSeq + 1) counters.gaps++;
    }
    this.lastSeq = seq;
    this.events++;
    counters.events++;
    if (timing) latency.record(latencyUs);
    if (seq >= target && this.reachedAt === 0) this.reachedAt = performance.now();
    this.onEvent?.(seq);
  }

  private control(frame: string): void {
    const name = /^event: ?(.*)$/m.exec(frame)?.[1] ?? 'message';
    const data = /^data: ?(.*)$/m.exec(frame)?.[1] ?? '{}';
    let code = 'unknown';
    try {
      code = String((JSON.parse(data) as { code?: unknown }).code ?? 'unknown');
    } catch {}
    const bag = name === 'error' ? counters.errors : counters.notices;
    bag[code] = (bag[code] ?? 0) + 1;
    if (name === 'error') lifetime.errors[code] = (lifetime.errors[code] ?? 0) + 1;
  }
}

const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
let conns: SseConn[] = [];

async function open(url: string, headers: Record<string, string> = {}): Promise<SseConn> {
  const conn = new SseConn();
  conn.raw = await rawSseGet(url, headers, {
    data: (view) => conn.chunk(view),
    end: () => {
      if (conn.ended) return;
      conn.ended = true;
      counters.closed++;
      lifetime.closed++;
    },
  });
  return conn;
}

let nc: NatsConnection | null = null;
let stopNats: (() => void) | null = null;
let natsGaps = 0;

async function natsConn(url: string): Promise<NatsConnection> {
  nc ??= await connect({ servers: url, noAsyncTraces: true, name: 'bench-clients' });
  return nc;
}

serveWorker(
  {
    /** Opens `n` SSE connections (in waves of 100) and resolves once all have their response headers. */
    async connect(args: { url: string; n: number; headers?: Record<string, string> }) {
      const t0 = performance.now();
      if (conns.length === 0) {
        lifetime.closed = 0;
        lifetime.errors = {};
      }
      for (let i = 0; i < args.n; i += 100) {
        const wave = await Promise.all(
          Array.from({ length: Math.min(100, args.n - i) }, () => open(args.url, args.headers)),
        );
        conns.push(...wave);
      }
      return { connections: conns.length, ms: Math.round(performance.now() - t0) };
    },
    async disconnect() {
      for (const c of conns) {
        c.ended = true; // closed by us: not counted as a drop
        c.raw?.destroy();
      }
      conns = [];
      await sleep(50);
    },
    reset() {
      resetCounters();
    },
    /**
     * Starts a window in which every open connection must receive the event with sequence `seq`;
     * `timing: false` counts events without reading their latency.
     */
    expect(args: { seq: number; timing?: boolean }) {
      resetCounters();
      target = args.seq;
      timing = args.timing ?? true;
      for (const c of conns) c.reachedAt = 0;
    },
    /** Resolves when every open connection has the expected event (or at the deadline). */
    async waitAll(args: { timeoutMs: number }) {
      const deadline = performance.now() + args.timeoutMs;
      const pending = () => conns.filter((c) => !c.ended && c.reachedAt === 0).length;
      while (pending() > 0 && performance.now() < deadline) await sleep(5);
      const open = conns.filter((c) => !c.ended);
      const last = Math.max(0, ...open.map((c) => c.reachedAt));
      const completed = pending() === 0 && open.length > 0;
      const seconds = ((completed ? last : performance.now()) - windowStart) / 1_000;
      target = Number.POSITIVE_INFINITY;
      timing = true;
      return {
        completed,
        seconds: Math.round(seconds * 1_000) / 1_000,
        events: counters.events,
        events_per_s: Math.round(counters.events / seconds),
        reads: counters.chunks,
        events_per_read: perRead(),
        first_connection_done_s: open.length
          ? Math.round(Math.min(...open.map((c) => c.reachedAt || Number.POSITIVE_INFINITY)) - windowStart) /
            1_000
          : null,
        latency_us: latency.summary(),
        gaps: counters.gaps,
        duplicates: counters.duplicates,
        closed_connections: counters.closed,
        open_connections: open.length,
        since_connect: { closed_connections: lifetime.closed, errors: lifetime.errors },
        proc: proc.read(),
      };
    },
    /** Events, latency (µs) and load since the last reset. */
    snapshot() {
      const seconds = (performance.now() - windowStart) / 1_000;
      const perConn = conns.map((c) => c.events);
      return {
        seconds: Math.round(seconds * 1_000) / 1_000,
        events: counters.events,
        events_per_s: Math.round(counters.events / seconds),
        events_per_read: perRead(),
        latency_us: latency.summary(),
        /** The latencies themselves, for a group of client processes to merge (sse-client-group.ts). */
        latency_histogram: latency.serialize(),
        reads: counters.chunks,
        ...(stopNats
          ? { nats: { events: natsEvents, gaps: natsGaps, latency_us: natsLatency.summary() } }
          : {}),
        gaps: counters.gaps,
        duplicates: counters.duplicates,
        malformed: counters.malformed,
        closed_connections: counters.closed,
        errors: counters.errors,
        since_connect: { closed_connections: lifetime.closed, errors: lifetime.errors },
        notices: counters.notices,
        open_connections: conns.filter((c) => !c.ended).length,
        min_events_per_connection: perConn.length ? Math.min(...perConn) : 0,
        proc: proc.read(),
      };
    },
    /** Raw baseline: one ordered JetStream consumer from the stream's end, publish_us → receipt. */
    async natsLatencyStart(args: { natsUrl: string }) {
      const c = await natsConn(args.natsUrl);
      const info = await (await jetstreamManager(c)).streams.info(STREAMS.MD);
      const consumer = await jetstream(c).consumers.get(STREAMS.MD, {
        filter_subjects: MD_ALL,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: info.state.last_seq + 1,
      });
      let last = 0;
      natsGaps = 0;
      const messages = await consumer.consume({
        max_messages: 10_000,
        callback: (m) => {
          const now = wallUs();
          const seq = m.info.streamSequence;
          if (last !== 0 && seq !== last + 1) natsGaps++;
          last = seq;
          const body = parseStoredEvent<{ publish_us?: number }>(m.data) ?? {};
          natsEvents++;
          natsLatency.record(now - (body.publish_us ?? now));
        },
      });
      stopNats = () => messages.stop();
      return {};
    },
    natsLatencyStop() {
      stopNats?.();
      stopNats = null;
    },
    /** One SSE client resuming with Last-Event-ID; resolves when it has the event with sequence `target`. */
    async resumeSse(args: { url: string; lastEventId: number; target: number; timeoutMs: number }) {
      proc.reset();
      const t0 = performance.now();
      let firstAt = 0;
      let doneAt = 0;
      let resolveDone: () => void = () => {};
      const done = new Promise<void>((r) => (resolveDone = r));
      const conn = new SseConn();
      conn.onEvent = (seq) => {
        if (!firstAt) firstAt = performance.now();
        if (seq >= args.target) {
          doneAt = performance.now();
          resolveDone();
        }
      };
      const req = get(
        args.url,
        { agent, headers: { accept: 'text/event-stream', 'last-event-id': String(args.lastEventId) } },
        (res) => {
          res.on('data', (c: Buffer) => conn.chunk(c));
          res.on('close', resolveDone);
        },
      );
      req.on('error', resolveDone);
      const timer = setTimeout(resolveDone, args.timeoutMs);
      await done;
      clearTimeout(timer);
      req.destroy();
      const ms = (doneAt || performance.now()) - t0;
      return {
        completed: doneAt > 0,
        events: conn.events,
        last_seq: conn.lastSeq,
        seconds: Math.round(ms) / 1_000,
        first_event_ms: firstAt ? Math.round(firstAt - t0) : null,
        events_per_s: Math.round(conn.events / (ms / 1_000)),
        gaps: counters.gaps,
        duplicates: counters.duplicates,
        errors: counters.errors,
        notices: counters.notices,
        client_proc: proc.read(),
      };
    },
    /** Raw baseline: an ordered push consumer with a callback reading the stream from its start. */
    async resumePush(args: { natsUrl: string; target: number; timeoutMs: number }) {
      const c = await natsConn(args.natsUrl);
      proc.reset();
      const r = await countWithPushConsumer(jetstream(c), STREAMS.MD, MD_ALL, args.target, args.timeoutMs);
      return { completed: r.reachedTarget, ...pushCountFields(r), client_proc: proc.read() };
    },
  },
  async () => {
    for (const c of conns) c.raw?.destroy();
    await nc?.close();
  },
);
