/**
 * The soft-404 probe's made-up URL (`SoftDetector`'s `probe` option, src/dedup/soft404.ts): the
 * part of a URL that names its item — where it differs from another URL of the same body, else
 * its last query value with a digit, else its last path segment — made up in its class, and the
 * question's shape (the URL with that part as `*`).
 *
 * Owns: the rule of what is made up and how. Never: fetch, or decide what a reply means
 * (`SoftDetector.settleProbe`). Pure: the made-up part is a hash of the URL, the body's
 * fingerprint and a salt, so a replay makes the same probe.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { originEnd } from '../url/host.js';
import { keyOf } from './params.js';
import { urlHash32, valueOf } from './query.js';

/** What a made-up word begins with (a made-up number or hash has no room for it): a site's logs say who asked for it, and why. */
export const SOFT404_PROBE_MARK = 'meguri-soft404-probe-';

/**
 * A made-up number is in [2,000,000,000, 2,147,000,000): ten digits, within a signed 32-bit id
 * column (a larger one may be refused as malformed, no answer to the question), and above the
 * ids of all but the largest sites — a number a site does have is fetched as the page it is.
 */
const PROBE_NUMBER_FLOOR = 2_000_000_000;
const PROBE_NUMBER_SPAN = 147_000_000;

/** A URL taken apart where a probe may make up a part: origin, path segments, query pairs. */
interface UrlParts {
  readonly origin: string;
  /** The path's segments between its slashes (`/` is one empty segment). */
  readonly segments: readonly string[];
  /** The path ends in a slash (past its first). */
  readonly slash: boolean;
  /** The query's pairs as written; undefined without a query. */
  readonly query: readonly string[] | undefined;
}

function split(url: string): UrlParts | undefined {
  const end = originEnd(url);
  if (end < 0) return undefined;
  const hash = url.indexOf('#', end);
  const bare = hash < 0 ? url : url.slice(0, hash);
  const q = bare.indexOf('?', end);
  const path = (q < 0 ? bare.slice(end) : bare.slice(end, q)) || '/';
  const slash = path.length > 1 && path.endsWith('/');
  return { origin: bare.slice(0, end), segments: (slash ? path.slice(1, -1) : path.slice(1)).split('/'), slash, query: q < 0 ? undefined : bare.slice(q + 1).split('&') };
}

/** A name's extension when it is one (`.html`, `.js`; a letter first, so `3.1` has none). */
const extensionOf = (name: string): string => /\.[A-Za-z][A-Za-z0-9]{0,4}$/.exec(name)?.[0] ?? '';

/** Where a probe makes up its part: a path segment or a query pair's value, by index. */
type Place = { readonly in: 'segment' | 'value'; readonly at: number };

/**
 * The part of `p` that names the item: the last part where `other` (another URL serving the same
 * body, when it has the same origin, as many segments and the same query keys) differs from it —
 * a version, a commit, an id, wherever it sits in the path — else the last query value with a
 * digit, else the last path segment.
 */
function placeOf(p: UrlParts, other: UrlParts | undefined): Place {
  if (other !== undefined && other.origin === p.origin && other.segments.length === p.segments.length && other.query?.length === p.query?.length) {
    const pairs = p.query ?? [];
    const others = other.query ?? [];
    if (pairs.every((pair, j) => keyOf(pair) === keyOf(others[j]!))) {
      for (let j = pairs.length - 1; j >= 0; j--) if (pairs[j] !== others[j]) return { in: 'value', at: j };
      for (let i = p.segments.length - 1; i >= 0; i--) if (p.segments[i] !== other.segments[i]) return { in: 'segment', at: i };
    }
  }
  const pairs = p.query ?? [];
  for (let j = pairs.length - 1; j >= 0; j--) {
    const pair = pairs[j]!;
    if (pair.includes('=') && /\d/.test(valueOf(pair))) return { in: 'value', at: j };
  }
  return { in: 'segment', at: p.segments.length - 1 };
}

/**
 * `url` with its part at `place` made up in its class (`madeLike`: a number by ten digits, a hash
 * by a hash, anything else by `SOFT404_PROBE_MARK` and a token), the last segment keeping its
 * extension; `made` makes the part, `*` for the shape.
 */
