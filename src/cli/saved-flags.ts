/**
 * The crawl command's own flags that are saved with a crawl, so that `meguri crawl --data DIR`
 * alone resumes it as it was started — the engine saves its options itself (settings.ts);
 * these shape the crawl too but live in the CLI: where the WARCs go and what they hide, the
 * headers sent, the proxy and certificates, what is learned and fetched, the memory budget.
 * A resume that silently dropped them wrote a shared WARC's cookies in clear after a
 * Ctrl-C (`--warc-redact`), split one archive over two directories (`--warc`), fetched past a
 * corporate proxy (`--proxy`), or loaded a spilled frontier whole (`--memory`).
 *
 * They are kept in settings.json's `extraSettings` object, each under its flag's name as the
 * texts given (a boolean as `true`), and read back through the flag's own row, so a saved value
 * is checked exactly as a typed one. A flag given on resume overrides its saved value (the change
 * is printed); `--unset FLAG` drops one. Files written before this module keep `resolve` as
 * pairs and `maxLinks` / `maxBody` as numbers; they are read as such.
 *
 * Never saved: secrets — `--cookie`, a seed's user:password, the proxy's user:password, a
 * `--header` whose name says it carries one (Authorization, a token, a key) — each is named on
 * stderr as not saved; and how a run is watched (`--json`, `--interval`, `--log-*`,
 * `--metrics-port`). A cluster node keeps no settings.json (its crawl-wide settings are in Redis),
 * so a node's flags are given at every start.
 */
import { resolve as resolvePath } from 'node:path';
import { InvalidArgumentError } from '../errors/index.js';
import { type ParsedArgs, convertFlag } from './args.js';

/** The `meguri crawl` flags saved in settings.json's `extraSettings`, in the order they are written and printed. */
export const SAVED_FLAGS = [
  'resolve',
  'max-links',
  'max-body',
  'timeout',
  'requisites',
  'no-robots-sitemaps',
  'no-learn-params',
  'no-learn-aliases',
  'no-learn-noindex',
  'no-cookies',
  'no-soft404-probe',
  'header',
  'warc',
  'warc-size',
  'warc-digest',
  'warc-redact',
  'proxy',
  'http2',
  'ca',
  'insecure',
  'memory',
  'checkpoint-every',
  'max-wait',
] as const;

/** A saved flag's name. */
export type SavedFlag = (typeof SAVED_FLAGS)[number];

/** Flags whose text is a path: saved absolute, so a resume from another directory finds the same one. */
const PATH_FLAGS: ReadonlySet<string> = new Set(['warc', 'ca']);

/**
 * A header name that says its value is a secret (credentials, a session, an API key): such a
 * `--header` is sent but never written to settings.json.
 */
export function isSecretHeaderName(name: string): boolean {
  return /auth|token|secret|passw|cookie|session|api-?key|^x-.*key$/i.test(name);
}

/** One saved flag a resume changed: its texts before and after (`undefined`: not set). */
export interface SavedFlagChange {
  readonly flag: SavedFlag;
  readonly from: readonly string[] | true | undefined;
  readonly to: readonly string[] | true | undefined;
}

/** What `resumeFlags` returns. */
export interface ResumedFlags {
  /** The arguments with the saved flags not given filled in (and the `--unset` ones dropped). */
  readonly args: ParsedArgs;
  /** The `extraSettings` object to save: every flag in force, secrets left out. */
  readonly save: Record<string, unknown>;
  /** The saved flags a flag given (or `--unset`) changed; empty for a new crawl. */
  readonly changes: readonly SavedFlagChange[];
  /** Lines for stderr: what was given but is not saved (a secret). */
  readonly notes: readonly string[];
}

/** `extraSettings` as saved, each flag's texts (`true` for a boolean); a value of the wrong shape is refused. */
function savedTexts(extra: Readonly<Record<string, unknown>> | undefined, file: string): Map<SavedFlag, readonly string[] | true> {
  const out = new Map<SavedFlag, readonly string[] | true>();
  if (extra === undefined) return out;
  const damaged = (flag: string): never => {
    throw new InvalidArgumentError(`${file}: the saved --${flag} is damaged (${JSON.stringify(extra[flag])}); give --${flag} again or --unset ${flag}`);
  };
  for (const flag of SAVED_FLAGS) {
    let v = extra[flag];
    // Written before the flags had a module of their own.
    if (v === undefined && flag === 'max-links' && extra['maxLinks'] !== undefined) v = [String(extra['maxLinks'])];
    if (v === undefined && flag === 'max-body' && extra['maxBody'] !== undefined) v = [String(extra['maxBody'])];
    if (v === undefined) continue;
    if (flag === 'resolve' && Array.isArray(v)) v = v.map((p: unknown) => (Array.isArray(p) ? p.join('=') : p));
    if (v === true) out.set(flag, true);
    else if (Array.isArray(v) && v.every((t) => typeof t === 'string')) {
      // An empty --resolve list was written by every crawl before this module: nothing set.
      if (v.length > 0) out.set(flag, v as string[]);
    } else damaged(flag);
  }
  return out;
}

