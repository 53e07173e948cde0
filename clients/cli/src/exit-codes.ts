/**
 * Exit codes scripts can rely on (also in `mdp --help`), and the one mapping from a client error
 * to them.
 */
import { isMdpError } from '@mdp/client';

export const EXIT = {
  ok: 0,
  /** Unexpected failure (a bug, an I/O error, a 500). */
  failure: 1,
  /** Bad command line: unknown command or option, missing or malformed value. */
  usage: 2,
  /** No key or session, or the platform refused it (401, 403). */
  auth: 3,
  /** The named resource does not exist (404). */
  notFound: 4,
  /** The platform refused the request's content (400, 409, 413, 416, 422). */
  rejected: 5,
  /** Try again later: rate limited, overloaded, unreachable (408, 429, 502-504, network). */
  unavailable: 6,
  /** A download did not match what the server announced. */
  verification: 7,
  /** Stopped by Ctrl-C (SIGINT) after a clean shutdown. */
  interrupted: 130,
  /** Stopped by SIGTERM after a clean shutdown. */
  terminated: 143,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0    success
  1    unexpected failure
  2    bad command line
  3    authentication or authorization (no key or session, 401, 403)
  4    not found (404)
  5    request refused (400, 409, 413, 416, 422)
  6    unavailable, try again later (408, 429, 5xx, network)
  7    download verification failed
  130  interrupted (Ctrl-C), 143 terminated (SIGTERM)`;

/** A usage error: printed with the command's usage line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure with a chosen exit code and a message for the user. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof CliError) return err.exitCode;
  if (!isMdpError(err)) return EXIT.failure;
  if (err.code === 'network_error') return EXIT.unavailable;
  const s = err.status;
  if (s === null) {
    // Mid-stream: the terminal codes that mean the key or plan must change.
    return ['auth_failed', 'auth_expired', 'tier_restricted'].includes(err.code)
      ? EXIT.auth
      : EXIT.unavailable;
  }
  if (s === 401 || s === 403) return EXIT.auth;
  if (s === 404) return EXIT.notFound;
  if (s === 408 || s === 429 || s >= 502) return EXIT.unavailable;
  if (s >= 400 && s < 500) return EXIT.rejected;
  return EXIT.failure;
}
