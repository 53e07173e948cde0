import { describe, expect, it } from 'vitest';
import { replyViewOf } from '../../platform/nats-wire/parser.ts';
import { replySequences } from '../../platform/pull-consumer.ts';

/** Read from inside a larger buffer, as the parser hands a reply over. */
const read = (reply: string) => {
  const out = { stream: -1, delivery: -1 };
  const inside = replyViewOf(`MSG x 1 ${reply} 0`);
  return replySequences({ ...inside, from: 8, to: 8 + reply.length }, out) ? out : null;
};

describe('replySequences', () => {
  it('reads the stream and delivery sequences of both reply forms', () => {
    expect(read('$JS.ACK.MD.pull_abc.1.1.1.1700000000000000000.0')).toEqual({ stream: 1, delivery: 1 });
    expect(read('$JS.ACK.MD.c.3.900719925474099.7.1700000000000000000.12')).toEqual({
      stream: 900719925474099,
      delivery: 7,
    });
    expect(read('$JS.ACK.hub.ACCHASH.MD.c1.1.42.40.1700000000000000000.5.r4nd0m')).toEqual({
      stream: 42,
      delivery: 40,
    });
    expect(read('$JS.ACK._.ACCHASH.MD.c1.2.123456789.1.1700000000000000000.0')).toEqual({
      stream: 123456789,
      delivery: 1,
    });
  });

  it('refuses anything else', () => {
    for (const reply of [
      '',
      '_INBOX.abc',
      '$JS.ACK.MD.c.1.x.1.1.0',
      '$JS.ACK.MD.c.1.5.1.1',
      '$JS.ACK.MD.c.1.1234567890123456.1.1.0',
      '$JS.ACK.MD.c.1..1.1.0',
      '$JS.ACK.MD.c.1.5.y.1.0',
      '$JS.ACK.',
      '$JS.ACK.MD.c.1.2.3.4.5.6',
      '$JS.ACK.a.b.MD.c.1.2.3.4.5.6.7',
      '$JS.NAK.MD.c.1.1.1.1.0',
    ])
      expect(read(reply)).toBeNull();
  });
});
