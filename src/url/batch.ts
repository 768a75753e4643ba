/**
 * `canonicalizeBatch`: a page's links canonicalized in one wasm call (core-rs/src/canon.rs),
 * with the rare links the core declines finished by `canonicalize` here.
 *
 * The core mirrors the TypeScript fast paths byte for byte under the default policy: absolute
 * http(s) links and path-absolute or scheme-relative links against a plain page URL, ASCII,
 * already in canonical percent-encoding, with the query re-encoded, tracking parameters
 * dropped and pairs sorted; and it resolves relative paths (`x/y`, `../x`, `?q`, which the
 * TS path sends through the WHATWG parser) against a plain page URL — or one whose host has
 * uppercase letters or carries the default port, resolved against the form WHATWG parses it
 * into (the core writes those results out in full). Everything else (IDNA, IP literals, other
 * ports, userinfo, dot segments in absolute links, `%2e`, backslashes, controls,
 * non-ASCII, session path parameters, possible session tokens, any non-default policy) comes
 * back flagged and goes through `canonicalize`, so the answer
 * is always exactly `hrefs.map((h) => canonicalize(h, base, policy))`
 * (test/url/canonicalize-core.test.ts holds the two to that over generated links and the WPT
 * URL data). Results that are a prefix of the link, or the page's origin followed by the
 * link, are sliced from the strings the caller passed; the rewritten ones are decoded once
 * per page and sliced from that string.
 */
import { stageStrings } from '../core/hash.js';
import { type Core, core } from '../core/instance.js';
import { InvalidArgumentError } from '../errors/index.js';
import { canonicalize } from './canonicalize.js';
import { type CanonPolicy, RAW_LENGTH_FACTOR, DEFAULT_MAX_URL_LENGTH, compiledPolicy } from './policy.js';

/** Result kinds of `meguri_canon_batch` (core-rs/src/canon.rs, `kind`). */
const NULL = 0;
const FALLBACK = 1;
const RAW_PREFIX = 2;
const JOINED = 3;
const WRITTEN = 4;

/** UTF-16 units of links staged per wasm call. */
const CHUNK_UNITS = 1 << 18;
/** Longest origin a joined result can carry (`https://` + a 253-byte host). */
const ORIGIN_MAX = 8 + 253;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How many links of the last `canonicalizeBatch` call the core answered (tests check the fast path is exercised). */
export let coreAnswered = 0;

/** @internal The page URL as `canonicalize` uses it: undefined when absent, empty or too long. */
export function usablePage(base: string | undefined): string | undefined {
  return typeof base === 'string' && base !== '' && base.length <= DEFAULT_MAX_URL_LENGTH * RAW_LENGTH_FACTOR ? base : undefined;
}

/** @internal Whether `policy` resolves to the default one (the only policy the core implements). */
export function isDefaultPolicy(policy: Partial<CanonPolicy> | null | undefined): boolean {
  return compiledPolicy(policy) === compiledPolicy(undefined);
}

/** @internal UTF-16 units of hrefs[from, …) that fit one chunk: `{ to, units }`. Throws on a non-string. */
export function planChunk(hrefs: readonly string[], from: number): { to: number; units: number } {
  let to = from;
  let units = 0;
  while (to < hrefs.length) {
    const s = hrefs[to];
    if (typeof s !== 'string') throw new InvalidArgumentError(`element ${to} is ${typeof s}, expected a string`);
    if (to > from && units + s.length > CHUNK_UNITS) break;
    units += s.length;
    to++;
  }
  return { to, units };
}

/**
 * Canonicalizes every link of a page found at `base`: `out[i]` is exactly
 * `canonicalize(hrefs[i], base, policy)` (a canonical URL, or null). One wasm call per page
 * (per ~256 Ki characters of links) handles the common links; see the top comment.
 * Throws `InvalidArgumentError` when `hrefs` is not an array of strings.
 */
export function canonicalizeBatch(
  hrefs: readonly string[],
  base?: string,
  policy?: Partial<CanonPolicy> | null,
  out: (string | null)[] = new Array<string | null>(hrefs.length),
): (string | null)[] {
  if (!Array.isArray(hrefs)) throw new InvalidArgumentError(`canonicalizeBatch: expected an array of strings, received ${typeof hrefs}`);
  coreAnswered = 0;
  if (!isDefaultPolicy(policy)) {
    for (let i = 0; i < hrefs.length; i++) out[i] = canonicalize(hrefs[i]!, base, policy);
    return out;
  }
  const page = usablePage(base);
  let from = 0;
  while (from < hrefs.length) {
    let plan: { to: number; units: number };
    try {
      plan = planChunk(hrefs, from);
    } catch (err) {
      throw new InvalidArgumentError(`canonicalizeBatch: ${(err as Error).message}`);
    }
    chunk(hrefs, from, plan.to, plan.units, page, out);
    from = plan.to;
  }
  return out;
}

/** @internal Where `stagePage` put a chunk of links in the scratch region. */
export interface StagedPage {
  readonly count: number;
  readonly lanes: number;
  readonly offsets: number;
  readonly page: number;
  readonly pageBytes: number;
  readonly data: number;
  readonly dataBytes: number;
  readonly arena: number;
  readonly arenaLen: number;
  /** `extraBytes` for the caller's own outputs (16-byte aligned). */
  readonly extra: number;
}

/**
 * @internal Stages hrefs[from, to) (holding `units` UTF-16 units) and the page URL for a
 * canonicalizing export. Layout: lanes (12·count) | offsets | page UTF-8 | links UTF-8 |
 * arena | extra.
 */
