/**
 * A flush's shared chunks (gateways/core/flusher.ts `shared`): one chunk per share group and
 * queue content (first and last event, count) within a flush, whichever order the connections ask
 * in; a chunk is never reused across flushes.
 */
import { expect, it } from 'vitest';
import { Flusher } from '../../gateways/core/flusher.ts';

it('one chunk per group and content within a flush, none kept after it', async () => {
  const f = new Flusher();
  let made = 0;
  const make = () => `chunk${++made}`;
  const a = f.shared('g', 1, 3, 3, make);
  expect(f.shared('g', 1, 3, 3, make)).toBe(a);
  const others = [
    f.shared('h', 1, 3, 3, make),
    f.shared('g', 2, 3, 2, make),
    f.shared('g', 1, 4, 4, make),
    f.shared('g', 1, 3, 2, make),
  ];
  expect(new Set([a, ...others]).size).toBe(5);
  // Asked again after others (not the last answer): the same chunks, none made again.
  expect(f.shared('g', 1, 3, 3, make)).toBe(a);
  expect(f.shared('h', 1, 3, 3, make)).toBe(others[0]);
  expect(made).toBe(5);

  f.schedule({ flush: () => {} });
  await new Promise((r) => setImmediate(r));
  expect(f.shared('g', 1, 3, 3, make)).toBe('chunk6');
});
