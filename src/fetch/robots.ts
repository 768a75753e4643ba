/**
 * The robots.txt matcher (RFC 9309): parse a file once, then answer "may this agent fetch
 * this URL?" and "what Crawl-delay applies?". Pure and browser-safe — no I/O, no clock — so
 * users can test their own robots.txt with exactly the code the crawler runs. Fetching,
 * caching and failure policy live in `robots-cache.ts`; the matching core (normalization, the
 * longest match, the query-order check) in `robots-match.ts`, whose public names this module
 * re-exports.
 *
 * Why our own matcher rather than the `robots-parser` package: measured against the RFC
 * (test/fetch/robots.test.ts, "robots-parser disagreements"), robots-parser keys groups by
 * the exact lowercased user-agent text, so `MyBot (+https://…)` and `User-agent: MyBot
 * Images` find no group; it compares percent-encoding only by hex case, so `/%7Ejoe` escapes
 * `Disallow: /~joe` and `/%62%61%7A` escapes `/baz`; it treats `%2A`/`%24` in a pattern as
 * unable to match a literal `*`/`$`; it lets a Sitemap line split a run of user-agent lines;
 * it sends an agent whose group has no rules (§5.1's quxbot) to the `*` group; it does not
 * allow /robots.txt implicitly; it has no parse limit. Fixing those on top of it
 * would have replaced every layer but its 40-line wildcard matcher, so the whole matcher is
 * here, and robots-parser serves as a differential oracle in the tests on the inputs where
 * the two must agree.
 *
 * Behaviour, section by section of RFC 9309:
 * - §2.2.1 groups: one or more user-agent lines, then rules; a user-agent line after a rule
 *   starts a new group. The product token of a user-agent line is its leading run of
 *   `[A-Za-z_-]` (so `Googlebot/2.1` and `Googlebot Images` both name `googlebot`); a line
 *   starting with `*` names the global group. The crawler's own token is extracted the same
 *   way from the agent string it passes, so a full User-Agent header works too. Matching is
 *   case-insensitive and exact. Every group naming the token is merged; with none, every `*`
 *   group is merged; with neither, nothing is disallowed.
 * - §2.2.2 rules: the longest matching pattern (in octets, after normalization) decides;
 *   an allow wins a tie; no match allows; the `/robots.txt` URI itself is always allowed (with
 *   a query it is another URI, decided by the rules); empty patterns are ignored; rules before
 *   the first user-agent line are ignored.
 * - Query order (ours, not the RFC's): the crawler fetches the sorted query canonicalization
 *   makes, not the order the site linked and wrote its rules for. So a URL whose own form is
 *   allowed and whose query has two or more `&`-separated parameters is also decided with each
 *   of its first 32 parameters moved to the front (not one whose key repeats the key before it:
 *   the sort keeps repeated keys in their linked order), and is disallowed when such an order
 *   is decided by a Disallow naming `?` or `&` that does not match the URL's own form — a rule
 *   that matches the own form was already outweighed there by a longer Allow (see
 *   `linkedOrderDisallow` for the reasoning, the price and the gaps; past `ORDER_RULES_MAX`
 *   query rules that could decide an order, the URL is judged on its own form alone).
 * - Percent-encoding, applied identically to patterns and to the URL's path and query before
 *   comparison (§2.2.2): `%xx` hex is uppercased; an escaped unreserved character (`A-Z a-z 0-9
 *   - . _ ~`) is decoded; other escapes (reserved characters, non-ASCII bytes) stay encoded;
 *   non-ASCII, controls and space are encoded as UTF-8; a stray `%` becomes `%25`; the raw
 *   printable characters the URL layer may encode (`"` `'` `<` `>` `[` `\` `]` `^` `` ` ``
 *   `{` `|` `}`: see `ALWAYS_ENCODED`) are encoded, so `Disallow: /a|b` matches the `/a%7Cb`
 *   that is fetched. In the URL a literal `*` or `$` is encoded (`%2A`, `%24`) so a pattern can
 *   name it only in encoded form (§2.2.3), and a `$` inside a pattern (not at its end) is
 *   likewise literal. Any other reserved character and its escape stay distinct (`/` ≠ `%2F`),
 *   as RFC 3986 §6.2.2.2 requires — the RFC's `https%3A%2F%2Ffoo.bar` table row is read as "an
 *   encoded reserved character keeps its encoding", not as a rule that raw reserved characters
 *   get encoded; no URL parser or canonicalizer meguri uses encodes those, so a server never
 *   sees one form where a rule names the other.
 * - §2.2.3 special characters: `*` matches any run of octets (including `/`), `$` at the end
 *   of a pattern anchors it to the end of the path-and-query, `#` starts a comment.
 * - §2.2.4 other records: Sitemap lines are collected (absolute http(s) URLs) and never end
 *   a group. Crawl-delay is a group member, as every crawler that honours it reads it, and
 *   so ends a run of user-agent lines like a rule does (the one interpretation the RFC leaves
 *   open: otherwise `User-agent: *`, `Crawl-delay: 5`, `User-agent: BadBot`, `Disallow: /`
 *   would disallow everyone). Keys are case-insensitive; the common misspellings
 *   `useragent`, `user agent`, `dissallow`, `dissalow`, `disalow`, `crawldelay` are accepted.
 * - §2.3.1.5 parsing errors ("try to parse each line … use the parseable rules"): a line whose
 *   colon is missing after a known key (`user-agent FooBot`, `disallow /`, `crawl-delay 5`,
 *   `sitemap https://…`) is read as if the colon were there, provided it is exactly two words
 *   separated by spaces or tabs — Google's parser (google/robotstxt) accepts the same lines, and
 *   the author plainly meant a rule, so obeying it is the polite reading. A longer line
 *   (`Disallow all robots`) is prose and stays ignored, as in Google's parser. Unlike Google's,
 *   a colon inside the value does not hide the key (`Disallow /a:b`, `Sitemap https://…` are
 *   read; Google splits them at that colon and drops them). robots-parser ignores every
 *   colon-less line. With the colon present nothing changes: keys and values are read as above.
 * - §2.5 limits: only the first 500 KiB (512 000 bytes) of UTF-8 are parsed; a line cut by
 *   the limit is dropped rather than read as a shorter pattern. A leading BOM is skipped;
 *   CR, LF and CRLF all end lines; binary input parses to whatever lines are well formed.
 */
