/**
 * The command line's flag tables and their one parser.
 *
 * Each command declares its flags as rows (name, kind, range, help); `parseCommand` splits
 * argv with `node:util`'s `parseArgs` (strict: unknown flags are errors) and then converts
 * and checks every value by its row, so the help text, the parsing and the messages all come
 * from the same table and cannot drift apart. Every failure is an `InvalidArgumentError`
 * naming the flag and the value received; the CLI maps it to exit code 2.
 */
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { parseArgs } from 'node:util';
import { InvalidArgumentError } from '../errors/index.js';
import { userAgentProblem } from '../fetch/robots.js';

/** How a flag's text becomes a value. */
export type FlagKind =
  /** Present or absent. */
  | 'boolean'
  /** Any non-empty text (paths, host names). */
  | 'string'
  /** A whole number in [min, max]. */
  | 'integer'
  /** A decimal number in [min, max] (min exclusive when `above` is set). */
  | 'number'
  /** `250ms`, `2s`, `1.5m`, `1h`; a bare number is seconds. Yields milliseconds. */
  | 'duration'
  /** `4096`, `512K`, `100M`, `1G` (powers of 1024). Yields bytes. */
  | 'size'
  /** One of `choices`. */
  | 'choice'
  /** A User-Agent starting with product/version (`MyBot/1.0 …`). */
  | 'agent'
  /** `NAME=IP` (a host name and an IPv4 or IPv6 address). */
  | 'mapping';

/** One row of a command's flag table. */
export interface FlagSpec {
  /** Long name without the dashes. */
  readonly name: string;
  readonly kind: FlagKind;
  /** One line for `--help`. */
  readonly help: string;
  /** Placeholder shown in help (`N`, `DIR`, …). */
  readonly arg?: string;
  readonly min?: number;
  readonly max?: number;
  /** For `number`: the value must be strictly above this. */
  readonly above?: number;
  readonly choices?: readonly string[];
  /** May be given several times (values collect into a list). */
  readonly multiple?: boolean;
  /** Must be given; the text says why or gives an example. */
  readonly required?: string;
}

/** A command's name, positionals and flag table. */
export interface CommandSpec {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Positionals as they appear in the usage line (`[URL…]`, `DIR`). */
  readonly usage: string;
  readonly minPositionals: number;
  readonly maxPositionals: number;
  /** Describes a missing positional. */
  readonly positionalHelp?: string;
  readonly flags: readonly FlagSpec[];
  /** Extra paragraphs for `--help`. */
  readonly notes?: readonly string[];
}

/** A converted flag value. */
export type FlagValue = boolean | string | number | readonly string[] | readonly (readonly [string, string])[];

/** The parsed command line of one command. */
export class ParsedArgs {
  constructor(
    /** The command it was parsed for. */
    readonly command: CommandSpec,
    readonly positionals: readonly string[],
    private readonly values: ReadonlyMap<string, FlagValue>,
    /** `--help` was given. */
    readonly help: boolean,
    /** The texts of each valued flag, as given (every occurrence). */
    private readonly given: ReadonlyMap<string, readonly string[]> = new Map(),
  ) {}

  /** The texts a valued flag was given with (each occurrence, unconverted), or undefined when absent or boolean. */
  texts(name: string): readonly string[] | undefined {
    return this.given.get(this.known(name));
  }

  /**
   * These arguments with each flag of `fill` that was not given taken as if it had been
   * (a resume's saved flags: its texts are converted and checked by the flag's row as given
   * ones are; a boolean's texts are empty), and each flag of `drop` as if it had not.
   */
  filled(fill: ReadonlyMap<string, readonly string[]>, drop: ReadonlySet<string> = new Set()): ParsedArgs {
    const values = new Map(this.values);
    const given = new Map(this.given);
    for (const name of drop) {
      values.delete(this.known(name));
      given.delete(name);
    }
    for (const [name, texts] of fill) {
      const f = this.command.flags.find((x) => x.name === name);
      if (f === undefined) throw new Error(`internal: ${this.command.name} has no flag --${name}`);
      if (values.has(name) || drop.has(name)) continue;
      if (f.kind === 'boolean') {
        values.set(name, true);
        continue;
      }
      values.set(name, flagValue(f, texts));
      given.set(name, texts);
    }
    return new ParsedArgs(this.command, this.positionals, values, this.help, given);
  }

  /** Whether `name` was given. */
  has(name: string): boolean {
    return this.values.has(name);
  }

  /** A boolean flag. */
  flag(name: string): boolean {
    return this.values.get(this.known(name)) === true;
  }

  /** A text flag (`string`, `choice`, `agent`), or undefined. */
  text(name: string): string | undefined {
    const v = this.values.get(this.known(name));
    return typeof v === 'string' ? v : undefined;
  }

  /** A numeric flag (`integer`, `number`, `duration` in ms, `size` in bytes), or undefined. */
  number(name: string): number | undefined {
    const v = this.values.get(this.known(name));
    return typeof v === 'number' ? v : undefined;
  }

