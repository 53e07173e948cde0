/**
 * The one zod → catalogue mapper (gateways/core/validate.ts): a body whose shape is wrong (not an
 * object, a field missing, a wrong JSON type) is 400 `invalid_params`; a body of the right shape
 * with wrong values is 422 `unprocessable`; query and header text is always 400.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../contracts/errors.ts';
import { parseWith } from '../../gateways/core/validate.ts';

const Body = z
  .object({
    config: z.object({ symbol: z.string(), seed: z.number().int().min(0).optional() }).strict(),
    duration_seconds: z.number().int().min(1).max(604_800),
    plan: z.enum(['basic', 'pro']).optional(),
    email: z.email().optional(),
    process: z
      .discriminatedUnion('kind', [
        z.object({ kind: z.literal('gbm') }),
        z.object({ kind: z.literal('ou'), theta: z.number() }),
      ])
      .optional(),
  })
  .strict();

function refusal(fn: () => unknown): { code: string; status: number; field: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    return { code: e.code, status: e.row.http, field: e.details?.field };
  }
  throw new Error('expected a refusal');
}

const ok = { config: { symbol: 'BTC' }, duration_seconds: 60 };

describe('bodies: shape → 400, values → 422', () => {
  it.each([
    ['{}', {}, 'config'],
    ['a missing nested field', { config: {}, duration_seconds: 60 }, 'config.symbol'],
    ['a missing field', { config: { symbol: 'BTC' } }, 'duration_seconds'],
    ['a wrong type', { ...ok, duration_seconds: '60' }, 'duration_seconds'],
    ['null for a required field', { ...ok, duration_seconds: null }, 'duration_seconds'],
    ['a wrong nested type', { config: { symbol: 7 }, duration_seconds: 60 }, 'config.symbol'],
    ['an object where a union needs one', { ...ok, process: 5 }, 'process'],
    ['a missing discriminator', { ...ok, process: {} }, 'process.kind'],
    [
      'a wrong type beside a bad value',
      { config: { symbol: 'BTC', seed: -1 }, duration_seconds: 'x' },
      'duration_seconds',
    ],
  ])('%s → 400 invalid_params naming %s', (_name, body, field) => {
    expect(refusal(() => parseWith(Body, body))).toEqual({ code: 'invalid_params', status: 400, field });
  });

  it.each([
    ['below the minimum', { ...ok, duration_seconds: 0 }, 'duration_seconds'],
    ['a fraction where an integer belongs', { ...ok, duration_seconds: 1.5 }, 'duration_seconds'],
    ['above the maximum', { ...ok, duration_seconds: 604_801 }, 'duration_seconds'],
    ['not an allowed value', { ...ok, plan: 'platinum' }, 'plan'],
    ['a bad format', { ...ok, email: 'not-an-email' }, 'email'],
    ['an unknown discriminator', { ...ok, process: { kind: 'levy' } }, 'process.kind'],
    [
      'an unknown nested field',
      { config: { symbol: 'BTC', colour: 'red' }, duration_seconds: 60 },
      'config.colour',
    ],
    ['an unknown field', { ...ok, colour: 'red' }, 'colour'],
  ])('%s → 422 unprocessable naming %s', (_name, body, field) => {
    expect(refusal(() => parseWith(Body, body))).toEqual({ code: 'unprocessable', status: 422, field });
  });

  it('refuses anything but a JSON object with 400 naming the body', () => {
    for (const body of [undefined, null, [1, 2], 'text', 3])
      expect(refusal(() => parseWith(Body, body))).toEqual({
        code: 'invalid_params',
        status: 400,
        field: 'body',
      });
  });

  it('lists every issue in details.issues', () => {
    try {
      parseWith(Body, { config: { symbol: 7 }, duration_seconds: 0 });
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).details?.issues).toEqual([
        { field: 'config.symbol', reason: expect.any(String) },
        { field: 'duration_seconds', reason: expect.any(String) },
      ]);
    }
  });
});

describe('query and header text: always 400', () => {
  const Query = z
    .object({ symbol: z.string().regex(/^[A-Z]+$/), seed: z.string().regex(/^\d+$/).optional() })
    .strict();

  it.each([
    [{}, 'symbol'],
    [{ symbol: 'btc' }, 'symbol'],
    [{ symbol: 'BTC', seed: '-1' }, 'seed'],
    [{ symbol: 'BTC', speed: '2' }, 'speed'],
  ])('%j → 400 invalid_params naming %s', (query, field) => {
    expect(refusal(() => parseWith(Query, query, 'text'))).toEqual({
      code: 'invalid_params',
      status: 400,
      field,
    });
  });

  it('names an unknown parameter with the allowed ones, and a header by the name given', () => {
    try {
      parseWith(Query, { speed: '2', symbol: 'BTC' }, 'text');
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).details?.reason).toBe('unknown query parameter (allowed: symbol, seed)');
    }
    expect(refusal(() => parseWith(z.string().regex(/^\d+$/), 'x', 'text', 'Last-Event-ID')).field).toBe(
      'Last-Event-ID',
    );
  });
});
