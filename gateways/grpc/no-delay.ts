import type { Http2Server } from 'node:http2';
import type { Socket } from 'node:net';

/**
 * Nagle off on every connection, as the SSE and disk-sync edges have it: node:http2 leaves it on
 * and grpc-js does not turn it off on the server side, so a small frame (a call's headers, its
 * first event) written while the connection's last bytes were unacknowledged waited for the
 * client's delayed ACK (up to 40 ms on Linux).
 */
export function noDelay(h2: Http2Server): void {
  // The TCP socket, before TLS when there is TLS: the option is the socket's.
  h2.on('connection', (socket: Socket) => socket.setNoDelay(true));
}
