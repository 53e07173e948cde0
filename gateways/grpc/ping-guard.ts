/**
 * Keepalive abuse: a client that pings faster than `minIntervalMs` more than `maxStrikes` times
 * gets GOAWAY with ENHANCE_YOUR_CALM (RFC 9113 §7), as gRPC's keepalive rules ask, instead of
 * costing the server a ping ack per frame. grpc-js's server does not enforce this itself, so each
 * HTTP/2 session of the server is watched here.
 */
import { constants, type Http2Server, type Http2Session } from 'node:http2';

export type PingPolicy = { minIntervalMs: number; maxStrikes: number };

export function guardPings(session: Http2Session, policy: PingPolicy): void {
  let last = 0;
  let strikes = 0;
  session.on('ping', () => {
    const now = performance.now();
    if (now - last < policy.minIntervalMs) strikes++;
    else strikes = 0;
    last = now;
    if (strikes > policy.maxStrikes && !session.closed && !session.destroyed) {
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from('too_many_pings'));
      session.close();
    }
  });
}

/** The HTTP/2 servers behind a bound grpc-js server (it keeps them private). */
export function http2ServersOf(server: object): Http2Server[] {
  const servers = (server as { http2Servers?: Map<unknown, unknown> }).http2Servers;
  return servers ? ([...servers.keys()] as never) : [];
}
