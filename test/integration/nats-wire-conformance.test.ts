/**
 * The history wire (platform/nats-wire/) against nats.js on the same server: the same paced history
 * reads, pulled over each, deliver the same messages (sequence, subject, every byte of the payload)
 * with no auth, with a user and password, with a token, and over TLS; the wire's read is shown to
 * have run on the wire (its one subscription seen while it read). A server entering lame duck mode
 * (SIGUSR2) sends the wire an INFO with `ldm`: new reads then go to nats.js (history() is null) and
 * still read the same messages. (A cluster's INFO updates: history-connection.test.ts.)
 * Payloads: every byte value, empty, CR LF inside, 64 KiB, with and without headers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { type NatsServerHandle, startNatsServer } from '../../platform/nats-server.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import { eventually } from '../support/eventually.ts';
import { makeRsaCertificate } from '../support/tls-handshake.ts';

const log = createLogger('error');
const dir = mkdtempSync(join(tmpdir(), 'mdp-wire-conf-'));
const file = (name: string) => join(dir, name);
const STREAM = 'CONF';

/** The payloads stored, in order: every byte value, empty, CR LF inside, 64 KiB, some with headers. */
function payloads(): { data: Uint8Array; withHeaders: boolean }[] {
  const out: { data: Uint8Array; withHeaders: boolean }[] = [];
  out.push({ data: Uint8Array.from({ length: 256 }, (_, i) => i), withHeaders: false });
  out.push({ data: new Uint8Array(0), withHeaders: false });
  out.push({ data: Buffer.from('a\r\nMSG x 1 2\r\n\r\nb'), withHeaders: true });
  out.push({ data: Buffer.alloc(64 * 1024, 0x7a), withHeaders: true });
  for (let i = 0; i < 1_500; i++)
    out.push({ data: Buffer.from(JSON.stringify({ i, p: 'x'.repeat(i % 97) })), withHeaders: i % 3 === 0 });
  return out;
}

type Read = { seq: number; subject: string; data: string };

/** Every stored message of STREAM, pulled by a paced history read. */
function readAll(nats: Nats, last: number): Promise<Read[]> {
  const got: Read[] = [];
  return new Promise((resolve) => {
    const r = readOrdered(
      nats,
      { stream: STREAM, filter: 'conf.>', startSeq: 1, paced: true },
      (m, seq) => {
        got.push({ seq, subject: m.subject, data: Buffer.from(m.data).toString('hex') });
        if (seq >= last) {
          r.stop();
          resolve(got);
        }
      },
      log,
    );
  });
}

type Case = { name: string; args: string[]; auth: Record<string, unknown>; scheme: string };

const CASES: Case[] = [
  { name: 'no auth', args: [], auth: {}, scheme: 'nats' },
  {
    name: 'user and password',
    args: ['--user', 'wire', '--pass', 'w1re-pass'],
    auth: { user: 'wire', pass: 'w1re-pass' },
    scheme: 'nats',
  },
  { name: 'a token', args: ['--auth', 'w1re-token'], auth: { token: 'w1re-token' }, scheme: 'nats' },
  {
    name: 'TLS',
    args: ['--tls', '--tlscert', file('rsa.crt'), '--tlskey', file('rsa.key')],
    auth: { tls: { caFile: file('rsa.crt') } },
    scheme: 'tls',
  },
];

beforeAll(() => makeRsaCertificate(dir, 'rsa', ['IP:127.0.0.1', 'DNS:localhost']));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withServer<T>(c: Case, fn: (url: string, server: NatsServerHandle) => Promise<T>): Promise<T> {
  const server = await startNatsServer({
    storeDir: join(dir, c.name.replace(/\W/g, '-')),
    extraArgs: c.args,
  });
  try {
    return await fn(`${c.scheme}://127.0.0.1:${server.port}`, server);
  } finally {
    await server.stop();
  }
}

async function fill(nats: Nats): Promise<number> {
  await nats.jsm.streams.add({ name: STREAM, subjects: ['conf.>'] });
  let last = 0;
  for (const [i, p] of payloads().entries()) {
    const h = headers();
    h.set('Nats-Msg-Id', `conf-${i}`);
    h.set('X-Note', `line ${i}`);
    const ack = await nats.js.publish(`conf.${i % 7}.x`, p.data, p.withHeaders ? { headers: h } : {});
    last = ack.seq;
  }
  return last;
}

describe('the history wire reads what nats.js reads', () => {
  for (const c of CASES) {
    it(`with ${c.name}`, { timeout: 60_000 }, async () => {
      await withServer(c, async (url) => {
        const wire = await connectNats(url, 'conf-wire', log, c.auth);
        const plain = await connectNats(url, 'conf-plain', log, c.auth, { historyWire: false });
        try {
          const last = await fill(wire);
          const over = await wire.history?.();
          expect(over, 'the wire connected').toBeTruthy();
          let seenOnWire = 0;
          const watch = setInterval(() => {
            seenOnWire = Math.max(seenOnWire, over?.subscriptions ?? 0);
          }, 1);
          const viaWire = await readAll(wire, last);
          clearInterval(watch);
          const viaNatsJs = await readAll(plain, last);
          expect(plain.history, 'the plain connection has no wire').toBeUndefined();
          expect(seenOnWire, 'the wire read pulled over the wire').toBeGreaterThan(0);
          expect(viaWire.length).toBe(last);
          expect(viaWire).toEqual(viaNatsJs);
        } finally {
          await wire.nc.close();
          await plain.nc.close();
        }
      });
    });
  }

  it('hands new reads to nats.js once the server is in lame duck mode, and they read the same', {
    timeout: 90_000,
  }, async () => {
    writeFileSync(file('ldm.conf'), 'lame_duck_duration: "60s"\nlame_duck_grace_period: "30s"\n');
    const c: Case = { name: 'lame duck', args: ['-c', file('ldm.conf')], auth: {}, scheme: 'nats' };
    await withServer(c, async (url, server) => {
      const nats = await connectNats(url, 'conf-ldm', log);
      try {
        const last = await fill(nats);
        const before = await nats.history?.();
        expect(before, 'the wire connected').toBeTruthy();
        const viaWire = await readAll(nats, last);
        server.process.kill('SIGUSR2');
        await eventually(async () => before?.draining === true, 10_000, 'the wire told of lame duck mode');
        expect(await nats.history?.(), 'new reads go to nats.js').toBeNull();
        const viaNatsJs = await readAll(nats, last);
        expect(viaNatsJs).toEqual(viaWire);
      } finally {
        await nats.nc.close();
      }
    });
  });
});
