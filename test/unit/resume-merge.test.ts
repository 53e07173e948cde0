/**
 * The resume merge's decisions (gateways/core/resume-merge.ts), alone: for random streams, ring
 * sizes, resume positions, selections and interleavings of new events with each step (the ring
 * moving on while history is read), driving history → ring → live the way replay-source.ts does
 * delivers every matching event after the resumed position exactly once, in order; and a position
 * out of the stream's bounds resumes where its notice says.
 */
import { describe, expect, it } from 'vitest';
import { EventRing } from '../../gateways/core/event-ring.ts';
import type { FeedEvent } from '../../gateways/core/feed-event.ts';
import { resumeAt, sourceAfter, takeRing } from '../../gateways/core/resume-merge.ts';
import type { Selection } from '../../gateways/core/selection.ts';
import { seededRandom } from '../support/seeded-random.ts';

const COINS = ['BTC', 'ETH', 'SOL'];
const event = (seq: number, symbol: string, owner: string | null = null): FeedEvent => ({
  seq,
  source: 'synthetic',
  symbol,
  eventType: 'trade',
  owner,
  json: '{}',
  receivedAtNs: 0,
  wire: {},
});

describe('resume merge', () => {
  it('delivers each matching event after the position once, in order, across history, ring and live', () => {
    const { random } = seededRandom('resume merge');
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
    for (let trial = 0; trial < 300; trial++) {
      const stream: FeedEvent[] = [];
      const ring = new EventRing(1 + Math.floor(random() * 40), 1);
      const publish = (n: number) => {
        for (let i = 0; i < n; i++) {
          const ev = event(stream.length + 1, pick(COINS), random() < 0.2 ? pick(['acc_a', 'acc_b']) : null);
          stream.push(ev);
          ring.push(ev);
          live?.(ev);
        }
      };
      let live: ((ev: FeedEvent) => void) | null = null;
      publish(Math.floor(random() * 200));
      const selection: Selection = {
        coins: random() < 0.5 ? null : new Set([pick(COINS)]),
        eventTypes: null,
        sources: null,
        viewer: random() < 0.5 ? 'acc_a' : null,
      };
      const requested = Math.floor(random() * (stream.length + 5));
      const delivered: number[] = [];
      const { after: start } = resumeAt(requested, { first_seq: 1, last_seq: stream.length });
      let after = start;
      let lastSeq = 0;
      for (let step = 0; live === null && step < 10_000; step++) {
        publish(Math.floor(random() * 5)); // the tail moves on between steps
        const source = sourceAfter(after, ring.coveredFrom);
        if (source.from === 'history') {
          // The stream's events up to the goal, filtered as the history reader's subject filter does.
          for (const ev of stream.slice(after, source.goal))
            if (ev.seq > after && matchesSel(selection, ev)) delivered.push(ev.seq);
          after = source.goal;
          continue;
        }
        const took = takeRing(after, ring.after(after, 1 + Math.floor(random() * 8)), selection);
        delivered.push(...took.deliver.map((e) => e.seq));
        after = took.after;
        if (took.live) {
          lastSeq = after;
          live = (ev) => {
            if (ev.seq > lastSeq && matchesSel(selection, ev)) {
              lastSeq = ev.seq;
              delivered.push(ev.seq);
            }
          };
        }
      }
      publish(Math.floor(random() * 20));
      const expected = stream.filter((ev) => ev.seq > start && matchesSel(selection, ev)).map((e) => e.seq);
      expect(delivered, `trial ${trial}`).toEqual(expected);
    }
  });

  it('resumes a position out of the stream where its notice says', () => {
    const bounds = { first_seq: 100, last_seq: 200 };
    expect(resumeAt(150, bounds)).toEqual({ after: 150, notice: null });
    expect(resumeAt(99, bounds)).toEqual({ after: 99, notice: null });
    const old = resumeAt(10, bounds);
    expect(old.after).toBe(99);
    expect(old.notice).toMatchObject({
      code: 'position_not_retained',
      resumed_after: 99,
      requested_last_event_id: 10,
    });
    const ahead = resumeAt(500, bounds);
    expect(ahead.after).toBe(200);
    expect(ahead.notice).toMatchObject({ code: 'position_beyond_end', resumed_after: 200 });
  });
});

/** The selection's rule, restated for the test's expectation (visible: the platform's or the viewer's own). */
function matchesSel(sel: Selection, ev: FeedEvent): boolean {
  return (ev.owner === null || ev.owner === sel.viewer) && (sel.coins === null || sel.coins.has(ev.symbol));
}
