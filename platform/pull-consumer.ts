/**
 * A history read's consumer without nats.js's consumer machinery: one ephemeral consumer (no
 * acks, memory storage, one replica) read by explicit pull requests over a plain subscription.
 * nats.js's ordered consumer wraps every message (JsMsg), splits its reply subject into a new
 * object (a sizeable share of a catch-up's cost per event) and runs its status machinery;
 * here the stream and delivery sequences are read off the reply subject in place.
 *
 * Ordering is checked as the ordered consumer checks it, by delivery sequence: one that is not
 * the previous plus one (a message lost, the consumer recreated under us), a 409 status (consumer
 * deleted, leadership change), missed idle heartbeats or a failed request end the read as `lost`,
 * and the caller opens a new consumer from its next sequence (platform/ordered-reader.ts).
 *
 * Messages arrive over the process's history connection (nats-wire/history-connection.ts, its
 * end is `lost` too) where there is one, else over the nats.js connection.
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { createInbox, nanos, nuid } from '@nats-io/transport-node';
import type { Nats } from './nats.ts';
import type { HistoryConnection, WireSubscription } from './nats-wire/history-connection.ts';
import { digits, type ReplyView, replyViewOf } from './nats-wire/parser.ts';

/** What a pulled message is to its reader: its subject and stored bytes. */
export type PulledMsg = { readonly subject: string; readonly data: Uint8Array };

/** How a pull ended: its batch delivered; expired short of it (408); the consumer lost; stopped. */
export type PullOutcome = 'full' | 'expired' | 'lost' | 'stopped';

/** Heartbeats missed in a row after which a consumer counts as lost (here and in ordered-reader.ts). */
export const LOST_AFTER_MISSED_HEARTBEATS = 2;

const ACK_PREFIX = Buffer.from('$JS.ACK.');
/** Dots after the prefix in the longest reply form (12 tokens). */
const MAX_DOTS = 9;
/** Where the dots of the reply being read are (`replySequences`'s scratch). */
const dots = new Int32Array(MAX_DOTS);

/**
 * The stream and delivery sequences of a reply subject, `$JS.ACK.<stream>.<consumer>.<delivered>.
 * <stream seq>.<delivery seq>.<ts>.<pending>` (nats-server 2.9: 9 tokens), or with domain and
 * account hash after `ACK` (11) and a random token at the end (12); stream and consumer names hold
 * no dots. Read off the bytes, no string made. Written into `out`; false for anything else.
 */
export function replySequences(r: ReplyView, out: { stream: number; delivery: number }): boolean {
  const b = r.bytes;
  const from = r.from;
  const to = r.to;
  if (to - from <= ACK_PREFIX.length) return false;
  for (let i = 0; i < ACK_PREFIX.length; i++) if (b[from + i] !== ACK_PREFIX[i]) return false;
  let n = 0;
  for (let i = from + ACK_PREFIX.length; i < to; i++)
    if (b[i] === 0x2e) {
      if (n === MAX_DOTS) return false;
      dots[n++] = i;
    }
  // n counts the dots after the prefix's two: 6 (9 tokens), 8 (11) or 9 (12). The stream
  // sequence is the 4th token after the prefix (9) or the 6th (11, 12), the delivery one the next.
  const at = n === 6 ? 2 : n === 8 || n === 9 ? 4 : -1;
  if (at < 0) return false;
  const stream = digits(b, (dots[at] as number) + 1, dots[at + 1] as number);
  const delivery = digits(b, (dots[at + 1] as number) + 1, dots[at + 2] as number);
  if (stream < 0 || delivery < 0) return false;
  out.stream = stream;
  out.delivery = delivery;
  return true;
}

export type PullConsumerOptions = {
  stream: string;
  filter: string;
  startSeq: number;
  /** How long a pull waits for its batch; the server's idle heartbeat is half of it. */
  expiresMs: number;
};

type Pull = { left: number; resolve: (o: PullOutcome) => void };

/** The consumer's inbox, and how it asks for messages to be sent there. */
type Inbox = WireSubscription & { request(subject: string, payload: string): void };

export class PullConsumer {
  private inbox: Inbox | null = null;
  /** The history connection this consumer pulled over has ended. */
  private connectionLost = false;
  private delivered = 0;
  /** Messages of any kind received: the watchdog's sign of life. */
  private seen = 0;
  private readonly sequences = { stream: 0, delivery: 0 };
  /** Pulls outstanding, oldest first: messages count against the oldest. */
  private readonly pulls: Pull[] = [];
  private readonly heartbeatMs: number;
  private readonly watchdog: ReturnType<typeof setInterval>;

  private constructor(
    private readonly nats: Nats,
    private readonly opts: PullConsumerOptions,
    private readonly name: string,
    private readonly onMessage: (msg: PulledMsg, seq: number) => void,
  ) {
    this.heartbeatMs = Math.max(500, Math.floor(opts.expiresMs / 2));
    // One watchdog for every pull outstanding: a server that sends nothing, not even heartbeats,
    // for LOST_AFTER_MISSED_HEARTBEATS intervals has lost the consumer.
    let lastSeen = 0;
    let missed = 0;
    this.watchdog = setInterval(() => {
      if (this.pulls.length === 0 || this.seen !== lastSeen) {
        lastSeen = this.seen;
        missed = 0;
      } else if (++missed >= LOST_AFTER_MISSED_HEARTBEATS) this.endAll('lost');
    }, this.heartbeatMs);
  }

