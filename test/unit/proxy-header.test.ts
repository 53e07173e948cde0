/**
 * The PROXY header parser (gateways/core/proxy-header.ts) on the spec's layouts: v2 IPv4, IPv6
 * (compressed, v4-mapped), LOCAL, UNSPEC and UNIX, TLVs skipped, every prefix `incomplete`,
 * broken version / command / lengths `invalid`, anything else `none`; v1 TCP4/TCP6/UNKNOWN and
 * its bounds. The bytes of a header made by the spec's example (haproxy.org proxy-protocol.txt).
 */
import { describe, expect, it } from 'vitest';
import { MAX_V2_HEADER_BYTES, parseProxyHeader, V2_SIGNATURE } from '../../gateways/core/proxy-header.ts';

function v2(opts: { cmd?: number; fam?: number; body: number[] | Buffer; version?: number }): Buffer {
  const body = Buffer.from(opts.body);
  const head = Buffer.alloc(16);
  V2_SIGNATURE.copy(head);
  head[12] = ((opts.version ?? 2) << 4) | (opts.cmd ?? 1);
  head[13] = opts.fam ?? 0x11;
  head.writeUInt16BE(body.length, 14);
  return Buffer.concat([head, body]);
}

const ipv4Body = [203, 0, 113, 7, 10, 0, 0, 1, 0x9c, 0x40, 0x1f, 0x90];

describe('PROXY v2', () => {
  it('reads an IPv4 client and says where the connection data starts', () => {
    const header = v2({ body: ipv4Body });
    const data = Buffer.from('GET / HTTP/1.1\r\n');
    expect(parseProxyHeader(Buffer.concat([header, data]))).toEqual({
      kind: 'header',
      length: 28,
      source: '203.0.113.7',
    });
  });

  it('matches the bytes of a known v2 header (LOCAL over DGRAM names no client)', () => {
    const bytes = Buffer.from([
      13, 10, 13, 10, 0, 13, 10, 81, 85, 73, 84, 10, 32, 18, 0, 12, 127, 0, 0, 1, 192, 0, 2, 1, 48, 57, 212,
      49,
    ]);
    expect(parseProxyHeader(bytes)).toEqual({ kind: 'header', length: 28, source: null });
  });

  it('reads IPv6 clients in their RFC 5952 spelling, a v4-mapped one as IPv4', () => {
    const six = (addr: number[]) =>
      v2({ fam: 0x21, body: [...addr, ...Array(16).fill(0), 0x9c, 0x40, 0x1f, 0x90] });
    const doc = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    expect(parseProxyHeader(six(doc))).toMatchObject({ source: '2001:db8::1' });
    const mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 4];
    expect(parseProxyHeader(six(mapped))).toMatchObject({ source: '198.51.100.4' });
    const full = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6];
    expect(parseProxyHeader(six(full))).toMatchObject({ source: '2001:db8:1:2:3:4:5:6' });
    const oneZero = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1];
    expect(parseProxyHeader(six(oneZero))).toMatchObject({ source: '2001:db8:0:1:1:1:1:1' });
  });

  it('skips TLVs after the addresses', () => {
    const tlv = [0x01, 0x00, 0x02, 0x68, 0x32]; // PP2_TYPE_ALPN "h2"
    expect(parseProxyHeader(v2({ body: [...ipv4Body, ...tlv] }))).toEqual({
      kind: 'header',
      length: 33,
      source: '203.0.113.7',
    });
  });

  it('LOCAL (health checks), UNSPEC and UNIX name no client', () => {
    expect(parseProxyHeader(v2({ cmd: 0, body: ipv4Body }))).toMatchObject({ kind: 'header', source: null });
    expect(parseProxyHeader(v2({ fam: 0x00, body: [] }))).toEqual({
      kind: 'header',
      length: 16,
      source: null,
    });
    expect(parseProxyHeader(v2({ fam: 0x31, body: Buffer.alloc(216) }))).toMatchObject({ source: null });
  });

  it('every proper prefix of a header is incomplete', () => {
    const header = v2({ body: ipv4Body });
    for (let n = 0; n < header.length; n++)
      expect(parseProxyHeader(header.subarray(0, n)).kind, `${n} bytes`).toBe('incomplete');
  });

  it('refuses a wrong version, an unknown command or family, short addresses, an overlong header', () => {
    const bad = [
      v2({ version: 1, body: ipv4Body }),
      v2({ cmd: 2, body: ipv4Body }),
      v2({ fam: 0x41, body: ipv4Body }),
      v2({ body: ipv4Body.slice(0, 8) }),
      v2({ fam: 0x21, body: ipv4Body }),
      v2({ body: Buffer.alloc(MAX_V2_HEADER_BYTES) }),
    ];
    for (const b of bad) expect(parseProxyHeader(b).kind).toBe('invalid');
  });

  it('anything else is not a header: HTTP/1, the HTTP/2 preface, TLS', () => {
    for (const start of ['GET / HTTP/1.1\r\n', 'PRI * HTTP/2.0\r\n', '\x16\x03\x01\x02\x00', 'POST /'])
      expect(parseProxyHeader(Buffer.from(start, 'latin1')).kind, JSON.stringify(start)).toBe('none');
  });
});

describe('PROXY v1', () => {
  const line = (s: string) => Buffer.from(s, 'latin1');

  it('reads TCP4 and TCP6 clients; UNKNOWN names none', () => {
    expect(parseProxyHeader(line('PROXY TCP4 203.0.113.7 10.0.0.1 40000 8080\r\nGET /'))).toEqual({
      kind: 'header',
      length: 44,
      source: '203.0.113.7',
    });
    expect(parseProxyHeader(line('PROXY TCP6 2001:db8::1 ::1 40000 8080\r\n'))).toMatchObject({
      source: '2001:db8::1',
    });
    expect(parseProxyHeader(line('PROXY UNKNOWN\r\n'))).toEqual({ kind: 'header', length: 15, source: null });
  });

  it('waits for the line within 107 bytes and refuses a malformed one', () => {
    expect(parseProxyHeader(line('PROXY TCP4 203.0.1')).kind).toBe('incomplete');
    expect(parseProxyHeader(line(`PROXY TCP4 ${'1'.repeat(120)}`)).kind).toBe('invalid');
    for (const bad of [
      'PROXY TCP4 203.0.113.7 10.0.0.1 40000\r\n',
      'PROXY TCP4 2001:db8::1 10.0.0.1 1 2\r\n',
      'PROXY TCP4 203.0.113.7 10.0.0.1 70000 8080\r\n',
      'PROXY UDP4 203.0.113.7 10.0.0.1 1 2\r\n',
    ])
      expect(parseProxyHeader(line(bad)).kind, bad).toBe('invalid');
  });
});
