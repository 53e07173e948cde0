/**
 * The files of a sync directory: segments named by the first sequence they hold
 * (`seg-<16-digit seq>.jsonl` or `.msgpack`), so name order is sequence order; each record
 * carries its own `seq`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const ENCODINGS = ['jsonl', 'msgpack'] as const;
export type Encoding = (typeof ENCODINGS)[number];

const NAME = /^seg-(\d{16})\.(jsonl|msgpack)$/;

export const segmentName = (firstSeq: number, encoding: Encoding): string =>
  `seg-${String(firstSeq).padStart(16, '0')}.${encoding}`;

export type Segment = { path: string; firstSeq: number; encoding: Encoding };

/** The directory's segments in sequence order. */
export function listSegments(dir: string): Segment[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map((n) => NAME.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ path: join(dir, m[0]), firstSeq: Number(m[1]), encoding: m[2] as Encoding }))
    .sort((a, b) => a.firstSeq - b.firstSeq);
}
