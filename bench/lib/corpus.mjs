// Deterministic synthetic inputs shared by the kernel benchmarks.

/** A seeded LCG returning floats in [0, 1). */
export function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const words = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but ' +
  'crawl frontier host page link index archive report news weather sports market policy review ' +
  'update article section comment share login search menu footer header contact about privacy terms'
).split(' ');

/**
 * An HTML-ish document of about `bytes` bytes: nested tags with attributes, paragraphs of
 * common words with some capitalized, numbers, dates and entities (the shape of a fetched
 * page body before boilerplate stripping).
 */
export function htmlDoc(seed, bytes = 10 * 1024) {
  const r = lcg(seed);
  const word = () => {
    const w = words[Math.floor(r() * words.length)];
    return r() < 0.1 ? w[0].toUpperCase() + w.slice(1) : w;
  };
  let out = '<!doctype html><html><head><title>';
  for (let i = 0; i < 6; i++) out += `${word()} `;
  out += '</title></head><body>\n';
  while (out.length < bytes - 200) {
    const tag = ['p', 'div', 'li', 'span', 'h2'][Math.floor(r() * 5)];
    out += `<${tag} class="c${Math.floor(r() * 40)}" data-id="${Math.floor(r() * 1e6)}">`;
    const n = 8 + Math.floor(r() * 30);
    for (let i = 0; i < n; i++) {
      out += word();
      const x = r();
      out += x < 0.03 ? ` ${Math.floor(r() * 10000)} ` : x < 0.05 ? ', ' : x < 0.06 ? ' &amp; ' : x < 0.07 ? ` 2024-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)} ` : ' ';
    }
    out += `<a href="/articles/${Math.floor(r() * 1e5)}">${word()}</a></${tag}>\n`;
  }
  return `${out}</body></html>`;
}

/** `n` random 128-bit keys as a KeyArray (4 u32 lanes each). */
export function randomKeys(n, seed) {
  const out = new Uint32Array(n * 4);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s;
  }
  return out;
}
