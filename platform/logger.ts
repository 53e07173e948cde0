/** Structured JSON logs (pino). Secrets never reach a log line: see `redactUrl`. */
import { type Logger, pino } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'mdp'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'password', 'key'],
      censor: '[redacted]',
    },
  });
}

/** Removes credential-bearing query values (`api_key`) from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]api_key=)[^&#]*/gi, '$1[redacted]');
}
