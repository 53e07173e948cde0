/** Helpers of the cluster, fault and soak tests: reading a unified stream by sequence. */
import { openSse } from './sse.ts';

/**
 * Opens `url` with `Last-Event-ID: from` and resolves with the ids of the first `count` events
 * (their stream sequences), then closes the stream. Rejects if the stream ends first.
 */
export async function readSequences(
  url: string,
  key: string,
  from: number,
  count: number,
): Promise<number[]> {
  const seqs: number[] = [];
  let done = () => {};
  const enough = new Promise<void>((r) => (done = r));
  const sse = await openSse(
    url,
    (m) => {
      if (m.event !== 'message' || m.id === null) return;
      seqs.push(Number(m.id));
      if (seqs.length === count) done();
    },
    { 'x-api-key': key, 'last-event-id': String(from) },
  );
  if (sse.status !== 200) throw new Error(`${url}: HTTP ${sse.status}`);
  await Promise.race([
    enough,
    sse.done.then(() => Promise.reject(new Error(`${url}: ended after ${seqs.length}`))),
  ]);
  sse.abort();
  return seqs.slice(0, count);
}