export function stagePage(hrefs: readonly string[], from: number, to: number, units: number, page: string | undefined, extraBytes: number): StagedPage {
  const c = core();
  const count = to - from;
  const pageLen = page === undefined ? 0 : page.length;
  const lanesBytes = (count * 12 + 15) & ~15;
  const offsetsBytes = ((count + 1) * 4 + 15) & ~15;
  const arenaLen = (3 * (units + count * Math.min(pageLen, ORIGIN_MAX)) + 31) & ~15;
  const base = c.scratch(lanesBytes + offsetsBytes + pageLen * 3 + units * 3 + 32 + arenaLen + extraBytes);
  const offsets = base + lanesBytes;
  const pagePtr = offsets + offsetsBytes;
  let pageBytes = pageLen;
  let data = pagePtr + pageLen;
  let dataBytes = count <= PAGE_GROUP && pageLen + units <= PAGE_GROUP_UNITS ? stageAscii(c, page, hrefs, from, to, pagePtr, offsets) : -1;
  if (dataBytes < 0) {
    // Long pages, or something not ASCII: the page URL alone, the links in groups.
    pageBytes = page === undefined ? 0 : encoder.encodeInto(page, c.u8.subarray(pagePtr, pagePtr + pageLen * 3)).written;
    data = pagePtr + pageBytes;
    dataBytes = stageStrings(hrefs, from, to, data, offsets);
  }
  const arena = (data + dataBytes + 15) & ~15;
  return { count, lanes: base, offsets, page: pagePtr, pageBytes, data, dataBytes, arena, arenaLen, extra: arena + arenaLen };
}

/** Most links, and UTF-16 units with the page URL, `stageAscii` stages in one call. */
const PAGE_GROUP = 64;
const PAGE_GROUP_UNITS = 8192;

/**
 * Stages the page URL and hrefs[from, to) with one `encodeInto` of their concatenation, the
 * links right after the page URL, when all of it is ASCII; returns the links' bytes, or -1
 * (nothing usable written) when some unit is not ASCII. One encoder call per page instead of
 * two (the page URL's own call was a per-page cost the 2-link-page profile showed).
 */
function stageAscii(c: Core, page: string | undefined, hrefs: readonly string[], from: number, to: number, pagePtr: number, offsetsPtr: number): number {
  const u32 = c.u32;
  let o = offsetsPtr >>> 2;
  u32[o] = 0;
  let joined = page ?? '';
  const pageLen = joined.length;
  let units = 0;
  for (let k = from; k < to; k++) {
    const s = hrefs[k]!;
    joined += s;
    units += s.length;
    u32[++o] = units;
  }
  const total = pageLen + units;
  return encoder.encodeInto(joined, c.u8.subarray(pagePtr, pagePtr + total * 3)).written === total ? units : -1;
}

/**
 * @internal Reads the canonical URLs a canonicalizing export wrote for a staged chunk into
 * `out` at `from`, running `canonicalize` for the links the core declined. Returns how many
 * the core answered.
 */
export function readCanonical(s: StagedPage, hrefs: readonly string[], from: number, page: string | undefined, out: (string | null)[]): number {
  const c = core();
  const u32 = c.u32;
  const u8 = c.u8;
  const l = s.lanes >>> 2;
  let answered = 0;
  // The rewritten URLs are decoded in one piece, on first need, and sliced (they are ASCII,
  // so byte offsets are string offsets): one decoder call per page instead of one per URL.
  let written: string | undefined;
  // Joined results share the page's origin (or scheme): slice it once per length.
  let prefixLen = -1;
  let prefix = '';
  for (let k = 0; k < s.count; k++) {
    const kind = u32[l + 3 * k]!;
    const a = u32[l + 3 * k + 1]!;
    const b = u32[l + 3 * k + 2]!;
    const raw = hrefs[from + k]!;
    let r: string | null;
    if (kind === FALLBACK) {
      out[from + k] = canonicalize(raw, page);
      continue;
    }
    if (kind === NULL) r = null;
    else if (kind === RAW_PREFIX) r = a === raw.length ? raw : raw.slice(0, a);
    else if (kind === JOINED) {
      if (a !== prefixLen) {
        prefixLen = a;
        prefix = page!.slice(0, a);
      }
      r = prefix + (b === raw.length ? raw : raw.slice(0, b));
    }
    else {
      written ??= decoder.decode(u8.subarray(s.arena, s.arena + arenaUsed(u32, l, s.count)));
      r = written.slice(a, b);
    }
    out[from + k] = r;
    answered++;
  }
  return answered;
}

/** Arena bytes a canonicalizing export used: the end of its last rewritten URL (they are written in order). */
function arenaUsed(u32: Uint32Array, lanes: number, count: number): number {
  for (let k = count - 1; k >= 0; k--) if (u32[lanes + 3 * k] === WRITTEN) return u32[lanes + 3 * k + 2]!;
  return 0;
}

/** One wasm call over hrefs[from, to) (holding `units` UTF-16 units). */
function chunk(hrefs: readonly string[], from: number, to: number, units: number, page: string | undefined, out: (string | null)[]): void {
  const s = stagePage(hrefs, from, to, units, page, 0);
  core().exports.meguri_canon_batch(s.page, s.pageBytes, s.data, s.dataBytes, s.offsets, s.count, s.lanes, s.arena, s.arenaLen);
  coreAnswered += readCanonical(s, hrefs, from, page, out);
}
