/**
 * Live synthetic sessions behind `GET /stream/live`: one per (symbol, seed), shared by every
 * client of this process through one LiveTail on `sim.<symbol>.<seed>.*`, and produced once across
 * processes (see session-lease.ts). A session's model starts at model time 0 when it is first
 * opened, so equal (symbol, seed) give the same event contents in the same order.
 * Bounded: the clients of one account hold at most `perAccount` distinct sessions across every
 * process (429 `subscription_limit` beyond): each process holding a session for an account holds
 * one lease of group (symbol, seed) on the account's record `live.<account>` in the stream-lease
 * bucket (stream-slots.ts; a process that dies stops counting within the lease TTL; NATS
 * unreachable: 503 `overload`); the process at most `perProcess` (503 `overload` beyond); a
 * refused or failed start leaves nothing behind (the next client tries afresh). The map of
 * accounts holds only accounts with a client here.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../../contracts/errors.ts';
import { liveSessionMsgIdPrefix } from '../../../contracts/message-ids.ts';
import { KV_BUCKETS, STREAMS } from '../../../contracts/streams.ts';
import { parseSimSubject, simFilter, simSubject } from '../../../contracts/subjects.ts';
import { LeaseBucket } from '../../../platform/kv-lease.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Nats } from '../../../platform/nats.ts';
import { parseMarketModelConfig } from '../../../producers/simulator/config.ts';
import { type LiveRunner, ModelCursor, runModels } from '../../../producers/simulator/live-runner.ts';
import { BLOCK_MS } from '../../../producers/simulator/market.ts';
import { LiveTail } from '../../core/live-tail.ts';
import type { FeedDeps } from '../../core/replay-source.ts';
import { openKvStreamSlots, type StreamSlot, type StreamSlots } from '../../core/stream-slots.ts';
import { leaseStep, releaseLease } from './session-lease.ts';

/** One client's hold on a session: where its events come from, and how to let go. */
export type SessionHold = { feed: FeedDeps; release(): void };

type Session = {
  key: string;
  symbol: string;
  seed: number;
  tail: LiveTail;
  clients: number;
  runner: LiveRunner | null;
  timer: NodeJS.Timeout;
  startMs: number | null;
};

export type SessionLimits = {
  perAccount: number;
  perProcess: number;
  /** How long a dead process's sessions still count against its accounts (STREAM_LEASE_TTL_MS). */
  leaseTtlMs?: number;
};

/** An account's hold on one session here: its clients, and the session's cross-process lease. */
type Held = { clients: number; lease: Promise<StreamSlot> };

export class SimSessions {
  private readonly sessions = new Map<string, Promise<Session>>();
  /** Account → session key → its clients' holds on this process. */
  private readonly holders = new Map<string, Map<string, Held>>();
  private readonly me = `proc_${randomBytes(6).toString('hex')}`;
  /** Sessions this process has produced since start (tests and metrics). */
  producedSessions = 0;

  private constructor(
    private readonly nats: Nats,
    private readonly leases: LeaseBucket,
    private readonly log: Logger,
    private readonly limits: SessionLimits,
    private readonly slots: StreamSlots,
  ) {}

  static async start(nats: Nats, log: Logger, limits: SessionLimits): Promise<SimSessions> {
    const leases = await LeaseBucket.open(nats, KV_BUCKETS.simSessions, { purgeAfterMs: 3_600_000 });
    const slots = await openKvStreamSlots(nats, { ttlMs: limits.leaseTtlMs ?? 15_000 });
    return new SimSessions(nats, leases, log, limits, slots);
  }

  /**
   * Holds the session (symbol, seed) open for one client, opening it if needed: its live tail (a
   * client reads it through the core's `openFeed`, resuming by sequence like any stream) and the
   * release that gives the hold back.
   */
  async acquire(symbol: string, seed: number, accountId: string): Promise<SessionHold> {
    const key = `${symbol}.${seed}`;
    const letGo = await this.hold(accountId, key);
    let session: Session;
    try {
      let pending = this.sessions.get(key);
      if (!pending) {
        if (this.sessions.size >= this.limits.perProcess) {
          const err = new ApiError(
            'overload',
            `this process already runs ${this.sessions.size} live sessions (at most ${this.limits.perProcess}); retry shortly`,
          );
          err.retryAfterSeconds = 5;
          throw err;
        }
        const opening = this.open(key, symbol, seed);
        pending = opening;
        this.sessions.set(key, opening);
        // A start that failed is forgotten: the next client starts the session afresh.
        opening.catch(() => {
          if (this.sessions.get(key) === opening) this.sessions.delete(key);
        });
      }
      session = await pending;
    } catch (err) {
      letGo();
      throw err;
    }
    session.clients++;
    await this.tick(session);
    let done = false;
    return {
      feed: { nats: this.nats, tail: session.tail, log: this.log },
      release: () => {
        if (done) return;
        done = true;
        session.clients--;
        letGo();
      },
    };
  }