import { InvalidArgumentError } from '../errors/index.js';
import {
  type CompiledRule,
  type RobotsDecision,
  type RuleSet,
  compileRule,
  decidePath,
  isRobotsFilePath,
  normalizeRobotsPath,
  ruleMatches,
  ruleSet,
} from './robots-match.js';

export { QUERY_ORDERS_MAX, type RobotsDecision, type RobotsRule, normalizeRobotsPath } from './robots-match.js';

/** RFC 9309 §2.5: the parser must read at least 500 KiB; it reads exactly that much. */
export const ROBOTS_PARSE_LIMIT_BYTES = 500 * 1024;

interface Group {
  readonly agents: string[];
  readonly rules: CompiledRule[];
  crawlDelay: number | undefined;
}

interface MergedGroup extends RuleSet {
  readonly crawlDelay: number | undefined;
}

const NO_RULES: MergedGroup = Object.freeze({ rules: [], queryAt: [], crawlDelay: undefined });
const utf8 = new TextEncoder();

/** Whether a single robots.txt pattern (as written in the file) matches a URL path-and-query. */
export function robotsPatternMatches(pattern: string, pathAndQuery: string): boolean {
  return ruleMatches(compileRule(pattern, false, 0), normalizeRobotsPath(pathAndQuery, false));
}

const TOKEN_CHAR = /^[A-Za-z_-]+/;

/**
 * The product token of an agent string: its leading run of letters, `_` and `-`
 * (`MyBot/1.0 (+https://example.com/bot)` → `MyBot`). Throws when there is none.
 */
