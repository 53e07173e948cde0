/**
 * The PROXY protocol header a balancer puts before a connection's first byte (HAProxy's
 * `send-proxy-v2`; haproxy.org/download/2.9/doc/proxy-protocol.txt): v2 (binary) and v1 (text).
 * Pure: given the bytes read so far, it says whether they start with a whole header (its length
 * and the client's address), may still become one (`incomplete`), cannot (`none`: not a PROXY
 * header at all) or are a broken one (`invalid`). Bounded: a v2 header longer than
 * `MAX_V2_HEADER_BYTES` or a v1 line longer than the spec's 107 bytes is `invalid`, so a reader
 * never buffers more than that. A LOCAL command (HAProxy's health checks), AF_UNSPEC, AF_UNIX or
 * v1 `UNKNOWN` name no client: `source` is null and the connection's own peer stands.
 * Written here rather than taken from npm: the parsers there (proxy-protocol-js) decode a whole
 * buffer but cannot say "incomplete" versus "not a header", which reading a socket needs.
 */
import { isIP } from 'node:net';

export const V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);
const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
/** v1's longest line, CRLF included (spec §2.1). */
export const MAX_V1_HEADER_BYTES = 107;
/** Addresses (≤ 216 bytes) plus room for TLVs; HAProxy sends none unless `proxy-v2-options` asks. */
export const MAX_V2_HEADER_BYTES = 16 + 2_048;

export type ProxyHeaderParse =
  | { kind: 'none' }
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string }
  /** `length`: bytes of the header (the connection's own data follows); `source`: the client, or null. */
  | { kind: 'header'; length: number; source: string | null };

/** True while `buf` is a prefix of `sig` or starts with it. */
function startsLike(buf: Buffer, sig: Buffer): boolean {
  const n = Math.min(buf.length, sig.length);
  return buf.subarray(0, n).equals(sig.subarray(0, n));
}

export function parseProxyHeader(buf: Buffer): ProxyHeaderParse {
  if (buf.length === 0) return { kind: 'incomplete' };
  if (startsLike(buf, V2_SIGNATURE)) return parseV2(buf);
  if (startsLike(buf, V1_PREFIX)) return parseV1(buf);
  return { kind: 'none' };
}

function parseV2(buf: Buffer): ProxyHeaderParse {
  if (buf.length < 16) return { kind: 'incomplete' };
  const version = buf.readUInt8(12) >> 4;
  const command = buf.readUInt8(12) & 0x0f;
  if (version !== 2) return { kind: 'invalid', reason: `version ${version}` };
  if (command > 1) return { kind: 'invalid', reason: `command ${command}` };
  const length = 16 + buf.readUInt16BE(14);
  if (length > MAX_V2_HEADER_BYTES) return { kind: 'invalid', reason: `header of ${length} bytes` };
  if (buf.length < length) return { kind: 'incomplete' };
  const family = buf.readUInt8(13) >> 4;
  if (command === 0 || family === 0 || family === 3) return { kind: 'header', length, source: null };
  if (family === 1) {
    if (length < 16 + 12) return { kind: 'invalid', reason: 'short IPv4 addresses' };
    return { kind: 'header', length, source: [...buf.subarray(16, 20)].join('.') };
  }
  if (family === 2) {
    if (length < 16 + 36) return { kind: 'invalid', reason: 'short IPv6 addresses' };
    return { kind: 'header', length, source: ipv6Text(buf.subarray(16, 32)) };
  }
  return { kind: 'invalid', reason: `address family ${family}` };
}

function parseV1(buf: Buffer): ProxyHeaderParse {
  const end = buf.indexOf('\r\n', 0, 'latin1');
  if (end < 0)
    return buf.length >= MAX_V1_HEADER_BYTES
      ? { kind: 'invalid', reason: 'v1 line too long' }
      : { kind: 'incomplete' };
  const length = end + 2;
  if (length > MAX_V1_HEADER_BYTES) return { kind: 'invalid', reason: 'v1 line too long' };
  const parts = buf.subarray(0, end).toString('latin1').split(' ');
  if (parts[1] === 'UNKNOWN') return { kind: 'header', length, source: null };
  const [, proto, src, dst, sport, dport] = parts;
  const family = proto === 'TCP4' ? 4 : proto === 'TCP6' ? 6 : 0;
  const portOk = (p: string | undefined) => p !== undefined && /^\d{1,5}$/.test(p) && Number(p) <= 65_535;
  if (parts.length !== 6 || !family || isIP(src ?? '') !== family || isIP(dst ?? '') !== family)
    return { kind: 'invalid', reason: 'malformed v1 line' };
  if (!portOk(sport) || !portOk(dport)) return { kind: 'invalid', reason: 'malformed v1 ports' };
  return { kind: 'header', length, source: normalizeAddress(src as string) };
}

/** RFC 5952 text of 16 bytes: lower case, the longest run of ≥ 2 zero groups as `::`; v4-mapped as v4. */
function ipv6Text(b: Buffer): string {
  const groups = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return [...b.subarray(12)].join('.');
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** One spelling per address: an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) is its IPv4 address. */
export function normalizeAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? (m[1] as string) : address.toLowerCase();
}
