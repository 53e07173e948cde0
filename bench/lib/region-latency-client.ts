/**
 * The live client of `bench/regions.ts`, in a process of its own: `latency` reads the unified
 * stream of each URL given for `ms` milliseconds, at once, and answers per URL the p50/p99 of
 * receive time − `publish_us` (the publisher stamps it just before publishing; both on this
 * machine's wall clock), ms.
 */
import { serveWorker } from './ipc.ts';

const nowUs = () => (performance.timeOrigin + performance.now()) * 1_000;
const PUBLISH_US = /"publish_us":(\d+)/g;

async function readFor(url: string, ms: number): Promise<number[]> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), ms);
  const lags: number[] = [];
  try {
    const res = await fetch(`${url}?coin=BTC,ETH,SOL,HYPE`, {
      signal: ctl.signal,
      headers: { accept: 'text/event-stream' },
    });
    if (!res.body) return lags;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const at = nowUs();
      for (const m of value.matchAll(PUBLISH_US)) lags.push((at - Number(m[1])) / 1_000);
    }
  } catch {
    // the window's end
  } finally {
    clearTimeout(timer);
  }
  return lags;
}

const pct = (xs: number[], p: number) =>
  Math.round(([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0) * 100) /
  100;

serveWorker({
  latency: async ({ urls, ms }: { urls: string[]; ms: number }) =>
    (await Promise.all(urls.map((u) => readFor(u, ms)))).map((lags) => ({
      events: lags.length,
      p50_ms: pct(lags, 0.5),
      p99_ms: pct(lags, 0.99),
    })),
});
