/**
 * What the connector tests share: a recorded scenario (test/fixtures/connectors/), a reader that
 * collects `MD` through an ordered JetStream consumer and the gateways' decode function, a
 * logger whose JSON lines the test can read, and the connector settings pointed at local servers.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { JsMsg } from '@nats-io/jetstream';
import { pino } from 'pino';
import { expect } from 'vitest';
import { decodeFeedEvent } from '../../gateways/core/feed-event.ts';
import type { Logger } from '../../platform/logger.ts';
import { connectorEvents } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import type { Connector, ConnectorSettings } from '../../producers/connectors/connector.ts';
import { eventually } from './eventually.ts';
import { type ScriptEntry, startVenueReplay } from './venue-replay.ts';

export type Scenario = {
  about: string;
  book_depth?: number;
  snapshots?: Record<string, unknown[]>;
  sessions: ScriptEntry[][];
  /** Canonical events per MD subject, in order. */
  expected: Record<string, Record<string, unknown>[]>;
  /** `Nats-Msg-Id` of each expected event. */
  expected_msg_ids: Record<string, string[]>;
};

export const loadScenario = (name: string): Scenario =>
  JSON.parse(readFileSync(new URL(`../fixtures/connectors/${name}`, import.meta.url), 'utf8'));

export type StoredEvent = { subject: string; msgId: string; event: Record<string, unknown> };

/** Everything stored under `filter`, as it arrives: the canonical event without `seq` and stamps. */
export function collectMd(nats: Nats, filter: string, log: Logger) {
  const events: StoredEvent[] = [];
  const reader = readOrdered(
    nats,
    { stream: 'MD', filter, startSeq: 1 },
    (msg: JsMsg, seq: number) => {
      const decoded = decodeFeedEvent(msg, seq);
      if (!decoded) throw new Error(`undecodable message on ${msg.subject}`);
      const { seq: _seq, ingest_us, publish_us, ...event } = JSON.parse(decoded.json);
      if (typeof ingest_us !== 'number' || typeof publish_us !== 'number') throw new Error('stamps missing');
      events.push({ subject: msg.subject, msgId: msg.headers?.get('Nats-Msg-Id') ?? '', event });
    },
    log,
  );
  const bySubject = () => {
    const out: Record<string, StoredEvent[]> = {};
    for (const e of events) {
      out[e.subject] ??= [];
      out[e.subject]?.push(e);
    }
    return out;
  };
  return { events, bySubject, stop: () => reader.stop() };
}

/** A logger that keeps its JSON lines (and writes nothing). */
export function capturingLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

export function connectorSettings(over: Partial<ConnectorSettings>): ConnectorSettings {
  return {
    BINANCE_WS_URL: 'ws://127.0.0.1:1',
    BINANCE_REST_URL: 'http://127.0.0.1:1/depth',
    HYPERLIQUID_WS_URL: 'ws://127.0.0.1:1',
    CONNECTOR_BOOK_DEPTH: 20,
    CONNECTOR_IDLE_TIMEOUT_MS: 60_000,
    CONNECTOR_RECONNECT_BASE_MS: 10,
    CONNECTOR_RECONNECT_MAX_MS: 100,
    ...over,
  };
}

/** The value of a prom-client counter for exactly these labels (0 when never incremented). */
export async function counterValue(
  metric: { get(): Promise<{ values: { labels: object; value: number }[] }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await metric.get();
  const hit = values.find((v) =>
    Object.entries(labels).every(([k, val]) => (v.labels as Record<string, unknown>)[k] === val),
  );
  return hit?.value ?? 0;
}

/** Events of `venue` handed to its publisher so far (trades and books). */
export async function handedOver(venue: string): Promise<number> {
  return (
    (await counterValue(connectorEvents, { venue, event_type: 'trade' })) +
    (await counterValue(connectorEvents, { venue, event_type: 'book' }))
  );
}

/** MD holds exactly the scenario's events, per subject and in order, under the expected ids. */
export function expectStoredAsExpected(md: ReturnType<typeof collectMd>, fx: Scenario): void {
  const got = md.bySubject();
  expect(Object.keys(got).sort()).toEqual(Object.keys(fx.expected).sort());
  for (const [subject, events] of Object.entries(fx.expected)) {
    const stored = got[subject] ?? [];
    expect(
      stored.map((s) => s.event),
      subject,
    ).toEqual(events);
    expect(
      stored.map((s) => s.msgId),
      subject,
    ).toEqual(fx.expected_msg_ids[subject]);
  }
  expect(md.events).toHaveLength(Object.values(fx.expected).reduce((n, list) => n + list.length, 0));
}

/**
 * A restart: a second connector (`start`) reads the same recorded sessions from a new replay
 * server; once it has handed over `handed` events, none of them was stored (same venue ids).
 */
export async function expectRestartStoresNothing(opts: {
  venue: string;
  fx: Scenario;
  subscriptions: number;
  handed: number;
  md: ReturnType<typeof collectMd>;
  start: (wsUrl: string) => Connector;
}): Promise<void> {
  const before = await handedOver(opts.venue);
  const storedBefore = opts.md.events.length;
  const again = await startVenueReplay({
    sessions: opts.fx.sessions,
    subscriptions: opts.subscriptions,
    waits: { first_book: async () => {} },
  });
  const restarted = opts.start(again.url);
  try {
    await eventually(async () => (await handedOver(opts.venue)) - before === opts.handed, 20_000);
    await restarted.drained();
    expect(restarted.stored()).toBe(0);
    expect(opts.md.events).toHaveLength(storedBefore);
  } finally {
    await restarted.stop();
    await again.close();
  }
}