export function productToken(agent: string): string {
  if (typeof agent !== 'string') {
    throw new InvalidArgumentError(`robots agent: expected a product token string, received ${typeof agent}`);
  }
  const m = TOKEN_CHAR.exec(agent.trim());
  if (!m) {
    throw new InvalidArgumentError(
      `robots agent: expected a string starting with a product token ([A-Za-z_-]+), received ${JSON.stringify(agent)}`,
    );
  }
  return m[0];
}

/** Whether `value` is an agent string with a product token at its start (options validation). */
export function isAgentString(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_CHAR.test(value.trim());
}

/** A character a header value may not carry (anything but visible ASCII, space and tab). */
const NOT_HEADER_TEXT = /[^\t\x20-\x7e]/u;

/**
 * Why `value` cannot be sent as a User-Agent, or undefined when it can: it must start with a
 * product token, and — being an HTTP header value — hold only visible ASCII, spaces and tabs.
 * RFC 9110 §5.5 tolerates obs-text (0x80–0xFF) in field values only as opaque legacy bytes,
 * and anything past U+00FF cannot be sent at all: undici refuses every request locally, which
 * is how a non-ASCII agent once made a whole crawl report "robots.txt unreachable" (issue 23).
 */
export function userAgentProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `not a string (${typeof value})`;
  if (!TOKEN_CHAR.test(value.trim())) return 'it must start with a product token ([A-Za-z_-]+)';
  const bad = NOT_HEADER_TEXT.exec(value);
  if (bad !== null) {
    const c = bad[0];
    const code = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const shown = /[\p{L}\p{N}\p{P}\p{S}]/u.test(c) ? `"${c}" (${code})` : code;
    return `character ${shown} at index ${bad.index} is not visible ASCII; a User-Agent is an HTTP header value (RFC 9110 §5.5)`;
  }
  return undefined;
}

/** The token a user-agent line names: `*`, a lowercased product token, or '' (matches nothing). */
function lineAgent(value: string): string {
  if (value.startsWith('*')) return '*';
  const m = TOKEN_CHAR.exec(value);
  return m ? m[0].toLowerCase() : '';
}

type Key = 'user-agent' | 'allow' | 'disallow' | 'crawl-delay' | 'sitemap';

const KEYS: ReadonlyMap<string, Key> = new Map<string, Key>([
  ['user-agent', 'user-agent'],
  ['useragent', 'user-agent'],
  ['user agent', 'user-agent'],
  ['allow', 'allow'],
  ['disallow', 'disallow'],
  ['dissallow', 'disallow'],
  ['dissalow', 'disallow'],
  ['disalow', 'disallow'],
  ['crawl-delay', 'crawl-delay'],
  ['crawldelay', 'crawl-delay'],
  ['sitemap', 'sitemap'],
]);

/** `key value` with one run of spaces/tabs between two words and nothing else (no colon needed). */
const COLONLESS = /^([^ \t]+)[ \t]+([^ \t]+)$/;

/**
 * The key and value of a line that has no known key before its first colon, read with
 * whitespace as the separator (RFC 9309 §2.3.1.5 leniency; see the module comment), or
 * undefined when it is not exactly a known key and one word.
 */
function colonlessLine(line: string): { key: Key; value: string } | undefined {
  const m = COLONLESS.exec(line.trim());
  if (m === null) return undefined;
  const key = KEYS.get(m[1]!.toLowerCase());
  return key === undefined ? undefined : { key, value: m[2]! };
}

/** Crawl-delay values: a non-negative decimal number of seconds, nothing else. */
const DELAY = /^\d+(?:\.\d+)?$|^\.\d+$/;

/** Options of `parseRobots`. */
export interface ParseRobotsOptions {
  /** The input was already cut short (by a fetcher's size cap): drop its partial last line. */
  readonly truncated?: boolean | undefined;
}

function limitBytes(bytes: Uint8Array, cut: boolean): { text: string; truncated: boolean } {
  let view = bytes;
  let truncated = cut;
  if (bytes.length > ROBOTS_PARSE_LIMIT_BYTES || cut) {
    truncated = true;
    let end = Math.min(bytes.length, ROBOTS_PARSE_LIMIT_BYTES);
    // Keep the last complete line only: a cut pattern would be read as a shorter one.
    while (end > 0 && bytes[end - 1] !== 10 && bytes[end - 1] !== 13) end--;
    view = bytes.subarray(0, end);
  }
  // TextDecoder drops a leading UTF-8 BOM and replaces invalid bytes with U+FFFD.
  return { text: new TextDecoder('utf-8').decode(view), truncated };
}

