/**
 * The client's address behind a balancer, one rule for every transport (HTTP, SSE, JSON-RPC,
 * disk-sync WebSocket, gRPC): every per-address limit reads `clientAddress(socket, headers)`.
 *
 * - `acceptProxyProtocol(server, trusted)` takes over a net/tls/http/http2 server's `connection`
 *   handling. A connection from a peer in `TRUSTED_PROXIES` may open with a PROXY header (v1 or v2,
 *   proxy-header.ts): it is read off the socket, its source becomes the connection's client, and
 *   the bytes after it go to the server as if they were the first. A connection from any other
 *   peer is handed over at once and untouched: its bytes are never parsed here, so a PROXY header
 *   it sends reaches the HTTP (or HTTP/2) parser as garbage and the connection is refused there
 *   (HTTP/1: 400 and close). Nobody but a trusted peer can name a client.
 * - A trusted peer's connection is held until its first bytes say whether a header comes, at most
 *   `HEADER_WAIT_MS` (then it is handed over as it is: the server's own timeouts govern); a broken
 *   header, or one still incomplete then, closes the connection. At most `MAX_V2_HEADER_BYTES` are
 *   buffered per connection.
 * - `X-Forwarded-For` counts only when the connection's client (the direct peer, or the PROXY
 *   header's source) is itself trusted: the client is then the rightmost hop that is not a trusted
 *   proxy (the hops left of it are whatever the client wrote). From anyone else it is ignored.
 * - With no `TRUSTED_PROXIES` (the default) nothing is taken over: every client is its socket's peer.
 * The address is kept on the socket under a symbol, which HTTP/2's socket proxy (`session.socket`)
 * passes through; a TLS socket keeps it on the TCP socket under it (`_parent`).
 */
import { BlockList, isIP, type Server, type Socket } from 'node:net';
import { normalizeAddress, parseProxyHeader } from './proxy-header.ts';

/** How long a trusted peer's connection may take to send its first bytes (the header), ms. */
export const HEADER_WAIT_MS = 10_000;

const CLIENT = Symbol('mdp.clientAddress');

type ClientRecord = { address: string; trusted: TrustedProxies };

/** The `TRUSTED_PROXIES` list: IPv4/IPv6 addresses and CIDR blocks. */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const parsed = parseEntry(entry);
      if (!parsed) throw new Error(`TRUSTED_PROXIES: not an address or CIDR block: ${entry}`);
      if (parsed.prefix === null) this.list.addAddress(parsed.address, parsed.family);
      else this.list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
    this.size = entries.length;
  }

  has(address: string | undefined): boolean {
    if (!address) return false;
    const a = normalizeAddress(address);
    const family = isIP(a);
    return family !== 0 && this.list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }
}

type Entry = { address: string; family: 'ipv4' | 'ipv6'; prefix: number | null };

function parseEntry(entry: string): Entry | null {
  const [raw = '', bits, extra] = entry.trim().split('/');
  const address = normalizeAddress(raw);
  const v = isIP(address);
  if (!v || extra !== undefined) return null;
  const max = v === 4 ? 32 : 128;
  if (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max)) return null;
  return { address, family: v === 4 ? 'ipv4' : 'ipv6', prefix: bits === undefined ? null : Number(bits) };
}

/** True when `entry` is an address or CIDR block `TrustedProxies` takes (configuration check). */
export const isProxyEntry = (entry: string): boolean => parseEntry(entry) !== null;

type Carrier = { [CLIENT]?: ClientRecord; remoteAddress?: string; _parent?: Carrier | null };

function recordOf(socket: Carrier | null | undefined): ClientRecord | undefined {
  return socket?.[CLIENT] ?? socket?._parent?.[CLIENT];
}

/** The client of a request that came on `socket` (see the header for whom to believe); '' if unknown. */
export function clientAddress(
  socket: object | null | undefined,
  headers?: Record<string, string | string[] | undefined>,
): string {
  const s = socket as Carrier | null | undefined;
  const rec = recordOf(s);
  const peer = rec?.address ?? (s?.remoteAddress ? normalizeAddress(s.remoteAddress) : '');
  if (!rec || !headers || !rec.trusted.has(peer)) return peer;
  const forwarded = headers['x-forwarded-for'];
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
    .split(',')
    .map((h) => normalizeAddress(h.trim()))
    .filter((h) => isIP(h) !== 0);
  let client = peer;
  for (let i = hops.length - 1; i >= 0 && rec.trusted.has(client); i--) client = hops[i] as string;
  return client;
}

type Listener = (socket: Socket) => void;

/** Takes over `server`'s connection handling as the header says; nothing when `trusted` is empty. */
export function acceptProxyProtocol(
  server: Pick<Server, 'listeners' | 'removeAllListeners' | 'on'>,
  trusted: TrustedProxies,
): void {
  if (trusted.size === 0) return;
  const original = server.listeners('connection') as Listener[];
  server.removeAllListeners('connection');
  const handOver = (socket: Socket) => {
    for (const l of original) l.call(server, socket);
  };
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ? normalizeAddress(socket.remoteAddress) : undefined;
    if (!peer || !trusted.has(peer)) return handOver(socket);
    readHeader(socket, peer, trusted, handOver);
  });
}

function readHeader(socket: Socket, peer: string, trusted: TrustedProxies, handOver: Listener): void {
  let held: Buffer = Buffer.alloc(0);
  const done = (address: string, rest: Buffer) => {
    clearTimeout(timer);
    socket.removeListener('readable', onReadable);
    socket.removeListener('close', onClose);
    (socket as Carrier)[CLIENT] = { address, trusted };
    if (rest.length > 0) socket.unshift(rest);
    handOver(socket);
  };
  const fail = () => {
    clearTimeout(timer);
    socket.removeListener('readable', onReadable);
    socket.destroy();
  };
  const onClose = () => clearTimeout(timer);
  const onReadable = () => {
    for (let chunk = socket.read() as Buffer | null; chunk; chunk = socket.read() as Buffer | null)
      held = held.length ? Buffer.concat([held, chunk]) : chunk;
    const parsed = parseProxyHeader(held);
    if (parsed.kind === 'none') return done(peer, held);
    if (parsed.kind === 'invalid') return fail();
    if (parsed.kind === 'header') return done(parsed.source ?? peer, held.subarray(parsed.length));
  };
  const timer = setTimeout(() => (held.length ? fail() : done(peer, held)), HEADER_WAIT_MS);
  timer.unref();
  socket.on('readable', onReadable);
  socket.once('close', onClose);
}
