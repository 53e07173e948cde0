/**
 * The history connection (history-connection.ts) of one nats.js connection: made when a history
 * read first asks, on the server nats.js is on, one at a time, and made again after it ends. When
 * it cannot be had (a creds file, whose nkey signatures it cannot present, or a failed connect),
 * reads get null and pull over nats.js; after a failed connect, or a connection that ended on
 * something it does not know (history-connection.ts `failed`), for RETRY_AFTER_FAILURE_MS, so that
 * reads do not each try (and wait) again. While the server says it is in lame duck mode, new reads
 * get null (nats.js moves to another server); the next connection is made once this one ends.
 */
import type { ConnectionOptions } from '@nats-io/transport-node';
import type { Logger } from '../logger.ts';
import { type HistoryAuth, HistoryConnection, type Report } from './history-connection.ts';

/** How long history reads stay on nats.js after the history connection failed to connect or ended on something it does not know. */
const RETRY_AFTER_FAILURE_MS = 30_000;

/** The history connection of one nats.js connection: one at a time, a new one after it ends. */
export function historyConnections(
  url: string,
  name: string,
  log: Logger,
  auth: Partial<ConnectionOptions>,
  currentServer: () => string = () => '',
) {
  let current: Promise<HistoryConnection | null> | null = null;
  let closed = false;
  let warned = false;
  const tls = auth.tls ? (auth.tls as HistoryAuth['tls']) : undefined;
  const wireAuth: HistoryAuth = {
    ...(auth.user !== undefined ? { user: auth.user } : {}),
    ...(auth.pass !== undefined ? { pass: auth.pass } : {}),
    ...(auth.token !== undefined ? { token: auth.token } : {}),
    ...(tls ? { tls } : {}),
  };
  const report: Report = (what) => log.warn({ nats: what }, 'nats history connection');
  /** After a failed connect or a protocol failure, reads take nats.js for a while instead of each trying (and waiting) again. */
  let failedAt = Number.NEGATIVE_INFINITY;
  const connectOnce = () =>
    HistoryConnection.open(serversFirst(currentServer(), url), `${name}-history`, wireAuth, { report }).catch(
      (err) => {
        if (!warned)
          log.warn({ err: String(err) }, 'nats history connection failed; history reads use nats.js');
        warned = true;
        failedAt = performance.now();
        return null;
      },
    );
  const get = async (): Promise<HistoryConnection | null> => {
    for (let attempt = 0; attempt < 2 && !closed && !auth.authenticator; attempt++) {
      if (current === null && performance.now() - failedAt < RETRY_AFTER_FAILURE_MS) return null;
      current ??= connectOnce();
      const pending = current;
      const c = await pending;
      if (c && !c.isClosed) return closed || c.draining ? null : c;
      if (c?.failed) failedAt = performance.now();
      if (current === pending) current = null; // failed or ended: the next try makes a new one
      if (c?.failed) return null; // ended on something it does not know: nats.js takes this read
      if (c === null) return null; // failed: nats.js takes this read
    }
    return null;
  };
  return {
    get,
    /** Ends the connection (its reads are lost and read on over the next one). */
    reset() {
      current?.then((c) => c?.close());
      current = null;
    },
    close() {
      closed = true;
      this.reset();
    },
  };
}

/** `url`'s servers with `first` (host:port, as nats.js names the server it is on) first, keeping its scheme. */
function serversFirst(first: string, url: string): string[] {
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!first) return servers;
  const at = servers.findIndex((s) => s === first || s.endsWith(`//${first}`) || s.endsWith(`@${first}`));
  if (at > 0) servers.unshift(...servers.splice(at, 1));
  else if (at < 0) servers.unshift(first);
  return servers;
}
