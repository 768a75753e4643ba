/**
 * What the CLI talks to: two output streams and the environment. `main` takes them as a
 * parameter so tests can run commands in-process and read what they printed; the default is
 * the real process.
 */

import { statSync } from 'node:fs';
import { InvalidArgumentError } from '../errors/index.js';
import { directoryProblem } from '../format/file.js';

/**
 * `path` for `--flag`: a directory, or one that can be made (checked with one non-recursive
 * probe, never Node's recursive mkdir, which spins on /proc). Throws InvalidArgumentError
 * (exit 2) with the reason otherwise.
 */
export function directoryFlag(flag: string, path: string): string {
  let isFile = false;
  try {
    isFile = !statSync(path).isDirectory();
  } catch {
    // missing (or unreadable): the probe below says whether it can be made
  }
  if (isFile) throw new InvalidArgumentError(`--${flag}: ${JSON.stringify(path)} is a file, expected a directory`);
  const problem = directoryProblem(path);
  if (problem !== undefined) throw new InvalidArgumentError(`--${flag}: cannot create directory ${JSON.stringify(path)}: ${problem}`);
  return path;
}

/** A text sink (process.stdout / process.stderr, or a test buffer). */
export interface TextOut {
  write(text: string): unknown;
  /** True for a terminal (live status block, not log lines). */
  readonly isTTY?: boolean | undefined;
  /** Terminal width, when a terminal. */
  readonly columns?: number | undefined;
}

/** The CLI's surroundings. */
export interface CliIo {
  readonly stdout: TextOut;
  readonly stderr: TextOut;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Install SIGINT/SIGTERM handlers during a crawl (the real process only). */
  readonly signals: boolean;
}

/**
 * SIGINT/SIGTERM for the length of one command that must not die half-way (a crawl, the
 * demo). From `open` to `close` a signal never takes the default action (killing the
 * process): it goes to the handler `route` set — the crawl's graceful stop — or, while none
 * is set (the crawl has ended and the command is closing files and printing its summary), to
 * `idle`, which only says what is going on (the third such signal gets the default action
 * after all, in case closing hangs). A no-op unless `io.signals`.
 */
export class SignalHub {
  #handler: ((signal: NodeJS.Signals) => void) | undefined;
  #off: (() => void) | undefined;

  private constructor(private readonly idle: (signal: NodeJS.Signals) => void) {}

  /** Starts holding the signals (when `io.signals`). */
  static open(io: CliIo, idle: (signal: NodeJS.Signals) => void): SignalHub {
    const hub = new SignalHub(idle);
    if (io.signals) {
      let idle = 0;
      const listener = (signal: NodeJS.Signals): void => {
        if (hub.#handler !== undefined) return hub.#handler(signal);
        // Closing should take moments; if it hangs, a third signal still ends the process.
        if (++idle >= 3) {
          hub.close();
          process.kill(process.pid, signal);
          return;
        }
        hub.idle(signal);
      };
      process.on('SIGINT', listener);
      process.on('SIGTERM', listener);
      hub.#off = () => {
        process.off('SIGINT', listener);
        process.off('SIGTERM', listener);
      };
    }
    return hub;
  }

  /** Sends signals to `handler` (undefined: back to `idle`). */
  route(handler: ((signal: NodeJS.Signals) => void) | undefined): void {
    this.#handler = handler;
  }

  /** Gives the signals back their default action. Idempotent. */
  close(): void {
    this.#off?.();
    this.#off = undefined;
    this.#handler = undefined;
  }
}

let guarded = false;

/** The real process's streams and environment. */
export function processIo(): CliIo {
  // A reader that goes away (`meguri export … | head`) is not an error worth a stack trace:
  // stop quietly, as Unix tools do.
  if (!guarded) {
    guarded = true;
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      process.stderr.write(`meguri: stdout: ${err.message}\n`);
      process.exit(1);
    });
  }
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, signals: true };
}

/** `1234567` → `1,234,567`. */
export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Bytes for people: `812 B`, `14.2 KiB`, `3.1 MiB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  // 1023.6 KiB would show as 1024 KiB: a value that rounds to 1024 moves up a unit too.
  while (v >= 1023.5 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 99.95 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** Seconds for people: `42 s`, `3 min 05 s`, `2 h 10 min`. */
export function seconds(s: number): string {
  if (!Number.isFinite(s)) return '∞';
  // Rounded once, to the unit shown, before it is split: 119.6 s is 2 min 00 s, not 1 min 60 s.
  if (s < 9.95) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  const minutes = Math.round(s / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** Left-aligned columns with two spaces between them (the last column is not padded). */
export function table(rows: readonly (readonly string[])[], rightAlign: ReadonlySet<number> = new Set()): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 && !rightAlign.has(i) ? c : rightAlign.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
