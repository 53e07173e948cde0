/**
 * When the buffered sink writes (gateways/core/buffered-sink.ts, flusher.ts): a task's first event
 * at once, to every sink it is offered to; the task's later events together at its end (one write
 * per sink); the next task's first event at once again. A sink whose wire is blocked writes
 * nothing until it drains, first event or not. The sink and flusher are the real ones; the wire
 * is an in-memory one that records each write.
 */
import { expect, it } from 'vitest';
import { BufferedSink, SOCKET_BUFFER } from '../../gateways/core/buffered-sink.ts';
import { type FeedEvent, feedEvent } from '../../gateways/core/feed-event.ts';
import { Flusher } from '../../gateways/core/flusher.ts';
import type { Framer, Wire } from '../../gateways/core/sink-parts.ts';

const framer: Framer = {
  preamble: () => '',
  event: (ev) => `E${ev.seq};`,
  notice: () => 'N;',
  warning: (code) => `W${code};`,
  terminal: (code) => `T${code};`,
  heartbeat: () => null,
  end: () => '',
};

class MemoryWire implements Wire {
  writes: string[] = [];
  bufferedBytes = 0;
  private drained: (() => void) | null = null;
  open(): void {}
  write(chunk: string | Buffer): void {
    this.writes.push(chunk.toString());
  }
  onceDrain(cb: () => void): void {
    this.drained = cb;
  }
  drain(): void {
    this.bufferedBytes = 0;
    this.drained?.();
  }
  end(): void {}
  destroy(): void {}
  onClose(): void {}
}

const ev = (seq: number): FeedEvent =>
  feedEvent({ seq, source: 'synthetic', symbol: 'BTC', eventType: 'trade', owner: null, json: '{}' });

function openSink(flusher: Flusher): { sink: BufferedSink; wire: MemoryWire } {
  const wire = new MemoryWire();
  const sink = new BufferedSink(framer, wire, flusher, { maxBacklogBytes: 1 << 20, closeGraceMs: -1 });
  sink.open();
  return { sink, wire };
}

const taskEnd = () => new Promise((r) => setImmediate(r));

it("writes a task's first event at once on every sink, the rest at the task's end", async () => {
  const flusher = new Flusher();
  const a = openSink(flusher);
  const b = openSink(flusher);
  await taskEnd();
  for (const e of [ev(1), ev(2), ev(3)]) for (const s of [a, b]) s.sink.event(e);
  // Still inside the task: only the first event has been written, on both.
  expect(a.wire.writes).toEqual(['E1;']);
  expect(b.wire.writes).toEqual(['E1;']);
  await taskEnd();
  expect(a.wire.writes).toEqual(['E1;', 'E2;E3;']);
  expect(b.wire.writes).toEqual(['E1;', 'E2;E3;']);
  // The next task's first event goes at once again.
  a.sink.event(ev(4));
  expect(a.wire.writes).toEqual(['E1;', 'E2;E3;', 'E4;']);
});

it('a control message queued before the first event goes out with it, in order', async () => {
  const flusher = new Flusher();
  const a = openSink(flusher);
  await taskEnd();
  a.sink.notice({ code: 'x' });
  a.sink.event(ev(1));
  expect(a.wire.writes).toEqual(['N;E1;']);
});

it('a blocked wire gets nothing at once; all of it once drained', async () => {
  const flusher = new Flusher();
  const a = openSink(flusher);
  await taskEnd();
  a.wire.bufferedBytes = SOCKET_BUFFER + 1;
  a.sink.event(ev(1)); // written at once; the wire now holds more than it may: blocked
  await taskEnd();
  a.sink.event(ev(2));
  a.sink.event(ev(3));
  await taskEnd();
  expect(a.wire.writes).toEqual(['E1;']);
  a.wire.drain();
  expect(a.wire.writes).toEqual(['E1;', 'E2;E3;']);
});
