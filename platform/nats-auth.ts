/**
 * How a process proves itself to NATS and protects the hop: credentials (a `.creds` file, user and
 * password, or a token) and TLS (CA to trust, optional client certificate), all from configuration.
 * Nothing here is logged: `describeNatsAuth` names the kind of credential, never its value.
 */
import { readFileSync } from 'node:fs';
import { type ConnectionOptions, credsAuthenticator } from '@nats-io/transport-node';
import type { Config } from './config.ts';

export type NatsAuthConfig = Pick<
  Config,
  | 'NATS_CREDS_FILE'
  | 'NATS_USER'
  | 'NATS_PASSWORD'
  | 'NATS_TOKEN'
  | 'NATS_TLS_CA_FILE'
  | 'NATS_TLS_CERT_FILE'
  | 'NATS_TLS_KEY_FILE'
>;

/** The connection options that carry credentials and TLS; empty when none are configured. */
export function natsAuthOptions(c: Partial<NatsAuthConfig>): Partial<ConnectionOptions> {
  const opts: Partial<ConnectionOptions> = {};
  if (c.NATS_CREDS_FILE) opts.authenticator = credsAuthenticator(readFileSync(c.NATS_CREDS_FILE));
  else if (c.NATS_USER) {
    opts.user = c.NATS_USER;
    if (c.NATS_PASSWORD !== undefined) opts.pass = c.NATS_PASSWORD;
  } else if (c.NATS_TOKEN) opts.token = c.NATS_TOKEN;
  if (c.NATS_TLS_CA_FILE || c.NATS_TLS_CERT_FILE) {
    opts.tls = {
      ...(c.NATS_TLS_CA_FILE ? { caFile: c.NATS_TLS_CA_FILE } : {}),
      ...(c.NATS_TLS_CERT_FILE ? { certFile: c.NATS_TLS_CERT_FILE } : {}),
      ...(c.NATS_TLS_KEY_FILE ? { keyFile: c.NATS_TLS_KEY_FILE } : {}),
    };
  }
  return opts;
}

/** For the start-up log line: which kind of credential and whether TLS is on, no values. */
export function describeNatsAuth(c: Partial<NatsAuthConfig>): { auth: string; tls: boolean } {
  const auth = c.NATS_CREDS_FILE ? 'creds' : c.NATS_USER ? 'user' : c.NATS_TOKEN ? 'token' : 'none';
  return { auth, tls: Boolean(c.NATS_TLS_CA_FILE || c.NATS_TLS_CERT_FILE) };
}
