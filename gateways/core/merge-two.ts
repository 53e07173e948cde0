/**
 * Two lists, each already in its own order, as one ordered by `key` (the first list's item first
 * on a tie): how a read of `MD` and a read of `OWN` become one answer (JSON-RPC polls by receive
 * time, `md_trades` by stored time). Each list's own order is kept. Pure.
 */
export function mergeTwo<T>(first: readonly T[], second: readonly T[], key: (item: T) => number): T[] {
  if (second.length === 0) return [...first];
  if (first.length === 0) return [...second];
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < first.length && j < second.length) {
    const a = first[i] as T;
    const b = second[j] as T;
    if (key(a) <= key(b)) {
      out.push(a);
      i++;
    } else {
      out.push(b);
      j++;
    }
  }
  for (; i < first.length; i++) out.push(first[i] as T);
  for (; j < second.length; j++) out.push(second[j] as T);
  return out;
}
