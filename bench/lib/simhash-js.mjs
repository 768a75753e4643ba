// A pure-JavaScript simhash with the same definition as meguri's wasm kernel, written the way a
// careful JS implementer would: a Unicode regex for tokens, per-token lowercasing, XXH64 on
// 32-bit halves (Math.imul and 16-bit limbs, no BigInt), and 64 Int32 counters updated per
// occurrence. It is the benchmark's baseline, checked against the kernel before timing.

const SEED_LO = 0x686d6973; // "simhash\0" little-endian: 0x00687361_686d6973
const SEED_HI = 0x00687361;

// XXH64 primes as [hi, lo].
const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

// Results of the 64-bit helpers, to avoid allocating a pair per operation.
let rh = 0;
let rl = 0;

function mul(ah, al, bh, bl) {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const carry = ((p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff)) >>> 16;
  const hiOfLow = p11 + (p01 >>> 16) + (p10 >>> 16) + carry;
  rl = Math.imul(al, bl) >>> 0;
  rh = (hiOfLow + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}
function add(ah, al, bh, bl) {
  const lo = al + bl;
  rl = lo >>> 0;
  rh = (ah + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}
function rotl(h, l, r) {
  if (r >= 32) {
    const t = h;
    h = l;
    l = t;
    r -= 32;
  }
  if (r === 0) {
    rh = h >>> 0;
    rl = l >>> 0;
    return;
  }
  rh = ((h << r) | (l >>> (32 - r))) >>> 0;
  rl = ((l << r) | (h >>> (32 - r))) >>> 0;
}
function rd32(b, i) {
  return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
}
/** round(acc, lane) = rotl(acc + lane·P2, 31)·P1 */
function round(ah, al, lh, ll) {
  mul(lh, ll, P2H, P2L);
  add(ah, al, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, P1H, P1L);
}

/** The XXH64 final mix of (hh, hl); result in (rh, rl). */
function avalanche(hh, hl) {
  // h ^= h >> 33
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L); hh = rh; hl = rl;
  // h ^= h >> 29
  hl = (hl ^ ((hl >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L); hh = rh; hl = rl;
  // h ^= h >> 32
  rl = (hl ^ hh) >>> 0;
  rh = hh;
}

/** acc = (acc ^ round(0, v))·P1 + P4, the merge of one stripe accumulator; result in (rh, rl). */
function mergeRound(ah, al, vh, vl) {
  round(0, 0, vh, vl);
  mul((ah ^ rh) >>> 0, (al ^ rl) >>> 0, P1H, P1L);
  add(rh, rl, P4H, P4L);
}

/** XXH64 of bytes[0, len) with the simhash seed; result in (rh, rl). */
export function xxh64Simhash(b, len) {
  let hh, hl;
  let i = 0;
  if (len >= 32) {
    add(SEED_HI, SEED_LO, P1H, P1L); add(rh, rl, P2H, P2L);
    let v1h = rh, v1l = rl;
    add(SEED_HI, SEED_LO, P2H, P2L);
    let v2h = rh, v2l = rl;
    let v3h = SEED_HI, v3l = SEED_LO;
    add(SEED_HI, SEED_LO, ~P1H >>> 0, ~P1L >>> 0); add(rh, rl, 0, 1); // seed − P1
    let v4h = rh, v4l = rl;
    for (; i + 32 <= len; i += 32) {
      round(v1h, v1l, rd32(b, i + 4), rd32(b, i)); v1h = rh; v1l = rl;
      round(v2h, v2l, rd32(b, i + 12), rd32(b, i + 8)); v2h = rh; v2l = rl;
      round(v3h, v3l, rd32(b, i + 20), rd32(b, i + 16)); v3h = rh; v3l = rl;
      round(v4h, v4l, rd32(b, i + 28), rd32(b, i + 24)); v4h = rh; v4l = rl;
    }
    rotl(v1h, v1l, 1); let ah = rh, al = rl;
    rotl(v2h, v2l, 7); add(ah, al, rh, rl); ah = rh; al = rl;
    rotl(v3h, v3l, 12); add(ah, al, rh, rl); ah = rh; al = rl;
    rotl(v4h, v4l, 18); add(ah, al, rh, rl); ah = rh; al = rl;
    mergeRound(ah, al, v1h, v1l); ah = rh; al = rl;
    mergeRound(ah, al, v2h, v2l); ah = rh; al = rl;
    mergeRound(ah, al, v3h, v3l); ah = rh; al = rl;
    mergeRound(ah, al, v4h, v4l);
    hh = rh; hl = rl;
  } else {
    add(SEED_HI, SEED_LO, P5H, P5L);
    hh = rh; hl = rl;
  }
  add(hh, hl, 0, len); hh = rh; hl = rl;
  for (; i + 8 <= len; i += 8) {
    round(0, 0, rd32(b, i + 4), rd32(b, i));
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 27); mul(rh, rl, P1H, P1L); add(rh, rl, P4H, P4L); hh = rh; hl = rl;
  }
  if (i + 4 <= len) {
    mul(0, rd32(b, i), P1H, P1L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 23); mul(rh, rl, P2H, P2L); add(rh, rl, P3H, P3L); hh = rh; hl = rl;
    i += 4;
  }
  for (; i < len; i++) {
    mul(0, b[i], P5H, P5L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 11); mul(rh, rl, P1H, P1L); hh = rh; hl = rl;
  }
  avalanche(hh, hl);
}

const TOKEN = /[\p{Alphabetic}\p{N}]+/gu;
const encoder = new TextEncoder();
const buf = new Uint8Array(4096);
const counts = new Int32Array(64);

/**
 * Simhash of a text as [lo, hi] u32 lanes written to `out`: regex tokens, lowercased per
 * token, UTF-8 encoded into a reused buffer, hashed, and counted per occurrence.
 */
export function simhashTextJs(text, out = new Uint32Array(2)) {
  counts.fill(0);
  let n = 0;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    const tok = m[0].toLowerCase();
    const len = tok.length <= 1365 ? encoder.encodeInto(tok, buf).written : encoder.encode(tok).length;
    xxh64Simhash(buf, len);
    const lo = rl, hi = rh;
    for (let i = 0; i < 32; i++) {
      counts[i] += (lo >>> i) & 1;
      counts[32 + i] += (hi >>> i) & 1;
    }
    n++;
  }
  let lo = 0, hi = 0;
  for (let i = 0; i < 32; i++) {
    if (2 * counts[i] > n) lo |= 1 << i;
    if (2 * counts[32 + i] > n) hi |= 1 << i;
  }
  out[0] = lo >>> 0;
  out[1] = hi >>> 0;
  return out;
}
