/**
 * `mdp`: the command line. Finds the command, parses its options, runs it with Ctrl-C / SIGTERM
 * wired to a clean stop, and turns every failure into a message on stderr and an exit code
 * (exit-codes.ts). Secrets (the API key, the session) are never printed.
 */
import { CLIENT_VERSION, isMdpError } from '@mdp/client';
import { type Command, type Ctx, commandHelp, parseCommandLine, resolveEndpoints } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { CliError, EXIT, EXIT_CODES_HELP, exitCodeOf, UsageError } from './exit-codes.ts';
import { makeTerm, type Term } from './term.ts';

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(' ').length));
  const rows = COMMANDS.map(
    (c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary.split(/[.:(]/)[0]?.trim()}`,
  );
  return `mdp ${CLIENT_VERSION}: the market-data platform's command line

Usage: mdp <command> [options]   (mdp <command> --help for its options)

Commands:
${rows.join('\n')}

Environment:
  MDP_API_KEY      API key (else the config file's api_key); never printed
  MDP_URL          {base_url} (default http://127.0.0.1:8080)
  MDP_STREAM_URL   unified stream edge (default http://127.0.0.1:8081)
  MDP_RPC_URL      JSON-RPC edge, for mdp bars (default http://127.0.0.1:8545)
  MDP_CONFIG_DIR   config directory (default $XDG_CONFIG_HOME/mdp or ~/.config/mdp)
  MDP_EMAIL, MDP_PASSWORD   for mdp login
  NO_COLOR         no colours (colours are only ever used on a terminal)

${EXIT_CODES_HELP}
`;
}

/** The longest command path matching the arguments, and the arguments after it. */
function findCommand(argv: string[]): { cmd: Command | null; rest: string[]; group: string | null } {
  for (const depth of [2, 1]) {
    const cmd = COMMANDS.find((c) => c.path.length === depth && c.path.every((p, i) => argv[i] === p));
    if (cmd) return { cmd, rest: argv.slice(depth), group: null };
  }
  const group = COMMANDS.some((c) => c.path.length === 2 && c.path[0] === argv[0])
    ? (argv[0] as string)
    : null;
  return { cmd: null, rest: argv.slice(1), group };
}

function groupHelp(group: string): string {
  const cmds = COMMANDS.filter((c) => c.path[0] === group);
  return `Usage: mdp ${group} <${cmds.map((c) => c.path[1]).join('|')}> [options]\n\n${cmds
    .map((c) => `  ${(c.path[1] as string).padEnd(8)} ${c.summary}`)
    .join('\n')}\n`;
}

function describe(err: unknown, term: Term): string {
  const c = term.errColor;
  if (err instanceof UsageError) return `${c.red('error:')} ${err.message}`;
  if (isMdpError(err)) {
    const where = [
      err.status ? `HTTP ${err.status}` : null,
      err.requestId ? `request ${err.requestId}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    const field = err.details?.field ? ` (field ${String(err.details.field)})` : '';
    return `${c.red(`error: ${err.code}:`)} ${err.message}${field}${where ? c.dim(` [${where}]`) : ''}`;
  }
  return `${c.red('error:')} ${err instanceof Error ? err.message : String(err)}`;
}

export async function main(argv: string[], term: Term, env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    term.out.write(mainHelp());
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (argv[0] === '--version' || argv[0] === '-v') {
    term.out.write(`mdp ${CLIENT_VERSION}\n`);
    return EXIT.ok;
  }
  const { cmd, rest, group } = findCommand(argv);
  if (!cmd) {
    if (group && (rest.length === 0 || rest[0] === '--help' || rest[0] === '-h')) {
      term.out.write(groupHelp(group));
      return rest.length === 0 ? EXIT.usage : EXIT.ok;
    }
    term.err.write(
      `${describe(new UsageError(`unknown command: ${argv.slice(0, group ? 2 : 1).join(' ')}`), term)}\nrun mdp --help for the list\n`,
    );
    return EXIT.usage;
  }
  const stopper = new AbortController();
  let stopSignal: 'SIGINT' | 'SIGTERM' | null = null;
  const onSignal = (sig: 'SIGINT' | 'SIGTERM') => {
    if (stopSignal) process.exit(sig === 'SIGINT' ? EXIT.interrupted : EXIT.terminated); // a second one: now
    stopSignal = sig;
    stopper.abort();
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    const { values, positionals } = parseCommandLine(cmd, rest);
    if (values.help) {
      term.out.write(commandHelp(cmd));
      return EXIT.ok;
    }
    const ctx: Ctx = {
      term,
      env,
      signal: stopper.signal,
      stopCode: () => (stopSignal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted),
      endpoints: resolveEndpoints(values, env),
      json: Boolean(values.json),
      stdin: process.stdin,
    };
    return await cmd.run(ctx, values, positionals);
  } catch (err) {
    // Stopped by a signal: the failure is the interruption itself, unless the command explained it.
    if (stopSignal && !(err instanceof UsageError) && !(err instanceof CliError))
      return stopSignal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
    term.err.write(`${describe(err, term)}\n`);
    if (err instanceof UsageError) term.err.write(`usage: see mdp ${cmd.path.join(' ')} --help\n`);
    return exitCodeOf(err);
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

const code = await main(process.argv.slice(2), makeTerm(process.stdout, process.stderr), process.env);
// Let stdout drain (pipes) before leaving.
process.stdout.write('', () => process.exit(code));
