/** `mdp cache ls|export|replay|rm`: the account's caches of normalized events. */
import { SimulationClient } from '@mdp/client';
import { type Command, type Ctx, integer } from '../command.ts';
import { apiKey } from '../config.ts';
import { saveDownload } from '../download.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { table } from '../table.ts';
import { formatBytes, formatCount } from '../term.ts';

const sim = (ctx: Ctx) => new SimulationClient({ url: ctx.endpoints.url, key: apiKey(ctx.env) });

export const cacheLs: Command = {
  path: ['cache', 'ls'],
  summary: 'Lists your caches: events, time range, raw JSON vs stored bytes.',
  options: {},
  async run(ctx) {
    const stats = await sim(ctx).caches.stats();
    if (ctx.json) {
      ctx.term.out.write(`${JSON.stringify(stats)}\n`);
      return EXIT.ok;
    }
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
    const rows = stats.caches.map((c) => [
      c.cache_key,
      c.source,
      c.symbol,
      formatCount(c.events),
      `${iso(c.first_timestamp_ms)} → ${iso(c.last_timestamp_ms)}`,
      formatBytes(c.raw_json_bytes),
      formatBytes(c.stored_bytes),
    ]);
    ctx.term.out.write(
      table(['CACHE KEY', 'SOURCE', 'SYMBOL', 'EVENTS', 'TIME RANGE (UTC)', 'RAW', 'STORED'], rows),
    );
    const t = stats.totals;
    ctx.term.out.write(
      `${t.caches} caches, ${formatCount(t.events)} events, ${formatBytes(t.stored_bytes)} stored\n`,
    );
    return EXIT.ok;
  },
};

export const cacheExport: Command = {
  path: ['cache', 'export'],
  summary: 'Downloads a cache as Parquet, with a byte progress bar.',
  args: 'CACHE_KEY',
  positionals: { min: 1, max: 1 },
  options: {
    out: { type: 'string', value: 'FILE', description: 'output file (default <cache_key>.parquet)' },
  },
  async run(ctx, values, [key]) {
    const cacheKey = key as string;
    const file = (values.out as string | undefined) ?? `${cacheKey}.parquet`;
    const bytes = await saveDownload(
      ctx,
      await sim(ctx).caches.export(cacheKey, ctx.signal),
      file,
      'exporting',
    );
    ctx.term.out.write(
      ctx.json
        ? `${JSON.stringify({ cache_key: cacheKey, file, bytes })}\n`
        : `${file}: ${formatBytes(bytes)}\n`,
    );
    return EXIT.ok;
  },
};

export const cacheReplay: Command = {
  path: ['cache', 'replay'],
  summary: 'Replays a cache’s events in order as JSON lines on stdout (after --from, when given).',
  args: 'CACHE_KEY',
  positionals: { min: 1, max: 1 },
  options: { from: { type: 'string', value: 'SEQ', description: 'resume after this sequence' } },
  async run(ctx, values, [key]) {
    const from = integer(values, 'from');
    const replay = sim(ctx).caches.replay(key as string, {
      signal: ctx.signal,
      ...(from !== undefined ? { from } : {}),
    });
    let count = 0;
    let last = from ?? null;
    let step = await replay.next();
    for (; !step.done; step = await replay.next()) {
      ctx.term.out.write(`${JSON.stringify(step.value.event)}\n`);
      count++;
      last = step.value.seq;
    }
    const complete = step.value?.complete === true;
    const summary = { cache_key: key, events: count, last_seq: last, complete };
    ctx.term.err.write(
      ctx.json
        ? `${JSON.stringify(summary)}\n`
        : `${count} events${complete ? '' : ` (cut: resume with --from ${last})`}\n`,
    );
    return complete ? EXIT.ok : EXIT.unavailable;
  },
};

export const cacheRm: Command = {
  path: ['cache', 'rm'],
  summary: 'Deletes caches by key, or all of yours with --all.',
  args: 'CACHE_KEY…',
  positionals: { min: 0 },
  options: { all: { type: 'boolean', description: 'delete every cache of your account' } },
  async run(ctx, values, keys) {
    const client = sim(ctx);
    if (values.all) {
      if (keys.length) throw new UsageError('give cache keys or --all, not both');
      const { deleted } = await client.caches.clear();
      ctx.term.out.write(ctx.json ? `${JSON.stringify({ deleted })}\n` : `deleted ${deleted} caches\n`);
      return EXIT.ok;
    }
    if (!keys.length) throw new UsageError('give cache keys or --all');
    for (const k of keys) await client.caches.delete(k);
    ctx.term.out.write(ctx.json ? `${JSON.stringify({ deleted: keys })}\n` : `deleted ${keys.join(', ')}\n`);
    return EXIT.ok;
  },
};
