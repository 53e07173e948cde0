/**
 * Serves a stored file (artifact or cache export, from either storage backend) with single-range
 * support (RFC 9110): `Range: bytes=a-b`, `a-`, `-n` → 206 with Content-Range; an unsatisfiable
 * range → 416 with the error body and a Content-Range naming the size; otherwise 200 with the
 * whole file. Content-Length always equals the bytes sent. The body is streamed from the store
 * with backpressure, never held in memory.
 */
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../../contracts/errors.ts';
import type { ArtifactStore, ByteRange } from '../../../platform/artifact-store/store.ts';

/** null: no (usable) range header → whole file; 'unsatisfiable' → 416. */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // multi-range or malformed: ignored, as servers may
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/** Sends `name` from `store`, or throws 404 naming `label` when the store no longer has it. */
export async function sendStored(
  reply: FastifyReply,
  store: ArtifactStore,
  name: string,
  rangeHeader: string | undefined,
  filename: string,
  contentType = 'application/vnd.apache.parquet',
): Promise<FastifyReply> {
  const gone = () => new ApiError('not_found', `${filename} is no longer stored`);
  const file = await store.stat(name);
  if (!file) throw gone();
  const size = file.size;
  reply.header('accept-ranges', 'bytes');
  const range = parseRange(rangeHeader, size);
  if (range === 'unsatisfiable') {
    // An error like any other: the error body, with the size the client may ask within.
    reply.header('content-range', `bytes */${size}`);
    throw new ApiError(
      'range_unsatisfiable',
      `range ${rangeHeader} is outside the ${size} bytes of ${filename}`,
    );
  }
  const body = await store.read(name, range ?? undefined);
  if (!body) throw gone();
  reply.header('content-type', contentType);
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  if (range === null) {
    reply.header('content-length', String(size));
    return reply.code(200).send(body);
  }
  reply.header('content-range', `bytes ${range.start}-${range.end}/${size}`);
  reply.header('content-length', String(range.end - range.start + 1));
  return reply.code(206).send(body);
}
