/**
 * Free space of the disk holding a directory (`fs.statfs`), and the check every writer of
 * artifacts runs before it starts: below `minFreeBytes` (what an unprivileged process may still
 * write, `bavail`), nothing is started, so a full disk gives a clear 503 `storage_full` up front
 * rather than a job that dies half-way (a half-written file is never served either way: artifacts
 * are renamed into place only when complete).
 */
import { mkdir, statfs } from 'node:fs/promises';
import { ApiError } from '../contracts/errors.ts';

/** Seconds a caller refused for lack of disk is told to wait (the retention sweep frees space). */
export const DISK_RETRY_AFTER_S = 60;

/** Bytes an unprivileged writer may still put on the disk of `dir` (created if missing). */
export async function freeBytes(dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** The error of a refused job: 503 `storage_full` with Retry-After. */
export function storageFullError(free: number, minFreeBytes: number): ApiError {
  const err = new ApiError(
    'storage_full',
    `only ${free} bytes free on the artifacts disk; at least ${minFreeBytes} must stay free`,
  );
  err.retryAfterSeconds = DISK_RETRY_AFTER_S;
  return err;
}

/** Throws 503 `storage_full` when the disk of `dir` has less than `minFreeBytes` free. */
export async function ensureFreeDisk(dir: string, minFreeBytes: number): Promise<void> {
  if (minFreeBytes <= 0) return;
  const free = await freeBytes(dir);
  if (free < minFreeBytes) throw storageFullError(free, minFreeBytes);
}
