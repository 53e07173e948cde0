/**
 * The FeedMessage frames written straight from event JSON (gateways/grpc/feed-protobuf.ts) are
 * valid protobuf for contracts/proto/price.proto: decoded with the proto-loader definition, each
 * field equals the parsed JSON event's (null: absent), for trades and books, with negative, zero,
 * large and exponent numbers; and they decode to the same message as the general path (JSON.parse
 * + protobufjs). Text the encoder does not take (escapes, non-ASCII, whitespace, unsafe int64s,
 * repeated keys, not JSON) is left to the general path, which the framer then uses.
 */
import { describe, expect, it } from 'vitest';
import { encodeStoredEvent, storedJsonWithSeq } from '../../contracts/event-wire.ts';
import { feedEvent } from '../../gateways/core/feed-event.ts';
import { feedFrameOfJson } from '../../gateways/grpc/feed-protobuf.ts';
import { feedFramer } from '../../gateways/grpc/framer.ts';
import { encodeFeedMessage, packageDefinition, SERVICE_NAME } from '../../gateways/grpc/proto.ts';
import { book, trade } from '../support/publisher.ts';

type Decoded = Record<string, Record<string, unknown>>;
const method = (
  packageDefinition[SERVICE_NAME] as unknown as Record<string, { responseDeserialize(b: Buffer): unknown }>
).StreamEvents as { responseDeserialize(b: Buffer): unknown };

/** The protobuf bytes of a gRPC frame, after checking its 5-byte prefix. */
function payload(b: Buffer): Buffer {
  expect(b[0]).toBe(0);
  expect(b.readUInt32BE(1)).toBe(b.length - 5);
  return b.subarray(5);
}

const decode = (bytes: Buffer): Decoded => method.responseDeserialize(bytes) as Decoded;

/** Every field of the JSON event the proto has, as the decoded message holds it. */
function expectSameAsJson(kind: 'trade' | 'book', json: string): void {
  const frame = feedFrameOfJson(kind, json);
  expect(frame).not.toBeNull();
  const msg = decode(payload(frame as Buffer));
  expect(msg.kind).toBe(kind);
  const got = msg[kind] as Record<string, unknown>;
  const want = JSON.parse(json) as Record<string, unknown>;
  for (const [key, value] of Object.entries(want)) {
    if (key === 'unknown_extra') continue;
    if (value === null) expect(got[key], key).toBeUndefined();
    else if (Array.isArray(value) && value.length === 0) expect(got[key] ?? [], key).toEqual([]);
    else expect(got[key], key).toEqual(value);
  }
  // And the same message as the general path's bytes decode to.
  const general = decode(encodeFeedMessage({ [kind]: want }));
  expect(msg).toEqual(general);
}

const seqd = (seq: number, ev: object) => `{"seq":${seq},${JSON.stringify(ev).slice(1)}`;
const withStamps = (ev: object, us = 1_767_225_600_123_456) => ({ ...ev, ingest_us: us, publish_us: us + 7 });

