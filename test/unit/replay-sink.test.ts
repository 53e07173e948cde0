/**
 * The replay sink (gateways/core/replay-sink.ts) on its own: it paces by the events' recorded
 * `timestamp_ms` divided by the speed, caps a gap longer than REPLAY_MAX_GAP_MS with one
 * `replay_gap_capped` notice, waits nothing for a gap that goes backwards, drops what lies past
 * its end, holds events while the end is looked up, and counts what it delivered.
 */
import { describe, expect, it } from 'vitest';
import { REPLAY_MAX_GAP_MS } from '../../contracts/notices.ts';
import { type FeedEvent, feedEvent } from '../../gateways/core/feed-event.ts';
import { eventTimeMs, ReplaySink, type ReplaySinkTarget } from '../../gateways/core/replay-sink.ts';

const ev = (seq: number, timestampMs: number): FeedEvent =>
  feedEvent({
    seq,
    source: 'synthetic',
    symbol: 'BTC',
    eventType: 'trade',
    owner: null,
    json: `{"seq":${seq},"event_type":"trade","timestamp_ms":${timestampMs},"price":1}`,
  });

function target() {
  const got: { seq: number; at: number }[] = [];
  const notices: Record<string, unknown>[] = [];
  const t: ReplaySinkTarget = {
    event: (e) => got.push({ seq: e.seq, at: performance.now() }),
    notice: (n) => notices.push(n as Record<string, unknown>),
    feedStale: () => {},
    feedRecovered: () => {},
    ready: () => null,
  };
  return { t, got, notices };
}

describe('replay sink', () => {
  it('reads an event time without parsing the JSON', () => {
    expect(eventTimeMs(ev(1, 1_767_225_600_123))).toBe(1_767_225_600_123);
  });

  it('paces by the recorded gaps divided by the speed', async () => {
    const { t, got } = target();
    const sink = new ReplaySink(t, 4);
    const t0 = performance.now();
    for (const [i, ms] of [0, 400, 1_200, 1_200].entries()) sink.event(ev(i + 1, 1_000_000 + ms));
    await sink.drained();
    const at = got.map((g) => g.at - t0);
    // Due at 0, 100, 300, 300 ms (gaps 400 and 800 ms at speed 4). Timers fire late, never early;
    // how late depends on the machine's load, so the upper bound is loose (150 ms), yet tight
    // enough that a speed ignored (due at 400 and 1,200 ms) fails.
    for (const [i, due] of [0, 100, 300, 300].entries()) {
      expect(at[i]).toBeGreaterThanOrEqual(due - 2);
      expect(at[i]).toBeLessThan(due + 150);
    }
    expect(sink.count).toBe(4);
  });

  it('caps a gap longer than the bound and says so once; a backwards gap waits nothing', async () => {
    const { t, got, notices } = target();
    const sink = new ReplaySink(t, 1_000);
    sink.event(ev(1, 1_000_000));
    sink.event(ev(2, 1_000_000 + 60_000)); // a minute of silence: capped
    sink.event(ev(3, 1_000_000 + 59_000)); // another venue's clock behind: no wait
    const t0 = performance.now();
    await sink.drained();
    // The capped wait is 5 ms; uncapped it would be 60 ms.
    expect(performance.now() - t0).toBeLessThan(REPLAY_MAX_GAP_MS / 1_000 + 50);
    expect(got.map((g) => g.seq)).toEqual([1, 2, 3]);
    expect(notices).toEqual([
      expect.objectContaining({ code: 'replay_gap_capped', seq: 2, gap_ms: 60_000, waited_ms: 5 }),
    ]);
  });

  it('holds events while the end is looked up, then delivers up to it and drops the rest', async () => {
    const { t, got } = target();
    const sink = new ReplaySink(t, null);
    sink.event(ev(1, 0));
    sink.hold();
    sink.event(ev(2, 0));
    sink.event(ev(3, 0));
    expect(got.map((g) => g.seq)).toEqual([1]);
    sink.endAt(2);
    sink.event(ev(4, 0));
    await sink.drained();
    expect(got.map((g) => g.seq)).toEqual([1, 2]);
    expect(sink.count).toBe(2);
  });

  it('once the end is known, holds no more: an event up to it that arrives late still goes out', async () => {
    // The timer for `to` fired first (a quiet stream): it held, looked the end up, and the end came
    // back. An event stored before `to` that the tail hands over only now, past the clock's `to`,
    // is delivered; it must not start a second hold that nothing would end.
    const { t, got } = target();
    const sink = new ReplaySink(t, null);
    let reached = 0;
    sink.holdFrom(Date.now() - 1, () => reached++);
    sink.hold();
    sink.endAt(5);
    sink.event(ev(5, 0));
    const settled = await Promise.race([
      sink.drained().then(() => 'drained'),
      new Promise((resolve) => setTimeout(() => resolve('still holding after 2 s'), 2_000)),
    ]);
    expect(settled).toBe('drained');
    expect(got.map((g) => g.seq)).toEqual([5]);
    expect(reached).toBe(0);
  });
});