  /** Sessions this process holds open (producing or following). */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Counts one hold of `accountId` on session `key`, or 429 past its distinct sessions (here, then
   * across processes by the account's lease record); returns its release.
   */
  private async hold(accountId: string, key: string): Promise<() => void> {
    const { perAccount } = this.limits;
    const refuse = (n: number) =>
      new ApiError(
        'subscription_limit',
        `this account already holds ${n} live sessions (symbol, seed); at most ${perAccount}: close one first`,
      );
    const mine = this.holders.get(accountId) ?? new Map<string, Held>();
    let held = mine.get(key);
    if (!held) {
      if (mine.size >= perAccount) throw refuse(mine.size);
      held = { clients: 0, lease: this.slots.acquire(`live.${accountId}`, perAccount, key) };
      mine.set(key, held);
      this.holders.set(accountId, mine);
    }
    const h = held;
    h.clients++;
    let done = false;
    const letGo = () => {
      if (done) return;
      done = true;
      if (--h.clients > 0) return;
      if (mine.get(key) === h) mine.delete(key);
      if (mine.size === 0 && this.holders.get(accountId) === mine) this.holders.delete(accountId);
      h.lease.then((s) => s.admitted && s.release()).catch(() => {});
    };
    let slot: StreamSlot;
    try {
      slot = await h.lease;
    } catch {
      letGo();
      throw new ApiError('overload', 'live sessions cannot be counted right now (NATS); retry shortly');
    }
    if (!slot.admitted) {
      letGo();
      throw refuse(slot.open);
    }
    return letGo;
  }

  async stop(): Promise<void> {
    await this.slots.close();
    for (const pending of this.sessions.values()) await this.close(await pending);
  }

  private async open(key: string, symbol: string, seed: number): Promise<Session> {
    const feed = {
      stream: STREAMS.SIM,
      filter: simFilter(symbol, seed),
      parse: parseSimSubject,
      coinToken: 1,
    };
    const tail = await LiveTail.start(this.nats, this.log, {
      ringSize: 1_024,
      staleAfterMs: 3_600_000,
      expectedCoins: [],
      feed,
    });
    const session: Session = {
      key,
      symbol,
      seed,
      tail,
      clients: 0,
      runner: null,
      startMs: null,
      timer: setInterval(() => void this.tick(session), 1_000),
    };
    session.timer.unref();
    return session;
  }

  private async tick(s: Session): Promise<void> {
    const outcome = await leaseStep(this.leases, `lease.${s.key}`, this.me, s.clients > 0).catch(() => ({
      role: 'none' as const,
    }));
    if (outcome.role === 'owner') {
      if (!s.runner) this.produce(s, outcome.startMs);
      if (s.clients === 0 && outcome.interestUntil < Date.now()) {
        await releaseLease(this.leases, `lease.${s.key}`, this.me);
        await this.close(s);
      }
      return;
    }
    if (s.runner) {
      await s.runner.stop();
      s.runner = null;
    }
    if (s.clients === 0) await this.close(s);
  }

  private produce(s: Session, startMs: number): void {
    const config = parseMarketModelConfig({ symbol: s.symbol, seed: s.seed, start_time_ms: startMs });
    const cursor = new ModelCursor(config, Math.max(0, Math.floor((Date.now() - startMs) / BLOCK_MS)));
    s.runner = runModels(
      this.nats,
      [
        {
          cursor,
          subject: (ev) => simSubject(s.symbol, s.seed, ev.event_type),
          idPrefix: liveSessionMsgIdPrefix(s.key, startMs),
        },
      ],
      this.log,
    );
    s.startMs = startMs;
    this.producedSessions++;
    this.log.info({ symbol: s.symbol, seed: s.seed, startMs }, 'live synthetic session producing');
  }

  private async close(s: Session): Promise<void> {
    if (this.sessions.get(s.key) === undefined) return;
    this.sessions.delete(s.key);
    clearInterval(s.timer);
    await s.runner?.stop();
    s.runner = null;
    s.tail.stop();
  }
}
