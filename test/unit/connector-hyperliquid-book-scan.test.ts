/**
 * The Hyperliquid `l2Book` fast path (producers/connectors/hyperliquid-book-scan.ts) against the
 * general path (JSON.parse + the mapper): every frame it reads gives the mapper's event, byte for
 * byte; the venue's own layout (recorded frames, benchmark frames) is read; anything else, and
 * every frame the mapper refuses, is left to the general path.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hyperliquidFrames } from '../../bench/lib/connector-frames.ts';
import { scanL2Book } from '../../producers/connectors/hyperliquid-book-scan.ts';
import { mapAll } from '../../producers/normalizer/mapper.ts';
import { hyperliquidMapper } from '../../producers/normalizer/mappers/hyperliquid.ts';

/** The general path's event, or the error it throws. */
function general(text: string): { event?: string; error?: string } {
  try {
    const [event] = mapAll(hyperliquidMapper, JSON.parse(text), { symbol: undefined, receivedAtMs: 1 });
    return { event: JSON.stringify(event) };
  } catch (err) {
    return { error: String(err) };
  }
}

/** Both paths agree: a frame the scan reads gives the mapper's event; returns whether it read it. */
function agree(text: string): boolean {
  const scanned = scanL2Book(text);
  if (scanned === undefined) return false;
  expect(general(text), text).toEqual({ event: JSON.stringify(scanned) });
  return true;
}

const recorded: string[] = (() => {
  const fx = JSON.parse(
    readFileSync(new URL('../fixtures/connectors/hyperliquid-btc-eth.json', import.meta.url), 'utf8'),
  ) as { sessions: unknown[][] };
  return fx.sessions
    .flat()
    .filter((f) => (f as { channel?: string }).channel === 'l2Book')
    .map((f) => JSON.stringify(f));
})();

const frame = (bids: string, asks: string, head = '"coin":"BTC","time":1767225600250') =>
  `{"channel":"l2Book","data":{${head},"levels":[[${bids}],[${asks}]]}}`;
const level = (px: string, sz: string, n = '1') => `{"px":${px},"sz":${sz},"n":${n}}`;

describe('the l2Book fast path', () => {
  it('reads the venue layout: recorded frames and benchmark frames give the mapper’s events', () => {
    expect(recorded.length).toBeGreaterThan(0);
    for (const text of recorded) expect(agree(text), text).toBe(true);
    const bench = hyperliquidFrames(200, 7).frames.filter(
      (f): f is string => typeof f === 'string' && f.includes('"l2Book"'),
    );
    for (const text of bench) expect(agree(text), text).toBe(true);
  });

  it('reads edge values as the mapper does: zero sizes dropped, long decimals, empty sides, unsorted sides', () => {
    const read = [
      frame(level('"100.5"', '"0.0"'), level('"101"', '"2"')),
      frame(level('"100.123456789012345678"', '"1.00000000000000001"'), level('"101.0"', '"3."')),
      frame('', level('"101"', '"1"')),
      frame('', ''),
      frame(
        [level('"99"', '"1"'), level('"100"', '"1"')].join(','),
        [level('"102"', '"1"'), level('"101"', '"1"')].join(','),
      ),
      frame(level('"100"', '"1"', '0'), level('"101"', '"1"', '12345')),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"@107","time":0'),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"kPEPE","time":1767225600250'),
    ];
    for (const text of read) expect(agree(text), text).toBe(true);
  });

  it('leaves every other layout, and every frame the mapper refuses, to the general path', () => {
    const left = [
      frame(level('"100"', '"1"'), level('"101"', '"1"')).replace('"levels":', '"levels": '),
      `${frame(level('"100"', '"1"'), level('"101"', '"1"'))}\n`,
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"time":1767225600250,"coin":"BTC"'),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"B\\u0054C","time":1767225600250'),
      frame(level('100', '"1"'), level('"101"', '"1"')),
      frame(level('"1e2"', '"1"'), level('"101"', '"1"')),
      frame(level('"100"', '"-1"'), level('"101"', '"1"')),
      frame(level('"0"', '"1"'), level('"101"', '"1"')),
      frame(level('"."', '"1"'), level('"101"', '"1"')),
      frame(level('"1.2.3"', '"1"'), level('"101"', '"1"')),
      frame(level('"100"', '""'), level('"101"', '"1"')),
      frame(level('"100"', '"1"', '01'), level('"101"', '"1"')),
      frame(level('"100"', '"1"', '-1'), level('"101"', '"1"')),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"BTC","time":01'),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"BTC","time":-1'),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"BTC","time":99999999999999999999'),
      frame(level('"100"', '"1"'), level('"101"', '"1"'), '"coin":"","time":1'),
      frame(level('"100"', '"1"'), `${level('"101"', '"1"')}],[`),
      frame(level('"100"', '"1"'), level('"101"', '"1"')).replace('"n":1}', '"n":1,"x":2}'),
      frame(level('"100"', '"1"'), level('"101"', '"1"')).slice(0, -1),
    ];
    for (const text of left) expect(scanL2Book(text), text).toBeUndefined();
  });

  it('throws what the mapper throws for a frame it reads that the contract refuses', () => {
    const crossed = frame(level('"101"', '"1"'), level('"100"', '"1"'));
    const longCoin = frame(
      level('"100"', '"1"'),
      level('"101"', '"1"'),
      `"coin":"${'A'.repeat(70)}","time":1`,
    );
    for (const text of [crossed, longCoin]) {
      const expected = general(text).error;
      expect(expected).toBeDefined();
      expect(() => scanL2Book(text)).toThrow(expected?.replace(/^\w+: /, ''));
    }
  });

  it('agrees with the mapper on random decimal strings', () => {
    let seed = 42;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const decimalText = () => {
      const chars = '0123456789..';
      let s = '';
      const len = 1 + Math.floor(next() * 20);
      for (let i = 0; i < len; i++) s += chars[Math.floor(next() * chars.length)];
      return s;
    };
    let read = 0;
    for (let i = 0; i < 2_000; i++) {
      const text = frame(level(`"${decimalText()}"`, `"${decimalText()}"`), '');
      if (agree(text)) read++;
    }
    expect(read).toBeGreaterThan(100);
  });
});
