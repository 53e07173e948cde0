/**
 * SSE framing for relays (the dashboard proxy): a Transform that passes only whole messages (up
 * to and including their blank line), so a relay can always append a message of its own, such as a
 * terminal error, without splicing it into half of an upstream one; and that error message.
 */
import { Transform } from 'node:stream';
import { type ApiError, sseErrorData } from '../../contracts/errors.ts';

const END = Buffer.from('\n\n');

/** Holds back any trailing partial message until the rest of it arrives. */
export function wholeMessages(): Transform {
  let pending: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const cut = buf.lastIndexOf(END);
      if (cut < 0) {
        pending = buf;
        return done();
      }
      pending = buf.subarray(cut + END.length);
      done(null, buf.subarray(0, cut + END.length));
    },
    flush(done) {
      done(null, pending.length > 0 ? pending : undefined);
    },
  });
}

/** `event: error` with the spec's data for `err` (terminal per the spec's SSE table). */
export function sseErrorMessage(err: ApiError, requestId: string): string {
  return `event: error\ndata: ${JSON.stringify(sseErrorData(err, requestId))}\n\n`;
}