/**
 * `text` (a `RobotsTxt#text`) with every comment cut off its line: the parser reads a line only
 * up to its first `#`, so parsing the result gives the same groups, rules, Crawl-delays and
 * sitemaps, with the same line numbers (lines are kept, emptied). What a checkpoint or the
 * engine's journal stores: a padded file (the sim's `huge` robots.txt, 500 KiB once cut at the
 * parse limit, is its rules and then comment lines) shrinks to its rules and a newline per
 * comment line.
 */
export function compactRobotsText(text: string): string {
  if (!text.includes('#')) return text;
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const hash = lines[i]!.indexOf('#');
    if (hash >= 0) lines[i] = lines[i]!.slice(0, hash);
  }
  return lines.join('\n');
}

/** A parsed robots.txt: the answer to every question RFC 9309 lets a crawler ask of it. */
export class RobotsTxt {
  /** The robots.txt URL the file was fetched for; its origin bounds which URLs it governs. */
  readonly robotsUrl: string;
  /** Absolute http(s) Sitemap URLs, in file order, without duplicates. */
  readonly sitemaps: readonly string[];
  /** The input was longer than the 500 KiB parse limit (or arrived cut) and its tail was ignored. */
  readonly truncated: boolean;
  /**
   * The text that was parsed (decoded, within the limit): parsing it again gives the same
   * rules, which is how a checkpoint keeps a robots.txt without refetching it.
   */
  readonly text: string;
  /** Number of groups in the file (after nothing is merged). */
  readonly groupCount: number;

  readonly #origin: string;
  readonly #groups: readonly Group[];
  readonly #merged = new Map<string, MergedGroup>();

