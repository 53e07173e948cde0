/**
 * The `local` backend: files under one directory. A file is written under a hidden temporary
 * name beside its target and renamed into place when complete; names starting with `.` (those
 * temporaries) are never listed.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ArtifactStore, ByteRange, StoredFile } from './store.ts';

/** How the store opens a file to write: `createWriteStream` (a seam: tests inject a full disk). */
export type OpenWrite = (path: string) => Writable;

export class LocalArtifactStore implements ArtifactStore {
  readonly backend = 'local' as const;

  constructor(
    readonly root: string,
    private readonly openWrite: OpenWrite = (path) => createWriteStream(path),
  ) {}

  /** The file's path; refuses names that would leave the root. */
  pathOf(name: string): string {
    if (name.split('/').some((p) => p === '..' || p === '' || p === '.'))
      throw new Error(`bad artifact name ${name}`);
    return join(this.root, name);
  }

  locate(name: string): string {
    return this.pathOf(name);
  }

  async put(name: string, data: AsyncIterable<Uint8Array>): Promise<number> {
    const path = this.pathOf(name);
    await mkdir(dirname(path), { recursive: true });
    const temp = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
    try {
      await pipeline(Readable.from(data, { objectMode: false }), this.openWrite(temp));
      await rename(temp, path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return (await stat(path)).size;
  }

  async stat(name: string): Promise<StoredFile | null> {
    const info = await stat(this.pathOf(name)).catch(() => null);
    return info?.isFile() ? { name, size: info.size, mtimeMs: info.mtimeMs } : null;
  }

  async read(name: string, range?: ByteRange): Promise<Readable | null> {
    const path = this.pathOf(name);
    if (!(await stat(path).catch(() => null))) return null;
    return createReadStream(path, range ? { start: range.start, end: range.end } : {});
  }

  async delete(name: string): Promise<boolean> {
    const path = this.pathOf(name);
    const existed = (await stat(path).catch(() => null)) !== null;
    await rm(path, { force: true });
    return existed;
  }

  async list(): Promise<StoredFile[]> {
    const out: StoredFile[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (entry.name.startsWith('.')) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile()) {
          const info = await stat(path).catch(() => null);
          if (info)
            out.push({
              name: relative(this.root, path).split(sep).join('/'),
              size: info.size,
              mtimeMs: info.mtimeMs,
            });
        }
      }
    };
    await walk(this.root);
    return out;
  }
}
