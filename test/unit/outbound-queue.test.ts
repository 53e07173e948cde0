import { describe, expect, it } from 'vitest';
import { OutboundQueue } from '../../gateways/core/outbound-queue.ts';

/** The identity the Flusher shares a chunk by, as one value; null when the queue has none. */
const signature = (q: OutboundQueue): string | null =>
  q.sharable ? `${q.firstEventSeq}-${q.lastEventSeq}-${q.eventCount}` : null;

describe('OutboundQueue', () => {
  it('reports when its byte bound is exceeded', () => {
    const q = new OutboundQueue(10);
    expect(q.push('12345')).toBe(true);
    expect(q.push('12345')).toBe(true);
    expect(q.push('1')).toBe(false);
    expect(q.bytes).toBe(11);
  });

  it('conflates to the newest frame per key, keeping unkeyed frames and order', () => {
    const q = new OutboundQueue(1_000);
    q.push('t1');
    q.push('bA1', 'A');
    q.push('bB1', 'B');
    q.push('t2');
    q.push('bA2', 'A');
    q.conflate();
    expect(q.drain({ join: (frames) => frames.join('') })).toBe('t1bB1t2bA2');
    expect(q.length).toBe(0);
    expect(q.bytes).toBe(0);
  });

  it('keeps every frame when none has a key', () => {
    const q = new OutboundQueue(1_000);
    for (const t of ['t1', 't2', 't3']) q.push(t, null, Number(t[1]));
    q.conflate();
    expect(q.bytes).toBe(6);
    expect(signature(q)).toBe('1-3-3');
    expect(q.drain({ join: (frames) => frames.join('') })).toBe('t1t2t3');
  });
});

describe('OutboundQueue content identity (sharable, first and last event, count)', () => {
  it('identifies a plain range of event frames, and nothing else', () => {
    const a = new OutboundQueue(1_000);
    const b = new OutboundQueue(1_000);
    for (const q of [a, b]) {
      q.push('e5', null, 5);
      q.push('e7', 'BTC', 7);
    }
    expect(signature(a)).toBe('5-7-2');
    expect(signature(b)).toBe(signature(a));
    b.push(': hb\n\n');
    expect(signature(b)).toBeNull();
    a.conflate();
    expect(signature(a)).toBeNull();
    a.clear();
    expect(signature(a)).toBeNull();
    a.push('e9', null, 9);
    expect(signature(a)).toBe('9-9-1');
  });
});
