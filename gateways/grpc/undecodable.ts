/**
 * A request body that is not a valid protobuf message of its method is the client's error:
 * INVALID_ARGUMENT (`invalid_params`), like any other bad parameter. grpc-js answers a decoder that
 * throws with INTERNAL ("Error deserializing request"), a server error, and never calls the
 * handler; so every service's decoders are wrapped (`tolerantServices`) to hand on an Undecodable
 * in place of throwing, and a server interceptor (`rejectUndecodable`) ends the call that receives
 * one with the catalogue's status, trailers and error-log record (context.ts `failure`). Ending the
 * call notifies its handler as a cancellation, so a stream already open is released as usual.
 * The interceptor also fixes the call's `x-request-id` (a well-formed incoming one kept) before
 * the handler reads it, so both answer with the same id.
 */
import {
  type Metadata,
  type Server,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { ApiError } from '../../contracts/errors.ts';
import { requestIdFrom } from '../core/request-id.ts';
import { failure, type GrpcEdgeDeps } from './context.ts';

/** What a wrapped decoder returns for bytes it cannot decode. */
export class Undecodable {
  constructor(readonly reason: string) {}
}

type Decoder = (b: Buffer) => unknown;

function tolerant(decode: Decoder): Decoder {
  return (b) => {
    try {
      return decode(b);
    } catch (err) {
      return new Undecodable(err instanceof Error ? err.message : String(err));
    }
  };
}

/** Makes every service added to `server` from now on decode requests with `tolerant` decoders. */
export function tolerantServices(server: Server): void {
  const add = server.addService.bind(server);
  server.addService = (service: ServiceDefinition, impl) =>
    add(
      Object.fromEntries(
        Object.entries(service).map(([name, m]) => [
          name,
          { ...m, requestDeserialize: tolerant(m.requestDeserialize as Decoder) },
        ]),
      ) as ServiceDefinition,
      impl,
    );
}

/** Ends a call whose request message is Undecodable with INVALID_ARGUMENT. */
export function rejectUndecodable(deps: GrpcEdgeDeps): ServerInterceptor {
  return (method, call) => {
    let metadata: Metadata | null = null;
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(md, pass) {
            md.set('x-request-id', requestIdFrom(md.get('x-request-id')[0] as string | undefined));
            metadata = md;
            pass(md);
          },
          onReceiveMessage(message, pass) {
            if (!(message instanceof Undecodable)) {
              pass(message);
              return;
            }
            const md = metadata as Metadata;
            const requestId = md.get('x-request-id')[0] as string;
            const err = new ApiError(
              'invalid_params',
              'the request is not a valid protobuf message of this method',
              {
                field: 'request',
                reason: 'undecodable',
              },
            );
            const callLike = { metadata: md, getPeer: () => call.getPeer(), getPath: () => method.path };
            call.sendStatus(failure(deps, callLike, requestId, err));
          },
        });
      },
    });
  };
}
