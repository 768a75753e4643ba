/**
 * How a failure reaches the user: one line (two with a hint) on stderr, never a stack trace,
 * and an exit code — 2 for a usage mistake (`InvalidArgumentError`), 4 for a full disk
 * (`DiskFullError`: the crawl stopped cleanly and resumes once space is freed), 1 for anything
 * else that went wrong at run time. `MEGURI_DEBUG=1` adds the stack for bug reports.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CorruptJournalError, CorruptPartitionError, CorruptSettingsError, DiskFullError, InvalidArgumentError, MeguriError } from '../errors/index.js';
import { CHECKPOINT_FILE, PREV_CHECKPOINT_FILE } from '../engine/datadir.js';
import { SETTINGS_FILE } from '../engine/settings.js';
import type { CliIo } from './io.js';

/** Exit codes. */
export const EXIT = {
  ok: 0,
  /** A run-time failure (corrupt file, I/O error, violations in the demo). */
  failure: 1,
  /** A usage mistake: bad flag, missing argument; or every seed refused by the settings. */
  usage: 2,
  /** A crawl that ended without a single page fetched OK in the whole campaign (the summary says why). */
  nothingFetched: 3,
  /**
   * The disk filled (`DiskFullError`): the crawl stopped cleanly at its last good checkpoint;
   * the same command resumes it once space is freed.
   */
  diskFull: 4,
  /**
   * Every host left must wait past `--max-wait` (a Retry-After of a day): the crawl stopped
   * cleanly to be resumed after the time the summary names. 75 is sysexits' EX_TEMPFAIL.
   */
  waiting: 75,
  /** Stopped by SIGINT/SIGTERM after a clean checkpoint (128 + SIGINT). */
  interrupted: 130,
} as const;

/**
 * A failure already worded for the user, with the code of the error behind it: used to put
 * the file name in front of a codec error that does not know which file it was reading.
 */
export class CliFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number,
    readonly hint?: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliFailure';
  }
}

/** Rewords a corrupt-file error to name `path`; other errors pass through unchanged. */
export function inFile(err: unknown, path: string): unknown {
  if (err instanceof CliFailure) return err; // already names its file
  if (err instanceof CorruptPartitionError) {
    // A crawl directory keeping a previous checkpoint resumes from it (src/engine/datadir.ts) unless the resume itself said it cannot.
    const dir = dirname(path);
    const fallback = basename(path) === CHECKPOINT_FILE && !err.message.includes('no fallback:') && existsSync(join(dir, PREV_CHECKPOINT_FILE));
    const hint = err.section === 'header' && /bad magic/.test(err.message)
      ? 'this is not a meguri checkpoint: give the --data directory of a meguri crawl, or its frontier.meguri'
      : fallback
        ? `the checkpoint is damaged: 'meguri crawl --data ${dir}' resumes from the previous one (${PREV_CHECKPOINT_FILE}) and its journals, losing nothing journaled`
        : 'the checkpoint is damaged: restore it from a copy, or start over with a new --data directory';
    return new CliFailure(err.code, `${path}: ${err.message}`, EXIT.failure, hint, { cause: err });
  }
  if (err instanceof CorruptSettingsError) {
    // Only the saved options are unreadable: say so, and that the crawl itself is whole.
    const dir = dirname(err.file);
    const hint =
      `${SETTINGS_FILE} only holds the options the crawl was started with (seeds, scope, --agent, limits, saved flags such as --memory and --warc); ` +
      `the checkpoint, journal and pages are not affected. Move it aside (mv ${err.file} ${err.file}.damaged) and resume giving the seed URLs again ` +
      `(the scope is drawn from them: without them every queued URL is out of scope; 'meguri export ${dir}' lists them at depth 0), ` +
      "--agent (the WARC files' warcinfo records name it) and the other options the crawl was started with: they are saved anew";
    return new CliFailure(err.code, err.message, EXIT.failure, hint, { cause: err });
  }
  if (err instanceof CorruptJournalError) {
    return new CliFailure(err.code, `${path}: corrupt journal: ${err.message}`, EXIT.failure, "the journal is damaged beyond a torn tail, or is not this checkpoint's: move it aside to resume from the last checkpoint (what was fetched after it is fetched again)", { cause: err });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof Error && !(err instanceof MeguriError) && typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return new CliFailure(code, `${path}: ${systemText(err)}`, EXIT.failure, undefined, { cause: err });
  }
  return err;
}

/** A Node system error's message without the syscall noise (`ENOENT: no such file or directory, open '…'`). */
function systemText(err: Error): string {
  const m = /^(E[A-Z]+): ([^,]+)/.exec(err.message);
  return m ? `${m[2]} (${m[1]})` : err.message;
}

/** A system error's path, when Node recorded one. */
function systemPath(err: Error): string | undefined {
  const p = (err as { path?: unknown }).path;
  return typeof p === 'string' ? p : undefined;
}

/** Prints `err` for the user and returns the exit code; `command` names where to look for help. */
export function reportFailure(err: unknown, io: CliIo, command?: string): number {
  const debug = io.env['MEGURI_DEBUG'] === '1';
  const say = (line: string, hint?: string): void => {
    io.stderr.write(`meguri: ${line}\n${hint ? `  ${hint}\n` : ''}`);
    if (debug && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
  };
  if (err instanceof CliFailure) {
    // A system error's code is already in its text: "no such file or directory (ENOENT)".
    say(err.message.endsWith(`(${err.code})`) ? err.message : `${err.message} [${err.code}]`, err.hint);
    return err.exitCode;
  }
  if (err instanceof DiskFullError) {
    say(
      `${err.message} [${err.code}]`,
      `the crawl stopped at its last checkpoint and loses nothing: free space on the device of ${err.file} (or give --memory a larger budget, so less goes to disk), then run the same command again to resume`,
    );
    return EXIT.diskFull;
  }
  if (err instanceof InvalidArgumentError) {
    say(err.message, command === undefined ? "see 'meguri --help'" : `see 'meguri ${command} --help'`);
    return EXIT.usage;
  }
  if (err instanceof MeguriError) {
    say(`${err.message} [${err.code}]`);
    return EXIT.failure;
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    const path = systemPath(err);
    say(`${path === undefined ? '' : `${path}: `}${systemText(err)}`);
    return EXIT.failure;
  }
  const text = err instanceof Error ? err.message : String(err);
  say(`internal error: ${text}`, debug ? undefined : 'this is a bug in meguri; set MEGURI_DEBUG=1 to print the stack trace for a report');
  return EXIT.failure;
}