function withMadeUp(p: UrlParts, place: Place, made: Maker): string {
  const segments = [...p.segments];
  const query = p.query === undefined ? undefined : [...p.query];
  if (place.in === 'value') {
    const pair = query![place.at]!;
    const eq = pair.indexOf('=');
    // A bare key (`?page`) gets a value: the key stays the handler's.
    query![place.at] = eq < 0 ? `${pair}=${SOFT404_PROBE_MARK}${made('word', 0)}` : `${pair.slice(0, eq + 1)}${madeLike(pair.slice(eq + 1), made)}`;
  } else {
    const name = segments[place.at]!;
    const ext = place.at === segments.length - 1 ? extensionOf(name) : '';
    segments[place.at] = `${madeLike(name.slice(0, name.length - ext.length), made)}${ext}`;
  }
  return `${p.origin}/${segments.join('/')}${p.slash ? '/' : ''}${query === undefined ? '' : `?${query.join('&')}`}`;
}

/** Makes up a part: a number, a hex string of `length` (a commit, a hash), or a word; `*` for a shape. */
type Maker = (kind: 'number' | 'hex' | 'word', length: number) => string;

/**
 * A made-up part in the class of `original`: a number for digits; hex of its length, in its case,
 * for a hash (7 to 64 hex digits with a digit and a letter: a router that checks a commit's form
 * would refuse a word — a 400, no answer); else the mark and a word.
 */
function madeLike(original: string, made: Maker): string {
  if (/^\d+$/.test(original)) return made('number', 0);
  if (/^[0-9a-fA-F]{7,64}$/.test(original) && /\d/.test(original) && /[a-fA-F]/.test(original)) {
    // Read as a hash again: a digit and a letter in it, in the original's case.
    let hex = made('hex', original.length);
    if (hex === '*') return hex;
    if (!/[a-f]/.test(hex)) hex = `a${hex.slice(1)}`;
    if (!/\d/.test(hex)) hex = `${hex.slice(0, -1)}0`;
    return original === original.toUpperCase() ? hex.toUpperCase() : hex;
  }
  return `${SOFT404_PROBE_MARK}${made('word', 0)}`;
}

/**
 * A URL beside `url` that cannot exist, to ask its server for its not-found answer (module
 * comment): the part that names the item (`placeOf`; with `other`, another URL of the same body,
 * the part where the two differ) made up, the rest unchanged — the probe goes to the handler
 * `url` went to, whose answer for an item it does not have is the question. The made-up part is
 * a hash of `url`, `fp` and `salt` (a run's own, so a resumed crawl can ask again what an earlier
 * run asked). `url` canonical; undefined when it has no origin.
 */
export function soft404ProbeUrl(url: string, fp: bigint, other?: string, salt = 0): string | undefined {
  if (typeof url !== 'string') throw new InvalidArgumentError(`soft404ProbeUrl: expected url as a string, received ${typeof url}`);
  if (typeof fp !== 'bigint') throw new InvalidArgumentError(`soft404ProbeUrl: expected fp as a bigint, received ${typeof fp}`);
  if (other !== undefined && typeof other !== 'string') throw new InvalidArgumentError(`soft404ProbeUrl: expected other as a string, received ${typeof other}`);
  if (typeof salt !== 'number' || !Number.isFinite(salt)) throw new InvalidArgumentError(`soft404ProbeUrl: expected salt as a finite number, received ${String(salt)}`);
  return probeOf(url, fp, other, salt)?.url;
}

/** `soft404ProbeUrl`'s URL and the probe's shape, unchecked (the detector's own calls). */
export function probeOf(url: string, fp: bigint, other: string | undefined, salt: number): { url: string; shape: string } | undefined {
  const p = split(url);
  if (p === undefined) return undefined;
  const place = placeOf(p, other === undefined ? undefined : split(other));
  const hash = url.indexOf('#');
  const bare = hash < 0 ? url : url.slice(0, hash);
  const a = (urlHash32(`${salt} ${bare}`) ^ Number(BigInt.asUintN(32, fp))) >>> 0;
  const b = urlHash32(`${BigInt.asUintN(64, fp).toString(16)} ${salt} ${bare}`);
  const token: Maker = (kind, length) => {
    if (kind === 'number') return String(PROBE_NUMBER_FLOOR + (a % PROBE_NUMBER_SPAN));
    if (kind === 'word') return a.toString(36).padStart(7, '0') + b.toString(36).padStart(7, '0');
    let hex = '';
    for (let i = 0; hex.length < length; i++) hex += urlHash32(`${i} ${b} ${bare}`).toString(16).padStart(8, '0');
    return hex.slice(0, length);
  };
  return { url: withMadeUp(p, place, token), shape: withMadeUp(p, place, () => '*') };
}

