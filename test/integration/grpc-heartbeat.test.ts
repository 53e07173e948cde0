/**
 * Heartbeats of the gRPC edge's server streams, with a real grpc-js client (the period is the
 * edge's SSE_HEARTBEAT_MS, 15 s by default, set short here; StreamMids takes its own `heartbeat_s`):
 * - StreamEvents on a coin with no events sends `heartbeat` FeedMessages, again and again, each
 *   with a later server time, and nothing else;
 * - StreamMids with `heartbeat_s` = 1 re-sends the latest mid (same `seq`) while the book does not
 *   change, sends the new mid when it does, and re-sends that one afterwards; it never sends a
 *   FeedMessage heartbeat (its messages are MidPriceResponse);
 * - a `heartbeat_s` over 300 is INVALID_ARGUMENT with no message.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, type PriceClient, trailers, unary } from '../support/grpc.ts';
import { type GrpcStack, startGrpcStack } from '../support/grpc-stack.ts';
import { book, publishNow } from '../support/publisher.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const config = testConfig({ SSE_HEARTBEAT_MS: '300' });
let nats: Nats;
let client: PriceClient;
let key: string;

let stack: GrpcStack;

beforeAll(async () => {
  stack = await startGrpcStack(config, 'pro');
  ({ nats, client, key } = stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe('StreamEvents heartbeat', () => {
  it('sends heartbeat messages on a quiet stream, each with a later server time', async () => {
    const s = collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(key)));
    const beats = () => s.messages.filter((m) => m.kind === 'heartbeat');
    await eventually(() => beats().length >= 3, 20_000, 'three heartbeats');
    s.call.cancel();
    expect((await s.ended)?.code).toBe(status.CANCELLED);
    expect(s.messages.map((m) => m.kind)).toEqual(beats().map(() => 'heartbeat'));
    const times = beats().map((m) => Number((m.heartbeat as { timestamp_ms: number }).timestamp_ms));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1] as number);
  });
});

describe('StreamMids heartbeat_s', () => {
  it('re-sends the latest mid while the book does not change, then the new one', async () => {
    await publishNow(nats.js, [book('ETH', 1), book('ETH', 2)]);
    const first = await lastSeq(nats);
    // The latest-state view holds that book before the stream opens (the re-send reads it).
    await eventually(
      async () =>
        (await unary(client, 'GetMidPrice', { coin: 'ETH' }, keyMetadata(key))).value?.seq === first,
      10_000,
      'the last ETH book in the latest-state view',
    );
    const s = collect(client.StreamMids({ coins: ['ETH'], heartbeat_s: 1 }, keyMetadata(key)));
    // Nothing changes: the mid of the last book comes again and again.
    await eventually(() => s.messages.length >= 2, 20_000, 'two re-sent mids');
    expect(s.messages.every((m) => Number(m.seq) === first)).toBe(true);
    expect(s.messages[0]).toMatchObject({ coin: 'ETH', source: 'synthetic', price: 102 });

    // A change goes out at once, and is then the mid re-sent.
    await publishNow(nats.js, [book('ETH', 7)]);
    const second = await lastSeq(nats);
    const mark = s.messages.length;
    await eventually(
      () => s.messages.slice(mark).filter((m) => Number(m.seq) === second).length >= 3,
      20_000,
      'the new mid, then two re-sends of it',
    );
    s.call.cancel();
    await s.ended;
    const after = s.messages.slice(mark);
    expect(after.every((m) => Number(m.seq) === first || Number(m.seq) === second)).toBe(true);
    expect(after.find((m) => Number(m.seq) === second)).toMatchObject({ coin: 'ETH', price: 107 });
    // Once the new mid is out, the old one never comes again.
    const firstNew = after.findIndex((m) => Number(m.seq) === second);
    expect(after.slice(firstNew).every((m) => Number(m.seq) === second)).toBe(true);
    expect(s.messages.every((m) => m.heartbeat === undefined && m.kind === undefined)).toBe(true);
  });

  it('refuses a heartbeat_s over 300 with INVALID_ARGUMENT and no message', async () => {
    const s = collect(client.StreamMids({ coins: ['ETH'], heartbeat_s: 301 }, keyMetadata(key)));
    const err = await s.ended;
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(trailers(err ?? undefined)['x-error-code']).toBe('invalid_params');
    expect(s.messages).toEqual([]);
  });
});
