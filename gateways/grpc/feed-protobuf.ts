/**
 * The gRPC frame of a trade or book event straight from its JSON text (`ev.json`, compact JSON as
 * the producers store it, `seq` spliced in front): one scan of its UTF-8 bytes (contracts/
 * event-wire.ts `jsonUtf8`: at catch-up the stored bytes themselves) writes the `FeedMessage`
 * protobuf bytes into a scratch buffer, with no JSON.parse, no message object and no protobufjs
 * writer. At catch-up this was the edge's largest own cost per event (parse + fromObject + encode,
 * and the garbage they leave), for bytes every client of the process then shares.
 *
 * Why the bytes are right: each field is written with the tag and wire type of
 * contracts/proto/price.proto (read from the loaded definition, below), a value only of the JSON kind the field takes
 * (number → double or int64, string → string, true/false → bool, an array of {price, size} →
 * repeated Level), `null` as an absent field, unknown keys with scalar values ignored: what
 * protobufjs `fromObject` + `encode` does with the parsed object, fields in the order of the text
 * (protobuf allows any order; a decoder gives the same message). Anything else (a string with an
 * escape or a non-ASCII character, an int64 that is not a safe integer, a key seen twice, a nested
 * value under an unknown key, text that is not this shape) returns null and the caller takes the
 * general path (JSON.parse + protobufjs), which also keeps its error for a record that is not
 * JSON. test/unit/grpc-feed-protobuf.test.ts decodes the bytes with the proto and compares them
 * to the parsed JSON, field by field.
 */

import { jsonUtf8 } from '../../contracts/event-wire.ts';
import { readJsonNumber, scanned } from '../../contracts/json-number.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import { isFalseAt, isNullAt, isTrueAt } from '../core/json-literals.ts';
import { packageDefinition } from './proto.ts';
import { varintLength, writeVarint } from './varint.ts';

const I64 = 0;
const DBL = 1;
const STR = 2;
const BOOL = 3;
const LEVELS = 4;
type Kind = typeof I64 | typeof DBL | typeof STR | typeof BOOL | typeof LEVELS;
/** `key`: the name's bytes, then its closing quote (what `isKeyAt` compares the text with). */
type Field = { id: number; kind: Kind; key: Uint8Array };
type FieldSpec = Omit<Field, 'key'>;

type DescriptorField = { name: string; number: number; type: string; typeName: string };

/** The scalar kinds the scan writes, by descriptor type; a `price.Level` message is LEVELS. */
const KIND_OF_TYPE: Record<string, Kind> = {
  TYPE_INT64: I64,
  TYPE_DOUBLE: DBL,
  TYPE_STRING: STR,
  TYPE_BOOL: BOOL,
};

/**
 * A message's fields from the loaded contracts/proto/price.proto (proto.ts), so the tags are the
 * contract's own; a field of a type the scan does not write stops the process at load, never
 * writes a wrong tag.
 */
function fieldsOf(message: string): Record<string, FieldSpec> {
  const def = packageDefinition[`price.${message}`] as unknown as { type: { field: DescriptorField[] } };
  const fields: Record<string, FieldSpec> = {};
  for (const f of def.type.field) {
    const kind = f.typeName === 'price.Level' ? LEVELS : KIND_OF_TYPE[f.type];
    if (kind === undefined)
      throw new Error(`feed-protobuf: price.${message}.${f.name} (${f.type}) is not supported`);
    fields[f.name] = { id: f.number, kind };
  }
  return fields;
}

/** The number of FeedMessage's oneof field `name`. */
function feedKindNumber(name: string): number {
  const def = packageDefinition['price.FeedMessage'] as unknown as { type: { field: DescriptorField[] } };
  const f = def.type.field.find((x) => x.name === name);
  if (!f) throw new Error(`feed-protobuf: price.FeedMessage has no ${name}`);
  return f.number;
}

/** A key's hash as the scan computes it, char by char (the key is then compared in full). */
const hashOf = (key: string): number => {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h;
};

const SLOT_MASK = 1023;
/** A hash's slot; with this fold, the keys of each table below fall in distinct slots. */
const slotOf = (h: number): number => (h ^ (h >>> 7)) & SLOT_MASK;

/** Fields by key hash slot; keys of one table never share a slot (checked here, at load). */
function slotsOf(table: Record<string, FieldSpec>): (Field | undefined)[] {
  const slots: (Field | undefined)[] = new Array(SLOT_MASK + 1).fill(undefined);
  for (const [name, f] of Object.entries(table)) {
    const slot = slotOf(hashOf(name));
    if (slots[slot]) throw new Error(`feed-protobuf: two keys share a slot (${name})`);
    slots[slot] = { ...f, key: Buffer.from(`${name}"`, 'latin1') };
  }
  return slots;
}

