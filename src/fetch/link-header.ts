/**
 * The HTTP `Link` header (RFC 8288 §3): `<target>; rel="a b"; hreflang=de, <target2>; …`.
 *
 * Owns reading its syntax: links separated by commas, each a `<URI-Reference>` and parameters
 * whose values are tokens or quoted strings — which may hold commas and semicolons themselves
 * (`title="a, b"`), so a link list cannot be split at commas. What a link *means* to a crawl
 * (canonical, next page) is decided where it is used (http.ts `headerLinks`).
 *
 * Never throws: a malformed link is skipped and reading resumes at the next comma outside
 * quotes, as a header from a hostile server must not cost more than the header's length.
 */

/** One link of a `Link` header. */
export interface HeaderLink {
  /** The target as written between `<` and `>` (unresolved). */
  readonly target: string;
  /** The `rel` parameter's relation types, lower-cased (RFC 8288 §3.3: only its first occurrence counts). */
  readonly rel: readonly string[];
  /** Every parameter, names lower-cased, values unquoted; a repeated name keeps its first value. */
  readonly params: Readonly<Record<string, string>>;
}

const isWs = (c: number): boolean => c === 0x20 || c === 0x09;

/** The links of one `Link` header value, in order (see the module comment). */
export function parseLinkHeader(value: string): HeaderLink[] {
  const out: HeaderLink[] = [];
  const n = value.length;
  let i = 0;
  // Skips to just past the next comma outside a quoted string (the end of a malformed link).
  const skipLink = (): void => {
    let quoted = false;
    for (; i < n; i++) {
      const c = value.charCodeAt(i);
      if (quoted) {
        if (c === 0x5c) i++;
        else if (c === 0x22) quoted = false;
      } else if (c === 0x22) quoted = true;
      else if (c === 0x2c) {
        i++;
        return;
      }
    }
  };
  while (i < n) {
    while (i < n && (isWs(value.charCodeAt(i)) || value.charCodeAt(i) === 0x2c)) i++;
    if (i >= n) break;
    if (value.charCodeAt(i) !== 0x3c) {
      skipLink();
      continue;
    }
    const close = value.indexOf('>', i + 1);
    if (close < 0) break;
    const target = value.slice(i + 1, close).trim();
    i = close + 1;
    // No prototype: a parameter named `__proto__` is a parameter like any other.
    const params = Object.create(null) as Record<string, string>;
    let ok = true;
    for (;;) {
      while (i < n && isWs(value.charCodeAt(i))) i++;
      if (i >= n || value.charCodeAt(i) === 0x2c) break;
      if (value.charCodeAt(i) !== 0x3b) {
        ok = false;
        break;
      }
      i++;
      while (i < n && isWs(value.charCodeAt(i))) i++;
      const nameStart = i;
      while (i < n && !/[=;,\s"]/.test(value[i]!)) i++;
      const name = value.slice(nameStart, i).toLowerCase();
      while (i < n && isWs(value.charCodeAt(i))) i++;
      let v = '';
      if (i < n && value.charCodeAt(i) === 0x3d) {
        i++;
        while (i < n && isWs(value.charCodeAt(i))) i++;
        if (i < n && value.charCodeAt(i) === 0x22) {
          // RFC 9110 §5.6.4 quoted-string: a backslash quotes the next character.
          i++;
          let closed = false;
          for (; i < n; i++) {
            const c = value.charCodeAt(i);
            if (c === 0x5c && i + 1 < n) v += value[++i];
            else if (c === 0x22) {
              closed = true;
              i++;
              break;
            } else v += value[i];
          }
          if (!closed) {
            ok = false;
            break;
          }
        } else {
          const start = i;
          while (i < n && value.charCodeAt(i) !== 0x3b && value.charCodeAt(i) !== 0x2c) i++;
          v = value.slice(start, i).trim();
        }
      }
      if (name !== '' && !(name in params)) params[name] = v;
    }
    if (!ok) {
      skipLink();
      continue;
    }
    const rel = params['rel'] === undefined ? [] : params['rel'].toLowerCase().split(/\s+/).filter(Boolean);
    out.push({ target, rel, params });
  }
  return out;
}
