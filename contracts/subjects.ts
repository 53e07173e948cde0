/**
 * Subject builders and parsers. Subjects are built here and nowhere else.
 *
 * `md.<source>.<symbol>.<event_type>` carries the platform's canonical market events: only the
 * platform's producers publish there. `md.<source>.<symbol>.<event_type>.<account_id>` is an
 * account's own subject space: events a caller normalizes with `stream: true`. Both live in the
 * `MD` stream (one sequence space, so resuming by sequence works across both).
 *
 * Why the account id is the last token rather than a prefix: nats-server 2.9 allows one filter
 * per consumer, and a resuming client must read the platform's events and its account's own in
 * one ordered pass. `md.<source>.<symbol>.>` covers both and stays as narrow (by source and coin)
 * as the platform-only filter; with an account prefix the only common filter is the whole stream.
 * Readers that ask for four tokens (`md.*.*.*`, `parseMdSubject`) never see account events: the
 * safe default for anything that does not know about accounts.
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

/** An account's own event: `md.<source>.<symbol>.<event_type>.<account_id>`. */
export function accountMdSubject(
  accountId: string,
  source: Source,
  symbol: string,
  eventType: EventType,
): string {
  return `${mdSubject(source, symbol, eventType)}.${accountToken(accountId)}`;
}

/** Every event of one account's subject space (one filter: usable by a 2.9 consumer). */
export const accountMdFilter = (accountId: string): string => `${MD_PREFIX}.*.*.*.${accountToken(accountId)}`;

/** One coin (a symbol token) of one account's subject space. */
export const accountCoinFilter = (accountId: string, symbol: string): string =>
  `${MD_PREFIX}.*.${symbol}.*.${accountToken(accountId)}`;

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

/** Parses a platform or an account subject; null for anything else. */
export function parseFeedSubject(subject: string): FeedSubjectParts | null {
  const parts = subject.split('.');
  if ((parts.length !== 4 && parts.length !== 5) || parts[0] !== MD_PREFIX) return null;
  const [, source, symbol, eventType, owner] = parts as [string, string, string, string, string?];
  if (owner === '') return null;
  return { source, symbol, eventType, owner: owner ?? null };
}

/**
 * The narrowest single filter subject covering a selection (nats-server 2.9 allows one filter
 * per consumer): a token is fixed when exactly one value is selected, `*` otherwise. With
 * `withAccounts`, the filter also covers account subjects (`md.<source>.<symbol>.>`; the reader
 * keeps only the viewer's own).
 */
export function mdFilter(
  sel: {
    sources?: readonly string[];
    symbols?: readonly string[];
    eventTypes?: readonly string[];
  },
  withAccounts = false,
): string {
  const one = (values?: readonly string[]) => (values && values.length === 1 ? values[0] : '*');
  const head = `${MD_PREFIX}.${one(sel.sources)}.${one(sel.symbols)}`;
  return withAccounts ? `${head}.>` : `${head}.${one(sel.eventTypes)}`;
}

/** Every subject of the `MD` stream: the platform's feed and every account's own events. */
export const MD_ALL = `${MD_PREFIX}.>`;

/** The platform's feed only (the coins it knows, its stale reports). */
export const MD_PLATFORM = `${MD_PREFIX}.*.*.*`;

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
