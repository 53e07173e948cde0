/**
 * `mdp stream`: live events of the unified stream, or a replay by time (`--from-time`, `--to-time`,
 * `--speed`) that exits 0 after `replay_complete`; Ctrl-C prints the position to resume from: `N`,
 * or `N:K` once the account's own events came (K the last own sequence), which `--from` takes.
 */

import {
  formatPosition,
  type ReplayOptions,
  type ResumePosition,
  replaySpeed,
  replayTimeMs,
  type StreamEvent,
  type StreamItem,
  stream,
} from '@mdp/client';
import { EVENT_TYPES, type EventType, SOURCES, type Source } from '@mdp/contracts/events';
import { type Command, list, type OptionSpec, position, type Values } from '../command.ts';
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
  // An own event's `seq` is the account's own sequence, not the platform's: marked `own`.
  const seq = e.own === true ? `own ${e.seq}` : String(e.seq);
  const head = `${seq.padStart(10)}  ${time}  ${e.source.padEnd(11)} ${e.symbol.padEnd(8)}`;
  if (e.event_type === 'trade') {
    const side = e.side === 'buy' ? c.green('buy ') : e.side === 'sell' ? c.red('sell') : e.side;
    return `${head} trade ${side} ${String(e.price).padStart(12)} × ${e.size}`;
  }
  return `${head} book  ${c.green(String(e.best_bid ?? '-').padStart(12))} / ${c.red(String(e.best_ask ?? '-'))}  ${e.bids.length}×${e.asks.length} levels`;
}

/** The replay-by-time options `stream` and `sync` share. */
export const REPLAY_OPTIONS: Record<string, OptionSpec> = {
  'from-time': {
    type: 'string',
    value: 'TIME',
    description:
      'replay from the first event stored at or after TIME (ISO 8601 with a zone, e.g. 2026-11-28T12:00:00Z, or Unix ms)',
  },
  'to-time': {
    type: 'string',
    value: 'TIME',
    description: 'end after the last event stored at or before TIME, then exit 0 (default: go on live)',
  },
  speed: {
    type: 'string',
    value: 'max|N',
    description: 'replay pace: max (default) or the recorded gaps divided by N (0.01 to 10000)',
  },
};

/** The replay window of the command line (checked here: a bad value is exit 2, not a refusal). */
export function replayOptions(values: Values): ReplayOptions {
  const read = <T>(name: string, hint: string, parse: (v: string) => T): T | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    try {
      return parse(String(v));
    } catch {
      throw new UsageError(`--${name} must be ${hint}, got ${JSON.stringify(v)}`);
    }
  };
  const TIME = 'ISO 8601 with a time zone (e.g. 2026-11-28T12:00:00Z) or Unix milliseconds';
  const fromTime = read('from-time', TIME, (v) => replayTimeMs(v));
  const toTime = read('to-time', TIME, (v) => replayTimeMs(v));
  const speed = read('speed', 'max or a number from 0.01 to 10000', (v) =>
    replaySpeed(v === 'max' ? v : /^\s*\d*\.?\d+\s*$/.test(v) ? Number(v) : Number.NaN),
  );
  if (fromTime !== undefined && toTime !== undefined && toTime < fromTime)
    throw new UsageError('--to-time must be at or after --from-time');
  return {
    ...optional('fromTime', fromTime),
    ...optional('toTime', toTime),
    ...optional('speed', speed),
  };
}

export const streamCommand: Command = {
  path: ['stream'],
  summary:
    'Live events of the unified stream (resumes by itself after a cut), or a replay by time: --from-time replays what the stream stored from then on, --to-time ends the replay there (exit 0 after the replay_complete notice), --speed paces it. Events go to stdout, notices and warnings to stderr. Ctrl-C prints the last position (N, or N:K once own events of the account came): pass it to --from to resume with no gap and no duplicate (with the same --from-time/--to-time, a cut replay goes on where it was).',
  options: {
    coin: {
      type: 'string',
      value: 'LIST',
      description: 'coins, comma separated (e.g. BTC,ETH)',
      multiple: true,
    },
    'event-type': { type: 'string', value: 'LIST', description: `event types: ${EVENT_TYPES.join(', ')}` },
    source: { type: 'string', value: 'LIST', description: `sources: ${SOURCES.join(', ')}` },
    from: {
      type: 'string',
      value: 'N[:K]',
      description: 'resume after this position (what Ctrl-C printed: N, or N:K with own events)',
    },
    ...REPLAY_OPTIONS,
    format: {
      type: 'string',
      value: 'json|table',
      description: 'output format (default: table on a terminal, else json)',
    },
  },
  details:
    'Examples:\n  MDP_API_KEY=mdp_… mdp stream --coin BTC,ETH --format table\n  mdp stream --coin BTC --from-time 2026-11-28T12:00:00Z --to-time 2026-11-28T12:05:00Z > btc.jsonl\n  mdp stream --from-time 2026-11-28T12:00:00Z --to-time 2026-11-28T12:01:00Z --speed 10   # a minute in 6 s',
  async run(ctx, values) {
    const format = ctx.json
      ? 'json'
      : ((values.format as string | undefined) ?? (ctx.term.out.isTTY ? 'table' : 'json'));
    if (format !== 'json' && format !== 'table') throw new UsageError('--format must be json or table');
    const from = position(values, 'from');
    const replay = replayOptions(values);
    const s = stream({
      ...replay,
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
      const at = s.resumePosition();
      const text =
        at === null
          ? 'no event received'
          : `last ${at.own_seq === undefined ? 'sequence' : 'position'} ${formatPosition(at)}: resume with --from ${formatPosition(at)}`;
      err.write(ctx.json ? `${JSON.stringify(positionJson(at))}\n` : `${errColor.dim(text)}\n`);
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

/**
 * A position as `--json` prints it: `last_seq` (the platform's, null before any), `last_own_seq`
 * once an own event came, and `resume_from`: the text `--from` takes.
 */
export function positionJson(at: ResumePosition | null): Record<string, unknown> {
  if (at === null) return { last_seq: null };
  return {
    last_seq: at.seq,
    ...(at.own_seq !== undefined ? { last_own_seq: at.own_seq } : {}),
    resume_from: formatPosition(at),
  };
}

export function optional<K extends string, V>(key: K, v: V | undefined): Partial<Record<K, V>> {
  return v === undefined ? {} : ({ [key]: v } as Record<K, V>);
}
