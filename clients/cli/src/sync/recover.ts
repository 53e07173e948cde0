/**
 * Where a sync directory left off: the last whole record on disk. A record cut by a crash
 * (a partial JSON line, an incomplete MessagePack value) is truncated away, and empty segments
 * are removed, so the directory holds exactly the records up to the returned position. The
 * account's own events (`"own":true`, their `seq` an `OWN` sequence) are a second position: the
 * last platform record and the last own record, each read from the end.
 */
import { readFileSync, rmSync, truncateSync } from 'node:fs';
import type { ResumePosition } from '@mdp/client';
import { unpackMultiple } from 'msgpackr';
import { listSegments, type Segment } from './segments.ts';

type Row = { seq: number; own?: unknown };

/**
 * Sequences of the whole records of a segment (`owns[i]`: record i is an own event, its sequence
 * an `OWN` one), and the byte length they fill.
 */
export function readSegment(seg: Segment): { seqs: number[]; owns: boolean[]; wholeBytes: number } {
  const buf = readFileSync(seg.path);
  const seqs: number[] = [];
  const owns: boolean[] = [];
  const add = (row: Row) => {
    seqs.push(row.seq);
    owns.push(row.own === true);
  };
  if (seg.encoding === 'jsonl') {
    const end = buf.lastIndexOf(0x0a) + 1;
    for (const line of buf.subarray(0, end).toString('utf8').split('\n'))
      if (line) add(JSON.parse(line) as Row);
    return { seqs, owns, wholeBytes: end };
  }
  let wholeBytes = 0;
  try {
    unpackMultiple(buf, (value: Row, _start?: number, end?: number) => {
      add(value);
      wholeBytes = end ?? buf.length;
    });
  } catch (err) {
    if (!(err as { incomplete?: boolean }).incomplete) throw err;
  }
  return { seqs, owns, wholeBytes };
}

/** The last platform sequence stored in `dir` (null when none), after cutting any partial record. */
export function recoverLastSeq(dir: string): number | null {
  return recoverPosition(dir)?.seq ?? null;
}

/**
 * The position `dir` resumes from (null when it holds no platform record), after cutting any
 * partial record: the last platform sequence, and the last own sequence when an own record comes
 * at or after the segment holding that platform record (older segments are not read: without
 * `own_seq` the server resumes own events after the last one stored by the platform event's time).
 */
export function recoverPosition(dir: string): ResumePosition | null {
  const segments = listSegments(dir);
  let cut = false;
  let own: number | null = null;
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i] as Segment;
    const { seqs, owns, wholeBytes } = readSegment(seg);
    if (seqs.length === 0) {
      if (!cut) rmSync(seg.path);
      continue;
    }
    if (!cut) truncateSync(seg.path, wholeBytes);
    cut = true;
    for (let j = seqs.length - 1; j >= 0; j--) {
      const seq = seqs[j] as number;
      if (owns[j]) own ??= seq;
      else return own === null ? { seq } : { seq, own_seq: own };
    }
  }
  return null;
}
