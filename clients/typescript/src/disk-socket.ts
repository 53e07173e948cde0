/**
 * The one WebSocket of a disk-sync connection, whichever implementation runs it: the global
 * `WebSocket` where there is one (browsers, Node 22+), which cannot set headers, so the key goes as
 * `?api_key=` (accepted by the edge and redacted from its logs); else the `ws` package, loaded
 * only then (a computed specifier, so browser bundles never pull it in), with the preferred
 * `x-api-key` header and backpressure (pause / resume).
 */

/** Callbacks of one socket; `close` is called once, whoever closed it (a drop is 1006). */
export type SocketHandlers = {
  open(): void;
  message(data: string | Uint8Array): void;
  close(code: number, reason: string): void;
};

export type DiskSocket = {
  send(text: string): void;
  /** Drops the connection now (no close handshake to wait for). */
  close(): void;
  /** Stops reading from the network (only where the implementation can: `ws`). */
  pause?(): void;
  resume?(): void;
};

export type OpenSocket = (url: string, key: string, on: SocketHandlers) => Promise<DiskSocket>;

/** A frame over this many bytes is refused with 1009 by `ws` (the edge sends at most 4 MB). */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

const globalSocket: OpenSocket = async (url, key, on) => {
  const u = new URL(url);
  u.searchParams.set('api_key', key);
  const ws = new WebSocket(u.toString());
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => on.open();
  ws.onmessage = (e: MessageEvent) =>
    on.message(typeof e.data === 'string' ? e.data : new Uint8Array(e.data as ArrayBuffer));
  ws.onclose = (e: CloseEvent) => on.close(e.code, e.reason);
  return {
    send: (text) => ws.send(text),
    close: () => ws.close(),
  };
};

/** Kept in a variable so that bundlers leave the import alone. */
const WS_MODULE = 'ws';

const wsSocket: OpenSocket = async (url, key, on) => {
  const { default: WS } = (await import(WS_MODULE)) as typeof import('ws');
  const ws = new WS(url, { headers: { 'x-api-key': key }, maxPayload: MAX_PAYLOAD_BYTES });
  ws.on('open', () => on.open());
  ws.on('message', (data: Buffer, isBinary: boolean) => on.message(isBinary ? data : data.toString()));
  ws.on('error', () => {}); // a close (1006) follows
  ws.once('close', (code: number, reason: Buffer) => on.close(code, reason.toString()));
  return {
    send: (text) => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    },
    close: () => ws.terminate(),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
  };
};

/** The global WebSocket where it exists, else `ws`. */
export const openSocket: OpenSocket = (url, key, on) =>
  typeof globalThis.WebSocket === 'function' ? globalSocket(url, key, on) : wsSocket(url, key, on);
