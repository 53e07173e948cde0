/** `mdp keys ls|create|revoke`: the account's API keys, through the console session of `mdp login`. */

import { ConsoleClient, type KeyView } from '@mdp/client';
import { Scope } from '@mdp/contracts/accounts';
import { type Command, type Ctx, list, required } from '../command.ts';
import { sessionToken, updateConfig } from '../config.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { table } from '../table.ts';

const consoleOf = (ctx: Ctx) => new ConsoleClient({ url: ctx.endpoints.url, session: sessionToken(ctx.env) });

const when = (v: string | number | null) =>
  v === null ? '-' : new Date(v).toISOString().slice(0, 19).replace('T', ' ');

export const keysLs: Command = {
  path: ['keys', 'ls'],
  summary: 'Lists the account’s API keys (never the keys themselves: their prefixes).',
  options: {},
  async run(ctx) {
    const keys = await consoleOf(ctx).keys.list();
    if (ctx.json) {
      ctx.term.out.write(`${JSON.stringify(keys)}\n`);
      return EXIT.ok;
    }
    const c = ctx.term.color;
    const rows = keys.map((k: KeyView) => [
      k.key_id,
      k.name,
      k.prefix,
      k.tier,
      k.status === 'active' ? c.green(k.status) : c.dim(k.status),
      k.scopes.join(',') || '(all)',
      when(k.created_at),
      when(k.last_used_at),
    ]);
    ctx.term.out.write(
      table(['KEY ID', 'NAME', 'PREFIX', 'TIER', 'STATUS', 'SCOPES', 'CREATED', 'LAST USED'], rows),
    );
    return EXIT.ok;
  },
};

export const keysCreate: Command = {
  path: ['keys', 'create'],
  summary:
    'Creates an API key. The key is shown once, here; with --save it is written to the config file (mode 0600) instead and not shown.',
  options: {
    name: { type: 'string', value: 'NAME', description: 'a name for the key (required)' },
    scopes: {
      type: 'string',
      value: 'LIST',
      description: 'comma list of scopes (default: all the plan allows)',
    },
    'expires-at': {
      type: 'string',
      value: 'TIME',
      description:
        'ISO 8601 time after which the key is refused (key_expired); status:admin keys always expire, at most the service maximum',
    },
    save: { type: 'boolean', description: 'store the key in the config file for later commands' },
  },
  async run(ctx, values) {
    const name = required(values, 'name');
    const scopes = list(values, 'scopes');
    const bad = scopes?.find((s) => !Scope.safeParse(s).success);
    if (bad) throw new UsageError(`--scopes: unknown scope ${bad}`);
    const expiresAt = values['expires-at'];
    if (expiresAt !== undefined && (typeof expiresAt !== 'string' || Number.isNaN(Date.parse(expiresAt))))
      throw new UsageError('--expires-at: an ISO 8601 time, e.g. 2027-01-31T00:00:00Z');
    const created = await consoleOf(ctx).keys.create(
      name,
      scopes as Scope[] | undefined,
      expiresAt as string | undefined,
    );
    const { key, ...meta } = created;
    if (values.save) updateConfig({ api_key: key }, ctx.env);
    const shown = values.save ? { ...meta, saved: true } : created;
    if (ctx.json) ctx.term.out.write(`${JSON.stringify(shown)}\n`);
    else if (values.save)
      ctx.term.out.write(`created ${meta.key_id} (${meta.prefix}…), saved to the config file\n`);
    else ctx.term.out.write(`created ${meta.key_id}; the key, shown this once:\n${key}\n`);
    return EXIT.ok;
  },
};

export const keysRevoke: Command = {
  path: ['keys', 'revoke'],
  summary: 'Revokes API keys at once and everywhere (irreversible).',
  args: 'KEY_ID…',
  positionals: { min: 1 },
  options: {},
  async run(ctx, _values, ids) {
    const client = consoleOf(ctx);
    for (const id of ids) await client.keys.revoke(id);
    ctx.term.out.write(ctx.json ? `${JSON.stringify({ revoked: ids })}\n` : `revoked ${ids.join(', ')}\n`);
    return EXIT.ok;
  },
};
