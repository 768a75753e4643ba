// The wasm core as committed at an earlier revision, instantiated on its own memory, so a
// suite can time a kernel before and after a change in the same process (the shared machine
// swings absolute figures by 2× between runs; ratios within one run hold). The bytes come from
// `git show <rev>:wasm/meguri_core.wasm`; BENCH_BASELINE picks the revision. Returns undefined
// when git or the revision is unavailable (e.g. a published tarball), and suites then print
// only the current kernel.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The revision before the issue-19 kernels (simhash SIMD, bucketed seen-set, wasm canonicalizer). */
export const BASELINE_REV = process.env.BENCH_BASELINE ?? 'eaa560c';

/** A raw instance of the baseline core: `{ exports, u8(), u32(), alloc(n) }`, or undefined. */
export function loadBaselineCore(rev = BASELINE_REV) {
  let bytes;
  try {
    bytes = execFileSync('git', ['show', `${rev}:wasm/meguri_core.wasm`], { cwd: root, maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  return rawCore(bytes, rev);
}

/** A raw instance of the working tree's wasm/meguri_core.wasm (same shape as the baseline). */
export function loadWorkingCore() {
  return rawCore(readFileSync(join(root, 'wasm', 'meguri_core.wasm')), 'working tree');
}

function rawCore(bytes, rev) {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  const ex = instance.exports;
  return {
    rev,
    exports: ex,
    u8: () => new Uint8Array(ex.memory.buffer),
    u32: () => new Uint32Array(ex.memory.buffer),
    alloc: (n) => ex.meguri_alloc(n) >>> 0,
    free: (p, n) => ex.meguri_free(p, n),
  };
}

/**
 * A baseline batch simhash over `docs`: stages them once as packed UTF-8 + offsets in the
 * baseline's memory and returns a function that re-hashes them (the staging is not timed;
 * the kernel is what changed), writing lanes into `out`.
 */
export function baselineSimhashBatch(base, docs) {
  const enc = new TextEncoder();
  const parts = docs.map((d) => enc.encode(d));
  const total = parts.reduce((a, p) => a + p.length, 0);
  const data = base.alloc(total);
  const offs = base.alloc((docs.length + 1) * 4);
  const out = base.alloc(docs.length * 8);
  let at = 0;
  base.u32()[offs >>> 2] = 0;
  parts.forEach((p, i) => {
    base.u8().set(p, data + at);
    at += p.length;
    base.u32()[(offs >>> 2) + i + 1] = at;
  });
  return (lanes) => {
    base.exports.meguri_simhash_text_batch(data, total, offs, docs.length, out);
    lanes.set(base.u32().subarray(out >>> 2, (out >>> 2) + docs.length * 2));
  };
}
