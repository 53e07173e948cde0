/**
 * `npm run bench:check`: runs `npm run bench -- all` (bench/all.ts) and compares every ratio with
 * the accepted one in `bench/baseline.json`; exits 1 when any accepted ratio is more than 20 %
 * worse (`BENCH_CHECK_TOLERANCE`, default 0.2) or was not measured. A benchmark, not a test: run it
 * by hand before and after any change to `gateways/core`, `platform/` or an encoder.
 *
 * A ratio outside the tolerance is measured again before it counts: the benchmarks that hold one
 * run again (`BENCH_CHECK_CONFIRM` rounds, default 2), and each ratio is judged by the best of its
 * runs, all of them listed. On two shared cores a short run's p99, or a parallel-speed-up ratio,
 * moved 1.5–2.5× between runs of the same code, while a regression is worse in every run.
 *
 *   npm run bench:check                      run everything, then compare (confirming as above)
 *   npm run bench:check -- --from FILE       compare a finished run (`.data/bench/all.json`);
 *                                            with --confirm, confirm its failures by new runs
 *   npm run bench:check -- --accept [FILE]   make a run (or FILE) the accepted baseline
 *   npm run bench:check -- --add FILE        accept only the ratios the baseline does not hold yet
 *                                            (a benchmark just added to `all`), keeping the rest
 *
 * Accepting keeps the direction (`better`) already recorded for a ratio, so a direction fixed by
 * hand in the baseline stays fixed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type AllResult, OUT_DIR, run as runAll } from './all.ts';
import { judge, type Ratio } from './lib/ratios.ts';

const BASELINE = fileURLToPath(new URL('./baseline.json', import.meta.url));

type Baseline = { accepted_at: string; from_run_at: string; note: string; ratios: Record<string, Ratio> };

function args(): { from?: string; accept: boolean; add: boolean; confirm: boolean } {
  const a = process.argv.slice(2);
  const fromAt = a.indexOf('--from');
  const acceptAt = a.indexOf('--accept');
  const addAt = a.indexOf('--add');
  const fileAfter = (i: number) => (i >= 0 && a[i + 1] && !a[i + 1]?.startsWith('--') ? a[i + 1] : undefined);
  return {
    from: fileAfter(fromAt) ?? fileAfter(acceptAt) ?? fileAfter(addAt),
    accept: acceptAt >= 0,
    add: addAt >= 0,
    confirm: fromAt < 0 || a.includes('--confirm'),
  };
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** The benchmark a ratio's path belongs to (`unified.resume…` → `unified`). */
const benchmarkOf = (path: string) => path.split('.')[0] as string;

async function main(): Promise<void> {
  const { from, accept, add, confirm } = args();
  const now: AllResult = from ? readJson<AllResult>(from) : await runAll();
  if (accept || add) {
    const previous = (() => {
      try {
        return readJson<Baseline>(BASELINE);
      } catch {
        return null;
      }
    })();
    const old = previous?.ratios ?? {};
    // --add keeps every accepted ratio and takes only the new ones; --accept takes the whole run.
    const taken = Object.entries(now.ratios).filter(([path]) => !(add && old[path]));
    const ratios: Record<string, Ratio> = add ? { ...old } : {};
    for (const [path, r] of taken) ratios[path] = { value: r.value, better: old[path]?.better ?? r.better };
    const baseline =
      add && previous
        ? { ...previous, ratios, added_at: new Date().toISOString() }
        : {
            accepted_at: new Date().toISOString(),
            from_run_at: now.started_at,
            note: 'ratios of `npm run bench -- all` (bench/all.ts, reduced scale); see docs/benchmarks.md',
            ratios,
          };
    writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
    process.stdout.write(
      `${add ? 'added' : 'accepted'} ${taken.length} ratios into bench/baseline.json${add ? `:\n${taken.map(([p]) => p).join('\n')}` : ''}\n`,
    );
    return;
  }
  const tolerance = Number(process.env.BENCH_CHECK_TOLERANCE ?? 0.2);
  const rounds = confirm ? Number(process.env.BENCH_CHECK_CONFIRM ?? 2) : 0;
  const baseline = readJson<Baseline>(BASELINE);
  const runs = [now];
  let rows = judge(baseline.ratios, runs, tolerance);
  const measured = new Set(Object.keys(now.benchmarks));
  for (let round = 1; round <= rounds; round++) {
    const again = [...new Set(rows.filter((r) => !r.ok).map((r) => benchmarkOf(r.path)))].filter((b) =>
      measured.has(b),
    );
    if (again.length === 0) break;
    process.stderr.write(`bench:check: confirming ${again.join(', ')} (round ${round} of ${rounds})\n`);
    runs.push(await runAll(again, `${OUT_DIR}/all.confirm-${round}.json`));
    rows = judge(baseline.ratios, runs, tolerance);
  }
  const failed = rows.filter((r) => !r.ok);
  // A benchmark that failed to run counts unless a confirmation run of it completed.
  const failedBenchmarks = Object.entries(now.benchmarks).filter(
    ([name, b]) => !b.ok && !runs.slice(1).some((r) => r.benchmarks[name]?.ok),
  );
  const report = {
    compared: rows.length,
    tolerance,
    failed: failed.length,
    confirmation_runs: runs.slice(1).map((r) => Object.keys(r.benchmarks)),
    failed_benchmarks: failedBenchmarks.map(([name, b]) => ({ name, error: b.error })),
    new_ratios_not_in_baseline: Object.keys(now.ratios).filter((p) => !(p in baseline.ratios)),
    rows,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  for (const r of failed)
    process.stderr.write(
      r.now === null
        ? `not measured: ${r.path}\n`
        : `worse by ${Math.round((r.worse ?? 0) * 100)} %: ${r.path} ${r.accepted} → ${r.now} (${r.better} is better)\n`,
    );
  process.stderr.write(
    `bench:check: ${rows.length - failed.length}/${rows.length} within ${tolerance * 100} % (results in ${OUT_DIR})\n`,
  );
  process.exit(failed.length > 0 || failedBenchmarks.length > 0 ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(
    `bench:check failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
