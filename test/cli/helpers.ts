/**
 * Shared pieces of the CLI tests: an in-process `CliIo` that records what a command printed,
 * a runner for the command as a child process (`node --import tsx test/cli/run.ts`), the
 * way a user runs it, and a small loopback site for a test file's crawls.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
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

/** A loopback HTTP site and a scratch directory for one test file's crawls (`loopbackSite`). */
export interface LoopbackSite {
  /** `http://127.0.0.1:PORT`, set before the file's tests run. */
  base: string;
  /** A new temporary directory, removed after the file's tests. */
  dir: string;
}

/**
 * Serves `handler` on a random loopback port and makes a temporary directory (named from
 * `prefix`) before the calling file's tests; closes and removes both after them.
 */
export function loopbackSite(prefix: string, handler: RequestListener): LoopbackSite {
  const site: LoopbackSite = { base: '', dir: '' };
  let server: Server | undefined;
  beforeAll(async () => {
    const s = createServer(handler);
    server = s;
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    site.base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    site.dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    const s = server;
    if (s !== undefined) await new Promise((r) => s.close(r));
    if (site.dir !== '') rmSync(site.dir, { recursive: true, force: true });
  });
  return site;
}

/** The `end` event of a `meguri crawl --json` run's stdout (one JSON object a line), read as `T`; undefined when there is none. */
export function jsonEnd<T>(out: string): T | undefined {
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T & { type: string })
    .find((e) => e.type === 'end');
}

/** A fast polite crawl of a loopback site: the test agent, private addresses allowed, 2 ms delays, no recrawl within the run. */
export const LOOPBACK_CRAWL = ['--agent', AGENT, '--allow-private', '--min-delay', '2ms', '--start-delay', '2ms', '--interval', '1h'];

const SYLLABLES = ['ka', 'lo', 'mi', 'tu', 're', 'san', 'vo', 'pel', 'dri', 'gan', 'shu', 'ter', 'bix', 'nor', 'qua', 'zel'];

/** `n` made-up words of their own for item `seed` (a linear congruential stream: the same every run), so pages' texts differ. */
export function words(seed: number, n: number): string {
  let x = seed * 7919 + 17;
  const next = (): number => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: n }, () => Array.from({ length: 2 + Math.floor(next() * 2) }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]).join('')).join(' ');
}
