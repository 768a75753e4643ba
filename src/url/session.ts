/**
 * Session-token recognition, shared by canonicalization (which drops ambiguous session
 * parameters such as `sid` only when their value looks like a token) and the trap detector
 * (which counts URLs carrying a token in a session-like place).
 *
 * A token here is what a server mints per visitor: at least 16 characters of
 * `[A-Za-z0-9_-]`, with both a letter and a digit, and a Shannon entropy of at least 3 bits
 * per character. The bounds were picked against the shapes that must NOT match: slugs and
 * words (no digit, or entropy near 2.5–3.2 bits with a digit appended rarely reaching 16
 * distinct-looking characters), dates and numeric ids (no letter), short ids (under 16).
 * Random hex of 16 characters scores about 3.5 bits, base64url of 22 about 4.2.
 */

const counts = new Uint16Array(128);

/** Whether `value[from, to)` looks like a per-visitor session token (see the module comment). */
export function looksLikeSessionToken(value: string, from = 0, to = value.length): boolean {
  const n = to - from;
  if (n < 16 || n > 256) return false;
  let letter = false;
  let digit = false;
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) digit = true;
    else if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) letter = true;
    else if (c !== 45 && c !== 95) return false;
  }
  if (!letter || !digit) return false;
  for (let i = from; i < to; i++) counts[value.charCodeAt(i)]!++;
  let h = 0;
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i);
    const k = counts[c]!;
    if (k === 0) continue;
    const p = k / n;
    h -= p * Math.log2(p);
    counts[c] = 0;
  }
  return h >= 3;
}

/**
 * Whether a (lowercased) parameter or path-parameter name is session-like: it contains
 * "sess", ends in "sid", or is one of the platform names that carry a session
 * (`zenid`, `cftoken`, `cfid`).
 */
export function isSessionLikeName(lowerName: string): boolean {
  return (
    lowerName.includes('sess') ||
    lowerName.endsWith('sid') ||
    lowerName === 'zenid' ||
    lowerName === 'cftoken' ||
    lowerName === 'cfid'
  );
}
