/**
 * `storedJsonWithSeq` decodes a Buffer with Buffer's own UTF-8 slice (the catch-up hot path) and
 * any other Uint8Array with TextDecoder: both must give the same text, invalid UTF-8 included.
 */
import { describe, expect, it } from 'vitest';
import { storedJsonWithSeq } from '../../contracts/event-wire.ts';

const samples: Uint8Array[] = [
  Buffer.from('{}'),
  Buffer.from('{"coin":"BTC","price":97123.5}'),
  Buffer.from('{"note":"ünïcödé € 日本 🚀"}'),
  // invalid UTF-8: a lone continuation byte, a truncated 3-byte sequence, an overlong encoding
  Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0x80, 0xe2, 0x82, 0xc0, 0xaf]), Buffer.from('"}')]),
];

describe('storedJsonWithSeq', () => {
  it('gives the same text for a Buffer and a plain Uint8Array of the same bytes', () => {
    for (const b of samples) {
      const plain = new Uint8Array(b);
      expect(Buffer.isBuffer(plain)).toBe(false);
      expect(storedJsonWithSeq(b, 42)).toBe(storedJsonWithSeq(plain, 42));
    }
  });

  it('puts seq first and keeps the rest as stored', () => {
    expect(storedJsonWithSeq(Buffer.from('{}'), 7)).toBe('{"seq":7}');
    expect(storedJsonWithSeq(Buffer.from('{"a":1}'), 7)).toBe('{"seq":7,"a":1}');
    const view = Buffer.from('xx{"a":"é"}yy').subarray(2, 12);
    expect(storedJsonWithSeq(view, 9)).toBe('{"seq":9,"a":"é"}');
  });
});
