/**
 * The `vs_tardis` phase of `bench normalize`: our `normalizeBatch` against tardis-dev's normalizers
 * on the same parsed messages (JSON.parse done once, outside timing), for every kind both map, with
 * symbols interleaved as a venue sends them (bench/lib/normalize-interleaved.ts).
 *
 * Per kind: first an equality pass over the whole pool (each message through both, outputs compared
 * field by field: bench/lib/normalize-tardis.ts), then a warm-up of each side (alternated, twice), then `repeats` pairs of
 * timed runs of equal duration, alternating which side goes first (ABBA), every run printed. Goal:
 * ours ≥ 1.2× tardis's events/s in every run pair.
 */
import { createRequire } from 'node:module';
import { normalizeBatch } from '../../producers/normalizer/index.ts';
import { INTERLEAVED_KINDS } from './normalize-interleaved.ts';
import { texts } from './normalize-payloads.ts';
import { Diff, TARDIS_CASES, type TardisMapper, tardisMapAll } from './normalize-tardis.ts';

export const VS_TARDIS_GOAL = 1.2;

/** Receive time given to both sides (tardis `localTimestamp`, our `receivedAtMs`). */
const LOCAL_MS = 1_760_000_100_000;

const TARDIS_VERSION: string = createRequire(import.meta.url)('tardis-dev/package.json').version;

export type VsTardisOptions = {
  batch: number;
  runMs: number;
  warmupMs: number;
  repeats: number;
  /** GC milliseconds that started in [from, to] (performance entries). */
  gcWithin(from: number, to: number): Promise<number>;
  progress(msg: string): void;
};

type Run = { events: number; payloads: number; ms: number; gcMs: number };

const perS = (n: number, ms: number) => Math.round(n / (ms / 1_000));
const r3 = (x: number) => Math.round(x * 1_000) / 1_000;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** Steps through batches (round robin) for `ms`; `step` maps batch i and returns its event count. */
async function timeSteps(
  n: number,
  batch: number,
  step: (i: number) => number,
  ms: number,
  o: VsTardisOptions,
): Promise<Run> {
  let events = 0;
  let i = 0;
  const t0 = performance.now();
  let now = t0;
  while (now - t0 < ms) {
    events += step(i++ % n);
    now = performance.now();
  }
  return { events, payloads: i * batch, ms: now - t0, gcMs: await o.gcWithin(t0, now) };
}

/** Messages of a kind: ≈8 MB of JSON (4–32 batches), parsed once as batches of `batch`. */
function buildPool(generator: (seed: number) => () => string, seed: number, batch: number) {
  const gen = generator(seed);
  const sample = texts(gen, 256);
  const avg = sample.reduce((n, t) => n + t.length, 0) / sample.length;
  const pool = Math.max(4, Math.min(32, Math.floor(8_000_000 / avg / batch))) * batch;
  const all = sample.concat(texts(gen, pool - sample.length));
  const batches: unknown[][] = [];
  for (let i = 0; i < pool; i += batch) batches.push(JSON.parse(`[${all.slice(i, i + batch).join(',')}]`));
  return { batches, avgBytes: Math.round(avg) };
}

/** Both sides over every message, outputs compared field by field. */
function equality(
  source: string,
  batches: unknown[][],
  tardis: TardisMapper,
  compare: (typeof TARDIS_CASES)[string]['compare'],
  local: Date,
) {
  const diff = new Diff();
  let ours = 0;
  let theirs = 0;
  let rejected = 0;
  let countMismatch = 0;
  const out: unknown[] = [];
  for (const msgs of batches)
    for (const payload of msgs) {
      const o = normalizeBatch({ source, events: [{ payload }] }, { receivedAtMs: LOCAL_MS });
      rejected += o.rejected.length;
      out.length = 0;
      tardisMapAll(tardis, [payload], local, out);
      ours += o.events.length;
      theirs += out.length;
      if (o.events.length !== out.length) countMismatch++;
      const n = Math.min(o.events.length, out.length);
      for (let j = 0; j < n; j++) {
        diff.compared++;
        compare(o.events[j] as never, out[j] as never, diff);
      }
    }
  const meaning = diff.meaningMismatches();
  return {
    events_ours: ours,
    events_tardis: theirs,
    events_compared: diff.compared,
    rejected_ours: rejected,
    messages_with_different_event_counts: countMismatch,
    mismatches: meaning + countMismatch,
    mismatches_by_field: Object.fromEntries(
      Object.entries(diff.counts).filter(([k]) => k !== 'local_timestamp'),
    ),
    ...(diff.examples.length ? { mismatch_examples: diff.examples } : {}),
    local_timestamp_differs: diff.counts.local_timestamp ?? 0,
    outputs_equal: meaning + countMismatch === 0 && rejected === 0,
  };
}

