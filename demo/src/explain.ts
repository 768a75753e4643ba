/**
 * Why a raw link has the canonical form it has: the demo's account of which of DESIGN §5's
 * steps changed it, and why a rejected line was rejected.
 *
 * `canonicalize` returns only the result, so this file works it out from the outside: it
 * splits the raw text into scheme, userinfo, host, port, path, query and fragment with the
 * RFC 3986 shape (no normalization), splits the canonical URL the same way, and names each
 * step whose part differs — the host lost its capitals, the port was the default, a query
 * key vanished because it is a tracking name, the surviving keys came back in another order.
 * Two raw lines that share a canonical form were merged by the union of their rules. Where
 * the difference fits none of the named steps (a backslash read as a slash, say) the rule is
 * the honest "normalized by the URL parser" rather than a guess.
 *
 * Rejection reasons follow the order in which `canonicalize` gives up: too long, not a URL
 * at all, not http(s), then an unusable host (the only refusal left once the rest pass).
 */
import { AMBIGUOUS_SESSION_PARAMS, DEFAULT_MAX_URL_LENGTH } from '../../src/url/index.js';

/** A canonicalization step that changed a raw link, in DESIGN §5 order. */
export const CanonRule = {
  SchemeCase: 'scheme lowercased',
  HostCase: 'host lowercased',
  HostTrailingDot: 'trailing dot removed from host',
  HostIdna: 'host converted to punycode (IDNA)',
  HostIp: 'IP address normalized',
  DefaultPort: 'default port dropped',
  Userinfo: 'userinfo dropped',
  EmptyPath: 'empty path became /',
  DotSegments: 'dot segments removed',
  PercentEncoding: 'percent-encoding normalized',
  Fragment: 'fragment removed',
  TrackingParam: 'tracking parameter removed',
  SessionParam: 'session parameter removed',
  EmptyParam: 'empty parameter dropped',
  EmptyQuery: 'empty query dropped',
  QuerySorted: 'query sorted',
  Parser: 'normalized by the URL parser',
} as const;
/** One of the `CanonRule` labels. */
export type CanonRule = (typeof CanonRule)[keyof typeof CanonRule];

const RULE_ORDER: readonly CanonRule[] = Object.values(CanonRule);

/** A rule that applied to one raw link, with the part it concerned when that helps (`:80`, `utm_source`). */
export interface RuleHit {
  readonly rule: CanonRule;
  readonly detail?: string;
}

/** The parts of an absolute hierarchical URL, as written (nothing decoded or folded). */
export interface UrlParts {
  readonly scheme: string;
  readonly userinfo: string | undefined;
  readonly host: string;
  readonly port: string | undefined;
  readonly path: string;
  readonly query: string | undefined;
  readonly fragment: string | undefined;
}

const SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#\\]*)([^?#\\]*)(?:\?([^#]*))?(?:#([\s\S]*))?$/;

/** Splits `s` into its parts as written, or `undefined` when it is not `scheme://authority…` in plain form. */
export function splitUrl(s: string): UrlParts | undefined {
  const m = SHAPE.exec(s);
  if (m === null) return undefined;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : undefined;
  const hostPort = authority.slice(at + 1);
  let host = hostPort;
  let port: string | undefined;
  const close = hostPort.startsWith('[') ? hostPort.indexOf(']') : -1;
  const colon = hostPort.indexOf(':', close + 1);
  if (colon >= 0 && (close < 0 || colon === close + 1)) {
    host = hostPort.slice(0, colon);
    port = hostPort.slice(colon + 1);
  }
  return { scheme: m[1]!, userinfo, host, port, path: m[3]!, query: m[4], fragment: m[5] };
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Characters step 7 keeps literal in a path or query; anything else is written as `%XX`. */
const LITERAL = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]$/;

/** Whether a path or query text is not yet in step 7's one encoding form. */
function needsEncodingFix(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return true; // a bare '%' becomes %25
      if (hex !== hex.toUpperCase() || UNRESERVED.test(String.fromCharCode(parseInt(hex, 16)))) return true;
      i += 2;
    } else if (!LITERAL.test(ch)) return true;
  }
  return false;
}

/** Decodes escapes of unreserved characters and upper-cases the rest (for comparing query keys). */
function normalizeEscapes(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (m: string, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : m.toUpperCase();
  });
}

function hasDotSegment(path: string): boolean {
  return path.split('/').some((seg) => {
    const s = seg.toLowerCase().replace(/%2e/g, '.');
    return s === '.' || s === '..';
  });
}

function queryKeys(query: string): { keys: string[]; empty: number } {
  const keys: string[] = [];
  let empty = 0;
  for (const pair of query.split('&')) {
    if (pair === '') {
      empty++;
      continue;
    }
    const eq = pair.indexOf('=');
    keys.push(normalizeEscapes(eq < 0 ? pair : pair.slice(0, eq)));
  }
  return { keys, empty };
}

function isSessionName(key: string): boolean {
  return key.includes('sess') || AMBIGUOUS_SESSION_PARAMS.has(key) || key === 'cftoken' || key === 'zenid' || key === 'oscsid';
}

/**
 * The steps that turned `raw` into `canonical` (which must be `canonicalize(raw)`), in
 * DESIGN §5 order; empty when `raw` was already canonical.
 */
