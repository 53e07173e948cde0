/** zod parsing for request bodies and queries, mapped to the catalogue with field details. */
import type { z } from 'zod';
import { ApiError, type ErrorCode } from '../../contracts/errors.ts';

/** Parses `value`; a failure is `code` (422 by default) naming the first bad field and every issue. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code: ErrorCode = 'unprocessable',
): z.output<S> {
  if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('invalid_params', 'the body must be a JSON object', {
      field: 'body',
      reason: 'expected a JSON object',
    });
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({
    field: i.code === 'unrecognized_keys' ? i.keys.join(',') : i.path.join('.') || 'body',
    reason: i.code === 'unrecognized_keys' ? 'unknown field' : i.message,
  }));
  const first = issues[0] as { field: string; reason: string };
  throw new ApiError(code, `invalid ${first.field}: ${first.reason}`, { ...first, issues });
}
