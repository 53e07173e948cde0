/**
 * A fast gRPC stream reader in a process of its own, so its reading never waits for the event
 * loop of the edge under test (tests that load the edge measure what the edge holds, not what the
 * test's own client could not read in time):
 *   node --import tsx test/support/grpc-stream-reader.ts <host:port> <api key> <after_seq>
 * It opens StreamEvents with a large HTTP/2 window and prints `open` once the headers arrive, one
 * line per batch of events (space separated: the `seq` then `t` for a trade or `b` for a book), and `end <status code>` when the stream
 * ends; it exits when stdin closes.
 */
import { type Client, credentials, loadPackageDefinition, Metadata } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { LOADER_OPTIONS, PROTO_PATH } from '../../gateways/grpc/proto.ts';

const [target, key, afterSeq] = process.argv.slice(2) as [string, string, string];
// biome-ignore lint/suspicious/noExplicitAny: generated client
type Ctor = new (target: string, creds: unknown, options: object) => Client & Record<string, any>;
const pkg = loadPackageDefinition(loadSync(PROTO_PATH, LOADER_OPTIONS)) as unknown as {
  price: { PriceService: Ctor };
};
const client = new pkg.price.PriceService(target, credentials.createInsecure(), {
  'grpc.use_local_subchannel_pool': 1,
  'grpc-node.flow_control_window': 16 * 1024 * 1024,
});
const md = new Metadata();
md.set('x-api-key', key);
const call = client.StreamEvents({ after_seq: Number(afterSeq) }, md);
let batch: string[] = [];
const flush = () => {
  if (batch.length > 0) process.stdout.write(`${batch.join(' ')}\n`);
  batch = [];
};
const timer = setInterval(flush, 20);
call.once('metadata', () => process.stdout.write('open\n'));
call.on('data', (m: Record<string, { seq?: number }>) => {
  const seq = (m.trade ?? m.book)?.seq;
  if (seq !== undefined) batch.push(`${Number(seq)}${m.trade ? 't' : 'b'}`);
});
call.on('error', (e: { code: number }) => {
  flush();
  process.stdout.write(`end ${e.code}\n`);
});
call.on('end', () => {
  flush();
  process.stdout.write('end 0\n');
});
process.stdin.on('end', () => {
  clearInterval(timer);
  flush();
  call.cancel();
  client.close();
  process.exit(0);
});
process.stdin.resume();
