/**
 * Start-up administration is patient (platform/patient.ts): a bucket, an object store, a job
 * queue's consumer and a stream asked for while NATS does not answer (its server killed, started
 * again on the same port and store a few seconds later) are made once it answers, not a bare `fatal: timeout`
 * (fresh-clone CI: a worker died at start that way on a 3-node cluster). An error that waiting
 * cannot mend fails at once, and names what was being made.
 */
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setupStreams } from '../../app/streams.ts';
import { ensureQueueConsumer } from '../../consumers/generation/queue-delivery.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { NatsArtifactStore } from '../../platform/artifact-store/nats.ts';
import { createBucket, openBucket } from '../../platform/kv.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, ensureStreams, type Nats } from '../../platform/nats.ts';
import { patiently } from '../../platform/patient.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { keptStream } from '../support/stream-definition.ts';

const PATIENT_STREAM = keptStream('PATIENT', 'patient.>');
let server: TestNats;
let nats: Nats;

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectNats(server.url, 'test-patient', createLogger('silent'));
  await setupStreams(nats, testConfig());
});

afterAll(async () => {
  await nats?.nc.close();
  await server?.cleanup();
});

it('a bucket, an object store, a queue consumer and a stream asked for while NATS is down are made when it is back', {
  timeout: 90_000,
}, async () => {
  await server.kill('SIGKILL');
  const made = Promise.all([
    openBucket<{ n: number }>(nats, 'patient_kv'),
    NatsArtifactStore.open(nats, 'patient_objects'),
    ensureQueueConsumer(nats, 'patient_worker', 'jobs.patient.>', 4_000),
    ensureStreams(nats.jsm, [PATIENT_STREAM]),
  ]);
  let settled = false;
  made.then(
    () => (settled = true),
    () => (settled = true),
  );
  // Down for longer than one request's timeout (5 s): every one of them has failed at least once.
  await new Promise((r) => setTimeout(r, 7_000));
  expect(settled).toBe(false);
  server = await server.crashAndRestart();
  const [kv] = await made;
  await kv.put('k', { n: 1 });
  expect(await kv.get('k')).toEqual({ n: 1 });
  const info = await nats.jsm.consumers.info(STREAMS.JOBS, 'patient_worker');
  expect(info.config.filter_subject).toBe('jobs.patient.>');
  expect((await nats.jsm.streams.info('PATIENT')).config.subjects).toEqual(['patient.>']);
});

it('an error waiting cannot mend is not retried, and names what was being made', async () => {
  // Three replicas asked of a server that is not clustered: refused by the server, for good.
  const kvm = new Kvm(nats.js);
  let attempts = 0;
  const create = () => {
    attempts++;
    return kvm.create('patient_r3', { replicas: 3 });
  };
  await expect(patiently('KV bucket patient_r3', create)).rejects.toThrow(/^KV bucket patient_r3: /);
  expect(attempts).toBe(1);
  await expect(createBucket(kvm, 'patient_r3', { replicas: 3 })).rejects.toThrow(/^KV bucket patient_r3: /);
});
