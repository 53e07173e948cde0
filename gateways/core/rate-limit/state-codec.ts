/**
 * Wire form of a key's shared rate-limit state in the KV store: one compact JSON value per key and
 * tier, so one compare-and-swap updates every bucket and the window of the tier at once. Pure.
 *
 * `{"t":[tokens per bucket],"at":lastMs,"g":{"<holder>":[tokens,expiresMs]},"w":[ages]}`
 *
 * `w` (only with a window) holds the admissions still in it as ms before `at`, oldest first: at most
 * `window.limit` numbers of at most 5 digits (Basic: 100, well under 1 KB), instead of epoch times.
 */
import { type Grant, inWindow, type Limits, type SharedState } from './shared-bucket.ts';

type Wire = { t: number[]; at: number; g: Record<string, [number, number]>; w?: number[] };

export function encodeState(state: SharedState): string {
  const g: Wire['g'] = {};
  for (const [holder, grant] of Object.entries(state.grants)) g[holder] = [grant.tokens, grant.expiresMs];
  const wire: Wire = { t: [...state.tokens], at: state.lastMs, g };
  if (state.admissions.length > 0) wire.w = state.admissions.map((t) => state.lastMs - t);
  return JSON.stringify(wire);
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The state, or null when the value is not one written for these limits (caller decides). */
export function decodeState(text: string, limits: Limits): SharedState | null {
  let wire: unknown;
  try {
    wire = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof wire !== 'object' || wire === null) return null;
  const { t, at, g, w } = wire as Partial<Wire>;
  if (
    !Array.isArray(t) ||
    t.length !== limits.buckets.length ||
    !t.every(isFiniteNumber) ||
    !isFiniteNumber(at)
  ) {
    return null;
  }
  const grants: Record<string, Grant> = {};
  if (typeof g === 'object' && g !== null) {
    for (const [holder, pair] of Object.entries(g)) {
      if (!Array.isArray(pair) || !isFiniteNumber(pair[0]) || !isFiniteNumber(pair[1])) return null;
      grants[holder] = { tokens: pair[0], expiresMs: pair[1] };
    }
  }
  let admissions: number[] = [];
  if (w !== undefined) {
    if (!limits.window || !Array.isArray(w) || !w.every((age) => isFiniteNumber(age) && age >= 0))
      return null;
    admissions = inWindow(
      w.map((age) => at - age).sort((a, b) => a - b),
      limits.window,
      at,
    );
  }
  return { tokens: t, lastMs: at, grants, admissions };
}
