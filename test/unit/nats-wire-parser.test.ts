/**
 * The history connection's protocol parser (platform/nats-wire/parser.ts): every operation a
 * server sends, whole or cut at every byte, gives the same calls; statuses are read from HMSG
 * headers; a malformed line is an error, never a wrong message.
 */
import { describe, expect, it } from 'vitest';
import { replyText, WireParser } from '../../platform/nats-wire/parser.ts';

type Call = [string, ...unknown[]];

function parserInto(calls: Call[]): WireParser {
  return new WireParser({
    msg: (sid, subject, reply, status, payload) =>
      calls.push(['msg', sid, subject, replyText(reply), status, payload.toString('latin1')]),
    info: (json) => calls.push(['info', JSON.parse(json)]),
    ping: () => calls.push(['ping']),
    pong: () => calls.push(['pong']),
    err: (message) => calls.push(['err', message]),
  });
}

/** An HMSG with its sizes counted. */
const hmsg = (head: string, headers: string, payload = '') =>
  `HMSG ${head} ${headers.length} ${headers.length + payload.length}\r\n${headers}${payload}\r\n`;

const STREAM = [
  'INFO {"server_id":"x","max_payload":1048576}\r\n',
  'MSG md.binance.BTC.trade 7 $JS.ACK.MD.pull_a.1.41.1.1767225600000000000.9 11\r\n{"price":1}\r\n',
  'PING\r\n',
  'MSG _INBOX.abc 12 5\r\nhello\r\n',
  'MSG empty 3 0\r\n\r\n',
  hmsg('_INBOX.abc 12', 'NATS/1.0 408 Request Timeout\r\n\r\n'),
  hmsg('_INBOX.abc 12 $JS.ACK.MD.pull_a.1.42.2.1767225600000000001.8', 'NATS/1.0\r\nA: b\r\n\r\n', '{"p":2}'),
  hmsg('_INBOX.abc 12', 'NATS/1.0 100 Idle Heartbeat\r\n\r\n'),
  '+OK\r\n',
  'PONG\r\n',
  '-ERR \'Permissions Violation for Subscription to "x"\'\r\n',
].join('');

const EXPECTED: Call[] = [
  ['info', { server_id: 'x', max_payload: 1048576 }],
  ['msg', 7, 'md.binance.BTC.trade', '$JS.ACK.MD.pull_a.1.41.1.1767225600000000000.9', 0, '{"price":1}'],
  ['ping'],
  ['msg', 12, '_INBOX.abc', '', 0, 'hello'],
  ['msg', 3, 'empty', '', 0, ''],
  ['msg', 12, '_INBOX.abc', '', 408, ''],
  ['msg', 12, '_INBOX.abc', '$JS.ACK.MD.pull_a.1.42.2.1767225600000000001.8', 0, '{"p":2}'],
  ['msg', 12, '_INBOX.abc', '', 100, ''],
  ['pong'],
  ['err', 'Permissions Violation for Subscription to "x"'],
];

describe('WireParser', () => {
  it('parses every operation in one read', () => {
    const calls: Call[] = [];
    parserInto(calls).feed(Buffer.from(STREAM, 'latin1'));
    expect(calls).toEqual(EXPECTED);
  });

  it('gives the same calls with the bytes cut at every point, and byte by byte', () => {
    const bytes = Buffer.from(STREAM, 'latin1');
    for (let cut = 1; cut < bytes.length; cut++) {
      const calls: Call[] = [];
      const p = parserInto(calls);
      p.feed(bytes.subarray(0, cut));
      p.feed(bytes.subarray(cut));
      expect(calls, `cut at ${cut}`).toEqual(EXPECTED);
    }
    const calls: Call[] = [];
    const p = parserInto(calls);
    for (let i = 0; i < bytes.length; i++) p.feed(bytes.subarray(i, i + 1));
    expect(calls).toEqual(EXPECTED);
  });

  it('waits for a large payload read in many pieces, then hands it over whole', () => {
    const body = 'x'.repeat(300_000);
    const bytes = Buffer.from(`MSG big 1 ${body.length}\r\n${body}\r\nPING\r\n`, 'latin1');
    const calls: Call[] = [];
    const p = parserInto(calls);
    for (let at = 0; at < bytes.length; at += 1_000) p.feed(bytes.subarray(at, at + 1_000));
    expect(calls).toEqual([['msg', 1, 'big', '', 0, body], ['ping']]);
  });

  it('refuses a malformed line or size instead of guessing', () => {
    for (const bad of [
      'MSG a b 5\r\nhello\r\n',
      'MSG a 1 x\r\n',
      'HMSG a 1 9 5\r\n',
      'HELLO\r\n',
      'MSG a\r\n',
    ])
      expect(() => parserInto([]).feed(Buffer.from(bad, 'latin1')), bad).toThrow(/nats protocol/);
    expect(() => parserInto([]).feed(Buffer.alloc(70 * 1024, 0x41))).toThrow(/too long/);
  });
});
