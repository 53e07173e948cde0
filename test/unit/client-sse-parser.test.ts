/** The client's SSE parser on every line ending and chunk split, and the reconnection delays. */
import { expect, it } from 'vitest';
import { reconnectDelay, type SseMessage, SseParser } from '../../clients/typescript/src/index.ts';

const text = 'retry: 250\n\n: hb\n\nid: 7\ndata: {"a":1}\n\nevent: notice\ndata: x\ndata: y\n\nid\ndata\n\n';

function parseIn(chunks: string[]): { out: SseMessage[]; parser: SseParser } {
  const parser = new SseParser();
  const out: SseMessage[] = [];
  for (const c of chunks) parser.feed(c, out);
  return { out, parser };
}

const expected: SseMessage[] = [
  { event: 'message', data: '{"a":1}', id: '7' },
  { event: 'notice', data: 'x\ny', id: '7' },
  { event: 'message', data: '', id: '' },
];

it.each([
  ['LF', '\n'],
  ['CRLF', '\r\n'],
  ['CR', '\r'],
])('parses %s line ends split at every position', (_name, eol) => {
  const input = text.replaceAll('\n', eol);
  for (let cut = 0; cut <= input.length; cut++) {
    const { out, parser } = parseIn([input.slice(0, cut), input.slice(cut)]);
    expect(out, `cut at ${cut}`).toEqual(expected);
    expect(parser.retryMs).toBe(250);
  }
  expect(parseIn([...input]).out).toEqual(expected); // one character at a time
});

it('ignores ids with NUL and non-numeric retry values', () => {
  const { out, parser } = parseIn(['id: 1\n\nid: a\0b\nretry: 1x\ndata: z\n\n']);
  expect(out).toEqual([{ event: 'message', data: 'z', id: '1' }]);
  expect(parser.retryMs).toBeNull();
});

it('waits retry · 2^(n−1) per consecutive failure with jitter in [1, 1.5), capped, Retry-After as a floor', () => {
  expect([1, 2, 3, 4].map((n) => reconnectDelay(1000, n, { random: () => 0 }))).toEqual([
    1000, 2000, 4000, 8000,
  ]);
  expect(reconnectDelay(1000, 1, { random: () => 0.999 })).toBe(1500);
  expect(reconnectDelay(1000, 20, { random: () => 0.5 })).toBe(30_000);
  expect(reconnectDelay(100, 1, { random: () => 0, retryAfterMs: 5_000 })).toBe(5_000);
});
