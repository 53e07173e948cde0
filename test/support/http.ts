/** Assertions on the spec's HTTP error body. */
import { expect } from 'vitest';

export async function expectError(
  res: Response,
  status: number,
  code: string,
  field?: string,
): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown> & { details?: { field?: string } };
  expect({ status: res.status, error: body.error }).toEqual({ status, error: code });
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(typeof body.message).toBe('string');
  expect(body.request_id).toMatch(/^req_[0-9a-f]{20}$/);
  expect(res.headers.get('x-request-id')).toBe(body.request_id);
  expect(new Date(body.timestamp as string).toISOString()).toBe(body.timestamp);
  if (status === 400 || status === 422) {
    expect(body.details).toBeDefined();
    if (field) expect(body.details?.field).toBe(field);
  } else expect(body.details).toBeUndefined();
  return body;
}
