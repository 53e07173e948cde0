/**
 * Subject builders and parsers. Subjects are built here and nowhere else.
 *
 * `md.<source>.<symbol>.<event_type>` carries the platform's canonical market events on `MD`: only
 * the platform's producers publish there, and `MD` takes no other subject. What an account
 * publishes with `stream: true` lives on a stream of its own, `OWN`, as
 * `own.<account_id>.<source>.<symbol>.<event_type>`: its own retention and per-account caps, so no
 * tenant can push the platform's history out of `MD`'s window. A stream that shows an account its
 * own events beside the platform's reads both, each by its own sequence (gateways/core/own-feed.ts).
 * The account id leads the own subject so one filter (`own.<account_id>.>`) reads one account.
 */
import type { EventType, Source } from './events.ts';

export const MD_PREFIX = 'md';

export function mdSubject(source: Source, symbol: string, eventType: EventType): string {
  return `${MD_PREFIX}.${source}.${symbol}.${eventType}`;
}

/** An account id as one subject token (`acc_` + base62); anything else is a programming error. */
export function accountToken(accountId: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(accountId))
    throw new Error(`not a subject-safe account id: ${accountId}`);
  return accountId;
}

export const OWN_PREFIX = 'own';

/** An account's own event: `own.<account_id>.<source>.<symbol>.<event_type>` on `OWN`. */
export function ownSubject(accountId: string, source: Source, symbol: string, eventType: EventType): string {
  return `${OWN_PREFIX}.${accountToken(accountId)}.${source}.${symbol}.${eventType}`;
}

/** Every own event of one account (one filter: usable by a 2.9 consumer). */
export const ownAccountFilter = (accountId: string): string => `${OWN_PREFIX}.${accountToken(accountId)}.>`;

/** One coin (a symbol token) of one account's own events. */
export const ownCoinFilter = (accountId: string, symbol: string): string =>
  `${OWN_PREFIX}.${accountToken(accountId)}.*.${symbol}.*`;

/** Whether a subject is an account's own event (on `OWN`): its `seq` is `OWN`'s, marked `"own":true`. */
export const isOwnSubject = (subject: string): boolean => subject.startsWith(`${OWN_PREFIX}.`);

/** Every subject of the `OWN` stream (all accounts). */
export const OWN_ALL = `${OWN_PREFIX}.>`;

export type MdSubjectParts = { source: string; symbol: string; eventType: string };

/** Parts of an `MD` subject, with the owning account (null: the platform's feed). */
export type FeedSubjectParts = MdSubjectParts & { owner: string | null };

/** Parses a platform subject `md.<source>.<symbol>.<event_type>`; null for anything else. */
export function parseMdSubject(subject: string): MdSubjectParts | null {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== MD_PREFIX) return null;
  const [, source, symbol, eventType] = parts as [string, string, string, string];
  return { source, symbol, eventType };
}

/**
 * Parses a platform subject (`md.…`, owner null) or an account's own (`own.<account_id>.…`);
 * null for anything else.
 */
export function parseFeedSubject(subject: string): FeedSubjectParts | null {
  const parts = subject.split('.');
  if (parts.length === 4 && parts[0] === MD_PREFIX) {
    const [, source, symbol, eventType] = parts as [string, string, string, string];
    return { source, symbol, eventType, owner: null };
  }
  if (parts.length !== 5 || parts[0] !== OWN_PREFIX || parts[1] === '') return null;
  const [, owner, source, symbol, eventType] = parts as [string, string, string, string, string];
  return { source, symbol, eventType, owner };
}

/**
 * The narrowest single filter subject covering a selection (nats-server 2.9 allows one filter
 * per consumer): a token is fixed when exactly one value is selected, `*` otherwise. With
 * `owner`, the same over that account's own events on `OWN`.
 */
export function mdFilter(
  sel: {
    sources?: readonly string[];
    symbols?: readonly string[];
    eventTypes?: readonly string[];
  },
  owner?: string,
): string {
  const one = (values?: readonly string[]) => (values && values.length === 1 ? values[0] : '*');
  const tail = `${one(sel.sources)}.${one(sel.symbols)}.${one(sel.eventTypes)}`;
  return owner ? `${OWN_PREFIX}.${accountToken(owner)}.${tail}` : `${MD_PREFIX}.${tail}`;
}

/** Every subject of the `MD` stream: the platform's feed, nothing else. */
export const MD_ALL = `${MD_PREFIX}.*.*.*`;

export const SIM_PREFIX = 'sim';

/** `sim.<symbol>.<seed>.<event_type>`: one live synthetic session per (symbol, seed). */
export function simSubject(symbol: string, seed: number, eventType: EventType): string {
  return `${SIM_PREFIX}.${symbol}.${seed}.${eventType}`;
}

export const simFilter = (symbol: string, seed: number): string => `${SIM_PREFIX}.${symbol}.${seed}.*`;

/** Parses a SIM subject into the same parts as an MD one (source `synthetic`). */
export function parseSimSubject(subject: string): MdSubjectParts | null {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== SIM_PREFIX) return null;
  return { source: 'synthetic', symbol: parts[1] as string, eventType: parts[3] as string };
}

export const DERIVED_PREFIX = 'dv';

/** `dv.<source>.<symbol>.<kind>`: one derived series (contracts/derived.ts) of one coin of one source. */
export function derivedSubject(source: string, symbol: string, kind: string): string {
  return `${DERIVED_PREFIX}.${source}.${symbol}.${kind}`;
}

/** Every subject of the `DERIVED` stream. */
export const DERIVED_ALL = `${DERIVED_PREFIX}.>`;

export type DerivedSubjectParts = { source: string; symbol: string; kind: string };

/** Parses `dv.<source>.<symbol>.<kind>`; null for anything else. */
export function parseDerivedSubject(subject: string): DerivedSubjectParts | null {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== DERIVED_PREFIX) return null;
  const [, source, symbol, kind] = parts as [string, string, string, string];
  return { source, symbol, kind };
}
