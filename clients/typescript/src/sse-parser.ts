/**
 * A streaming parser of `text/event-stream` (WHATWG HTML §9.2.6): feed it decoded text in chunks
 * of any size; it returns whole messages. Handles CR, LF and CRLF line ends (also split across
 * chunks), comments, `event`, `data` (joined with LF), `id` (ignored when it holds NUL) and
 * `retry` (digits only). No Node-only imports: browsers use it too.
 */

export type SseMessage = {
  /** `message` unless the server named it. */
  event: string;
  data: string;
  /** The last event id in force when the message was dispatched ('' when none was ever sent). */
  id: string;
};

export class SseParser {
  /** The last `retry:` value received, ms; null until one arrives. */
  retryMs: number | null = null;
  /** The last event id buffer (`id:` lines), as a browser's EventSource keeps it. */
  lastEventId = '';
  private buf = '';
  private event = '';
  private data: string | null = null;
  private skipLf = false;

  /** Parses `chunk` and appends every message it completes to `out`. */
  feed(chunk: string, out: SseMessage[]): void {
    const text = this.buf + chunk;
    let pos = 0;
    if (this.skipLf && text.charCodeAt(0) === 10) pos = 1; // the LF of a CRLF split across chunks
    this.skipLf = false;
    // Next LF and next CR, each searched again only once passed (LF-only streams never look for CR).
    let lf = text.indexOf('\n', pos);
    let cr = text.indexOf('\r', pos);
    for (;;) {
      if (lf >= 0 && lf < pos) lf = text.indexOf('\n', pos);
      if (cr >= 0 && cr < pos) cr = text.indexOf('\r', pos);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(lf, cr);
      if (end < 0) break;
      this.line(text, pos, end, out);
      pos = end + 1;
      if (end === cr) {
        if (pos === text.length) this.skipLf = true;
        else if (text.charCodeAt(pos) === 10) pos++;
      }
    }
    this.buf = pos === 0 ? text : text.slice(pos);
  }

  private line(text: string, start: number, end: number, out: SseMessage[]): void {
    if (start === end) {
      this.dispatch(out);
      return;
    }
    if (text.charCodeAt(start) === 58 /* : */) return; // comment (heartbeats)
    const colon = text.indexOf(':', start);
    let field: string;
    let value: string;
    if (colon < 0 || colon > end) {
      field = text.slice(start, end);
      value = '';
    } else {
      field = text.slice(start, colon);
      const from = text.charCodeAt(colon + 1) === 32 /* space */ ? colon + 2 : colon + 1;
      value = from >= end ? '' : text.slice(from, end);
    }
    switch (field) {
      case 'data':
        this.data = this.data === null ? value : `${this.data}\n${value}`;
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default: // unknown fields are ignored
    }
  }

  private dispatch(out: SseMessage[]): void {
    if (this.data !== null)
      out.push({ event: this.event || 'message', data: this.data, id: this.lastEventId });
    this.data = null;
    this.event = '';
  }
}
