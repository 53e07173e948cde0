/**
 * Issue 32 §1, the fact two regions rest on, checked on the nats-server in use (2.9.10 here): a
 * stream mirrored into another JetStream domain across a leaf-node link keeps the origin's
 * sequence for every message, gaps included, and its stored time. Two servers: a home one
 * (domain `us`, the origin stream) and a leaf (domain `jp`) holding a mirror made through the
 * home domain's API prefix, as a JP region would. The origin has gaps before the mirror exists
 * (messages deleted, the head purged) and after (deleted before the mirror reads them is not
 * testable without a race, so: deleted after); every sequence of the origin is compared with the
 * mirror's: the same presence, subject, data and stored time.
 *
 * If this ever fails, the design's fallback applies (ARCHITECTURE, regions): carry the origin's
 * sequence in a header and map it, so a client's position is the same in both regions.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JetStreamManager, jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../platform/free-port.ts';
import { eventually } from '../support/eventually.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

let home: TestNats;
let leaf: TestNats;
let homeNc: NatsConnection;
let leafNc: NatsConnection;
let homeJsm: JetStreamManager;
let leafJsm: JetStreamManager;

/** A nats-server with a config file (domain, leaf-node settings), kept in its store directory. */
async function startWithConfig(name: string, config: string): Promise<TestNats> {
  const dir = mkdtempSync(join(tmpdir(), `mdp-region-${name}-`));
  const file = join(dir, 'server.conf');
  writeFileSync(file, config);
  return startTestNats(dir, undefined, ['-c', file]);
}

beforeAll(async () => {
  const leafPort = await freePort();
  home = await startWithConfig(
    'us',
    `server_name: us1\njetstream { domain: us }\nleafnodes { listen: "127.0.0.1:${leafPort}" }\n`,
  );
  leaf = await startWithConfig(
    'jp',
    `server_name: jp1\njetstream { domain: jp }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }\n`,
  );
  homeNc = await connect({ servers: home.url });
  leafNc = await connect({ servers: leaf.url });
  homeJsm = await jetstreamManager(homeNc);
  leafJsm = await jetstreamManager(leafNc);
});

afterAll(async () => {
  await homeNc?.close();
  await leafNc?.close();
  await leaf?.cleanup();
  await home?.cleanup();
});

const read = async (jsm: JetStreamManager, stream: string, seq: number): Promise<StoredMsg | null> => {
  try {
    return await jsm.streams.getMessage(stream, { seq });
  } catch (err) {
    if (/no message found|message not found/i.test(String(err))) return null;
    throw err;
  }
};

it('keeps the origin sequence of every message, gaps included, and its stored time', async () => {
  await homeJsm.streams.add({ name: 'MD', subjects: ['md.>'] });
  const js = homeJsm.jetstream();
  const publish = async (n: number, from: number) => {
    for (let i = 0; i < n; i++) await js.publish(`md.synthetic.BTC.trade`, JSON.stringify({ n: from + i }));
  };
  await publish(40, 0);
  // Gaps before the mirror exists: the head purged (first_seq 6), three messages deleted.
  await homeJsm.streams.purge('MD', { seq: 6 });
  for (const seq of [10, 11, 25]) await homeJsm.streams.deleteMessage('MD', seq, false);

  // The leaf-node link is up once the home domain's API answers through it.
  await eventually(
    async () => {
      try {
        await leafJsm.streams.add({
          name: 'MD',
          mirror: { name: 'MD', external: { api: '$JS.us.API', deliver: '' } },
        });
        return true;
      } catch {
        return false;
      }
    },
    15_000,
    'the mirror created through the leaf link',
  );
  await publish(40, 40);
  const origin = (await homeJsm.streams.info('MD')).state;
  await eventually(
    async () => (await leafJsm.streams.info('MD')).state.last_seq === origin.last_seq,
    15_000,
    `the mirror at the origin's last sequence ${origin.last_seq}`,
  );
  // A gap after mirroring: deleted at home, kept by the mirror (deletes are not mirrored; the
  // platform never deletes single events, limits age them out on each side by the same rules).
  await homeJsm.streams.deleteMessage('MD', 50, false);

  const mirror = (await leafJsm.streams.info('MD')).state;
  expect(mirror.first_seq).toBe(origin.first_seq);
  expect(mirror.last_seq).toBe(origin.last_seq);
  const differences: string[] = [];
  for (let seq = 1; seq <= origin.last_seq; seq++) {
    const [a, b] = [await read(homeJsm, 'MD', seq), await read(leafJsm, 'MD', seq)];
    if (seq === 50) {
      if (a !== null || b === null)
        differences.push(`${seq}: deleted after mirroring, expected only in the mirror`);
      continue;
    }
    if ((a === null) !== (b === null))
      differences.push(`${seq}: origin ${a ? 'has' : 'lacks'} it, mirror ${b ? 'has' : 'lacks'} it`);
    if (!a || !b) continue;
    if (
      a.seq !== b.seq ||
      a.subject !== b.subject ||
      a.string() !== b.string() ||
      a.timestamp !== b.timestamp
    )
      differences.push(
        `${seq}: origin ${a.seq} ${a.subject} ${a.timestamp}, mirror ${b.seq} ${b.subject} ${b.timestamp}`,
      );
  }
  expect(differences).toEqual([]);
  // The gaps are gaps on both sides.
  for (const seq of [1, 5, 10, 11, 25]) expect(await read(leafJsm, 'MD', seq), `seq ${seq}`).toBeNull();
});