describe('feed-protobuf: FeedMessage bytes from event JSON', () => {
  it('encodes trades field for field, with and without stamps and venue ids', () => {
    for (const i of [0, 1, 2, 49, 1_000_003]) {
      expectSameAsJson('trade', seqd(i + 1, trade('BTC', i)));
      expectSameAsJson('trade', seqd(i + 1, withStamps(trade('ETH', i))));
      expectSameAsJson('trade', seqd(i + 1, { ...trade('SOL', i), venue_trade_id: `v-${i}` }));
    }
  });

  it('encodes books field for field: levels, nulls, snapshots, empty sides', () => {
    expectSameAsJson('book', seqd(7, book('BTC', 3)));
    expectSameAsJson('book', seqd(8, withStamps(book('HYPE', 4, 1000))));
    expectSameAsJson(
      'book',
      seqd(9, { ...book('ETH', 5, 0), best_bid: null, best_ask: null, mid_price: null, spread_bps: null }),
    );
    expectSameAsJson('book', seqd(10, { ...book('SOL', 6, 2), is_snapshot: false }));
    expectSameAsJson(
      'book',
      seqd(11, { ...book('SOL', 6, 2), is_snapshot: true, bids: [{ price: 1, size: 0 }] }),
    );
  });

  it('keeps negative, zero, large, tiny and exponent numbers exact', () => {
    const numbers = [
      0, -0, 1, -1, 0.1, -2.5e-300, 1.7976931348623157e308, 5e-324, 123456789.12345679, 1e21, -1e-7,
    ];
    for (const n of numbers) {
      const t = { ...trade('BTC', 1), price: n, size: n, notional_usd: n };
      expectSameAsJson('trade', seqd(1, t));
      expectSameAsJson(
        'book',
        seqd(2, { ...book('BTC', 1, 2), bids: [{ price: n, size: n }], spread_bps: n }),
      );
    }
    const ints = [
      0,
      1,
      -1,
      127,
      128,
      16_383,
      16_384,
      2 ** 31,
      2 ** 32 + 1,
      -(2 ** 40),
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
    ];
    for (const n of ints) {
      expectSameAsJson(
        'trade',
        seqd(Math.abs(n), {
          ...trade('BTC', 1),
          timestamp_ms: n,
          capture_time_ms: n,
          ingest_us: n,
          publish_us: -n,
        }),
      );
    }
    expectSameAsJson('trade', '{"seq":1,"timestamp_ms":1E3,"price":-0.0,"size":2e+2,"notional_usd":3.5E-2}');
    expectSameAsJson(
      'trade',
      '{"seq":1,"price":12345678901234567890,"size":-999999999999999,"notional_usd":1234567890123456}',
    );
    expectSameAsJson(
      'trade',
      '{"seq":9007199254740991,"timestamp_ms":-9007199254740991,"price":0.30000000000000004}',
    );
  });

  it('ignores unknown scalar keys, as the general path does', () => {
    expectSameAsJson('trade', seqd(3, { ...trade('BTC', 1), unknown_extra: 'x' }));
    expectSameAsJson('trade', seqd(3, { ...trade('BTC', 1), unknown_extra: 5 }));
    expectSameAsJson('book', seqd(3, { ...book('BTC', 1), unknown_extra: null }));
  });

  it('matches random trades and books decoded by the proto', () => {
    let x = 12345;
    const rnd = () => {
      x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
      return x / 2 ** 31;
    };
    const num = () => (rnd() < 0.1 ? 0 : (rnd() - 0.3) * 10 ** Math.floor(rnd() * 30 - 10));
    for (let i = 0; i < 300; i++) {
      const t = { ...trade(`C${i}`, i), price: num(), size: num(), notional_usd: num() };
      expectSameAsJson(
        'trade',
        seqd(Math.floor(rnd() * 2 ** 52), withStamps(t, Math.floor(rnd() * 2 ** 53))),
      );
      const levels = (n: number) => Array.from({ length: n }, () => ({ price: num(), size: num() }));
      const b = {
        ...book(`C${i}`, i, 0),
        bids: levels(Math.floor(rnd() * 40)),
        asks: levels(Math.floor(rnd() * 40)),
      };
      expectSameAsJson('book', seqd(i + 1, b));
    }
  });

  it('leaves what it does not take to the general path, which the framer then uses', () => {
    const unicode = seqd(4, { ...trade('BTC', 1), venue_trade_id: 'ü€😀 "q" \\ \n' });
    const notTaken = [
      unicode,
      seqd(4, { ...trade('BTC', 1), venue_trade_id: 'é' }),
      seqd(5, { ...trade('BTC', 1), timestamp_ms: 2 ** 60 }),
      seqd(6, { ...trade('BTC', 1), timestamp_ms: 1.5 }),
      seqd(7, { ...trade('BTC', 1), unknown_extra: { a: 1 } }),
      '{"seq":8, "price":1}',
      '{"seq":9,"price":1,"price":2}',
      '{"seq":10,"price":"1"}',
      '{"seq":11,"price":01}',
      '{"seq":11,"price":+1}',
      '{"seq":11,"price":.5}',
      '{"seq":11,"price":1.}',
      '{"seq":11,"price":1e}',
      '{"seq":11,"price":-}',
      '{"seq":11,"price":1.5e+}',
      '{"seq":11,"price":0x1}',
      '{"seq":11,"sidE":"x","sizf":1,"price":1,"bids":[]}',
      '{"seq":12,"price":1}x',
      '{"seq":13,"price":1',
      'not json',
    ];
    for (const json of notTaken) expect(feedFrameOfJson('trade', json), json).toBeNull();
    expect(feedFrameOfJson('notice', '{"seq":1}')).toBeNull();

    const framer = feedFramer('req');
    const ev = (json: string) =>
      feedEvent({ seq: 4, source: 'synthetic', symbol: 'BTC', eventType: 'trade', owner: null, json });
    const msg = decode(payload(framer.event(ev(unicode)) as Buffer));
    expect((msg.trade as Record<string, unknown>).venue_trade_id).toBe('ü€😀 "q" \\ \n');
    expect(() => framer.event(ev('not json'))).toThrow();
  });

  it('encodes the JSON a catch-up has just read from the stored bytes in place', () => {
    // storedJsonWithSeq's last JSON is read from its scratch (contracts/event-wire.ts jsonUtf8).
    for (let i = 0; i < 50; i++) {
      const t = storedJsonWithSeq(encodeStoredEvent(trade('BTC', i), { ingest_us: i, publish_us: i }), i + 1);
      expectSameAsJson('trade', t);
      const b = storedJsonWithSeq(encodeStoredEvent(book('ETH', i, 1 + (i % 30))), i + 2);
      expectSameAsJson('book', b);
    }
    // Invalid UTF-8 in a stored string is left to the general path, as its U+FFFD is.
    const bad = Buffer.from(`{"price":1,"venue_trade_id":"a\xffb"}`, 'latin1');
    expect(feedFrameOfJson('trade', storedJsonWithSeq(bad, 3))).toBeNull();
  });
});