/**
 * A message's fields by key hash slot, and the field that followed each field (by number; 0: the
 * first) in the last text scanned. Producers write keys in one order, so the key after field N is
 * first compared to `next[N]` alone: one pass over its chars, no hash. Only a guess: a key that
 * is not it is hashed and looked up as any other, and becomes the next guess.
 */
type Table = { slots: (Field | undefined)[]; next: (Field | undefined)[] };
const tableOf = (message: string): Table => ({
  slots: slotsOf(fieldsOf(message)),
  next: new Array(32).fill(undefined),
});

/** FeedMessage's oneof fields `trade` (a Trade) and `book` (a BookEvent), length-delimited. */
const KINDS: Record<string, { tag: number; table: Table }> = {
  trade: { tag: (feedKindNumber('trade') << 3) | 2, table: tableOf('Trade') },
  book: { tag: (feedKindNumber('book') << 3) | 2, table: tableOf('BookEvent') },
};

/** Level: price and size, doubles (fixed64). */
const LEVEL_SLOTS = slotsOf(fieldsOf('Level'));

/** The gRPC prefix (flag, length) and FeedMessage's tag and length fit in the bytes before this. */
const HEAD = 16;

/**
 * The scratch buffer every frame is written into, then copied out into a Buffer of its own. No JSON
 * member writes more bytes than twice its text (a 1-char number under a 3-char key: 11 bytes
 * of a negative int64 from 8 chars), so `HEAD + 2 × length + 64` bytes always suffice.
 */
let buf = Buffer.allocUnsafe(16 * 1024);

/** Where the text of the levels `writeLevels` wrote last ends (a second return value, without an object). */
let levelsEnd = 0;

/**
 * The gRPC frame (flag, length, FeedMessage bytes) of a `trade` or `book` event's
 * JSON; null where this encoder does not apply (then JSON.parse + protobufjs, framer.ts).
 */
export function feedFrameOfJson(kind: string, json: string): Buffer | null {
  const spec = KINDS[kind];
  if (!spec) return null;
  const text = jsonUtf8(json);
  if (text === null) return null;
  const need = HEAD + 2 * text.length + 64;
  if (buf.length < need) buf = Buffer.allocUnsafe(Math.max(need, buf.length * 2));
  const b = buf;
  const end = encodeObject(text.bytes, text.length, spec.table, b);
  if (end < 0) return null;
  const inner = end - HEAD;
  const lenBytes = varintLength(inner);
  const begin = HEAD - lenBytes - 1 - 5;
  b[begin] = 0;
  b.writeUInt32BE(1 + lenBytes + inner, begin + 1);
  b[begin + 5] = spec.tag;
  writeVarint(b, begin + 6, inner);
  return Buffer.from(b.subarray(begin, end));
}

/** The members of the event object `t`, written from HEAD on; the end, or -1 if not handled. */
function encodeObject(t: RawBuffer, n: number, table: Table, b: Buffer): number {
  const { slots, next } = table;
  let at = 1;
  let pos = HEAD;
  let seen = 0;
  let previous = 0;
  if (t[0] !== 123) return -1; // {
  if (t[at] === 125) return at + 1 === n ? pos : -1;
  for (;;) {
    if (t[at] !== 34) return -1; // "
    const keyStart = ++at;
    const guess = next[previous];
    let field: Field | undefined;
    if (guess !== undefined && isKeyAt(t, keyStart, guess.key)) {
      field = guess;
      at = keyStart + guess.key.length;
    } else {
      let h = 0;
      for (let c = t[at] as number; c !== 34; c = t[++at] as number) {
        if (!(c >= 32 && c < 128) || c === 92) return -1; // control, non-ASCII, escape, end
        h = (Math.imul(h, 31) + c) | 0;
      }
      at++; // "
      const slot = slots[slotOf(h)];
      field = slot !== undefined && isKeyAt(t, keyStart, slot.key) ? slot : undefined;
      if (field !== undefined) next[previous] = field;
    }
    if (t[at++] !== 58) return -1; // :
    if (field !== undefined) previous = field.id;
    const c = t[at];
    if (field === undefined) at = skipScalar(t, at);
    else if (seen & (1 << field.id)) return -1;
    else {
      seen |= 1 << field.id;
      const id = field.id;
      if (c === 110) at = isNullAt(t, at) ? at + 4 : -1;
      else if (field.kind === DBL) {
        at = readJsonNumber(t, at);
        if (at < 0) return -1;
        b[pos] = (id << 3) | 1;
        b.writeDoubleLE(scanned.value, pos + 1);
        pos += 9;
      } else if (field.kind === I64) {
        at = readJsonNumber(t, at);
        const num = scanned.value;
        if (at < 0 || !Number.isSafeInteger(num)) return -1;
        pos = writeVarint(b, pos, id << 3);
        pos = num >= 0 ? writeVarint(b, pos, num) : writeNegative(b, pos, num);
      } else if (field.kind === STR) {
        if (c !== 34) return -1;
        const start = ++at;
        for (let d = t[at] as number; d !== 34; d = t[++at] as number)
          if (!(d >= 32 && d < 128) || d === 92) return -1;
        const len = at++ - start;
        pos = writeVarint(b, pos, (id << 3) | 2);
        pos = writeVarint(b, pos, len);
        for (let i = start; i < start + len; i++) b[pos++] = t[i] as number;
      } else if (field.kind === BOOL) {
        if (isTrueAt(t, at)) {
          b[pos++] = id << 3;
          b[pos++] = 1;
          at += 4;
        } else if (isFalseAt(t, at)) {
          b[pos++] = id << 3;
          b[pos++] = 0;
          at += 5;
        } else return -1;
      } else {
        pos = writeLevels(t, at, b, pos, (id << 3) | 2);
        if (pos < 0) return -1;
        at = levelsEnd;
      }
    }
    if (at < 0) return -1;
    const d = t[at++];
    if (d === 125) return at === n ? pos : -1; // }
    if (d !== 44) return -1; // ,
  }
}

