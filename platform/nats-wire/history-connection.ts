/**
 * The connection history reads pull over (platform/pull-consumer.ts): a second connection to the
 * same NATS servers with the same credentials and TLS, speaking the few operations a pull needs
 * (SUB, UNSUB, PUB, PING/PONG) and parsing what arrives with parser.ts. A catch-up is bound by
 * how fast the edge takes messages off the socket: nats.js parses every control line byte by byte
 * and decodes its arguments through TextDecoder, a sizeable share of a catch-up's CPU; this parses them
 * with native searches. Everything else (streams, consumers, the live tail, KV) stays on nats.js.
 *
 * It does not reconnect: when the socket ends, every subscription is told (`onLost`), its pull
 * consumer ends as `lost`, and the reader opens a new consumer, which asks for a connection again
 * (history-connections.ts makes one). What it does not know hands the reads to nats.js
 * (history-connections.ts): credentials it cannot present (a creds file: nkey signatures), a
 * server in lame duck mode (an INFO with `ldm`: the reads under way finish, new ones go to nats.js,
 * which moves to another server), and any `-ERR` but a permissions violation (the connection ends
 * as `failed`, and reads stay on nats.js for a while).
 */

import { readFileSync } from 'node:fs';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions as TlsOptions, connect as tlsConnect } from 'node:tls';
import { type ReplyView, WireParser } from './parser.ts';

/**
 * What a subscription receives; `status` is a status message's code (100, 404, 408, 409, 503),
 * else 0. `reply` and `payload` are views of the bytes read, valid during the call.
 */
export type WireMessage = (subject: string, reply: ReplyView, status: number, payload: Buffer) => void;

export type WireSubscription = { readonly subject: string; unsubscribe(): void; isClosed(): boolean };

/** The credentials nats.js was given, in the part this connection can present. */
export type HistoryAuth = {
  user?: string;
  pass?: string;
  token?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
};

/** How long a connection may take to say it is ready (INFO, TLS, CONNECT, PONG). */
const CONNECT_TIMEOUT_MS = 10_000;
/** Subscriptions at once on one connection: one per history read under way. */
const MAX_SUBSCRIPTIONS = 100_000;
/** Unsent bytes past which a publish fails (the socket is not draining). */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** A PING this often; a connection with KEEPALIVE_MISSES of them unanswered is dead (a silent peer). */
const KEEPALIVE_MS = 10_000;
const KEEPALIVE_MISSES = 2;

/** Where the connection says why it ended or what the server refused (no credential in it). */
export type Report = (what: string) => void;

/** `report`: see Report; `keepaliveMs`: how often it PINGs (KEEPALIVE_MS). */
export type HistoryOptions = { report?: Report; keepaliveMs?: number };

type Sub = { subject: string; onMessage: WireMessage; onLost: () => void };

export class HistoryConnection {
  private readonly subs = new Map<number, Sub>();
  private nextSid = 1;
  private closed = false;
  /** The server said it is in lame duck mode: take no new reads. */
  private lameDuck = false;
  /** Ended by something this connection does not know (an `-ERR`, bytes it cannot parse). */
  private protocolFailure = false;
  private pingsUnanswered = 0;
  private readonly keepalive: ReturnType<typeof setInterval>;

  private readonly report: Report;

