/**
 * Clients that know no proto: a service found through server reflection (grpc.reflection.v1, as
 * grpcurl does it), and the standard health check (grpc.health.v1).
 */
import { createRequire } from 'node:module';
import { type Client, credentials, loadPackageDefinition, Metadata } from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer, loadSync } from '@grpc/proto-loader';
import { protoPath as healthProto } from 'grpc-health-check';

const require = createRequire(import.meta.url);
const REFLECTION_PROTO = require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');

// biome-ignore lint/suspicious/noExplicitAny: clients made at run time
type Dynamic = Client & Record<string, any>;
type Ctor = new (target: string, creds: ReturnType<typeof credentials.createInsecure>) => Dynamic;

const load = (path: string) =>
  loadPackageDefinition(
    loadSync(path, { keepCase: true, longs: Number, enums: String, oneofs: true }),
  ) as unknown as Record<
    string,
    // biome-ignore lint/suspicious/noExplicitAny: nested packages
    any
  >;

/** One reflection request/response on a fresh bidirectional call. */
function reflect(target: string, request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const Reflection = load(REFLECTION_PROTO).grpc.reflection.v1.ServerReflection as Ctor;
  const client = new Reflection(target, credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (m: Record<string, unknown>) => {
      resolve(m);
      call.end();
      client.close();
    });
    call.on('error', reject);
    call.write(request);
  });
}

/** The services the server lists by reflection. */
export async function listServices(target: string): Promise<string[]> {
  const r = await reflect(target, { list_services: '' });
  return ((r.list_services_response as { service: { name: string }[] }).service ?? []).map((s) => s.name);
}

/** A client of `service` built only from what reflection returns (FileDescriptorProtos). */
export async function reflectedClient(target: string, service: string): Promise<Dynamic> {
  const r = await reflect(target, { file_containing_symbol: service });
  const files = (r.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto;
  // A FileDescriptorSet is `repeated FileDescriptorProto file = 1`: each file as a length-delimited field 1.
  const set = Buffer.concat(files.flatMap((f) => [Buffer.from([0x0a]), varint(f.length), f]));
  const pkg = loadPackageDefinition(loadFileDescriptorSetFromBuffer(set, { keepCase: true, longs: Number }));
  // biome-ignore lint/suspicious/noExplicitAny: walked by name
  const Ctor = service.split('.').reduce((o: any, k) => o[k], pkg) as Ctor;
  return new Ctor(target, credentials.createInsecure());
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

/** grpc.health.v1 Check of `service` ('' = the server overall): 'SERVING', 'NOT_SERVING', or the error. */
export function healthStatus(target: string, service = ''): Promise<string> {
  const Health = load(healthProto).grpc.health.v1.Health as Ctor;
  const client = new Health(target, credentials.createInsecure());
  return new Promise((resolve) => {
    client.Check(
      { service },
      new Metadata(),
      { deadline: Date.now() + 2_000 },
      (err: Error | null, r: { status: string | number }) => {
        client.close();
        resolve(err ? `error: ${err.message}` : String(r.status));
      },
    );
  });
}
