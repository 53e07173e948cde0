/**
 * Client messages that arrive while a disk-sync connection is being admitted (guard, lease) wait
 * here for its Session, in order, within DISKSYNC_EARLY_MAX_MESSAGES messages and
 * DISKSYNC_EARLY_MAX_BYTES bytes (contracts/transport-limits.ts). One more is refused: the buffer
 * is dropped and `refusal` is the error (4029, rate_limited) the connection closes with; whatever
 * arrives after that is dropped too.
 */
import { ApiError } from '../../contracts/errors.ts';
import { DISKSYNC_EARLY_MAX_BYTES, DISKSYNC_EARLY_MAX_MESSAGES } from '../../contracts/transport-limits.ts';

export type EarlyMessage = [data: Buffer, isBinary: boolean];

export class EarlyMessages {
  private held: EarlyMessage[] = [];
  private bytes = 0;
  refusal: ApiError | null = null;

  /** Holds a message; false (and `refusal` set) once the bounds are passed. */
  push(data: Buffer, isBinary: boolean): boolean {
    if (this.refusal) return false;
    const size = Buffer.isBuffer(data) ? data.length : 0;
    if (this.held.length >= DISKSYNC_EARLY_MAX_MESSAGES || this.bytes + size > DISKSYNC_EARLY_MAX_BYTES) {
      this.held = [];
      this.bytes = 0;
      this.refusal = new ApiError(
        'rate_limited',
        `At most ${DISKSYNC_EARLY_MAX_MESSAGES} messages before the connection is admitted.`,
      );
      return false;
    }
    this.held.push([data, isBinary]);
    this.bytes += size;
    return true;
  }

  /** The held messages, oldest first; the buffer is empty after. */
  take(): EarlyMessage[] {
    const out = this.held;
    this.held = [];
    this.bytes = 0;
    return out;
  }
}
