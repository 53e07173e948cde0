/**
 * MessagePack on NATS. Plain maps (no msgpackr records), so any MessagePack reader can decode a message.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

export function encode(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function decode<T = unknown>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}
