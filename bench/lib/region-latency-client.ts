/**
 * The live client of `bench/regions.ts`, in a process of its own: `latency` reads, for `ms`
 * milliseconds and all at once, the unified stream of each URL given and the raw readers given
 * (each region's `MD` through a raw ordered JetStream consumer, and a plain NATS subscription to
 * `md.>` in JP, which home forwards across the link: the link's own delay, measured), and answers
 * per reader the p50/p99 of receive time − `publish_us` (the publisher stamps it just before
 * publishing; both on this machine's wall clock), ms.
 */
import { MD_ALL } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import { serveWorker } from './ipc.ts';
import { percentile } from './stats.ts';

const nowUs = () => (performance.timeOrigin + performance.now()) * 1_000;
const PUBLISH_US = /"publish_us":(\d+)/g;
const log = createLogger('silent', 'bench-region-client');
const decoder = new TextDecoder();

/** A raw reader of a region's NATS: its `MD` (a raw consumer) or a subscription (`core`). */
export type RawReader = { url: string; kind: 'consumer' | 'core' };

function lagsIn(text: string, at: number, lags: number[]) {
  for (const m of text.matchAll(PUBLISH_US)) lags.push((at - Number(m[1])) / 1_000);
}

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
      lagsIn(value, nowUs(), lags);
    }
  } catch {
    // the window's end
  } finally {
    clearTimeout(timer);
  }
  return lags;
}

async function readRawFor({ url, kind }: RawReader, ms: number): Promise<number[]> {
  const nats = await connectNats(url, `bench-raw-${kind}`, log);
  const lags: number[] = [];
  const onData = (data: Uint8Array) => lagsIn(decoder.decode(data), nowUs(), lags);
  let stop: () => void;
  if (kind === 'core') {
    const sub = nats.nc.subscribe(MD_ALL, { callback: (_e, m) => onData(m.data) });
    stop = () => sub.unsubscribe();
  } else {
    const { state } = await nats.jsm.streams.info('MD');
    const r = readOrdered(
      nats,
      { stream: 'MD', filter: '', startSeq: state.last_seq + 1 },
      (m) => onData(m.data),
      log,
    );
    stop = () => r.stop();
  }
  await new Promise((r) => setTimeout(r, ms));
  stop();
  await nats.nc.close();
  return lags;
}

const pct = (xs: number[], p: number) => Math.round((percentile(xs, p) || 0) * 100) / 100;
const summary = (lags: number[]) => ({ events: lags.length, p50_ms: pct(lags, 50), p99_ms: pct(lags, 99) });

serveWorker({
  latency: async ({ urls, raw = [], ms }: { urls: string[]; raw?: RawReader[]; ms: number }) => {
    const [edges, raws] = await Promise.all([
      Promise.all(urls.map((u) => readFor(u, ms))),
      Promise.all(raw.map((r) => readRawFor(r, ms))),
    ]);
    return { edges: edges.map(summary), raw: raws.map(summary) };
  },
});
