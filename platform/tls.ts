/**
 * TLS for every edge listener: a configured certificate, or a generated self-signed one on
 * request. TLS 1.2 minimum; only ECDHE with AES-GCM or ChaCha20-Poly1305 on TLS 1.2, plus the TLS
 * 1.3 suites (Node's default list also carries CBC and DHE suites, so the list is explicit).
 */
import { readFileSync } from 'node:fs';
import type { SecureServerOptions } from 'node:http2';
import { generate } from 'selfsigned';
import { MIN_TLS_VERSION } from '../contracts/limits.ts';
import type { Config } from './config.ts';

export const TLS_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

export type TlsOptions = Pick<
  SecureServerOptions,
  'key' | 'cert' | 'minVersion' | 'ciphers' | 'honorCipherOrder'
>;

/** One self-signed certificate per process, shared by its listeners. */
let selfSigned: ReturnType<typeof generate> | null = null;

/** Null when the listeners stay plaintext (local quick start on loopback). */
export async function tlsOptions(config: Config): Promise<TlsOptions | null> {
  let key: string;
  let cert: string;
  if (config.TLS_CERT_FILE && config.TLS_KEY_FILE) {
    key = readFileSync(config.TLS_KEY_FILE, 'utf8');
    cert = readFileSync(config.TLS_CERT_FILE, 'utf8');
  } else if (config.TLS_SELF_SIGNED) {
    selfSigned ??= generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      notAfterDate: new Date(Date.now() + 365 * 86_400_000),
    });
    const pems = await selfSigned;
    key = pems.private;
    cert = pems.cert;
  } else return null;
  return { key, cert, minVersion: MIN_TLS_VERSION, ciphers: TLS_CIPHERS, honorCipherOrder: true };
}