/**
 * `[{"price":p,"size":q},…]` at `at`: one length-delimited Level per element (at most 18 bytes,
 * so its length is one byte). Returns the end of the output (-1: not handled); `levelsEnd` = the text's.
 */
function writeLevels(t: RawBuffer, at: number, b: Buffer, pos: number, tag: number): number {
  if (t[at++] !== 91) return -1; // [
  if (t[at] === 93) {
    levelsEnd = at + 1; // ]
    return pos;
  }
  for (;;) {
    if (t[at++] !== 123) return -1; // {
    b[pos++] = tag;
    const lenAt = pos++;
    let seen = 0;
    if (t[at] === 125) at++;
    else
      for (;;) {
        if (t[at] !== 34) return -1;
        const keyStart = ++at;
        let h = 0;
        for (let c = t[at] as number; c !== 34; c = t[++at] as number) {
          if (!(c >= 32 && c < 128) || c === 92) return -1;
          h = (Math.imul(h, 31) + c) | 0;
        }
        at++; // "
        if (t[at++] !== 58) return -1;
        const f = LEVEL_SLOTS[slotOf(h)];
        if (f === undefined || !isKeyAt(t, keyStart, f.key)) return -1;
        if (seen & f.id) return -1;
        seen |= f.id;
        if (t[at] === 110) {
          if (!isNullAt(t, at)) return -1;
          at += 4;
        } else {
          at = readJsonNumber(t, at);
          if (at < 0) return -1;
          b[pos] = (f.id << 3) | 1;
          b.writeDoubleLE(scanned.value, pos + 1);
          pos += 9;
        }
        const d = t[at++];
        if (d === 125) break;
        if (d !== 44) return -1;
      }
    b[lenAt] = pos - lenAt - 1;
    const d = t[at++];
    if (d === 93) {
      levelsEnd = at; // ]
      return pos;
    }
    if (d !== 44) return -1;
  }
}

/** Whether `t` holds `key` (a key's bytes and closing quote) from `start` on (byte by byte: inlined). */
function isKeyAt(t: RawBuffer, start: number, key: Uint8Array): boolean {
  for (let i = 0; i < key.length; i++) if (t[start + i] !== key[i]) return false;
  return true;
}

/** The value of a key the message has no field for: a scalar is skipped (its end), anything else -1. */
function skipScalar(t: RawBuffer, at: number): number {
  const c = t[at];
  if (c === 34) {
    for (let d = t[++at] as number; d !== 34; d = t[++at] as number)
      if (!(d >= 32 && d < 128) || d === 92) return -1;
    return at + 1;
  }
  if (isTrueAt(t, at) || isNullAt(t, at)) return at + 4;
  if (isFalseAt(t, at)) return at + 5;
  return readJsonNumber(t, at);
}

/** A negative int64: its 64-bit two's complement, 10 bytes, as protobufjs writes it. */
function writeNegative(b: Buffer, pos: number, v: number): number {
  let x = BigInt.asUintN(64, BigInt(v));
  for (let i = 0; i < 9; i++) {
    b[pos++] = Number(x & 127n) | 128;
    x >>= 7n;
  }
  b[pos++] = Number(x);
  return pos;
}
