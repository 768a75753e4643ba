/**
 * src/url: URL identity — canonicalization (DESIGN §5), host grouping and URLKeys.
 *
 * Owns: the one canonical string a page is known by, which host group it belongs to, and
 * the 128-bit key derived from both. Never: network, clock or file access, or any state that
 * changes an answer (the memos here only cache pure results), because a URL's identity must
 * be the same on every machine, in every process and after every restart — a different
 * canonical string or key for the same link is a duplicate crawl or a lost page. The key
 * derivation is a storage format, versioned by `URL_KEY_FORMAT_VERSION`.
 */
export { canonicalize } from './canonicalize.js';
export { canonicalizeBatch } from './batch.js';
export { AMBIGUOUS_SESSION_PARAMS, TRACKING_PARAMS } from './canonicalize.js';
export { type CanonPolicy, DEFAULT_MAX_URL_LENGTH, DEFAULT_POLICY, canonPolicy } from './policy.js';
export { HOST_GROUPINGS, hostGroupKey, isPublicSuffix, registrableDomain } from './host.js';
export {
  type CanonicalKey,
  HOST_KEY_SEED,
  PATH_KEY_SEED,
  URL_KEY_FORMAT_VERSION,
  type UrlKey,
  canonicalKey,
  urlKey,
  urlKeyBatch,
} from './keys.js';
export { keyFromHex, keyToHex } from '../core/keys.js';
