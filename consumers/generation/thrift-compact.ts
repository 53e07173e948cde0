/**
 * The Thrift compact protocol (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md),
 * read into a generic tree and written back: no schema, so every field survives a round trip
 * byte for byte, including fields this code does not know. Parquet's footer (FileMetaData) is one
 * such struct; `parquet-footer.ts` names the fields it changes.
 *
 * Values: i8/i16/i32 and doubles as numbers, i64 as bigint, binary as bytes, bools as booleans.
 */

/** Compact type ids (field headers and container element types). */
export const CT = {
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

export type TValue = boolean | number | bigint | Uint8Array | TStruct | TList | TMap;
export type TField = { id: number; type: number; value: TValue };
export type TStruct = { fields: TField[] };
export type TList = { elemType: number; items: TValue[] };
export type TMap = { keyType: number; valueType: number; entries: [TValue, TValue][] };

/** Nesting deeper than this is refused (a corrupt footer must not blow the stack). */
const MAX_DEPTH = 64;

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.buf.length) throw new RangeError('thrift: unexpected end of input');
    return this.buf[this.pos++] as number;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new RangeError('thrift: varint too long');
  }

  zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) throw new RangeError('thrift: binary past end of input');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  value(type: number, depth: number): TValue {
    if (depth > MAX_DEPTH) throw new RangeError('thrift: nesting too deep');
    switch (type) {
      case CT.TRUE:
      case CT.FALSE:
        return this.byte() === CT.TRUE; // inside a container: one byte per bool
      case CT.BYTE:
        return (this.byte() << 24) >> 24;
      case CT.I16:
      case CT.I32:
        return Number(this.zigzag());
      case CT.I64:
        return this.zigzag();
      case CT.DOUBLE:
        return new DataView(this.bytes(8).slice().buffer).getFloat64(0, true);
      case CT.BINARY:
        return this.bytes(Number(this.varint()));
      case CT.LIST:
      case CT.SET: {
        const header = this.byte();
        const size = header >> 4 === 15 ? Number(this.varint()) : header >> 4;
        const elemType = header & 0x0f;
        const items: TValue[] = [];
        for (let i = 0; i < size; i++) items.push(this.value(elemType, depth + 1));
        return { elemType, items };
      }
      case CT.MAP: {
        const size = Number(this.varint());
        if (size === 0) return { keyType: 0, valueType: 0, entries: [] };
        const types = this.byte();
        const keyType = types >> 4;
        const valueType = types & 0x0f;
        const entries: [TValue, TValue][] = [];
        for (let i = 0; i < size; i++)
          entries.push([this.value(keyType, depth + 1), this.value(valueType, depth + 1)]);
        return { keyType, valueType, entries };
      }
      case CT.STRUCT:
        return this.struct(depth + 1);
      default:
        throw new RangeError(`thrift: unknown compact type ${type}`);
    }
  }

  struct(depth: number): TStruct {
    const fields: TField[] = [];
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return { fields };
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : lastId + delta;
      lastId = id;
      // A bool field carries its value in the header's type.
      const value = type === CT.TRUE || type === CT.FALSE ? type === CT.TRUE : this.value(type, depth);
      fields.push({ id, type, value });
    }
  }
}

class Writer {
  private buf = new Uint8Array(4096);
  length = 0;

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b & 0xff;
  }

  varint(n: bigint): void {
    let v = n;
    while (v >= 0x80n) {
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.byte(Number(v));
  }

  zigzag(n: bigint, bits: bigint): void {
    this.varint(BigInt.asUintN(Number(bits), (n << 1n) ^ (n >> (bits - 1n))));
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  value(type: number, v: TValue): void {
    switch (type) {
      case CT.TRUE:
      case CT.FALSE:
        this.byte(v ? CT.TRUE : CT.FALSE);
        return;
      case CT.BYTE:
        this.byte(v as number);
        return;
      case CT.I16:
      case CT.I32:
        this.zigzag(BigInt(v as number), 32n);
        return;
      case CT.I64:
        this.zigzag(BigInt(v as bigint), 64n);
        return;
      case CT.DOUBLE: {
        const d = new Uint8Array(8);
        new DataView(d.buffer).setFloat64(0, v as number, true);
        this.bytes(d);
        return;
      }
      case CT.BINARY: {
        const b = v as Uint8Array;
        this.varint(BigInt(b.length));
        this.bytes(b);
        return;
      }
      case CT.LIST:
      case CT.SET: {
        const { elemType, items } = v as TList;
        if (items.length < 15) this.byte((items.length << 4) | elemType);
        else {
          this.byte(0xf0 | elemType);
          this.varint(BigInt(items.length));
        }
        for (const item of items) this.value(elemType, item);
        return;
      }
      case CT.MAP: {
        const { keyType, valueType, entries } = v as TMap;
        this.varint(BigInt(entries.length));
        if (entries.length === 0) return;
        this.byte((keyType << 4) | valueType);
        for (const [k, val] of entries) {
          this.value(keyType, k);
          this.value(valueType, val);
        }
        return;
      }
      case CT.STRUCT:
        this.struct(v as TStruct);
        return;
      default:
        throw new RangeError(`thrift: unknown compact type ${type}`);
    }
  }

  struct(s: TStruct): void {
    let lastId = 0;
    for (const f of s.fields) {
      const type = f.type === CT.TRUE || f.type === CT.FALSE ? (f.value ? CT.TRUE : CT.FALSE) : f.type;
      const delta = f.id - lastId;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(f.id), 16n);
      }
      lastId = f.id;
      if (type !== CT.TRUE && type !== CT.FALSE) this.value(type, f.value);
    }
    this.byte(0);
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** Reads one struct from the start of `bytes`; `length` is how many bytes it took. */
export function readStruct(bytes: Uint8Array): { struct: TStruct; length: number } {
  const reader = new Reader(bytes);
  const struct = reader.struct(0);
  return { struct, length: reader.pos };
}

/** Encodes a struct. */
export function writeStruct(struct: TStruct): Uint8Array {
  const writer = new Writer();
  writer.struct(struct);
  return writer.result();
}

/** The value of field `id`, or undefined. */
export const getField = (s: TStruct, id: number): TValue | undefined =>
  s.fields.find((f) => f.id === id)?.value;

/** A copy of `s` with field `id` set (kept in id order), or removed when `value` is undefined. */
export function withField(s: TStruct, id: number, type: number, value: TValue | undefined): TStruct {
  const fields = s.fields.filter((f) => f.id !== id);
  if (value !== undefined) fields.push({ id, type, value });
  fields.sort((a, b) => a.id - b.id);
  return { fields };
}
