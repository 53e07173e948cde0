import { describe, expect, it } from 'vitest';
import { EventRing } from '../../gateways/core/event-ring.ts';
import type { FeedEvent } from '../../gateways/core/feed-event.ts';

const ev = (seq: number): FeedEvent => ({
  seq,
  source: 'synthetic',
  symbol: 'BTC',
  eventType: 'trade',
  owner: null,
  json: '{}',
  receivedAtNs: 0,
  wire: {},
});

describe('EventRing', () => {
  it('covers from its start position while empty', () => {
    const r = new EventRing(4, 10);
    expect(r.coveredFrom).toBe(10);
    expect(r.lastSeq).toBe(9);
    expect(r.after(9, 10)).toEqual({ events: [], reached: 9, atEnd: true });
  });

  it('moves its coverage promise forward as it evicts', () => {
    const r = new EventRing(3, 1);
    for (const s of [1, 2, 5, 7]) r.push(ev(s));
    expect(r.coveredFrom).toBe(2);
    expect(r.size).toBe(3);
    expect(r.lastSeq).toBe(7);
  });

  it('returns events strictly after a position, in chunks, with the position reached', () => {
    const r = new EventRing(8, 1);
    for (let s = 1; s <= 6; s++) r.push(ev(s * 2));
    const first = r.after(4, 2);
    expect(first.events.map((e) => e.seq)).toEqual([6, 8]);
    expect(first).toMatchObject({ reached: 8, atEnd: false });
    const rest = r.after(first.reached, 10);
    expect(rest.events.map((e) => e.seq)).toEqual([10, 12]);
    expect(rest.atEnd).toBe(true);
    expect(r.after(5, 1).events.map((e) => e.seq)).toEqual([6]);
  });
});
