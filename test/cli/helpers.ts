/**
 * Shared pieces of the CLI tests: an in-process `CliIo` that records what a command printed,
 * and a runner for the command as a child process (`node --import tsx test/cli/run.ts`), the
 * way a user runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type CliIo, main } from '../../src/cli/main.js';

export const AGENT = 'meguri/1.0 (+https://example.test/bot)';

/** The runner script and the repository root. */
export const RUN = fileURLToPath(new URL('./run.ts', import.meta.url));
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A `CliIo` whose output is kept in strings. */
export function bufferIo(tty = false): CliIo & { out(): string; err(): string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => (out += s), isTTY: tty },
    stderr: { write: (s: string) => (err += s), isTTY: tty, columns: 120 },
    env: {},
    signals: false,
    out: () => out,
    err: () => err,
  };
}

/** Runs `meguri <argv>` in this process with a buffered `CliIo`: its exit code and what it printed. */
export async function inProcess(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = bufferIo();
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}

/** The end of a child run. */
export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts `meguri <args>` from source as a child process. */
export function startCli(args: readonly string[]): { child: ChildProcess; done: Promise<CliRun>; stdout(): string; stderr(): string } {
  const child = spawn(process.execPath, ['--import', 'tsx', RUN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MEGURI_DEBUG: '' } });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const done = new Promise<CliRun>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, stdout: () => stdout, stderr: () => stderr };
}

/** Runs `meguri <args>` to its end. */
export function runCli(args: readonly string[]): Promise<CliRun> {
  return startCli(args).done;
}

/** A stack trace line, which the user must never see. */
export const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;
