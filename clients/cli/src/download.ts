/**
 * Saving a download with a byte progress bar: written to `FILE.partial`, checked against the
 * length the server announced (and the one the caller expects), renamed into place only when whole.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Download, SimulationClient } from '@mdp/client';
import type { Ctx } from './command.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { bar, formatBytes, formatCount, StatusLine } from './term.ts';

export async function saveDownload(
  ctx: Ctx,
  dl: Download,
  file: string,
  label: string,
  expectedBytes?: number,
): Promise<number> {
  const total = expectedBytes ?? dl.contentLength ?? 0;
  const status = new StatusLine(ctx.term);
  const partial = `${file}.partial`;
  const out = createWriteStream(partial);
  let bytes = 0;
  try {
    const reader = dl.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (!out.write(value)) await once(out, 'drain');
      status.update(bar(ctx.term, label, bytes, total, `${formatBytes(bytes)} / ${formatBytes(total)}`));
    }
    out.end();
    await once(out, 'close');
    status.update(bar(ctx.term, label, bytes, total, `${formatBytes(bytes)} / ${formatBytes(total)}`), true);
    status.done();
  } catch (err) {
    status.done();
    out.destroy();
    await rm(partial, { force: true });
    if (ctx.signal.aborted) throw new CliError('download interrupted', ctx.stopCode());
    throw err;
  }
  for (const [what, expected] of [
    ['Content-Length', dl.contentLength],
    ['content_length_bytes', expectedBytes],
  ] as const) {
    if (expected !== null && expected !== undefined && expected !== bytes) {
      await rm(partial, { force: true });
      throw new CliError(
        `download incomplete: ${bytes} bytes received, ${what} says ${expected}`,
        EXIT.verification,
      );
    }
  }
  await rename(partial, file);
  return bytes;
}

/** A job's artifact (`download_url`, `content_length_bytes`) saved to `file`; its bytes. */
export async function saveJobArtifact(
  ctx: Ctx,
  sim: SimulationClient,
  result: { download_url: string; content_length_bytes: number },
  file: string,
): Promise<number> {
  return saveDownload(
    ctx,
    await sim.download(result, ctx.signal),
    file,
    'downloading',
    result.content_length_bytes,
  );
}

/** The last line of a job's download (generate, export): the result as JSON, or what was saved and its identity. */
export function reportSaved(
  ctx: Ctx,
  result: { row_count: number } & Record<string, unknown>,
  file: string,
  bytes: number,
  identity: string,
): void {
  if (ctx.json) ctx.term.out.write(`${JSON.stringify({ ...result, file, bytes_written: bytes })}\n`);
  else
    ctx.term.out.write(
      `${file}: ${formatCount(result.row_count)} rows, ${formatBytes(bytes)} (${bytes} bytes, verified)\n${identity}\n`,
    );
}
