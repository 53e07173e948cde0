/**
 * BufferedSink `run` against a wire whose unsent bytes the test sets: a client keeping up takes a
 * run whole; a blocked one takes a run of trades whole (one queue entry) but hands back a run with
 * a book event (its queue keeps book frames apart, to conflate), and once the wire drains it
 * writes everything it holds in order.
 */
import { describe, expect, it } from 'vitest';
import { BufferedSink, runStats, SOCKET_BUFFER } from '../../gateways/core/buffered-sink.ts';
import { type FeedEvent, feedEvent } from '../../gateways/core/feed-event.ts';
import { Flusher } from '../../gateways/core/flusher.ts';
import type { Chunk, RunShare, Wire } from '../../gateways/core/sink-parts.ts';
import { sseFramer } from '../../gateways/core/sse-connection.ts';

const ev = (seq: number, eventType: 'trade' | 'book'): FeedEvent =>
  feedEvent({
    seq,
    source: 'synthetic',
    symbol: 'BTC',
    eventType,
    owner: null,
    json: `{"seq":${seq},"event_type":"${eventType}"}`,
  });

type TestWire = {
  unsent: number;
  written: string[];
  /** The terminal error's code the stream ended with, if any. */
  ended: string | null;
  drain(): void;
  wire: Wire;
};

function wire(): TestWire {
  const written: string[] = [];
  let drain: (() => void) | null = null;
  const w: TestWire = {
    unsent: 0,
    written,
    ended: null,
    drain: () => {
      w.unsent = 0;
      const cb = drain;
      drain = null;
      cb?.();
    },
    wire: {
      open: () => {},
      write: (c: Chunk) => {
        written.push(c.toString());
      },
      get bufferedBytes(): number {
        return w.unsent;
      },
      onceDrain: (cb: () => void) => {
        drain = cb;
      },
      end: (last, terminal) => {
        if (last !== undefined) written.push(last.toString());
        w.ended = terminal?.code ?? 'end';
      },
      destroy: () => {},
      onClose: () => {},
    },
  };
  return w;
}

const ids = (text: string[]) => [...text.join('').matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
const flushed = () => new Promise((r) => setImmediate(r));

describe('BufferedSink runs', () => {
  it('takes runs of trades whole while blocked, hands back runs with a book, and writes all in order', async () => {
    const w = wire();
    const sink = new BufferedSink(sseFramer('r1', 1_000), w.wire, new Flusher(), {
      maxBacklogBytes: 1 << 20,
      closeGraceMs: -1,
      runKey: 'g',
    });
    sink.open();
    const run = (evs: FeedEvent[], share: RunShare = {}) => sink.run(evs, 'g', share);
    const before = { ...runStats };

    expect(run([ev(1, 'trade'), ev(2, 'book')])).toBe(true); // keeping up: any run whole
    // The wire now holds more than it may: the next flush blocks the sink.
    w.unsent = SOCKET_BUFFER + 1;
    await flushed();
    expect(run([ev(3, 'trade'), ev(4, 'trade')])).toBe(true);
    expect(run([ev(5, 'trade'), ev(6, 'book')])).toBe(false);
    for (const seq of [5, 6]) sink.event(ev(seq, seq === 6 ? 'book' : 'trade'));
    // A group's verdict on books, found by its first member, is what the others go by.
    expect(run([ev(7, 'trade')], { conflatable: true })).toBe(false);
    expect(run([ev(7, 'trade')], { conflatable: false })).toBe(true);
    expect(runStats.whileBlocked - before.whileBlocked).toBe(2);
    expect(runStats.declined - before.declined).toBe(2);
    expect(ids(w.written)).toEqual([1, 2]);

    w.drain();
    await flushed();
    expect(ids(w.written)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('past the bound while blocked, keeps every trade of its runs, conflates books, warns, then ends with reconnect', async () => {
    const w = wire();
    const sink = new BufferedSink(sseFramer('r2', 1_000), w.wire, new Flusher(), {
      maxBacklogBytes: 1_000,
      closeGraceMs: -1,
      runKey: 'g',
    });
    sink.open();
    sink.run([ev(1, 'trade')], 'g', {});
    w.unsent = SOCKET_BUFFER + 1;
    await flushed();
    // Runs of trades, books one by one (as the tail hands a run with a book), until cut; a run the
    // sink turns away (once its queue holds the lag warning) goes one by one too, as the tail does.
    const trades = [1];
    let books = 0;
    let seq = 2;
    let whole = 0;
    for (let i = 0; i < 200 && !sink.closed; i++) {
      if (i % 3 === 0) {
        const evs = [ev(seq++, 'trade'), ev(seq++, 'trade')];
        trades.push(...evs.map((e) => e.seq));
        if (sink.run(evs, 'g', {})) whole++;
        else for (const e of evs) sink.event(e);
      } else {
        books++;
        sink.event(ev(seq++, 'book'));
      }
    }
    expect(whole).toBeGreaterThan(0);
    expect(sink.closed).toBe(true);
    expect(w.ended).toBe('reconnect');
    const text = w.written.join('');
    const sent = ids(w.written);
    expect(sent.filter((id) => trades.includes(id))).toEqual(trades);
    expect(sent.length - trades.length).toBeLessThan(books); // books were conflated
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
    expect(text.indexOf('upstream_lag')).toBeGreaterThan(text.indexOf(`id: ${trades[1]}\n`));
  });
});
