/**
 * `CanonPolicy`: the per-host canonicalization settings (DESIGN §5, step 11 and the query
 * lists of step 9), validated once and compiled into the lookup shapes the hot path reads.
 *
 * A policy is part of URL identity: the same raw link under two policies can give two
 * canonical strings and so two URLKeys. It is pinned per crawl and carries a `version` the
 * partition records; changing a host's policy is a campaign-boundary decision, never a
 * mid-crawl edit.
 */
import { booleanField, customField, defineOptions, numberField } from '../options/index.js';

/** The per-host canonicalization settings. Every fold is off by default. */
export interface CanonPolicy {
  /**
   * Allow-list mode when non-empty: only these query keys survive (compared
   * case-insensitively after percent normalization). An explicitly allowed key is kept even
   * if the global deny-list names it (a host whose `sid` is a story id can keep it); the
   * policy's own `queryDeny` still applies.
   */
  readonly queryAllow: readonly string[];
  /** Query keys to drop on top of the global tracking/session deny-list (case-insensitive). */
  readonly queryDeny: readonly string[];
  /** Fold `/p/` into `/p` (never the root `/`). */
  readonly foldTrailing: boolean;
  /** Fold `/dir/index.html` (and the other index names) into `/dir/`. */
  readonly foldIndex: boolean;
  /** Lowercase the path and query (ASCII letters outside `%XX` escapes). */
  readonly foldCase: boolean;
  /** Collapse runs of `/` in the path into one. */
  readonly collapseSlash: boolean;
  /**
   * Policy version (u16), recorded with the partition so a reload knows which rules made its
   * keys. Default 1, the version the frontier records when it is given none.
   */
  readonly version: number;
  /** Longest canonical URL accepted, in bytes; longer ones give `null`. Default 2,048. */
  readonly maxLength: number;
}

/** Default cap on a canonical URL's length in bytes. */
export const DEFAULT_MAX_URL_LENGTH = 2048;

/**
 * Raw input is rejected before parsing when it is longer than this many times `maxLength`
 * (UTF-16 units): a fragment or a pile of tracking parameters may shrink, but no real link
 * shrinks sixteenfold, and parsing 100 KB strings on the discovery path is how a hostile page
 * would spend a crawler's CPU.
 */
export const RAW_LENGTH_FACTOR = 16;

const isStringList = (v: unknown): v is readonly string[] =>
  Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 256);

const validatePolicy = defineOptions<CanonPolicy>('CanonPolicy', {
  queryAllow: customField('an array of non-empty strings (at most 256 characters each)', isStringList, () => []),
  queryDeny: customField('an array of non-empty strings (at most 256 characters each)', isStringList, () => []),
  foldTrailing: booleanField(false),
  foldIndex: booleanField(false),
  foldCase: booleanField(false),
  collapseSlash: booleanField(false),
  version: numberField({ min: 0, max: 0xffff, integer: true, default: 1 }),
  maxLength: numberField({ min: 16, max: 1 << 20, integer: true, default: DEFAULT_MAX_URL_LENGTH }),
});

/**
 * Validates a policy and returns it frozen and fully defaulted (its lists copied and frozen
 * too). Pass the result to `canonicalize`: a resolved policy is compiled once and cached, a
 * plain object is validated again on every call. Throws `InvalidArgumentError` naming the
 * bad field.
 */
export function canonPolicy(input?: Partial<CanonPolicy> | null): CanonPolicy {
  const p = validatePolicy(input);
  if (Object.isFrozen(p.queryAllow) && Object.isFrozen(p.queryDeny)) return p;
  return Object.freeze({
    ...p,
    queryAllow: Object.freeze([...p.queryAllow]),
    queryDeny: Object.freeze([...p.queryDeny]),
  });
}

/** @internal The lookup shapes `canonicalize` reads. */
export interface CompiledPolicy {
  /** Lowercased allow-list, or undefined when not in allow-list mode. */
  readonly allow: ReadonlySet<string> | undefined;
  /** Lowercased extra deny-list (may be empty). */
  readonly deny: ReadonlySet<string>;
  readonly foldTrailing: boolean;
  readonly foldIndex: boolean;
  readonly foldCase: boolean;
  readonly collapseSlash: boolean;
  readonly maxLength: number;
  readonly maxRaw: number;
}

function compile(p: CanonPolicy): CompiledPolicy {
  return {
    allow: p.queryAllow.length > 0 ? new Set(p.queryAllow.map((k) => k.toLowerCase())) : undefined,
    deny: new Set(p.queryDeny.map((k) => k.toLowerCase())),
    foldTrailing: p.foldTrailing,
    foldIndex: p.foldIndex,
    foldCase: p.foldCase,
    collapseSlash: p.collapseSlash,
    maxLength: p.maxLength,
    maxRaw: p.maxLength * RAW_LENGTH_FACTOR,
  };
}

/** The global defaults, compiled once. */
export const DEFAULT_POLICY: CanonPolicy = canonPolicy();
const compiledDefault = compile(DEFAULT_POLICY);
const compiledCache = new WeakMap<object, CompiledPolicy>();
compiledCache.set(DEFAULT_POLICY, compiledDefault);

/**
 * @internal The compiled form of `policy`: cached by identity for frozen (resolved) policies,
 * rebuilt for a plain object, since a caller may mutate it between calls.
 */
export function compiledPolicy(policy: Partial<CanonPolicy> | null | undefined): CompiledPolicy {
  if (policy == null) return compiledDefault;
  const hit = compiledCache.get(policy);
  if (hit !== undefined) return hit;
  const resolved = canonPolicy(policy);
  const c = compile(resolved);
  compiledCache.set(resolved, c);
  if (Object.isFrozen(policy) && Object.isFrozen(policy.queryAllow ?? []) && Object.isFrozen(policy.queryDeny ?? [])) {
    compiledCache.set(policy, c);
  }
  return c;
}
