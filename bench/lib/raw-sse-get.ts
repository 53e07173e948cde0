/**
 * A GET of an event stream over a plain TCP socket for the benchmark's SSE clients: the response's
 * status line and headers, then its chunked body de-chunked, every socket read made into one
 * buffer shared by all the process's connections (`net` `onread`). Node's http client allocates a
 * fresh 64 KiB buffer for every read: at 1–2M events/s a client process spent its CPU on major
 * collections (90 in 4.5 s, the external memory of those buffers), CPU the servers under test
 * then lacked. `data` is handed a view of the shared buffer valid only during the call.
 */
import { connect, type Socket } from 'node:net';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';

const READ = Buffer.allocUnsafe(256 * 1024);
const CR = 0x0d;
const LF = 0x0a;

export type RawSseHandlers = { data(view: Buffer): void; end(): void };
export type RawSse = { destroy(): void };

/** Resolves once the response's headers say 200; rejects on another status or a failed connection. */
export function rawSseGet(url: string, headers: Record<string, string>, on: RawSseHandlers): Promise<RawSse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let head = '';
    let inBody = false;
    let chunked = false;
    /** Bytes of the current chunk still to come (-1: reading a size line). */
    let remaining = -1;
    let size = 0;
    let extension = false;
    /** Data bytes ended: the CRLF after a chunk's data is being skipped (2, 1, then 0). */
    let skip = 0;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      on.end();
    };
    const body = (buf: Buffer, from: number, to: number) => {
      if (!chunked) {
        if (to > from) on.data(buf.subarray(from, to));
        return;
      }
      let p = from;
      while (p < to) {
        if (skip > 0) {
          p++;
          skip--;
        } else if (remaining < 0) {
          const c = buf[p++] as number;
          if (c === LF) {
            if (size === 0) return end(); // the last chunk (trailers are not read)
            remaining = size;
            size = 0;
            extension = false;
          } else if (c === 0x3b)
            extension = true; // `;…` up to the line's end is skipped
          else if (c !== CR && !extension) size = size * 16 + (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
        } else {
          const n = Math.min(remaining, to - p);
          on.data(buf.subarray(p, p + n));
          p += n;
          remaining -= n;
          if (remaining === 0) {
            remaining = -1;
            skip = 2;
          }
        }
      }
    };
    const socket: Socket = connect({
      host: u.hostname,
      port: Number(u.port),
      onread: {
        buffer: READ,
        callback: (n: number, buf: Uint8Array) => {
          const b = buf as RawBuffer;
          if (inBody) {
            body(b, 0, n);
            return true;
          }
          head += b.latin1Slice(0, n);
          const at = head.indexOf('\r\n\r\n');
          if (at < 0) return true;
          const status = Number(head.slice(9, 12));
          if (status !== 200) {
            socket.destroy();
            reject(new Error(`HTTP ${status} from ${url}`));
            return false;
          }
          chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head.slice(0, at));
          inBody = true;
          const rest = head.length - (at + 4);
          resolve({ destroy: () => socket.destroy() });
          body(b, n - rest, n);
          return true;
        },
      },
    });
    socket.setNoDelay(true);
    socket.once('connect', () => {
      const lines = Object.entries({ host: u.host, accept: 'text/event-stream', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\n${lines}connection: close\r\n\r\n`);
    });
    socket.once('error', (err) => (inBody ? end() : reject(err)));
    socket.once('close', () => (inBody ? end() : reject(new Error(`closed before a response from ${url}`))));
  });
}