  /** Every value of a repeatable text flag. */
  list(name: string): readonly string[] {
    const v = this.values.get(this.known(name));
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as readonly string[]) : [];
  }

  /** Every `NAME=IP` pair of a repeatable `mapping` flag. */
  pairs(name: string): readonly (readonly [string, string])[] {
    const v = this.values.get(this.known(name));
    return Array.isArray(v) ? (v as readonly (readonly [string, string])[]).filter((x): x is readonly [string, string] => Array.isArray(x)) : [];
  }

  private known(name: string): string {
    if (!this.command.flags.some((f) => f.name === name)) throw new Error(`internal: ${this.command.name} has no flag --${name}`);
    return name;
  }
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNIT_BYTES: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `250ms`, `2s`, `1.5m`, `1h`, or a bare number of seconds → milliseconds (undefined when malformed). */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?$/i.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[(m[2] ?? 's').toLowerCase()]!;
}

/** `4096`, `512K`, `100M`, `1.5G` (with an optional trailing `B`/`iB`) → bytes (undefined when malformed). */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?$/i.exec(text.trim());
  if (!m) return undefined;
  return Math.floor(Number(m[1]) * UNIT_BYTES[m[2]!.toLowerCase()]!);
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i;

function rangeText(f: FlagSpec): string {
  const parts: string[] = [];
  if (f.above !== undefined) parts.push(`> ${f.above}`);
  if (f.min !== undefined) parts.push(`>= ${f.min}`);
  if (f.max !== undefined) parts.push(`<= ${f.max}`);
  return parts.join(' and ');
}

function expectsText(f: FlagSpec): string {
  const range = rangeText(f);
  switch (f.kind) {
    case 'boolean':
      return 'no value';
    case 'string':
      return 'a non-empty value';
    case 'integer':
      return `a whole number${range ? ` ${range}` : ''}`;
    case 'number':
      return `a number${range ? ` ${range}` : ''}`;
    case 'duration':
      return `a duration such as 250ms, 2s or 1m (a bare number is seconds)${range ? `, ${range.replace(/\d+(\.\d+)?/g, (n) => `${n} ms`)}` : ''}`;
    case 'size':
      return `a size such as 512K, 100M or 1G${range ? `, ${range} bytes` : ''}`;
    case 'choice':
      return `one of ${(f.choices ?? []).join(', ')}`;
    case 'agent':
      return 'a User-Agent starting with product/version, e.g. "MyBot/1.0 (+https://example.com/bot)"';
    case 'mapping':
      return 'NAME=IP, e.g. intranet.example=10.0.0.7';
  }
}

function inRange(f: FlagSpec, v: number): boolean {
  if (f.above !== undefined && !(v > f.above)) return false;
  if (f.min !== undefined && v < f.min) return false;
  if (f.max !== undefined && v > f.max) return false;
  return true;
}

/** Converts one flag's text by its row; throws `InvalidArgumentError` naming the flag. */
export function convertFlag(f: FlagSpec, raw: string): string | number | readonly [string, string] {
  const bad = (): never => {
    throw new InvalidArgumentError(`--${f.name}: expected ${expectsText(f)}, received ${JSON.stringify(raw)}`);
  };
  const text = raw.trim();
  switch (f.kind) {
    case 'boolean':
      return bad();
    case 'string':
      return text === '' ? bad() : raw;
    case 'integer': {
      if (!/^\d+$/.test(text)) return bad();
      const v = Number(text);
      return Number.isSafeInteger(v) && inRange(f, v) ? v : bad();
    }
    case 'number': {
      if (!/^(\d+(\.\d+)?|\.\d+)$/.test(text)) return bad();
      const v = Number(text);
      return Number.isFinite(v) && inRange(f, v) ? v : bad();
    }
    case 'duration': {
      const v = parseDuration(text);
      return v !== undefined && Number.isFinite(v) && inRange(f, v) ? v : bad();
    }
    case 'size': {
      const v = parseSize(text);
      return v !== undefined && Number.isSafeInteger(v) && inRange(f, v) ? v : bad();
    }
    case 'choice':
      return (f.choices ?? []).includes(text) ? text : bad();
    case 'agent': {
      // Product/version first (RFC 9110 §10.1.5); robots.txt groups match the product token;
      // header-safe text throughout, or every request would fail locally.
      const problem = userAgentProblem(raw);
      // A product token followed by text a header cannot carry: say which character.
      if (problem !== undefined && /^\s*[A-Za-z_-]/.test(raw)) throw new InvalidArgumentError(`--${f.name}: ${JSON.stringify(raw)}: ${problem}`);
      return problem === undefined && /^\s*[A-Za-z_-]+\/[^\s/]+/.test(raw) ? raw.trim() : bad();
    }
    case 'mapping': {
      const eq = text.indexOf('=');
      if (eq <= 0) return bad();
      const given = text.slice(0, eq).toLowerCase().replace(/\.$/, '');
      // An internationalized name (bücher.example) is looked up by its ASCII form, as the
      // crawl's URLs name it after canonicalization (xn--bcher-kva.example).
      const name = /[^\x00-\x7f]/.test(given) ? domainToASCII(given) : given;
      let ip = text.slice(eq + 1);
      if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
      return HOST_NAME.test(name) && isIP(ip) !== 0 ? ([name, ip] as const) : bad();
    }
  }
}

