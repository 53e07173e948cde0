/**
 * `mdp sync --out DIR`: keeps a local copy of the feed in segment files rotated by size or time.
 * Restartable: it resumes after the last whole record on disk, with no gap and no duplicate (the
 * client resumes with `from_seq` and drops anything already seen). The account's own events
 * (`"own":true`) are stored too: the last own record on disk is the own part of the position
 * (`from_own_seq`, SSE id `N:K`). Reads the disk-sync WebSocket
 * (Quant; batches in the file's encoding: MessagePack files are fed MessagePack frames), or the
 * unified stream with `--via unified` (any plan with the stream). Progress line: events, bytes, lag.
 * A replay by time (`--from-time`, `--to-time`, `--speed`) fills DIR with a stored range; with
 * `--to-time` it exits 0 after `replay_complete` (restarted, it resumes after what is on disk).
 */
import { basename } from 'node:path';
import { formatPosition, isMdpError, type StreamItem, stream } from '@mdp/client';
import { streamDisk } from '@mdp/client/disk';
import { type Command, list, position, positive, required } from '../command.ts';
import { apiKey } from '../config.ts';
import { CliError, EXIT, UsageError } from '../exit-codes.ts';
import { recoverPosition } from '../sync/recover.ts';
import { ENCODINGS, type Encoding } from '../sync/segments.ts';
import { SegmentWriter } from '../sync/writer.ts';
import { formatBytes, formatCount, StatusLine } from '../term.ts';
import { optional, positionJson, REPLAY_OPTIONS, replayOptions } from './stream.ts';
import { streamNote } from './stream-notes.ts';

export const syncCommand: Command = {
  path: ['sync'],
  summary:
    'Keeps a local copy of the feed in DIR, in segment files rotated by size or time. Restart it at any time: it resumes after the last record on disk with no gap and no duplicate. With --from-time/--to-time it copies what the stream stored in that range and exits 0 once the range is complete (restarted with the same options, it goes on after what is on disk).',
  options: {
    out: { type: 'string', value: 'DIR', description: 'directory of the copy (required)' },
    coin: {
      type: 'string',
      value: 'LIST',
      description: 'coins, comma separated (default: all)',
      multiple: true,
    },
    encoding: { type: 'string', value: 'jsonl|msgpack', description: 'record encoding (default jsonl)' },
    via: {
      type: 'string',
      value: 'disk|unified',
      description: 'the disk-sync WebSocket (default; Quant) or the unified stream',
    },
    from: {
      type: 'string',
      value: 'N[:K]',
      description:
        'for an empty DIR: start after this position (0 = the oldest retained; N:K with own events); default: live',
    },
    ...REPLAY_OPTIONS,
    'rotate-mb': { type: 'string', value: 'MB', description: 'start a new file past this size (default 64)' },
    'rotate-minutes': {
      type: 'string',
      value: 'MIN',
      description: 'start a new file after this long (default 60)',
    },
  },
  details:
    'Examples:\n  mdp sync --out ./feed --coin BTC,ETH --encoding msgpack --rotate-mb 16\n  mdp sync --out ./feed --via unified   # without a Quant key\n  mdp sync --out ./day --from-time 2026-11-27T00:00:00Z --to-time 2026-11-27T23:59:59.999Z',
  async run(ctx, values) {
    const dir = required(values, 'out');
    const encoding = (values.encoding ?? 'jsonl') as Encoding;
    if (!ENCODINGS.includes(encoding)) throw new UsageError(`--encoding must be ${ENCODINGS.join(' or ')}`);
    const maxBytes = (positive(values, 'rotate-mb') ?? 64) * 1_048_576;
    const maxAgeMs = (positive(values, 'rotate-minutes') ?? 60) * 60_000;
    const key = apiKey(ctx.env);
    const from = position(values, 'from');
    const resumeAfter = recoverPosition(dir) ?? from ?? null;
    const writer = new SegmentWriter(dir, encoding, { maxBytes, maxAgeMs }, resumeAfter?.seq ?? null);
    const via = values.via ?? 'disk';
    if (via !== 'disk' && via !== 'unified') throw new UsageError('--via must be disk or unified');
    const common = {
      ...replayOptions(values),
      key,
      signal: ctx.signal,
      ...(resumeAfter !== null ? { from: resumeAfter } : {}),
      ...optional('coins', list(values, 'coin')),
    };
    const s =
      via === 'disk'
        ? streamDisk({
            ...common,
            url: ctx.endpoints.diskUrl,
            encoding: encoding === 'msgpack' ? 'msgpack' : 'json',
          })
        : stream({ ...common, url: ctx.endpoints.streamUrl });
    const { err, errColor } = ctx.term;
    if (!ctx.json)
      err.write(
        `${errColor.dim(`syncing into ${dir} ${resumeAfter !== null ? `after ${resumeAfter.own_seq === undefined ? 'sequence' : 'position'} ${formatPosition(resumeAfter)}` : common.fromTime !== undefined ? `from ${new Date(common.fromTime).toISOString()}` : 'from now'}${common.toTime !== undefined ? ` up to ${new Date(common.toTime).toISOString()}` : ''}`)}\n`,
      );
    const status = new StatusLine(ctx.term);
    let events = 0;
    let lagMs = 0;
    const at = () => {
      const p = s.resumePosition();
      return p === null ? '-' : formatPosition(p);
    };
    const draw = (force = false) =>
      status.update(
        `synced ${formatCount(events)} events · ${formatBytes(writer.bytes)} · lag ${(lagMs / 1000).toFixed(1)} s · seq ${at()} · ${writer.current ? basename(writer.current) : '-'}`,
        force,
      );
    try {
      for await (const item of s as AsyncIterable<StreamItem>) {
        if (item.type !== 'event') {
          status.done();
          err.write(`${streamNote(item, ctx.json, errColor)}\n`);
          continue;
        }
        await writer.write(item.event);
        events++;
        if (item.event.publish_us) lagMs = Math.max(0, Date.now() - item.event.publish_us / 1000);
        draw();
      }
    } catch (e) {
      // Disk-sync is Quant only (4003): say how the same copy is kept with this key.
      if (via === 'disk' && isMdpError(e) && e.code === 'tier_restricted')
        throw new CliError(
          `${e.message} Disk-sync is for Quant keys; sync over the unified stream with --via unified.`,
          EXIT.auth,
        );
      throw e;
    } finally {
      await writer.close();
      draw(true);
      status.done();
      const p = s.resumePosition();
      const end = {
        events,
        bytes: writer.bytes,
        segments: writer.segments,
        ...positionJson(p),
      };
      err.write(
        ctx.json
          ? `${JSON.stringify(end)}\n`
          : `${errColor.dim(`stopped after ${formatCount(events)} events; on disk up to ${p?.own_seq === undefined ? 'sequence' : 'position'} ${at()}`)}\n`,
      );
    }
    return ctx.signal.aborted ? ctx.stopCode() : EXIT.ok;
  },
};
