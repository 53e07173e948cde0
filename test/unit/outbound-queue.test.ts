import { describe, expect, it } from 'vitest';
import { OutboundQueue } from '../../gateways/core/outbound-queue.ts';

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
    expect(q.signature()).toBe('1-3-3');
    expect(q.drain({ join: (frames) => frames.join('') })).toBe('t1t2t3');
  });
});

describe('OutboundQueue signature', () => {
  it('identifies a plain range of event frames, and nothing else', () => {
    const a = new OutboundQueue(1_000);
    const b = new OutboundQueue(1_000);
    for (const q of [a, b]) {
      q.push('e5', null, 5);
      q.push('e7', 'BTC', 7);
    }
    expect(a.signature()).toBe('5-7-2');
    expect(b.signature()).toBe(a.signature());
    b.push(': hb\n\n');
    expect(b.signature()).toBeNull();
    a.conflate();
    expect(a.signature()).toBeNull();
    a.clear();
    expect(a.signature()).toBeNull();
    a.push('e9', null, 9);
    expect(a.signature()).toBe('9-9-1');
  });
});
