/**
 * `mdp normalize --source S FILE…`: source-native payloads (JSON lines or arrays, streamed) sent
 * in requests of at most 1 MB, with a progress bar over the input bytes. Normalized events go to
 * --out as JSON lines; rejected payloads are reported with their file and index.
 */

import { once } from 'node:events';
import { createWriteStream, statSync } from 'node:fs';
import { isMdpError, type NormalizeResult, SimulationClient } from '@mdp/client';
import { SOURCES, type Source } from '@mdp/contracts/events';
import { MAX_BODY_BYTES } from '@mdp/contracts/limits';
import { MAX_NORMALIZE_EVENTS } from '@mdp/contracts/normalize';
import { type Command, required } from '../command.ts';
import { apiKey } from '../config.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { type Payload, readPayloads } from '../json-input.ts';
import { bar, formatBytes, formatCount, StatusLine } from '../term.ts';

/** Room left under the 1 MB body limit for the envelope (`{"source":…,"events":[`, flags). */
const BODY_BUDGET = MAX_BODY_BYTES - 1_024;
const PER_PAYLOAD_OVERHEAD = '{"payload":},'.length;

type Rejection = { file: string; index: number; error: string; message: string };

export const normalizeCommand: Command = {
  path: ['normalize'],
  summary:
    'Normalizes source-native payloads (files of JSON lines or JSON arrays, any size) into canonical events, in requests of at most 1 MB.',
  args: 'FILE…',
  positionals: { min: 1 },
  options: {
    source: {
      type: 'string',
      value: 'SOURCE',
      description: `payload source: ${SOURCES.join(', ')} (required)`,
    },
    symbol: { type: 'string', value: 'SYMBOL', description: 'fills or overrides every event’s symbol' },
    out: { type: 'string', value: 'FILE', description: 'write the normalized events here, as JSON lines' },
    cache: { type: 'boolean', description: 'store the events in caches (one per request; keys printed)' },
    publish: { type: 'boolean', description: 'publish the events to your account’s own stream' },
  },
  details: 'Example:\n  mdp normalize --source binance --cache trades.jsonl',
  async run(ctx, values, files) {
    const source = required(values, 'source') as Source;
    if (!SOURCES.includes(source)) throw new UsageError(`--source must be one of ${SOURCES.join(', ')}`);
    const sim = new SimulationClient({ url: ctx.endpoints.url, key: apiKey(ctx.env) });
    const total = files.reduce((n, f) => n + statSync(f).size, 0);
    const out = values.out ? createWriteStream(values.out as string) : null;
    const status = new StatusLine(ctx.term);
    const summary = {
      files: files.length,
      payloads: 0,
      events: 0,
      requests: 0,
      published: 0,
      cache_keys: [] as string[],
    };
    const rejected: Rejection[] = [];
    let read = 0;
    const draw = (force = false) =>
      status.update(
        bar(
          ctx.term,
          'normalizing',
          read,
          total,
          `${formatBytes(read)} / ${formatBytes(total)}, ${formatCount(summary.events)} events`,
        ),
        force,
      );

    const send = async (file: string, batch: Payload[]) => {
      if (!batch.length) return;
      const first = (batch[0] as Payload).index;
      let result: NormalizeResult;
      try {
        result = await sim.normalize(
          {
            source,
            events: batch.map((p) => ({ payload: p.value })),
            ...(values.symbol ? { symbol: values.symbol as string } : {}),
            ...(values.cache ? { enable_cache: true } : {}),
            ...(values.publish ? { stream: true } : {}),
          },
          ctx.signal,
        );
      } catch (err) {
        // 422 when nothing in the batch was usable: every payload is reported, the rest goes on.
        const all =
          isMdpError(err) && err.status === 422
            ? (err.details?.rejected as Rejection[] | undefined)
            : undefined;
        if (!all) throw err;
        result = { source, normalizer_version: '', events: [], rejected: all };
      }
      summary.requests++;
      summary.payloads += batch.length;
      summary.events += result.events.length;
      summary.published += result.published ?? 0;
      if (result.cache_key) summary.cache_keys.push(result.cache_key);
      for (const r of result.rejected) rejected.push({ ...r, file, index: first + r.index });
      if (out)
        for (const e of result.events) if (!out.write(`${JSON.stringify(e)}\n`)) await once(out, 'drain');
      draw();
    };

    for (const file of files) {
      let batch: Payload[] = [];
      let bytes = 0;
      for await (const p of readPayloads(file, (n) => (read += n))) {
        const size = Buffer.byteLength(p.raw) + PER_PAYLOAD_OVERHEAD;
        if (size > BODY_BUDGET) throw new UsageError(`${file}: payload ${p.index} alone is over 1 MB`);
        if (bytes + size > BODY_BUDGET || batch.length >= MAX_NORMALIZE_EVENTS) {
          await send(file, batch);
          batch = [];
          bytes = 0;
        }
        batch.push(p);
        bytes += size;
        if (ctx.signal.aborted) break;
      }
      await send(file, batch);
      if (ctx.signal.aborted) break;
    }
    draw(true);
    status.done();
    if (out) {
      out.end();
      await once(out, 'close');
    }
    const report = { ...summary, rejected: rejected.length };
    if (ctx.json) ctx.term.out.write(`${JSON.stringify({ ...report, rejected })}\n`);
    else {
      ctx.term.out.write(
        `${formatCount(report.payloads)} payloads → ${formatCount(report.events)} events in ${report.requests} requests, ${report.rejected} rejected${report.published ? `, ${report.published} published` : ''}\n`,
      );
      for (const k of summary.cache_keys) ctx.term.out.write(`cache ${k}\n`);
      for (const r of rejected.slice(0, 5))
        ctx.term.err.write(`rejected ${r.file}[${r.index}]: ${r.error}: ${r.message}\n`);
    }
    if (ctx.signal.aborted) return ctx.stopCode();
    return report.events === 0 && report.payloads > 0 ? EXIT.rejected : EXIT.ok;
  },
};
