/**
 * Appends records to the current segment and starts a new one when it reaches `maxBytes` or
 * is `maxAgeMs` old. Records are written in order, so whatever a crash leaves on disk is a
 * prefix of what was received (recover.ts cuts a trailing partial record).
 *
 * A segment is named by its first record's platform sequence. One that starts with an own event
 * (`"own":true`, its `seq` an `OWN` sequence of another number space) is named after the last
 * platform sequence written instead (+1: the least the next platform record can be), and a name
 * never repeats or goes back, so name order stays the order of the records.
 */
import { once } from 'node:events';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { pack } from 'msgpackr';
import { type Encoding, listSegments, segmentName } from './segments.ts';

export type RotationPolicy = { maxBytes: number; maxAgeMs: number };

export class SegmentWriter {
  /** Bytes written in this run, all segments. */
  bytes = 0;
  segments = 0;
  current: string | null = null;
  private file: WriteStream | null = null;
  private fileBytes = 0;
  private openedAt = 0;
  /** The last segment name's sequence (this run's or on disk), -1 for none. */
  private lastName: number;

  /** `lastPlatform`: the platform sequence the run resumes after (a first own record names its segment by it). */
  constructor(
    private readonly dir: string,
    private readonly encoding: Encoding,
    private readonly policy: RotationPolicy,
    private lastPlatform: number | null = null,
  ) {
    mkdirSync(dir, { recursive: true });
    this.lastName = listSegments(dir).at(-1)?.firstSeq ?? -1;
  }

  async write(record: { seq: number; own?: unknown }): Promise<void> {
    if (
      this.file &&
      (this.fileBytes >= this.policy.maxBytes || Date.now() - this.openedAt >= this.policy.maxAgeMs)
    )
      await this.closeFile();
    const own = record.own === true;
    if (!this.file) {
      const first = own ? (this.lastPlatform ?? -1) + 1 : record.seq;
      this.open(Math.max(first, this.lastName + 1));
    }
    if (!own) this.lastPlatform = record.seq;
    const data = this.encoding === 'jsonl' ? `${JSON.stringify(record)}\n` : pack(record);
    const n = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
    this.fileBytes += n;
    this.bytes += n;
    if (!(this.file as WriteStream).write(data)) await once(this.file as WriteStream, 'drain');
  }

  async close(): Promise<void> {
    await this.closeFile();
  }

  private open(firstSeq: number): void {
    this.lastName = firstSeq;
    this.current = join(this.dir, segmentName(firstSeq, this.encoding));
    this.file = createWriteStream(this.current, { flags: 'wx' });
    this.fileBytes = 0;
    this.openedAt = Date.now();
    this.segments++;
  }

  private async closeFile(): Promise<void> {
    const f = this.file;
    this.file = null;
    if (!f) return;
    f.end();
    await once(f, 'close');
  }
}
