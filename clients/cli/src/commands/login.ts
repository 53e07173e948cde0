/**
 * `mdp login` / `mdp logout`: a console session kept in the config file (mode 0600). The password
 * comes from `MDP_PASSWORD`, from stdin (`--password-stdin`) or from a prompt that does not echo.
 */
import { ConsoleClient } from '@mdp/client';
import { type Command, type Ctx, required } from '../command.ts';
import { configFile, readConfig, updateConfig } from '../config.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { readAll } from '../input.ts';

/** Reads a line from a TTY without echoing it. */
function prompt(ctx: Ctx, question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) throw new CliError('no password: set MDP_PASSWORD or use --password-stdin', EXIT.usage);
  ctx.term.err.write(question);
  return new Promise((resolve, reject) => {
    let text = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          return resolve(text);
        }
        if (ch === '\u0003') {
          finish();
          return reject(new CliError('interrupted', EXIT.interrupted));
        }
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      ctx.term.err.write('\n');
    };
    stdin.on('data', onData);
  });
}

async function password(ctx: Ctx, fromStdin: boolean): Promise<string> {
  if (ctx.env.MDP_PASSWORD) return ctx.env.MDP_PASSWORD;
  if (fromStdin) return (await readAll(ctx.stdin)).replace(/\r?\n$/, '');
  return prompt(ctx, 'Password: ');
}

export const loginCommand: Command = {
  path: ['login'],
  summary: `Logs in to the console and keeps the session in ${'$MDP_CONFIG_DIR'}/config.json (mode 0600) for \`mdp keys\`.`,
  options: {
    email: { type: 'string', value: 'EMAIL', description: 'account email (default $MDP_EMAIL)' },
    'password-stdin': {
      type: 'boolean',
      description: 'read the password from stdin (else $MDP_PASSWORD, else a prompt)',
    },
  },
  details: 'Example:\n  printf %s "$PASSWORD" | mdp login --email me@example.com --password-stdin',
  async run(ctx, values) {
    const email = (values.email as string | undefined) ?? ctx.env.MDP_EMAIL ?? required(values, 'email');
    const client = new ConsoleClient({ url: ctx.endpoints.url });
    const session = await client.login(email, await password(ctx, Boolean(values['password-stdin'])));
    updateConfig(
      { session: { token: session.session_token, expires_at: session.expires_at, email } },
      ctx.env,
    );
    const out = { email, expires_at: session.expires_at, config: configFile(ctx.env) };
    ctx.term.out.write(
      ctx.json
        ? `${JSON.stringify(out)}\n`
        : `logged in as ${email} until ${session.expires_at} (session in ${out.config})\n`,
    );
    return EXIT.ok;
  },
};

export const logoutCommand: Command = {
  path: ['logout'],
  summary: 'Ends the console session and removes it from the config file.',
  options: {},
  async run(ctx) {
    const s = readConfig(ctx.env).session;
    if (s) await new ConsoleClient({ url: ctx.endpoints.url, session: s.token }).logout().catch(() => {});
    updateConfig({ session: undefined }, ctx.env);
    ctx.term.out.write(ctx.json ? `${JSON.stringify({ logged_out: true })}\n` : 'logged out\n');
    return EXIT.ok;
  },
};