  /** @internal Use `parseRobots`. */
  constructor(input: string | Uint8Array, robotsUrl: string, options: ParseRobotsOptions = {}) {
    let origin: string;
    try {
      const u = new URL(robotsUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
      origin = u.origin;
      this.robotsUrl = `${origin}/robots.txt`;
    } catch {
      throw new InvalidArgumentError(`parseRobots: expected an absolute http(s) robots.txt URL, received ${JSON.stringify(robotsUrl)}`);
    }
    this.#origin = origin;
    let text: string;
    let truncated = false;
    const cut = options.truncated === true;
    if (input instanceof Uint8Array) {
      ({ text, truncated } = limitBytes(input, cut));
    } else if (typeof input === 'string') {
      // A string can only exceed the byte limit if it is at least a third as long.
      if (cut || input.length * 3 > ROBOTS_PARSE_LIMIT_BYTES) ({ text, truncated } = limitBytes(utf8.encode(input), cut));
      else text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
    } else {
      throw new InvalidArgumentError(`parseRobots: expected the file as a string or Uint8Array, received ${typeof input}`);
    }
    this.truncated = truncated;
    this.text = text;
    const groups: Group[] = [];
    const sitemaps: string[] = [];
    const seenSitemaps = new Set<string>();
    let current: Group | undefined;
    let inAgentRun = false;
    const lines = text.split(/\r\n|\r|\n/);
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i]!;
      const hash = line.indexOf('#');
      if (hash >= 0) line = line.slice(0, hash);
      const colon = line.indexOf(':');
      let key = colon < 0 ? undefined : KEYS.get(line.slice(0, colon).trim().toLowerCase());
      let value: string;
      if (key !== undefined) {
        value = line.slice(colon + 1).trim();
      } else {
        const lenient = colonlessLine(line);
        if (lenient === undefined) continue;
        ({ key, value } = lenient);
      }
      switch (key) {
        case 'user-agent':
          if (!inAgentRun || current === undefined) {
            current = { agents: [], rules: [], crawlDelay: undefined };
            groups.push(current);
            inAgentRun = true;
          }
          current.agents.push(lineAgent(value));
          break;
        case 'allow':
        case 'disallow':
          if (current === undefined) break; // outside any group: ignored (§2.2.2)
          inAgentRun = false;
          if (value !== '') current.rules.push(compileRule(value, key === 'allow', i + 1));
          break;
        case 'crawl-delay':
          if (current === undefined) break;
          inAgentRun = false;
          if (DELAY.test(value)) {
            const seconds = Number(value);
            current.crawlDelay = Math.max(current.crawlDelay ?? 0, seconds);
          }
          break;
        case 'sitemap':
          try {
            const u = new URL(value, this.robotsUrl);
            if ((u.protocol === 'http:' || u.protocol === 'https:') && !seenSitemaps.has(u.href)) {
              seenSitemaps.add(u.href);
              sitemaps.push(u.href);
            }
          } catch {
            // not a URL: ignored
          }
          break;
      }
    }
    this.#groups = groups;
    this.groupCount = groups.length;
    this.sitemaps = Object.freeze(sitemaps);
  }

  /** The merged group that binds `agent`'s product token (cached per token). */
  #groupFor(agent: string): MergedGroup {
    const token = productToken(agent).toLowerCase();
    const cached = this.#merged.get(token);
    if (cached) return cached;
    let matching = this.#groups.filter((g) => g.agents.includes(token));
    if (matching.length === 0) matching = this.#groups.filter((g) => g.agents.includes('*'));
    let merged = NO_RULES;
    if (matching.length > 0) {
      let crawlDelay: number | undefined;
      for (const g of matching) if (g.crawlDelay !== undefined) crawlDelay = Math.max(crawlDelay ?? 0, g.crawlDelay);
      merged = { ...ruleSet(matching.flatMap((g) => g.rules)), crawlDelay };
    }
    this.#merged.set(token, merged);
    return merged;
  }

  /** The path-and-query of `url` (absolute on this file's origin, or starting with `/`). */
  #pathOf(url: string): string {
    if (typeof url === 'string' && url.startsWith('/')) {
      const hash = url.indexOf('#');
      return hash >= 0 ? url.slice(0, hash) : url;
    }
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new InvalidArgumentError(`robots: expected an absolute URL or a path starting with "/", received ${JSON.stringify(url)}`);
    }
    if (u.origin !== this.#origin) {
      throw new InvalidArgumentError(
        `robots: ${JSON.stringify(url)} is not governed by ${this.robotsUrl} (origins differ: ${u.origin} vs ${this.#origin})`,
      );
    }
    return u.pathname + u.search;
  }

  /**
   * Decides whether `agent` may fetch `url` and names the rule that decided. `agent` is a
   * product token or a whole User-Agent string (its leading token is used). A query of two or
   * more parameters that the rules allow is also checked in the orders its page may have
   * linked, and the URL is disallowed when a rule naming `?` or `&` that does not match the
   * URL's own form disallows one of them (that rule is named; see `linkedOrderDisallow` in
   * ./robots-match.ts).
   */
  explain(url: string, agent: string): RobotsDecision {
    const group = this.#groupFor(agent);
    const raw = this.#pathOf(url);
    if (isRobotsFilePath(raw)) return { allowed: true };
    return decidePath(group, normalizeRobotsPath(raw, false), true);
  }

  /** Whether `agent` may fetch `url` (see `explain`). */
  isAllowed(url: string, agent: string): boolean {
    return this.explain(url, agent).allowed;
  }

  /** Crawl-delay in seconds from the group binding `agent` (the largest if merged), or undefined. */
  crawlDelay(agent: string): number | undefined {
    return this.#groupFor(agent).crawlDelay;
  }
}

/**
 * Parses a robots.txt (text or raw bytes) fetched for `robotsUrl` — usually
 * `https://host/robots.txt`; any URL on the origin works. Pass `{ truncated: true }` when a
 * transport cap already cut the body. Never throws on file content: a
 * binary, oversized or malformed file yields whatever rules it does contain.
 */
export function parseRobots(text: string | Uint8Array, robotsUrl: string, options?: ParseRobotsOptions): RobotsTxt {
  return new RobotsTxt(text, robotsUrl, options);
}
