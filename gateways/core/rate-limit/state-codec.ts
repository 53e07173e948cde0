/**
 * Wire form of a key's shared bucket state in the KV store: one compact JSON value per key and tier,
 * so one compare-and-swap updates every bucket of the tier at once. Pure.
 *
 * `{"t":[tokens per bucket],"at":lastMs,"g":{"<holder>":[tokens,expiresMs]}}`
 */
import type { BucketSpec } from '../../../contracts/limits.ts';
import type { Grant, SharedState } from './shared-bucket.ts';

type Wire = { t: number[]; at: number; g: Record<string, [number, number]> };

export function encodeState(state: SharedState): string {
  const g: Wire['g'] = {};
  for (const [holder, grant] of Object.entries(state.grants)) g[holder] = [grant.tokens, grant.expiresMs];
  const wire: Wire = { t: [...state.tokens], at: state.lastMs, g };
  return JSON.stringify(wire);
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The state, or null when the value is not one written for these buckets (caller decides). */
export function decodeState(text: string, specs: readonly BucketSpec[]): SharedState | null {
  let wire: unknown;
  try {
    wire = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof wire !== 'object' || wire === null) return null;
  const { t, at, g } = wire as Partial<Wire>;
  if (!Array.isArray(t) || t.length !== specs.length || !t.every(isFiniteNumber) || !isFiniteNumber(at)) {
    return null;
  }
  const grants: Record<string, Grant> = {};
  if (typeof g === 'object' && g !== null) {
    for (const [holder, pair] of Object.entries(g)) {
      if (!Array.isArray(pair) || !isFiniteNumber(pair[0]) || !isFiniteNumber(pair[1])) return null;
      grants[holder] = { tokens: pair[0], expiresMs: pair[1] };
    }
  }
  return { tokens: t, lastMs: at, grants };
}
