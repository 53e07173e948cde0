/**
 * Venue frames for the connector benchmark, in each venue's documented format, half trades and
 * half books: Binance `/ws` trades and one-update-id diff-depth events that move levels inside a
 * band on each side of 64,000 (never crossed) over a 100-level REST snapshot at update id 0;
 * The Binance replay pauses after the first diff until the snapshot was served.
 * Hyperliquid one-fill `trades` pushes and 20-level `l2Book` snapshots. Every frame yields exactly
 * one canonical event, so frames/s and events/s are the same figure. `offset` shifts every venue
 * id and time, so that each run's message ids are new to JetStream's duplicate window.
 */
const T0 = 1_767_225_600_000;
const px = (x: number) => x.toFixed(2);

export type VenueFrames = {
  /** Frames as sent; `{$wait: 'snapshot'}` holds the replay until the REST snapshot was served. */
  frames: (string | { $wait: string })[];
  /** Client messages to await before replaying. */
  subscriptions: number;
  /** The answer(s) sent first on each connection. */
  acks: string[];
  snapshots?: Record<string, unknown[]>;
};

export function binanceFrames(n: number, offset = 0): VenueFrames {
  const frames: VenueFrames['frames'] = [];
  let updateId = offset;
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      frames.push(
        JSON.stringify({
          e: 'trade',
          E: T0 + offset + i,
          s: 'BTCUSDT',
          t: offset + i + 1,
          p: px(64_000 + (i % 7) / 10),
          q: '0.01000000',
          T: T0 + offset + i,
          m: i % 3 === 0,
          M: true,
        }),
      );
    } else {
      updateId++;
      const k = (i * 7919) % 100;
      const size = i % 5 === 0 ? '0.00000000' : ((i % 13) + 1).toFixed(8);
      frames.push(
        JSON.stringify({
          e: 'depthUpdate',
          E: T0 + offset + i,
          s: 'BTCUSDT',
          U: updateId,
          u: updateId,
          b: [[px(63_999.9 - k / 10), size]],
          a: [[px(64_000.1 + k / 10), size]],
        }),
      );
      // The first diff makes the connector fetch its snapshot; the flood waits for it, as a
      // venue's stream would not outrun a REST call by thousands of diffs.
      if (updateId === offset + 1) frames.push({ $wait: 'snapshot' });
    }
  }
  const levels = (start: number, step: number) =>
    Array.from({ length: 100 }, (_, k) => [px(start + step * k), '1.00000000']);
  return {
    frames,
    subscriptions: 1,
    acks: [JSON.stringify({ result: null, id: 1 })],
    snapshots: {
      BTCUSDT: [{ lastUpdateId: offset, bids: levels(63_999.9, -0.1), asks: levels(64_000.1, 0.1) }],
    },
  };
}

export function hyperliquidFrames(n: number, offset = 0): VenueFrames {
  const frames: VenueFrames['frames'] = [];
  for (let i = 0; i < n; i++) {
    const time = T0 + offset + i;
    if (i % 2 === 0) {
      frames.push(
        JSON.stringify({
          channel: 'trades',
          data: [
            {
              coin: 'BTC',
              side: i % 3 ? 'B' : 'A',
              px: String(70_000 + (i % 9)),
              sz: '0.01',
              time,
              hash: `0x${i.toString(16)}`,
              tid: offset + i + 1,
            },
          ],
        }),
      );
    } else {
      const side = (sign: number) =>
        Array.from({ length: 20 }, (_, k) => ({
          px: String(70_000 + sign * (k + 1)),
          sz: String(((i + k) % 9) + 1),
          n: 1,
        }));
      frames.push(
        JSON.stringify({ channel: 'l2Book', data: { coin: 'BTC', time, levels: [side(-1), side(1)] } }),
      );
    }
  }
  const sub = (type: string) =>
    JSON.stringify({
      channel: 'subscriptionResponse',
      data: { method: 'subscribe', subscription: { type, coin: 'BTC' } },
    });
  return { frames, subscriptions: 2, acks: [sub('trades'), sub('l2Book')] };
}
