/** `mdp stream`: live events of the unified stream; Ctrl-C prints the sequence to resume from. */

import { type StreamEvent, type StreamItem, stream } from '@mdp/client';
import { EVENT_TYPES, type EventType, SOURCES, type Source } from '@mdp/contracts/events';
import { type Command, integer, list } from '../command.ts';
import { apiKey } from '../config.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import type { Palette } from '../term.ts';
import { streamNote } from './stream-notes.ts';

function oneOf<T extends string>(
  name: string,
  values: string[] | undefined,
  allowed: readonly T[],
): T[] | undefined {
  const bad = values?.find((v) => !allowed.includes(v as T));
  if (bad) throw new UsageError(`--${name}: ${bad} is not one of ${allowed.join(', ')}`);
  return values as T[] | undefined;
}

export function tableRow(e: StreamEvent, c: Palette): string {
  const time = new Date(e.timestamp_ms).toISOString().slice(11, 23);
  const head = `${String(e.seq).padStart(10)}  ${time}  ${e.source.padEnd(11)} ${e.symbol.padEnd(8)}`;
  if (e.event_type === 'trade') {
    const side = e.side === 'buy' ? c.green('buy ') : e.side === 'sell' ? c.red('sell') : e.side;
    return `${head} trade ${side} ${String(e.price).padStart(12)} × ${e.size}`;
  }
  return `${head} book  ${c.green(String(e.best_bid ?? '-').padStart(12))} / ${c.red(String(e.best_ask ?? '-'))}  ${e.bids.length}×${e.asks.length} levels`;
}

export const streamCommand: Command = {
  path: ['stream'],
  summary:
    'Live events of the unified stream (resumes by itself after a cut). Events go to stdout, notices and warnings to stderr. Ctrl-C prints the last sequence: pass it to --from to resume with no gap and no duplicate.',
  options: {
    coin: {
      type: 'string',
      value: 'LIST',
      description: 'coins, comma separated (e.g. BTC,ETH)',
      multiple: true,
    },
    'event-type': { type: 'string', value: 'LIST', description: `event types: ${EVENT_TYPES.join(', ')}` },
    source: { type: 'string', value: 'LIST', description: `sources: ${SOURCES.join(', ')}` },
    from: { type: 'string', value: 'SEQ', description: 'resume after this sequence (what Ctrl-C printed)' },
    format: {
      type: 'string',
      value: 'json|table',
      description: 'output format (default: table on a terminal, else json)',
    },
  },
  details: 'Example:\n  MDP_API_KEY=mdp_… mdp stream --coin BTC,ETH --format table',
  async run(ctx, values) {
    const format = ctx.json
      ? 'json'
      : ((values.format as string | undefined) ?? (ctx.term.out.isTTY ? 'table' : 'json'));
    if (format !== 'json' && format !== 'table') throw new UsageError('--format must be json or table');
    const from = integer(values, 'from');
    const s = stream({
      url: ctx.endpoints.streamUrl,
      key: apiKey(ctx.env),
      signal: ctx.signal,
      ...(from !== undefined ? { from } : {}),
      ...optional('coins', list(values, 'coin')),
      ...optional('eventTypes', oneOf<EventType>('event-type', list(values, 'event-type'), EVENT_TYPES)),
      ...optional('sources', oneOf<Source>('source', list(values, 'source'), SOURCES)),
    });
    const { out, err, color, errColor } = ctx.term;
    const printLast = () => {
      const text =
        s.position === null
          ? 'no event received'
          : `last sequence ${s.position}: resume with --from ${s.position}`;
      err.write(ctx.json ? `${JSON.stringify({ last_seq: s.position })}\n` : `${errColor.dim(text)}\n`);
    };
    try {
      for await (const item of s as AsyncIterable<StreamItem>) {
        if (item.type === 'event')
          out.write(
            format === 'json' ? `${JSON.stringify(item.event)}\n` : `${tableRow(item.event, color)}\n`,
          );
        else err.write(`${streamNote(item, ctx.json, errColor)}\n`);
      }
    } catch (e) {
      printLast();
      throw e;
    }
    printLast();
    return ctx.signal.aborted ? ctx.stopCode() : EXIT.ok;
  },
};

export function optional<K extends string, V>(key: K, v: V | undefined): Partial<Record<K, V>> {
  return v === undefined ? {} : ({ [key]: v } as Record<K, V>);
}
