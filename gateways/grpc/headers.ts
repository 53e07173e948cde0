/**
 * Initial metadata, sent once per call: `x-request-id` on every call (errors repeat it in their
 * trailers), plus what the call adds (the rate-limit figures of an admitted key).
 */
import { Metadata } from '@grpc/grpc-js';

type HasMetadata = { sendMetadata(md: Metadata): void };

const sent = new WeakSet<HasMetadata>();

export function sendHeaders(call: HasMetadata, requestId: string, extra: Record<string, string> = {}): void {
  if (sent.has(call)) return;
  sent.add(call);
  const md = new Metadata();
  md.set('x-request-id', requestId);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  call.sendMetadata(md);
}
