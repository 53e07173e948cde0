/**
 * The TLS policy checked from outside Node, with `openssl s_client`: what a handshake negotiated
 * (cipher, ALPN) or the alert it got, the suites the policy must refuse and accept, an RSA
 * certificate made with openssl, and a permissive local server as the positive control (the same
 * invocations complete a handshake with it, so a missing binary, a wrong port or an unsupported
 * flag cannot pass as a refusal).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';

export type Handshake = { ok: boolean; cipher: string; alpn: string; alert: string };

/** `openssl s_client` against 127.0.0.1:port; what it negotiated, or the alert it received. */
export function handshake(url: string, args: string[]): Promise<Handshake> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const c = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args]);
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (err += d));
    c.on('error', reject);
    c.stdin.end();
    const timer = setTimeout(() => c.kill(), 10_000);
    c.on('close', (status) => {
      clearTimeout(timer);
      const cipher = out.match(/Cipher is (\S+)/)?.[1] ?? '';
      resolve({
        ok: status === 0 && cipher !== '' && cipher !== '(NONE)',
        cipher,
        alpn: out.match(/ALPN protocol: (\S+)/)?.[1] ?? '',
        alert: err.match(/alert ([a-z ]+)/)?.[1]?.trim() ?? err.slice(0, 200),
      });
    });
  });
}

/**
 * A self-signed certificate and key written into `dir`: RSA 2048 (default) or EC P-256, for
 * `names` (subjectAltName entries such as `IP:127.0.0.1`, `DNS:localhost`) when given.
 */
export function makeRsaCertificate(
  dir: string,
  kind: 'rsa' | 'ec' = 'rsa',
  names: readonly string[] = [],
): { key: string; cert: string } {
  const key = join(dir, `${kind}.key`);
  const cert = join(dir, `${kind}.crt`);
  const keyArgs =
    kind === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...keyArgs,
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      ...(names.length > 0 ? ['-addext', `subjectAltName=${names.join(',')}`] : []),
    ],
    { stdio: 'ignore' },
  );
  return { key, cert };
}

/** A TLS server that accepts every protocol version and suite; resolves with its https URL. */
export async function startPermissiveServer(files: {
  key: string;
  cert: string;
}): Promise<{ url: string; server: Server }> {
  const server = createServer(
    {
      key: readFileSync(files.key),
      cert: readFileSync(files.cert),
      minVersion: 'TLSv1',
      ciphers: 'ALL:@SECLEVEL=0',
      dhparam: 'auto',
    },
    (s) => s.end(),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { url: `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, server };
}

const OLD = 'DEFAULT:@SECLEVEL=0';
/** Refusals by certificate kind: suites that the certificate could serve, were they allowed. */
export const REFUSED: Record<'ec' | 'rsa', [string, string[], string][]> = {
  ec: [
    ['TLS 1.0', ['-tls1', '-cipher', OLD], 'protocol version'],
    ['TLS 1.1', ['-tls1_1', '-cipher', OLD], 'protocol version'],
    [
      'TLS 1.2 ECDHE-ECDSA with CBC',
      ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA'],
      'handshake failure',
    ],
  ],
  rsa: [
    ['TLS 1.0', ['-tls1', '-cipher', OLD], 'protocol version'],
    ['TLS 1.1', ['-tls1_1', '-cipher', OLD], 'protocol version'],
    [
      'TLS 1.2 RSA key exchange',
      ['-tls1_2', '-cipher', 'AES128-SHA:AES128-GCM-SHA256:@SECLEVEL=0'],
      'handshake failure',
    ],
    [
      'TLS 1.2 DHE-RSA',
      ['-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384'],
      'handshake failure',
    ],
    [
      'TLS 1.2 ECDHE-RSA with CBC',
      ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-SHA256:ECDHE-RSA-AES128-SHA'],
      'handshake failure',
    ],
  ],
};
export const ACCEPTED: Record<'ec' | 'rsa', [string, string[]][]> = {
  ec: [
    ['TLS 1.2 ECDHE AES-128-GCM', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256']],
    ['TLS 1.2 ECDHE AES-256-GCM', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES256-GCM-SHA384']],
    ['TLS 1.2 ECDHE ChaCha20-Poly1305', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-CHACHA20-POLY1305']],
    ['TLS 1.3', ['-tls1_3']],
  ],
  rsa: [
    ['TLS 1.2 ECDHE AES-128-GCM', ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-GCM-SHA256']],
    ['TLS 1.2 ECDHE ChaCha20-Poly1305', ['-tls1_2', '-cipher', 'ECDHE-RSA-CHACHA20-POLY1305']],
    ['TLS 1.3', ['-tls1_3']],
  ],
};
