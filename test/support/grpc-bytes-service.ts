/**
 * A bare grpc-js service of one server-streaming method whose messages are bytes as they are (no
 * protobuf): for tests that pin what grpc-js itself does on the wire, apart from the edge.
 */
import {
  type ClientReadableStream,
  credentials,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServerWritableStream,
} from '@grpc/grpc-js';

const asIs = (b: Buffer): Buffer => b;

/** The definition of `path`, a server-streaming method from bytes to bytes. */
export const bytesStreamService = (path: string) => ({
  Watch: {
    path,
    requestStream: false,
    responseStream: true,
    requestSerialize: asIs,
    requestDeserialize: asIs,
    responseSerialize: asIs,
    responseDeserialize: asIs,
  },
});

export type BytesStream = {
  /** Opens the method with `request` on a client of the server. */
  watch(request: Buffer): ClientReadableStream<Buffer>;
  close(): void;
};

/** A server answering `path` with `handler` on a free loopback port, and a client of it. */
export async function startBytesStream(
  path: string,
  handler: (call: ServerWritableStream<Buffer, Buffer>) => void,
): Promise<BytesStream> {
  const service = bytesStreamService(path);
  const server = new Server();
  server.addService(service, { Watch: handler });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const Client = makeGenericClientConstructor(service, 'Bytes');
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as {
    Watch(request: Buffer): ClientReadableStream<Buffer>;
    close(): void;
  };
  return {
    watch: (request) => client.Watch(request),
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}
