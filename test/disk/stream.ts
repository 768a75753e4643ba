// A deterministic input stream for the DRUM store tests and the crash-drill child: item j of
// the stream is key id (j·7919) mod D, so the first D items are a permutation of [0, D) and
// later items repeat them. A key's PathKey low lane is its id and its payload is the id too,
// so the output log can be checked by counting ids, with no string sets.
import { fmix32 as mix32 } from '../../src/core/mix.js';

/** Keys and payloads of stream items [from, from + n) over `distinct` ids on `hosts` hosts. */
export function streamBatch(from: number, n: number, distinct: number, hosts = 5000): { keys: Uint32Array; pays: Uint32Array } {
  const keys = new Uint32Array(n * 4);
  const pays = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const id = ((from + i) * 7919) % distinct;
    const h = id % hosts;
    keys[4 * i] = mix32(h ^ 0x9e3779b9);
    keys[4 * i + 1] = mix32(h);
    keys[4 * i + 2] = id;
    keys[4 * i + 3] = mix32(id ^ 0x85ebca6b);
    pays[i] = id;
  }
  return { keys, pays };
}
