/**
 * A deliberately plain BigInt implementation of XXH64, written from the algorithm's
 * description and sharing no code with core-rs: the oracle the wasm kernel is tested against.
 * Slow (BigInt per operation) and obviously shaped like the spec, which is the point.
 */
const M = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M;
const mul = (a: bigint, b: bigint): bigint => (a * b) & M;
const add = (a: bigint, b: bigint): bigint => (a + b) & M;

function le(bytes: Uint8Array, at: number, n: number): bigint {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[at + i]!);
  return v;
}

function round(acc: bigint, lane: bigint): bigint {
  return mul(rotl(add(acc, mul(lane, P2)), 31n), P1);
}

export function referenceXxh64(bytes: Uint8Array, seed: bigint = 0n): bigint {
  const len = bytes.length;
  let i = 0;
  let h: bigint;
  if (len >= 32) {
    const v = [add(add(seed, P1), P2), add(seed, P2), seed, (seed - P1) & M];
    for (; i + 32 <= len; i += 32) {
      for (let lane = 0; lane < 4; lane++) v[lane] = round(v[lane]!, le(bytes, i + lane * 8, 8));
    }
    h = add(add(rotl(v[0]!, 1n), rotl(v[1]!, 7n)), add(rotl(v[2]!, 12n), rotl(v[3]!, 18n)));
    for (const acc of v) h = add(mul(h ^ round(0n, acc), P1), P4);
  } else {
    h = add(seed, P5);
  }
  h = add(h, BigInt(len));
  for (; i + 8 <= len; i += 8) h = add(mul(rotl(h ^ round(0n, le(bytes, i, 8)), 27n), P1), P4);
  if (i + 4 <= len) {
    h = add(mul(rotl(h ^ mul(le(bytes, i, 4), P1), 23n), P2), P3);
    i += 4;
  }
  for (; i < len; i++) h = mul(rotl(h ^ mul(BigInt(bytes[i]!), P5), 11n), P1);
  h ^= h >> 33n;
  h = mul(h, P2);
  h ^= h >> 29n;
  h = mul(h, P3);
  return h ^ (h >> 32n);
}
