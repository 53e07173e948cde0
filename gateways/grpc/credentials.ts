/**
 * Server credentials with the platform's TLS policy (platform/tls.ts): grpc-js's own `createSsl`
 * sets its cipher list, so the policy's options (TLS 1.2 minimum, ECDHE with AES-GCM or
 * ChaCha20-Poly1305, plus the TLS 1.3 suites) are handed to its HTTP/2 server as they are. ALPN
 * `h2` is what Node's HTTP/2 server negotiates. Null options: plaintext (loopback quick start).
 */
import { ServerCredentials } from '@grpc/grpc-js';
import type { TlsOptions } from '../../platform/tls.ts';

class PolicyServerCredentials extends ServerCredentials {
  constructor(tls: TlsOptions) {
    const { key, cert, ...policy } = tls;
    super({ ...policy, allowHTTP1: false }, { key, cert });
  }

  _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}

export function serverCredentials(tls: TlsOptions | null): ServerCredentials {
  return tls ? new PolicyServerCredentials(tls) : ServerCredentials.createInsecure();
}
