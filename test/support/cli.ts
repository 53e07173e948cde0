/**
 * Runs the real `mdp` command line (clients/cli/bin/mdp.js) as a child process: to completion,
 * as a long-running process to signal, or on a pseudo-terminal (`script -qfec`) to see what a
 * person sees (colours, progress bars).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '../../clients/cli/bin/mdp.js');

export type CliResult = { code: number | null; stdout: string; stderr: string };

export type CliProcess = {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<CliResult>;
};

/** A fresh, empty config directory. */
export const freshConfigDir = (): string => mkdtempSync(join(tmpdir(), 'mdp-cli-config-'));

export function startCli(args: string[], env: Record<string, string>, stdin?: string): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, NO_COLOR: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  if (stdin !== undefined) child.stdin?.end(stdin);
  else child.stdin?.end();
  const exited = new Promise<CliResult>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout: out, stderr: err })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

export const runCli = (args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> =>
  startCli(args, env, stdin).exited;

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export type TtyProcess = {
  /** Everything drawn on the terminal so far (stdout and stderr). */
  output(): string;
  /** Sends a signal to `mdp` itself (not to `script`). */
  signal(sig: NodeJS.Signals): void;
  exited: Promise<CliResult>;
};

/** Starts `mdp` on a pseudo-terminal (`script -qfec`; the shell execs node, so it is script's child). */
export function startCliOnTty(args: string[], env: Record<string, string>): TtyProcess {
  const command = `exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<CliResult>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout: out, stderr: '' })),
  );
  return {
    output: () => out,
    signal(sig) {
      const pid = execFileSync('pgrep', ['-P', String(child.pid)])
        .toString()
        .trim()
        .split('\n')[0];
      process.kill(Number(pid), sig);
    },
    exited,
  };
}

/** Runs `mdp` on a pseudo-terminal to completion; resolves with what it drew. */
export const runCliOnTty = (args: string[], env: Record<string, string>): Promise<CliResult> =>
  startCliOnTty(args, env).exited;
