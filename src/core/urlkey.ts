/**
 * @internal The wasm half of URL keying (core-rs/src/urlkey.rs): an origin → HostKey table
 * resident in wasm, and the batch call that, for each staged canonical URL, finds its origin
 * (`scheme://host[:port]`), looks the origin up and hashes the whole URL into the PathKey.
 *
 * src/url/keys.ts owns the tables (one per host grouping) and the group names their ids
 * index; this wrapper only moves bytes and ids across the boundary. It knows nothing of host
 * grouping or of the key seeds' meaning, and it never decides what a canonical URL is: a URL
 * whose origin the table does not hold (or that has no origin) comes back as a miss, for the
 * TypeScript side to handle exactly as it would without the table.
 */
import { core } from './instance.js';
import { Resident } from './resident.js';
import { stageChunk } from './hash.js';

/** The id the table reports for an origin it does not hold (u32::MAX). */
export const ORIGIN_MISS = 0xffffffff;

const releaseTable = (h: number): void => core().exports.meguri_urlkey_table_free(h);
const encoder = new TextEncoder();
const NO_MISSES = new Uint32Array(0);

/**
 * @internal Origin bytes → (id, HostKey lanes) in wasm memory. Ids count up from 0 in
 * insertion order and restart after `clear()`. Owns its memory: `free()` when done.
 */
export class OriginKeyTable extends Resident {
  constructor() {
    super(core().exports.meguri_urlkey_table_new(), 'OriginKeyTable', releaseTable);
  }

  /** Number of origins held. */
  get len(): number {
    return core().exports.meguri_urlkey_table_len(this.handle) >>> 0;
  }

  /** Bytes of wasm memory the table holds. */
  get memoryBytes(): number {
    return core().exports.meguri_urlkey_table_memory_bytes(this.handle) >>> 0;
  }

  /** Forgets every origin; ids restart at 0. */
  clear(): void {
    core().exports.meguri_urlkey_table_clear(this.handle);
  }

  /**
   * Keys strings[from, to) (holding `units` UTF-16 units; every element a string) in one
   * call: key k lands at lanes [4k, 4k + 4) of `out` with HostKey lanes 0 for a miss, and,
   * when `ids` is given, the origin id (or `ORIGIN_MISS`) at `ids[k - from]`. Returns the
   * chunk-relative indexes of the misses, in order.
   */
  keyChunk(
    strings: readonly string[],
    from: number,
    to: number,
    units: number,
    seedLo: number,
    seedHi: number,
    out: Uint32Array,
    ids?: Uint32Array,
  ): Uint32Array {
    const h = this.handle;
    const c = core();
    const count = to - from;
    // Results region: keys (16 B each) | ids (4 B) | misses (4 B).
    const { base, offsetsPtr, dataPtr, written } = stageChunk(strings, from, to, units, count * 24);
    const idsPtr = base + count * 16;
    const missPtr = idsPtr + count * 4;
    const missed = c.exports.meguri_urlkey_batch(h, dataPtr, written, offsetsPtr, count, seedLo, seedHi, base, ids ? idsPtr : 0, missPtr) >>> 0;
    const u32 = c.u32;
    out.set(u32.subarray(base >>> 2, (base >>> 2) + count * 4), from * 4);
    if (ids) ids.set(u32.subarray(idsPtr >>> 2, (idsPtr >>> 2) + count));
    return missed === 0 ? NO_MISSES : u32.slice(missPtr >>> 2, (missPtr >>> 2) + missed);
  }

  /**
   * Keys one string: writes its four key lanes (HostKey lanes 0 on a miss) to `lanes[0..4)`
   * and returns the origin id, or -1 when the table does not hold its origin.
   */
  keyOne(url: string, seedLo: number, seedHi: number, lanes: Uint32Array): number {
    const h = this.handle;
    const c = core();
    const view = c.scratchBytes(url.length * 3 + 32);
    const len = encoder.encodeInto(url, view).written;
    const base = c.scratch(0);
    const keyPtr = (base + len + 15) & ~15;
    const id = c.exports.meguri_urlkey_one(h, base, len, seedLo, seedHi, keyPtr);
    const u32 = c.u32;
    const k = keyPtr >>> 2;
    lanes[0] = u32[k]!;
    lanes[1] = u32[k + 1]!;
    lanes[2] = u32[k + 2]!;
    lanes[3] = u32[k + 3]!;
    return id;
  }

  /**
   * Remembers `origins[j]` with HostKey lanes `hostLanes[2j]`, `hostLanes[2j + 1]` and
   * returns the ids, `ORIGIN_MISS` for a string that is not a memoizable origin
   * (`http(s)://` + ASCII authority). An origin already held keeps its entry and id.
   */
  insert(origins: readonly string[], hostLanes: Uint32Array): Uint32Array {
    const h = this.handle;
    const m = origins.length;
    if (m === 0) return new Uint32Array(0);
    let units = 0;
    for (let j = 0; j < m; j++) units += origins[j]!.length;
    // Results region: host keys (8 B each) | ids (4 B).
    const { base, offsetsPtr, dataPtr, written } = stageChunk(origins, 0, m, units, m * 12);
    const c = core();
    c.u32.set(hostLanes.subarray(0, 2 * m), base >>> 2);
    const idsPtr = base + m * 8;
    c.exports.meguri_urlkey_table_insert_batch(h, dataPtr, written, offsetsPtr, m, base, idsPtr);
    // The table may have grown memory: read through a fresh view.
    return c.u32.slice(idsPtr >>> 2, (idsPtr >>> 2) + m);
  }
}