  /**
   * Creates the consumer, positioned at `startSeq`, and its inbox; `onMessage` is given every
   * message pulled, with its stream sequence, in order.
   */
  static async open(
    nats: Nats,
    opts: PullConsumerOptions,
    onMessage: (msg: PulledMsg, seq: number) => void,
  ): Promise<PullConsumer> {
    const name = `pull_${nuid.next()}`;
    await nats.jsm.consumers.add(opts.stream, {
      name,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: opts.startSeq,
      ack_policy: AckPolicy.None,
      // '' reads the whole stream: no per-subject index to walk (see replay-source.ts `historyFilter`).
      ...(opts.filter ? { filter_subject: opts.filter } : {}),
      inactive_threshold: nanos(5 * 60_000),
      mem_storage: true,
      num_replicas: 1,
    });
    const conn = (await nats.history?.()) ?? null;
    const consumer = new PullConsumer(nats, opts, name, onMessage);
    try {
      consumer.inbox = conn ? consumer.inboxOn(conn) : consumer.inboxOnNatsJs();
    } catch (err) {
      consumer.close();
      throw err;
    }
    return consumer;
  }

  /** An inbox on the history connection; its end is this consumer's loss. */
  private inboxOn(conn: HistoryConnection): Inbox {
    const sub = conn.subscribe(
      createInbox(),
      (subject, reply, status, data) => this.receive(reply, status, { subject, data }),
      () => {
        this.connectionLost = true;
        this.endAll('lost');
      },
    );
    return { ...sub, request: (subject, payload) => conn.publish(subject, payload, sub.subject) };
  }

  /** An inbox on the nats.js connection (no history connection to be had). */
  private inboxOnNatsJs(): Inbox {
    const nc = this.nats.nc;
    const sub = nc.subscribe(createInbox(), {
      // A status is a message without a reply subject: only those have their headers read.
      callback: (_err, msg) =>
        this.receive(replyViewOf(msg.reply ?? ''), msg.reply ? 0 : (msg.headers?.code ?? 0), msg),
    });
    const reply = sub.getSubject();
    return {
      subject: reply,
      unsubscribe: () => sub.unsubscribe(),
      isClosed: () => sub.isClosed(),
      request: (subject, payload) => nc.publish(subject, payload, { reply }),
    };
  }

  /**
   * Asks for up to `batch` more messages. Several pulls may be outstanding (the next asked while
   * one is delivered, so the stream never waits on a round trip); they are filled in the order
   * they were asked.
   */
  pull(batch: number): Promise<PullOutcome> {
    const inbox = this.inbox;
    // The history connection ended under the read: lost (read again from the next sequence), not stopped.
    if (this.connectionLost) return Promise.resolve('lost');
    if (!inbox || inbox.isClosed()) return Promise.resolve('stopped');
    return new Promise<PullOutcome>((resolve) => {
      this.pulls.push({ left: batch, resolve });
      const request = {
        batch,
        expires: nanos(this.opts.expiresMs),
        idle_heartbeat: nanos(this.heartbeatMs),
      };
      try {
        inbox.request(`$JS.API.CONSUMER.MSG.NEXT.${this.opts.stream}.${this.name}`, JSON.stringify(request));
      } catch {
        this.endAll('lost');
      }
    });
  }

  /** Ends every pull under way (`stopped`). */
  stop(): void {
    this.endAll('stopped');
  }

  /** Stops, drops the inbox and deletes the consumer (best effort: it also expires on its own). */
  close(): void {
    this.stop();
    clearInterval(this.watchdog);
    this.inbox?.unsubscribe();
    this.inbox = null;
    this.nats.jsm.consumers.delete(this.opts.stream, this.name).catch(() => {});
  }

  private endAll(o: PullOutcome): void {
    for (const p of this.pulls.splice(0)) p.resolve(o);
  }

  /** The oldest pull ends (its batch delivered, or expired). */
  private endOldest(o: PullOutcome): void {
    this.pulls.shift()?.resolve(o);
  }

  private receive(reply: ReplyView, status: number, msg: PulledMsg): void {
    this.seen++;
    const pull = this.pulls[0];
    if (!pull) return;
    if (reply.to > reply.from) {
      const s = this.sequences;
      if (!replySequences(reply, s) || s.delivery !== this.delivered + 1) {
        this.endAll('lost');
        return;
      }
      this.delivered = s.delivery;
      this.onMessage(msg, s.stream);
      // onMessage may have stopped the read (endAll): only a pull still first is counted down.
      if (--pull.left === 0 && this.pulls[0] === pull) this.endOldest('full');
      return;
    }
    if (status === 100) return; // idle heartbeat
    if (status === 408 || status === 404) this.endOldest('expired');
    else this.endAll('lost');
  }
}
