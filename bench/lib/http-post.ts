/** A keep-alive HTTP POST of a JSON body, and an open-loop driver of it (the JSON-RPC benches' client). */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Histogram } from './histogram.ts';

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export type Answer = { status: number; body: string };

export function post(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const nowNs = () => Number(process.hrtime.bigint());

/**
 * Open loop: `body(i)` POSTed at `rate` per second for `seconds`, on schedule whatever the answers
 * do; latency runs from each call's scheduled time (µs), so a stall is not hidden. An answer that
 * `ok` refuses, or a failed request, counts as an error.
 */
export async function paced(
  url: string,
  headers: Record<string, string>,
  rate: number,
  seconds: number,
  body: (i: number) => string,
  ok: (a: Answer) => boolean = (a) => a.status === 200 && a.body.includes('"result"'),
): Promise<{ h: Histogram; errors: number; achieved_per_s: number }> {
  const h = new Histogram();
  let errors = 0;
  const inflight = new Set<Promise<void>>();
  const total = Math.round(rate * seconds);
  const start = nowNs();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((nowNs() - start) / 1e9) * rate) + 1);
    for (; sent < due; sent++) {
      const scheduled = start + (sent / rate) * 1e9;
      const p = post(url, body(sent), headers).then(
        (a) => {
          if (!ok(a)) errors++;
          h.record((nowNs() - scheduled) / 1_000);
        },
        () => void errors++,
      );
      inflight.add(p);
      p.finally(() => inflight.delete(p));
    }
    await sleep(1);
  }
  await Promise.all(inflight);
  return { h, errors, achieved_per_s: Math.round(total / ((nowNs() - start) / 1e9)) };
}
