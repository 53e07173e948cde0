/**
 * Payloads from files of JSON lines or of one JSON array, read as a stream (a file of any size
 * is never held whole): each payload comes with its raw text, for request sizing.
 */
import { createReadStream } from 'node:fs';
import { UsageError } from './exit-codes.ts';

export type Payload = { raw: string; value: unknown; index: number };

/** Splits the elements of a top-level JSON array arriving in chunks, without parsing them. */
export class ArraySplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private started = false;
  private current = '';

  feed(chunk: string, out: string[]): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (ch === 92) this.escaped = true;
        else if (ch === 34) this.inString = false;
        continue;
      }
      if (!this.started) {
        if (ch === 91) {
          this.started = true;
          this.depth = 1;
          start = i + 1;
        } else if (!isSpace(ch)) throw new UsageError('expected a JSON array or JSON lines');
        continue;
      }
      if (this.depth === 0) continue;
      if (ch === 34) this.inString = true;
      else if (ch === 123 || ch === 91) this.depth++;
      else if (ch === 125 || ch === 93) {
        this.depth--;
        if (this.depth === 0) this.emit(chunk.slice(start, i), out);
      } else if (ch === 44 && this.depth === 1) {
        this.emit(chunk.slice(start, i), out);
        start = i + 1;
      }
    }
    if (this.depth > 0) this.current += chunk.slice(start);
  }

  private emit(tail: string, out: string[]): void {
    const text = (this.current + tail).trim();
    this.current = '';
    if (text) out.push(text);
  }
}

const isSpace = (ch: number) => ch === 32 || ch === 10 || ch === 13 || ch === 9;

/** Every payload of `file` (JSON lines, or a JSON array when its first character is `[`). */
export async function* readPayloads(file: string, onBytes: (n: number) => void): AsyncGenerator<Payload> {
  let mode: 'array' | 'lines' | null = null;
  const splitter = new ArraySplitter();
  let carry = '';
  let index = 0;
  const parse = (raw: string): Payload => {
    try {
      return { raw, value: JSON.parse(raw), index: index++ };
    } catch {
      throw new UsageError(`${file}: payload ${index} is not valid JSON: ${raw.slice(0, 80)}`);
    }
  };
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = chunk as string;
    onBytes(Buffer.byteLength(text));
    if (mode === null) {
      const first = text.trimStart()[0];
      if (first === undefined) continue;
      mode = first === '[' ? 'array' : 'lines';
    }
    if (mode === 'array') {
      const raws: string[] = [];
      splitter.feed(text, raws);
      for (const raw of raws) yield parse(raw);
      continue;
    }
    const lines = (carry + text).split('\n');
    carry = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) yield parse(line.trim());
  }
  if (carry.trim()) yield parse(carry.trim());
}
