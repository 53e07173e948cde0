/**
 * The client benchmark's isolated phase: SSE bytes recorded from the real gateway, served again
 * from memory through a `fetch` stub, so that a reader's own cost (parsing, dispatch, JSON) is
 * measured without the network or the gateway. Chunks are pushed one at a time when the reader
 * has taken everything before them: `pushed` is when a chunk became readable.
 */

export type Recording = { chunks: Uint8Array[]; lastSeq: number };

/** Reads `url` from position 0 to `last`, keeping the chunks exactly as they arrived. */
export async function recordStream(url: string, last: number): Promise<Recording> {
  const res = await fetch(`${url}?last_event_id=0`, { headers: { accept: 'text/event-stream' } });
  if (!res.body) throw new Error(`no body: HTTP ${res.status}`);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  const mark = `id: ${last}\n`;
  let tail = ''; // the end of what came before, so a mark split across chunks is still found
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error('stream ended before the last event');
    chunks.push(value);
    const text = tail + decoder.decode(value, { stream: true });
    const at = text.indexOf(mark);
    if (at >= 0 && text.indexOf('\n\n', at) >= 0) break; // the last message, whole
    tail = at >= 0 ? text.slice(at) : text.slice(-mark.length);
  }
  await reader.cancel();
  return { chunks, lastSeq: last };
}

/** Splits a recording into one SSE message per chunk (what a live stream at a modest rate sends). */
export function perMessage(rec: Recording): Recording {
  const text = Buffer.concat(rec.chunks.map((c) => Buffer.from(c))).toString('utf8');
  const enc = new TextEncoder();
  const chunks = text
    .split('\n\n')
    .filter((m) => m.length > 0)
    .map((m) => enc.encode(`${m}\n\n`));
  return { chunks, lastSeq: rec.lastSeq };
}

export type Replay = {
  fetch: typeof fetch;
  /** Makes the next chunk readable; false when none is left. */
  push(): boolean;
  /** When the last pushed chunk became readable (performance.now() ms). */
  pushedAt(): number;
};

/** A fetch that answers once with the recording as an SSE response, chunk by chunk on `push()`. */
export function replay(rec: Recording): Replay {
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let next = 0;
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    fetch: async () =>
      new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } }),
    push() {
      const chunk = rec.chunks[next++];
      if (!chunk || !controller) return false;
      at = performance.now();
      controller.enqueue(chunk);
      return true;
    },
    pushedAt: () => at,
  };
}
