/**
 * Where a sync directory left off: the last whole record on disk. A record cut by a crash
 * (a partial JSON line, an incomplete MessagePack value) is truncated away, and empty segments
 * are removed, so the directory holds exactly the records up to the returned sequence.
 */
import { readFileSync, rmSync, truncateSync } from 'node:fs';
import { unpackMultiple } from 'msgpackr';
import { listSegments, type Segment } from './segments.ts';

/** Sequences of the whole records of a segment, and the byte length they fill. */
export function readSegment(seg: Segment): { seqs: number[]; wholeBytes: number } {
  const buf = readFileSync(seg.path);
  const seqs: number[] = [];
  if (seg.encoding === 'jsonl') {
    const end = buf.lastIndexOf(0x0a) + 1;
    for (const line of buf.subarray(0, end).toString('utf8').split('\n'))
      if (line) seqs.push((JSON.parse(line) as { seq: number }).seq);
    return { seqs, wholeBytes: end };
  }
  let wholeBytes = 0;
  try {
    unpackMultiple(buf, (value: { seq: number }, _start?: number, end?: number) => {
      seqs.push(value.seq);
      wholeBytes = end ?? buf.length;
    });
  } catch (err) {
    if (!(err as { incomplete?: boolean }).incomplete) throw err;
  }
  return { seqs, wholeBytes };
}

/** The last sequence stored in `dir` (null when none), after cutting any partial record. */
export function recoverLastSeq(dir: string): number | null {
  const segments = listSegments(dir);
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i] as Segment;
    const { seqs, wholeBytes } = readSegment(seg);
    if (seqs.length === 0) {
      rmSync(seg.path);
      continue;
    }
    truncateSync(seg.path, wholeBytes);
    return seqs[seqs.length - 1] as number;
  }
  return null;
}
