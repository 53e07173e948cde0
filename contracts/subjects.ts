/**
 * Subject builders and parsers. Subjects are built here and nowhere else.
 * `md.<source>.<symbol>.<event_type>` carries live canonical market events.
 */
import type { EventType, Source } from './events.ts';

export const MD_PREFIX = 'md';

export function mdSubject(source: Source, symbol: string, eventType: EventType): string {
  return `${MD_PREFIX}.${source}.${symbol}.${eventType}`;
}

export type MdSubjectParts = { source: string; symbol: string; eventType: string };

/** Parses `md.<source>.<symbol>.<event_type>`; null for anything else. */
export function parseMdSubject(subject: string): MdSubjectParts | null {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== MD_PREFIX) return null;
  const [, source, symbol, eventType] = parts as [string, string, string, string];
  return { source, symbol, eventType };
}

/**
 * The narrowest single filter subject covering a selection (nats-server 2.9 allows one filter
 * per consumer): a token is fixed when exactly one value is selected, `*` otherwise.
 */
export function mdFilter(sel: {
  sources?: readonly string[];
  symbols?: readonly string[];
  eventTypes?: readonly string[];
}): string {
  const one = (values?: readonly string[]) => (values && values.length === 1 ? values[0] : '*');
  return `${MD_PREFIX}.${one(sel.sources)}.${one(sel.symbols)}.${one(sel.eventTypes)}`;
}

export const MD_ALL = `${MD_PREFIX}.>`;

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