  private constructor(
    private readonly socket: Socket,
    opts: HistoryOptions,
  ) {
    const report = opts.report ?? (() => {});
    this.report = report;
    socket.once('close', () => this.lose());
    socket.on('error', (err) => {
      report(`socket error: ${err.message}`);
      socket.destroy();
    });
    this.keepalive = setInterval(() => {
      if (this.pingsUnanswered >= KEEPALIVE_MISSES) {
        report(`no PONG to ${KEEPALIVE_MISSES} PINGs; closed`);
        socket.destroy();
        return;
      }
      this.pingsUnanswered++;
      socket.write('PING\r\n');
    }, opts.keepaliveMs ?? KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** Connects to the first of `servers` (URLs, or host:port) that answers. */
  static async open(
    servers: readonly string[],
    name: string,
    auth: HistoryAuth,
    opts: HistoryOptions = {},
  ): Promise<HistoryConnection> {
    let last: unknown = new Error('no NATS server given');
    for (const url of servers) {
      try {
        return await handshake(new URL(url.includes('://') ? url : `nats://${url}`), name, auth, opts);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether new reads should go elsewhere: the server is in lame duck mode. */
  get draining(): boolean {
    return this.lameDuck;
  }

  /** Whether it ended on something it does not know (reads then stay on nats.js for a while). */
  get failed(): boolean {
    return this.protocolFailure;
  }

  /** Subscriptions open: one per history read pulling over this connection. */
  get subscriptions(): number {
    return this.subs.size;
  }

  /** Subscribes to `subject`; `onLost` is called once if the connection ends first. */
  subscribe(subject: string, onMessage: WireMessage, onLost: () => void): WireSubscription {
    if (this.closed) throw new Error('nats history connection closed');
    if (this.subs.size >= MAX_SUBSCRIPTIONS) throw new Error('nats history connection: too many reads');
    const sid = this.nextSid++;
    this.subs.set(sid, { subject, onMessage, onLost });
    this.socket.write(`SUB ${subject} ${sid}\r\n`);
    return {
      subject,
      unsubscribe: () => {
        if (!this.subs.delete(sid) || this.closed) return;
        this.socket.write(`UNSUB ${sid}\r\n`);
      },
      isClosed: () => this.closed || !this.subs.has(sid),
    };
  }

  /** Publishes `payload` (ASCII) to `subject` with a reply subject; throws once closed or stuck. */
  publish(subject: string, payload: string, reply: string): void {
    if (this.closed) throw new Error('nats history connection closed');
    if (this.socket.writableLength > MAX_UNSENT_BYTES) throw new Error('nats history connection stuck');
    this.socket.write(`PUB ${subject} ${reply} ${payload.length}\r\n${payload}\r\n`);
  }

  close(): void {
    this.socket.destroy();
    this.lose();
  }

  /** Routes what the socket delivers after the handshake (the parser the handshake used, its handlers swapped). */
  private attach(parser: WireParser, handlers: Handlers): void {
    handlers.msg = (sid, subject, reply, status, payload) =>
      this.subs.get(sid)?.onMessage(subject, reply, status, payload);
    handlers.ping = () => this.socket.write('PONG\r\n');
    handlers.pong = () => {
      this.pingsUnanswered = 0;
    };
    // A later INFO of a cluster change changes nothing here (the handshake is done); one that says
    // lame duck mode stops new reads from coming here.
    handlers.info = (json) => {
      if (this.lameDuck || !/"ldm"\s*:\s*true/.test(json)) return;
      this.lameDuck = true;
      this.report('server in lame duck mode: new history reads go to nats.js');
    };
    handlers.err = (message) => {
      this.report(`server error: ${message}`);
      // A refused subject fails that read alone (its pull times out); anything else ends the connection.
      if (/^permissions violation/i.test(message)) return;
      this.protocolFailure = true;
      this.socket.destroy();
      this.lose(); // at once: no new read may take a connection that is going
    };
    this.socket.on('data', (chunk: Buffer) => {
      try {
        parser.feed(chunk);
      } catch (err) {
        this.report(String(err));
        this.protocolFailure = true;
        this.socket.destroy();
        this.lose();
      }
    });
  }

  private lose(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    const subs = [...this.subs.values()];
    this.subs.clear();
    for (const s of subs) s.onLost();
  }

  /** @internal handshake() builds the connection once the server has answered. */
  static ready(
    socket: Socket,
    parser: WireParser,
    handlers: Handlers,
    opts: HistoryOptions,
  ): HistoryConnection {
    const c = new HistoryConnection(socket, opts);
    c.attach(parser, handlers);
    return c;
  }
}

type Handlers = ConstructorParameters<typeof WireParser>[0];

/** INFO → (TLS) → CONNECT + PING → PONG; rejects on -ERR, a closed socket or the timeout. */
function handshake(
  url: URL,
  name: string,
  auth: HistoryAuth,
  opts: HistoryOptions,
): Promise<HistoryConnection> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, ''); // an IPv6 address without its brackets
    const plain = netConnect({ host, port: Number(url.port || 4222) });
    plain.setNoDelay(true);
    let socket: Socket = plain;
    const fail = (err: unknown) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const timer = setTimeout(() => fail(new Error('nats history connection: timed out')), CONNECT_TIMEOUT_MS);
    const handlers: Handlers = {
      msg: () => {},
      info: (json): void => {
        const info = JSON.parse(json) as { tls_required?: boolean };
        const useTls = info.tls_required === true || url.protocol === 'tls:' || auth.tls !== undefined;
        if (!useTls) {
          sendConnect(false);
          return;
        }
        socket.removeListener('data', onData);
        // SNI takes names only; the certificate is checked against `host` either way.
        socket = tlsConnect({
          ...tlsOptionsOf(auth),
          socket,
          host,
          ...(isIP(host) ? {} : { servername: host }),
        });
        socket.once('error', fail);
        socket.once('close', onClose);
        socket.once('secureConnect', () => sendConnect(true));
        socket.on('data', onData);
      },
      ping: () => socket.write('PONG\r\n'),
      pong: () => {
        clearTimeout(timer);
        for (const s of [plain, socket]) {
          s.removeListener('data', onData);
          s.removeListener('error', fail);
          s.removeListener('close', onClose);
        }
        if (plain !== socket) plain.on('error', () => socket.destroy());
        resolve(HistoryConnection.ready(socket, parser, handlers, opts));
      },
      err: (message) => fail(new Error(`nats history connection: ${message}`)),
    };
    const parser = new WireParser(handlers);
    const onData = (chunk: Buffer) => {
      try {
        parser.feed(chunk);
      } catch (err) {
        fail(err);
      }
    };
    const onClose = () => fail(new Error('nats history connection: closed during handshake'));
    const sendConnect = (tls: boolean) => {
      const connect = {
        verbose: false,
        pedantic: false,
        tls_required: tls,
        name,
        lang: 'node-history',
        version: '1.0.0',
        protocol: 1,
        headers: true,
        no_responders: true,
        ...credentialsOf(url, auth),
      };
      socket.write(`CONNECT ${JSON.stringify(connect)}\r\nPING\r\n`);
    };
    socket.on('data', onData);
    socket.once('error', fail);
    socket.once('close', onClose);
  });
}

/** user/pass or token: the configured ones, else those in the URL (`nats://user:pass@host`, `nats://token@host`). */
function credentialsOf(url: URL, auth: HistoryAuth): Record<string, string> {
  if (auth.user !== undefined) return { user: auth.user, pass: auth.pass ?? '' };
  if (auth.token !== undefined) return { auth_token: auth.token };
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  if (user && pass) return { user, pass };
  if (user) return { auth_token: user };
  return {};
}

function tlsOptionsOf(auth: HistoryAuth): TlsOptions {
  const t = auth.tls ?? {};
  return {
    ...(t.caFile ? { ca: readFileSync(t.caFile) } : {}),
    ...(t.certFile ? { cert: readFileSync(t.certFile) } : {}),
    ...(t.keyFile ? { key: readFileSync(t.keyFile) } : {}),
    minVersion: 'TLSv1.2',
  };
}
