/**
 * `jsonToMsgpack` is a drop-in for what the disk-sync edge did before: JSON.parse, then
 * msgpackr with the edge's options, then latin1. Every output is judged by what a client decodes
 * (clients decode by meaning, not by bytes): it decodes, with msgpackr, to exactly what the
 * reference's bytes decode to, and it is null exactly where that reference throws. Real events, boundary
 * values of every format, a few thousand seeded random texts, and invalid texts. (msgpackr is
 * pinned exactly in package.json; an upgrade that changes its byte choices still passes here as
 * long as every client decodes the same values.)
 */
import { readFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { describe, expect, it, vi } from 'vitest';
import { storedJsonWithSeq } from '../../contracts/event-wire.ts';
import { jsonToMsgpack } from '../../gateways/disksync/json-msgpack.ts';
import { book, trade } from '../support/publisher.ts';
import { seededRandom } from '../support/rate-limit-reference.ts';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

function reference(json: string): string | null {
  try {
    return Buffer.from(packr.pack(JSON.parse(json))).toString('latin1');
  } catch {
    return null;
  }
}

const decoded = (s: string) => packr.unpack(Buffer.from(s, 'latin1')) as unknown;

/** Our bytes as one char per byte, beside the reference's. */
const oursLatin1 = (json: string): string | null => jsonToMsgpack(json)?.toString('latin1') ?? null;

/** What a client decodes from ours equals what it decodes from the reference; null exactly where it is. */
function expectSameMeaning(json: string, ours: string | null, ref: string | null): void {
  expect(ours === null, json.slice(0, 200)).toBe(ref === null);
  if (ours === null || ref === null) return;
  expect(decoded(ours), json.slice(0, 200)).toEqual(decoded(ref));
}

function expectSame(json: string): void {
  expectSameMeaning(json, oursLatin1(json), reference(json));
}

const stored = (seq: number, event: object) => `{"seq":${seq},${JSON.stringify(event).slice(1)}`;

function fixtureEvents(): object[] {
  const url = new URL('../fixtures/normalize-public.json', import.meta.url);
  const doc = JSON.parse(readFileSync(url, 'utf8')) as {
    sources: Record<string, { payload: unknown; expected?: object[] }[]>;
  };
  return Object.values(doc.sources).flatMap((items) =>
    items.flatMap((item) => [...(item.expected ?? []), { payload: item.payload }]),
  );
}

describe('jsonToMsgpack on market events', () => {
  it('gives packr’s bytes for the stored trades and books of the benches', () => {
    for (let i = 0; i < 200; i++) {
      expectSame(stored(1_000 + i, { ...trade('BTC', i), ingest_us: 1_767_225_600_000_123 + i }));
      expectSame(stored(5_000 + i, book('ETH', i, 1 + (i % 25))));
    }
  });

  it('gives packr’s bytes for the normalizer fixtures’ events and raw venue payloads', () => {
    const events = fixtureEvents();
    expect(events.length).toBeGreaterThan(10);
    for (const [i, ev] of events.entries()) expectSame(stored(i + 1, ev));
  });

  it('gives packr’s answer for every prefix of an event (null for all but the whole)', () => {
    const json = stored(7, book('SOL', 3, 3));
    for (let n = 0; n < json.length; n++) expect(oursLatin1(json.slice(0, n))).toBeNull();
    expectSame(json);
  });
});

describe('jsonToMsgpack at the format boundaries', () => {
  it('writes integers, floats, -0 and out-of-range numbers as packr does', () => {
    // biome-ignore format: a table
    const numbers = [
      '0', '-0', '-0.0', '-0e3', '1', '127', '128', '255', '256', '65535', '65536', '4294967295',
      '4294967296', '-1', '-32', '-33', '-128', '-129', '-32768', '-32769', '-2147483648', '-2147483649',
      '9007199254740991', '9007199254740993', '123456789012345', '1234567890123456', '99999999999999999999',
      '0.1', '0.5', '1.0', '100.00', '1e2', '1E+2', '1e-2', '2.5e-3', '1e22', '1e23', '1e-22', '1e-23',
      '5e-324', '2e-324', '1.7976931348623157e308', '1e400', '-1e400', '1e0000000000000001',
      '0.30000000000000004', '123.456e-7', '-97123.5', '1767225600000',
    ];
    for (const n of numbers) {
      expectSame(n);
      expectSame(`[${n}]`);
    }
  });

  it('writes strings of every header size, ASCII, escaped and non-ASCII', () => {
    const lengths = [0, 1, 31, 32, 63, 64, 65, 255, 256, 65535, 65536, 70_000];
    const units = ['a', 'é', '日', '🚀', '\\n', '\\u00e9', '\\ud83d\\ude80', '\ud800', '\\udc00', 'a\ud800'];
    for (const len of lengths) {
      for (const u of units) expectSame(`"${u.repeat(Math.ceil(len / u.length))}"`);
      expectSame(`"${'x'.repeat(len)}é"`);
      expectSame(`"é${'x'.repeat(len)}"`);
    }
  });

  it('writes maps and arrays of every header size', () => {
    for (const n of [0, 1, 15, 16, 17, 65535, 65536]) {
      expectSame(`[${Array.from({ length: n }, (_, i) => i).join(',')}]`);
      expectSame(`{${Array.from({ length: n }, (_, i) => `"k${i}":${i % 3 ? 'true' : '"v"'}`).join(',')}}`);
    }
  });

  it('follows JSON.parse where an object’s keys are not in text order or not plain', () => {
    // biome-ignore format: a table
    const texts = [
      '{"b":1,"a":2,"b":3}', '{"2":1,"a":2,"1":3}', '{"01":1,"1":2}', '{"4294967295":1,"4294967294":2,"a":3}',
      '{"a":1,"\\u0061":2}', '{"é":1,"\\u00e9":2}', '{"constructor":1}', '{"constructor":1,"toJSON":1}',
      '{"constructor":{"a":1},"toJSON":0}', '{"toJSON":1}', '{"__proto__":{"a":1},"b":2}', '{"":1,"":2}',
      `{${Array.from({ length: 40 }, (_, i) => `"k${i % 39}":${i}`).join(',')}}`,
    ];
    for (const t of texts) {
      expectSame(t);
      expectSame(`[${t},${t}]`);
    }
  });

  it('follows JSON.parse and packr on deep nesting', () => {
    for (const depth of [100, 499, 500, 501, 2_000]) {
      expectSame(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
      expectSame(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    }
  });

  it('skips JSON whitespace anywhere between tokens', () => {
    expectSame(' \t\r\n{ "a" : [ 1 , 2.5 , "x" , { } , [ ] , true , false , null ] }\n ');
  });
});

// biome-ignore format: a table
const ODD_CHARS = ['é', 'ü', '日', '€', '🚀', '\ud800', '\udfff', '\\n', '\\t', '\\"', '\\\\', '\\/', '\\b', '\\f',
  '\\u0000', '\\u001f', '\\u00e9', '\\uD83D\\uDE80', '\\ud800', '\\udc00x', '\u007f', '\u0080', '\u07ff'];
/** Keys whose order or meaning JSON.parse and packr decide (array indices, `constructor`), and escaped ones. */
const ODD_KEYS = [
  '"1"',
  '"0"',
  '"07"',
  '"constructor"',
  '"toJSON"',
  '"__proto__"',
  '""',
  '"é"',
  '"\\u0070rice"',
];

/** A random JSON text (not JSON.stringify's: numbers and strings are spelt in every legal way). */
function randomJson(rand: () => number, depth: number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const ws = () => (rand() < 0.1 ? pick([' ', '\n', '\t', '\r\n  ']) : '');
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');
  const number = (): string => {
    const r = rand();
    if (r < 0.3) return String(Math.floor((rand() - 0.5) * 2 ** Math.floor(rand() * 40)));
    if (r < 0.35)
      return pick(['-0', '0', '-0.0', '4294967295', '-2147483648', '-2147483649', '9007199254740993']);
    const int = rand() < 0.3 ? '0' : `${1 + Math.floor(rand() * 9)}${digits(Math.floor(rand() * 20))}`;
    const frac = rand() < 0.6 ? `.${digits(1 + Math.floor(rand() * 18))}` : '';
    const exp = rand() < 0.3 ? `${pick(['e', 'E'])}${pick(['', '+', '-'])}${Math.floor(rand() * 330)}` : '';
    return `${rand() < 0.3 ? '-' : ''}${int}${frac}${exp}`;
  };
  const char = (): string =>
    rand() < 0.7
      ? String.fromCharCode(0x20 + Math.floor(rand() * 0x5f)).replace(/["\\]/, '\\$&')
      : pick(ODD_CHARS);
  const string = (): string => {
    const len = pick([0, 1, 5, 12, 31, 32, 33, 63, 64, 65, 100, 255, 256, 300]);
    const ascii = rand() < 0.5;
    return `"${Array.from({ length: len }, () => (ascii ? 'abcxyz_'[Math.floor(rand() * 7)] : char())).join('')}"`;
  };
  const key = (): string =>
    rand() < 0.99
      ? `"${pick(['price', 'size', 'seq', 'bids', 'asks', 'side', 'symbol'])}${rand() < 0.9 ? Math.floor(rand() * 1000) : ''}"`
      : pick(ODD_KEYS);
  const r = rand();
  if (depth <= 0 || r < 0.45) {
    const s = rand();
    return s < 0.45 ? number() : s < 0.85 ? string() : pick(['true', 'false', 'null']);
  }
  const n = depth > 2 ? pick([0, 1, 2, 3, 5]) : pick([0, 1, 2, 3, 5, 10, 15, 16, 17, 40]);
  const items = Array.from({ length: n }, () =>
    r < 0.7
      ? `${ws()}${key()}${ws()}:${ws()}${randomJson(rand, depth - 1)}${ws()}`
      : `${ws()}${randomJson(rand, depth - 1)}${ws()}`,
  );
  return r < 0.7 ? `{${items.join(',')}}` : `[${items.join(',')}]`;
}

describe('jsonToMsgpack on seeded random JSON', () => {
  it('gives packr’s bytes for 3000 random texts, most without JSON.parse of the whole text', () => {
    const rand = seededRandom(20261126);
    const parse = JSON.parse;
    let whole = 0;
    let text = '';
    // A text with a raw lone surrogate has no UTF-8 form, so it is handed to packr whole (no
    // stream gives one: its bytes decode to well-formed text); only the others are counted.
    const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();
    const spy = vi.spyOn(JSON, 'parse').mockImplementation((s: string) => {
      if (s === text && wellFormed(s)) whole++;
      return parse(s);
    });
    try {
      for (let i = 0; i < 3_000; i++) {
        const json = randomJson(rand, 1 + (i % 4));
        text = json;
        const got = oursLatin1(json);
        text = '';
        expectSameMeaning(json, got, reference(json));
      }
    } finally {
      spy.mockRestore();
    }
    expect(whole).toBeLessThan(1_000);
  });

  it('gives packr’s answer for random texts with one char cut, doubled or replaced', () => {
    const rand = seededRandom(7);
    for (let i = 0; i < 2_000; i++) {
      const json = randomJson(rand, 1 + (i % 3));
      const at = Math.floor(rand() * json.length);
      const other = ',:[]{}"\\0-.e+ aé'[Math.floor(rand() * 17)] as string;
      expectSame(json.slice(0, at) + json.slice(at + 1));
      expectSame(json.slice(0, at) + json[at] + json.slice(at));
      expectSame(json.slice(0, at) + other + json.slice(at + 1));
    }
  });
});

describe('jsonToMsgpack on invalid JSON', () => {
  it('returns null wherever JSON.parse throws', () => {
    // biome-ignore format: a table
    const invalid = [
      '', ' ', '{', '}', '[', ']', '[1,]', '[,1]', '{"a":1,}', '{"a" 1}', '{"a":}', '{a:1}', "{'a':1}", '{"a":1 "b":2}',
      '01', '-01', '1.', '.5', '-', '+1', '1e', '1e+', '1.e5', '0x10', 'NaN', 'Infinity', '-Infinity', 'tru', 'nul',
      'nulll', 'True', '"abc', '"a\\"', '"\\u12"', '"\\u12G4"', '"\\x"', '"\\', '"a\u0001b"', '"a\nb"', '[1 2]',
      '{} {}', '1 2', '\uFEFF{}', '\u00a0{}', '{"a":1}}', '[[1]', 'undefined', '"\\ud800', '{"a":1,"a"}',
    ];
    for (const text of invalid) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(oursLatin1(text), text).toBeNull();
    }
  });
});

describe('jsonToMsgpack on the JSON a catch-up has just read', () => {
  it('gives packr’s bytes when it reads the stored bytes in place, invalid UTF-8 and all', () => {
    // The JSON storedJsonWithSeq made last is transcoded from its scratch (contracts/event-wire.ts
    // jsonUtf8), where invalid UTF-8 is still bytes and the JSON holds U+FFFD.
    const odd = [
      [0xc3, 0xa9],
      [0xff],
      [0xe2, 0x82],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf0, 0x9f, 0x9a, 0x80],
      [0x5c, 0x6e],
    ];
    const rand = seededRandom(11);
    const texts: string[] = [];
    for (let i = 0; i < 500; i++) {
      const value = Array.from({ length: Math.floor(rand() * 80) }, () =>
        rand() < 0.8 ? [0x61 + Math.floor(rand() * 26)] : (odd[Math.floor(rand() * odd.length)] as number[]),
      ).flat();
      const key = rand() < 0.2 ? [0x6b, ...(odd[i % odd.length] as number[])] : [0x6b];
      const bytes = Buffer.from([
        ...Buffer.from(`{"price":${i}.5,"`),
        ...key,
        ...Buffer.from('":"'),
        ...value,
        ...Buffer.from('","ok":true}'),
      ]);
      const json = storedJsonWithSeq(bytes, 1_000 + i);
      expectSame(json);
      texts.push(json);
    }
    // Read again, when the scratch holds another event: the same bytes, from the text.
    for (const json of texts) expectSame(json);
  });
});
