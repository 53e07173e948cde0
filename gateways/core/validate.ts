/**
 * zod → catalogue: the one mapper of request bodies, tool arguments, queries and headers.
 *
 * The rule (spec "HTTP statuses": 400 "Malformed body or query", 422 "Well-formed but semantically
 * wrong"):
 * - text the client typed (a query parameter, a header): any problem is 400 `invalid_params`;
 * - a body whose shape is wrong is 400 `invalid_params`: not a JSON object, a required field
 *   missing, a value of the wrong JSON type (zod `invalid_type`; a union none of whose branches
 *   has the right type);
 * - a body of the right shape with wrong values is 422 `unprocessable`: out of bounds
 *   (`too_small`, `too_big`, `not_multiple_of`), not an allowed value (`invalid_value`, a union's
 *   discriminator), a bad format (`invalid_format`), a refinement (`custom`), an unknown field
 *   (`unrecognized_keys`: the JSON is fine, the schema does not accept that name).
 * One malformed issue makes the request 400. `details` = the first issue of the deciding kind
 * (`field` dotted, e.g. `config.symbol`; a query names its parameter) plus `issues`, all of them.
 */
import type { z } from 'zod';
import { ApiError } from '../../contracts/errors.ts';

/** Where the input came from: a JSON body (or tool arguments), or client text (query, header). */
export type InputKind = 'body' | 'text';

type Issue = z.core.$ZodIssue;
type FieldIssue = { field: string; reason: string; malformed: boolean };

/** Parses `value` with `schema`, or throws the ApiError the rule above gives. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  kind: InputKind = 'body',
  field?: string,
): z.output<S> {
  if (kind === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new ApiError('invalid_params', 'the body must be a JSON object', {
      field: 'body',
      reason: 'expected a JSON object',
    });
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error, value, kind, { field, allowed: shapeKeys(schema) });
}

/** The ApiError of a failed parse of `value` (for callers that parse with zod themselves). */
export function invalidInput(
  error: z.ZodError,
  value: unknown,
  kind: InputKind = 'body',
  opts: { field?: string | undefined; allowed?: readonly string[] | null } = {},
): ApiError {
  const issues = error.issues.flatMap((i) => fieldIssues(i, value, kind, opts.allowed ?? null));
  const malformed = kind === 'text' || issues.some((i) => i.malformed);
  const first = issues.find((i) => i.malformed || !malformed) ??
    issues[0] ?? { field: 'body', reason: 'invalid', malformed };
  const field = opts.field ?? first.field;
  const details = {
    field,
    reason: first.reason,
    issues: issues.map((i) => ({ field: i.field, reason: i.reason })),
  };
  return new ApiError(
    malformed ? 'invalid_params' : 'unprocessable',
    `invalid ${field}: ${first.reason}`,
    details,
  );
}

function fieldIssues(
  issue: Issue,
  value: unknown,
  kind: InputKind,
  allowed: readonly string[] | null,
): FieldIssue[] {
  const name = (path: readonly PropertyKey[]) =>
    (kind === 'text' ? String(path[0] ?? '') : path.map(String).join('.')) ||
    (kind === 'text' ? 'query' : 'body');
  if (issue.code === 'unrecognized_keys') {
    const reason =
      kind === 'text' && allowed
        ? `unknown query parameter (allowed: ${allowed.join(', ')})`
        : 'unknown field';
    return issue.keys.map((key) => ({ field: name([...issue.path, key]), reason, malformed: false }));
  }
  return [{ field: name(issue.path), reason: issue.message, malformed: isMalformed(issue, value) }];
}

/**
 * Shape problems: a missing field, a wrong JSON type, or a union no branch of which has the type.
 * zod reports a fraction where an integer belongs as `invalid_type` (expected `int`): in JSON both
 * are numbers, so that is a wrong value, and a wrong type only when no number was sent.
 */
function isMalformed(issue: Issue, value: unknown): boolean {
  if (isMissing(value, issue.path)) return true;
  if (issue.code === 'invalid_type' && issue.expected === 'int')
    return typeof valueAt(value, issue.path) !== 'number';
  return wrongType(issue);
}

function wrongType(issue: Issue): boolean {
  if (issue.code === 'invalid_type') return issue.expected !== 'int';
  return (
    issue.code === 'invalid_union' &&
    issue.errors.length > 0 &&
    issue.errors.every((branch) => branch.some(wrongType))
  );
}

/** The value at `path` in `value` (undefined when any step is missing). */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at: unknown = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** Whether the field at `path` is absent from `value` (its parent exists, the key does not). */
function isMissing(value: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  const parent = valueAt(value, path.slice(0, -1));
  return typeof parent === 'object' && parent !== null && !((path[path.length - 1] as PropertyKey) in parent);
}

function shapeKeys(schema: z.ZodType): string[] | null {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape && typeof shape === 'object' ? Object.keys(shape) : null;
}