export async function vsTardis(o: VsTardisOptions): Promise<Record<string, unknown>> {
  const local = new Date(LOCAL_MS);
  const kinds: Record<string, unknown> = {};
  let seed = 501;
  for (const kind of INTERLEAVED_KINDS) {
    const tc = TARDIS_CASES[kind.name];
    if (tc === undefined) throw new Error(`no tardis case for ${kind.name}`);
    const { batches, avgBytes } = buildPool(kind.generator, seed++, o.batch);
    const eq = equality(kind.source, batches, tc.create(local), tc.compare, local);
    o.progress(
      `vs tardis ${kind.name}: ${eq.events_compared} events compared, ${eq.mismatches} mismatches` +
        (eq.mismatches ? ` ${JSON.stringify(eq.mismatches_by_field)}` : ''),
    );

    const requests = batches.map((msgs) => ({
      source: kind.source,
      events: msgs.map((payload) => ({ payload })),
    }));
    const tardis = tc.create(local);
    const sink: unknown[] = [];
    const ours = (i: number) =>
      normalizeBatch(requests[i] as (typeof requests)[number], { receivedAtMs: LOCAL_MS }).events.length;
    const theirs = (i: number) => {
      sink.length = 0;
      tardisMapAll(tardis, batches[i] as unknown[], local, sink);
      return sink.length;
    };
    const n = batches.length;
    // Warm-up twice each, alternated: the shared timing loop has seen both sides before the first
    // measured run (warmed one side at a time, the first run after the other side's warm-up paid a
    // re-optimization: ours first gave 0.88x then 1.24x, 1.33x).
    for (let w = 0; w < 2; w++) {
      await timeSteps(n, o.batch, ours, o.warmupMs / 2, o);
      await timeSteps(n, o.batch, theirs, o.warmupMs / 2, o);
    }
    const runs: Record<string, unknown>[] = [];
    const oursRate: number[] = [];
    const theirRate: number[] = [];
    for (let r = 0; r < o.repeats; r++) {
      const first = r % 2 === 0 ? 'ours' : 'tardis';
      let a: Run;
      let b: Run;
      if (first === 'ours') {
        a = await timeSteps(n, o.batch, ours, o.runMs, o);
        b = await timeSteps(n, o.batch, theirs, o.runMs, o);
      } else {
        b = await timeSteps(n, o.batch, theirs, o.runMs, o);
        a = await timeSteps(n, o.batch, ours, o.runMs, o);
      }
      const ra = perS(a.events, a.ms);
      const rb = perS(b.events, b.ms);
      oursRate.push(ra);
      theirRate.push(rb);
      runs.push({
        first,
        ours_events_per_s: ra,
        tardis_events_per_s: rb,
        ratio: r3(ra / rb),
        ours_payloads_per_s: perS(a.payloads, a.ms),
        tardis_payloads_per_s: perS(b.payloads, b.ms),
        ours_gc_pct: Math.round((a.gcMs / a.ms) * 1_000) / 10,
        tardis_gc_pct: Math.round((b.gcMs / b.ms) * 1_000) / 10,
      });
      o.progress(`vs tardis ${kind.name} run ${r + 1}: ours ${ra}/s, tardis ${rb}/s, ${r3(ra / rb)}x`);
    }
    const ratios = runs.map((x) => x.ratio as number);
    kinds[kind.name] = {
      description: kind.description,
      tardis: tc.tardis,
      compared: tc.compared,
      payload_json_bytes_avg: avgBytes,
      distinct_payloads: n * o.batch,
      equality: eq,
      runs,
      ours_events_per_s_median: median(oursRate),
      tardis_events_per_s_median: median(theirRate),
      ratio_median: r3(median(oursRate) / median(theirRate)),
      ratio_min: Math.min(...ratios),
      goal: `ours ≥ ${VS_TARDIS_GOAL}× tardis-dev events/s in every run`,
      goal_met: Math.min(...ratios) >= VS_TARDIS_GOAL,
    };
  }
  const all = Object.values(kinds) as { goal_met: boolean; equality: { outputs_equal: boolean } }[];
  return {
    tardis_dev_version: TARDIS_VERSION,
    method:
      'same parsed messages to both (JSON.parse once, outside timing); ours: normalizeBatch of 1,000 {payload} per call; tardis: canHandle + map per message, events pushed to an array (tardis-dev normalizeMessages loop); one fixed receive time for both; runs of equal duration alternating which side goes first',
    local_timestamp_note:
      'not part of the equality: ours capture_time_ms is the venue time by contract (FIELDS.md), tardis localTimestamp is the receive time given to it',
    batch_payloads: o.batch,
    run_seconds: o.runMs / 1_000,
    repeats: o.repeats,
    goal: `ours ≥ ${VS_TARDIS_GOAL}× tardis-dev on every kind, in every run; outputs equal field by field`,
    goal_met: all.every((k) => k.goal_met),
    outputs_equal: all.every((k) => k.equality.outputs_equal),
    kinds,
  };
}