/** A URL (a proxy's, Redis's) without its user:password (or the text as given when it is not a URL: its user says why). */
export function withoutCredentials(proxy: string): { text: string; stripped: boolean } {
  try {
    const u = new URL(proxy);
    if (u.username === '' && u.password === '') return { text: proxy, stripped: false };
    u.username = '';
    u.password = '';
    return { text: u.href, stripped: true };
  } catch {
    return { text: proxy, stripped: false };
  }
}

/**
 * Fills `args` with the flags saved in `extra` (settings.json's `extraSettings`, undefined for a
 * new crawl) that were not given, drops the `--unset` ones, and says what to save now and what
 * changed. `file` names settings.json in messages.
 */
export function resumeFlags(args: ParsedArgs, extra: Readonly<Record<string, unknown>> | undefined, file: string): ResumedFlags {
  const saved = savedTexts(extra, file);
  const unset = new Set<string>();
  for (const name of args.list('unset')) {
    const flag = name.replace(/^--/, '');
    if (!(SAVED_FLAGS as readonly string[]).includes(flag)) {
      throw new InvalidArgumentError(`--unset ${name}: not a saved flag of meguri crawl (the ones it drops: ${SAVED_FLAGS.join(', ')}); give another value to change a crawl setting`);
    }
    if (args.has(flag)) throw new InvalidArgumentError(`--unset ${flag} and --${flag} contradict each other: give one`);
    unset.add(flag);
  }
  const fill = new Map<string, readonly string[]>();
  for (const [flag, texts] of saved) {
    if (args.has(flag) || unset.has(flag)) continue;
    const list = texts === true ? [] : texts;
    // Checked by the flag's own row, as if typed; a value damaged in the file is named as saved.
    const row = args.command.flags.find((f) => f.name === flag)!;
    if (texts === true ? row.kind !== 'boolean' : row.kind === 'boolean') throw new InvalidArgumentError(`${file}: the saved --${flag} is damaged; give --${flag} again or --unset ${flag}`);
    for (const t of list) {
      try {
        convertFlag(row, t);
      } catch (err) {
        throw new InvalidArgumentError(`${file}: the saved --${flag} ${JSON.stringify(t)} is refused (${err instanceof Error ? err.message : String(err)}); give --${flag} again or --unset ${flag}`);
      }
    }
    fill.set(flag, list);
  }
  const filled = args.filled(fill, unset);
  const save: Record<string, unknown> = {};
  const notes: string[] = [];
  const changes: SavedFlagChange[] = [];
  for (const flag of SAVED_FLAGS) {
    let now: readonly string[] | true | undefined = undefined;
    if (filled.has(flag)) now = filled.texts(flag) ?? (filled.flag(flag) ? true : undefined);
    if (now !== undefined && now !== true && args.has(flag)) now = savedForm(flag, now, notes);
    if (now !== undefined) save[flag] = now;
    const was = saved.get(flag);
    if (extra !== undefined && (args.has(flag) || unset.has(flag)) && JSON.stringify(was) !== JSON.stringify(now)) changes.push({ flag, from: was, to: now });
  }
  return { args: filled, save, changes, notes };
}

/** A given flag's texts as saved: paths absolute, the proxy's and headers' secrets left out (with a note). */
function savedForm(flag: SavedFlag, texts: readonly string[], notes: string[]): readonly string[] | undefined {
  if (PATH_FLAGS.has(flag)) return texts.map((t) => resolvePath(t));
  if (flag === 'proxy') {
    return texts.map((t) => {
      const { text, stripped } = withoutCredentials(t);
      if (stripped) notes.push(`--proxy: its user:password is not saved with the crawl (settings.json): give --proxy with them again to resume through ${text}`);
      return text;
    });
  }
  if (flag === 'header') {
    const kept = texts.filter((t) => {
      const name = t.slice(0, Math.max(0, t.indexOf(':'))).trim();
      if (!isSecretHeaderName(name)) return true;
      notes.push(`--header ${name}: not saved with the crawl (its name says it carries a secret): give it again to send it on resume`);
      return false;
    });
    return kept.length > 0 ? kept : undefined;
  }
  return texts;
}

/** A saved flag's texts as the user would read them in a change line. */
export function shownFlag(v: readonly string[] | true | undefined): string {
  if (v === true) return 'on';
  if (v === undefined) return 'not set';
  return v.join(' ');
}
