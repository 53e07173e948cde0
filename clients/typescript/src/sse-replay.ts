/**
 * A finite SSE stream (cache replay): yields each event with its `id:` until the server's
 * `event: end`; an `event: error` ends it with an MdpError. No Node-only imports.
 */
import { MdpError } from './errors.ts';
import { type SseMessage, SseParser } from './sse-parser.ts';
import type { Position, StreamEvent } from './stream-types.ts';

export type ReplayEnd = { cache_key?: string; last_event_id: Position; complete: boolean };

export async function* readReplay(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ seq: Position; event: StreamEvent }, ReplayEnd | null, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const batch: SseMessage[] = [];
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return null; // cut before `end`: resume from the last id
      batch.length = 0;
      parser.feed(decoder.decode(chunk.value, { stream: true }), batch);
      for (const m of batch) {
        if (m.event === 'end') return JSON.parse(m.data) as ReplayEnd;
        if (m.event === 'error') {
          const e = JSON.parse(m.data) as { code: 'internal'; message: string; request_id: string };
          throw new MdpError(e.code, e.message, { requestId: e.request_id });
        }
        if (m.event === 'message') yield { seq: Number(m.id), event: JSON.parse(m.data) as StreamEvent };
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