/**
 * Parses `argv` (the words after the command name) against `spec`. Throws
 * `InvalidArgumentError` for an unknown flag, a flag without its value, a bad value, a
 * missing required flag, or the wrong number of positionals — unless `--help` was given, in
 * which case only the split is checked.
 */
export function parseCommand(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  // Every valued flag is collected as a list, so a repeated one has each of its values
  // checked (the last one given wins), not only the last.
  for (const f of spec.flags) options[f.name] = f.kind === 'boolean' ? { type: 'boolean' } : { type: 'string', multiple: true };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageFromParseArgs(spec, err, argv);
  }
  const help = parsed.values['help'] === true;
  const values = new Map<string, FlagValue>();
  const given = new Map<string, readonly string[]>();
  for (const f of spec.flags) {
    const v = parsed.values[f.name];
    if (v === undefined) continue;
    if (f.kind === 'boolean') {
      values.set(f.name, v === true);
      continue;
    }
    if (help) continue;
    const texts = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
    values.set(f.name, flagValue(f, texts));
    given.set(f.name, texts);
  }
  const positionals = parsed.positionals;
  if (!help) {
    for (const f of spec.flags) {
      if (f.required !== undefined && !values.has(f.name)) throw new InvalidArgumentError(`${spec.name}: --${f.name} is required (${f.required})`);
    }
    if (positionals.length < spec.minPositionals) {
      throw new InvalidArgumentError(`${spec.name}: missing ${spec.positionalHelp ?? spec.usage} (usage: meguri ${spec.name} ${spec.usage})`);
    }
    if (positionals.length > spec.maxPositionals) {
      const extra = positionals.slice(spec.maxPositionals);
      throw new InvalidArgumentError(`${spec.name}: unexpected argument ${JSON.stringify(extra[0])} (usage: meguri ${spec.name} ${spec.usage})`);
    }
  }
  return new ParsedArgs(spec, positionals, values, help, given);
}

/** A valued flag's value from its texts: a list for a repeatable flag, else the last one (each checked). */
function flagValue(f: FlagSpec, texts: readonly string[]): FlagValue {
  if (f.multiple) {
    const out = texts.map((t) => convertFlag(f, t));
    return f.kind === 'mapping' ? (out as (readonly [string, string])[]) : out.map(String);
  }
  const all = texts.map((t) => convertFlag(f, t));
  return (all[all.length - 1] ?? convertFlag(f, '')) as string | number;
}

function usageFromParseArgs(spec: CommandSpec, err: unknown, argv: readonly string[]): InvalidArgumentError {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  const quoted = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  const flag = spec.flags.find((f) => `--${f.name}` === quoted);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return new InvalidArgumentError(`${spec.name}: unknown option ${quoted ?? message}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) {
    if (flag.kind === 'boolean') return new InvalidArgumentError(`--${flag.name} takes no value`);
    const at = argv.indexOf(`--${flag.name}`);
    const next = at >= 0 ? argv[at + 1] : undefined;
    // A negative number (`--limit -1`) is taken for an option by parseArgs: say what it got.
    if (next !== undefined && /^-[\d.]/.test(next)) return new InvalidArgumentError(`--${flag.name}: expected ${expectsText(flag)}, received ${JSON.stringify(next)}`);
    return new InvalidArgumentError(`--${flag.name} needs a value: ${flag.kind === 'string' ? (flag.arg ?? 'VALUE') : expectsText(flag)}`);
  }
  return new InvalidArgumentError(`${spec.name}: ${message}`);
}

/** The `--help` text of a command, generated from its table. */
export function commandHelp(spec: CommandSpec): string {
  const rows = spec.flags.map((f) => {
    const left = `--${f.name}${f.kind === 'boolean' ? '' : ` ${f.arg ?? 'VALUE'}`}`;
    const extra = [f.required !== undefined ? 'required' : '', f.multiple ? 'repeatable' : ''].filter(Boolean).join(', ');
    return [left, `${f.help}${extra ? ` (${extra})` : ''}`] as const;
  });
  rows.push(['--help', 'this text']);
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  const lines = [`Usage: meguri ${spec.name} ${spec.usage}`.trimEnd(), '', spec.summary, '', 'Options:'];
  for (const [l, r] of rows) lines.push(`  ${l.padEnd(width)}${r}`);
  for (const n of spec.notes ?? []) lines.push('', n);
  return `${lines.join('\n')}\n`;
}
