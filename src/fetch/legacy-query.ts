/**
 * The query of a link in a page that is not UTF-8, encoded as a browser encodes it: HTML parses
 * a document's URLs with the document's character encoding, and the URL standard percent-encodes
 * a special URL's query in that encoding (its path is UTF-8 whatever the page). A Shift_JIS page's
 * `<a href="/search?q=日本語">` asks for `?q=%93%FA%96%7B%8C%EA`; the same link encoded as UTF-8
 * (`?q=%E6%97%A5…`) reaches the server as other bytes — on a loopback Shift_JIS site, a "no
 * results" page or an error instead of the page linked. Legacy encodings are still common on
 * Japanese, Chinese, Korean and Cyrillic sites, and their links carry raw text in queries
 * (search and tag links).
 *
 * Node has no encoder for legacy encodings (TextEncoder is UTF-8 only), but its TextDecoder
 * knows them all (WHATWG Encoding), so an encoder is its inverse: a table built once per
 * encoding by decoding every single byte 0x80–0xFF and every two-byte sequence (lead
 * 0x81–0xFE, trail 0x40–0xFE) — 24,000 decodes, 4–25 ms, kept for the process. Where two
 * sequences decode to one character the first (lowest) wins, as the standard's "index pointer"
 * does, except Shift_JIS, whose encoder skips the NEC-selected IBM extensions (lead bytes 0xED
 * and 0xEE) for the IBM ones. Characters outside the table (three- and four-byte forms: EUC-JP's
 * JIS X 0212, gb18030's four-byte ranges) are written as the standard's encoders write an
 * unmappable character in a URL, an HTML numeric reference `&#N;`, percent-encoded. Every byte
 * of an encoded character is percent-encoded (a browser leaves an ASCII trail byte such as
 * Shift_JIS's 0x5C bare; the server decodes both to the same bytes). ISO-2022-JP, a stateful
 * encoding, is left to UTF-8.
 *
 * Never: touch the path, the fragment or an ASCII query (a query already percent-encoded is
 * taken as the page wrote it).
 */

/** Encodings whose query is UTF-8 whatever the page says (the standard's rule, and ISO-2022-JP here). */
const UTF8_QUERY = new Set(['utf-8', 'utf-16le', 'utf-16be', 'replacement', 'iso-2022-jp']);

/** Per encoding name, character → its bytes (built on first use). */
const tables = new Map<string, Map<string, readonly number[]>>();

const hex = (b: number): string => `%${b < 16 ? '0' : ''}${b.toString(16).toUpperCase()}`;

function tableOf(encoding: string): Map<string, readonly number[]> {
  let table = tables.get(encoding);
  if (table !== undefined) return table;
  table = new Map();
  const decoder = new TextDecoder(encoding);
  const one = new Uint8Array(1);
  for (let b = 0x80; b <= 0xff; b++) {
    one[0] = b;
    const s = decoder.decode(one);
    if (s.length === 1 && s !== '\ufffd' && !table.has(s)) table.set(s, [b]);
  }
  const two = new Uint8Array(2);
  const skipLead = encoding === 'shift_jis' ? (lead: number): boolean => lead === 0xed || lead === 0xee : (): boolean => false;
  for (let lead = 0x81; lead <= 0xfe; lead++) {
    if (skipLead(lead)) continue;
    two[0] = lead;
    for (let trail = 0x40; trail <= 0xfe; trail++) {
      two[1] = trail;
      const s = decoder.decode(two);
      // One character (a BMP one, or a surrogate pair for the few beyond it).
      if (s !== '\ufffd' && [...s].length === 1 && !table.has(s)) table.set(s, [lead, trail]);
    }
  }
  // The yen sign and overline are ASCII bytes in the Japanese encoders (the standard's rule).
  if (encoding === 'shift_jis' || encoding === 'euc-jp') {
    table.set('\u00a5', [0x5c]);
    table.set('\u203e', [0x7e]);
  }
  tables.set(encoding, table);
  return table;
}

/** Whether `s` has a character outside ASCII. */
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * `href` with the non-ASCII characters of its query percent-encoded in `encoding` (a name as
 * `TextDecoder.encoding` gives it, e.g. from `sniffCharset`); `href` itself when the encoding's
 * queries are UTF-8, when it has no query, or when its query is ASCII.
 */
export function encodeQuery(href: string, encoding: string): string {
  if (UTF8_QUERY.has(encoding) || !NON_ASCII.test(href)) return href;
  const q = href.indexOf('?');
  if (q < 0) return href;
  const hash = href.indexOf('#', q);
  const end = hash < 0 ? href.length : hash;
  const query = href.slice(q + 1, end);
  if (!NON_ASCII.test(query)) return href;
  let table: Map<string, readonly number[]>;
  try {
    table = tableOf(encoding);
  } catch {
    return href; // a label this runtime cannot decode: left to UTF-8
  }
  let out = '';
  for (const ch of query) {
    if (ch.charCodeAt(0) < 0x80) {
      out += ch;
      continue;
    }
    const bytes = table.get(ch);
    if (bytes !== undefined) for (const b of bytes) out += hex(b);
    else out += `%26%23${ch.codePointAt(0)!}%3B`;
  }
  return href.slice(0, q + 1) + out + href.slice(end);
}