export function explainCanonical(raw: string, canonical: string): RuleHit[] {
  const input = raw.trim();
  if (input === canonical) return [];
  const r = splitUrl(input);
  const c = splitUrl(canonical);
  if (r === undefined || c === undefined) return [{ rule: CanonRule.Parser }];
  const hits: RuleHit[] = [];
  const add = (rule: CanonRule, detail?: string): void => {
    if (!hits.some((h) => h.rule === rule && h.detail === detail)) hits.push(detail === undefined ? { rule } : { rule, detail });
  };

  if (r.scheme !== c.scheme) add(CanonRule.SchemeCase);
  let host = r.host;
  if (host !== c.host) {
    if (host.endsWith('.') && !c.host.endsWith('.')) {
      add(CanonRule.HostTrailingDot);
      host = host.slice(0, -1);
    }
    if (host !== c.host) {
      if (/[^\x00-\x7f]|%/.test(host) || (c.host.includes('xn--') && !host.toLowerCase().includes('xn--'))) add(CanonRule.HostIdna);
      else if (host.toLowerCase() === c.host) add(CanonRule.HostCase);
      else if (host.startsWith('[') || /^[0-9a-fx.]+$/i.test(host)) add(CanonRule.HostIp);
      else add(CanonRule.Parser, 'host');
    }
  }
  if (r.port !== undefined && c.port === undefined) add(CanonRule.DefaultPort, r.port === '' ? ':' : `:${r.port}`);
  else if (r.port !== c.port) add(CanonRule.Parser, 'port');
  if (r.userinfo !== undefined) add(CanonRule.Userinfo);

  if (r.path !== c.path) {
    let explained = false;
    if (r.path === '' && c.path === '/') {
      add(CanonRule.EmptyPath);
      explained = true;
    }
    if (hasDotSegment(r.path)) {
      add(CanonRule.DotSegments);
      explained = true;
    }
    if (needsEncodingFix(r.path)) {
      add(CanonRule.PercentEncoding, 'path');
      explained = true;
    }
    if (!explained) add(CanonRule.Parser, 'path');
  }

  if (r.fragment !== undefined) add(CanonRule.Fragment);

  if (r.query !== undefined && r.query !== c.query) {
    if (r.query === '' || (c.query === undefined && /^&*$/.test(r.query))) add(CanonRule.EmptyQuery);
    else {
      const raw = queryKeys(r.query);
      const kept = c.query === undefined ? [] : queryKeys(c.query).keys;
      if (raw.empty > 0) add(CanonRule.EmptyParam);
      // Match raw keys against the canonical ones as multisets; what is left over was dropped.
      const pool = new Map<string, number>();
      for (const k of kept) pool.set(k, (pool.get(k) ?? 0) + 1);
      const survivors: string[] = [];
      const tracking: string[] = [];
      const session: string[] = [];
      for (const k of raw.keys) {
        const left = pool.get(k) ?? 0;
        if (left > 0) {
          pool.set(k, left - 1);
          survivors.push(k);
          continue;
        }
        const lower = k.toLowerCase();
        // The global deny-list holds click ids and analytics linkers (utm_*, gclid, …) and
        // session ids; a policy's queryDeny entries are counted with the tracking kind.
        if (isSessionName(lower)) session.push(k);
        else tracking.push(k);
      }
      const sorted = survivors.join('&') !== kept.join('&');
      const encoding = needsEncodingFix(r.query);
      if (tracking.length > 0) add(CanonRule.TrackingParam, tracking.join(', '));
      if (session.length > 0) add(CanonRule.SessionParam, session.join(', '));
      if (sorted) add(CanonRule.QuerySorted);
      if (encoding) add(CanonRule.PercentEncoding, 'query');
      if (raw.empty === 0 && tracking.length === 0 && session.length === 0 && !sorted && !encoding) add(CanonRule.Parser, 'query');
    }
  }
  if (hits.length === 0) add(CanonRule.Parser);
  return hits.sort((a, b) => RULE_ORDER.indexOf(a.rule) - RULE_ORDER.indexOf(b.rule));
}

/** Rules of a duplicate group: the union of its members' rules, in DESIGN §5 order, without details. */
export function mergedBy(members: readonly (readonly RuleHit[])[]): CanonRule[] {
  const set = new Set<CanonRule>();
  for (const m of members) for (const h of m) set.add(h.rule);
  return RULE_ORDER.filter((r) => set.has(r));
}

/**
 * Why `canonicalize(raw)` returned null, for a line the page lists as rejected. `maxLength`
 * is the policy's (default 2,048).
 */
export function rejectReason(raw: string, maxLength: number = DEFAULT_MAX_URL_LENGTH): string {
  const input = raw.trim();
  if (input.length > maxLength) return `longer than ${maxLength} characters (${input.length})`;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(input) ? 'not a parseable URL' : 'not an absolute URL (no scheme)';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol.slice(0, -1)} is not http or https`;
  if (url.href.length > maxLength) return `canonical form longer than ${maxLength} characters`;
  return url.hostname === '' ? 'no host' : `invalid host ${JSON.stringify(url.hostname)}`;
}
