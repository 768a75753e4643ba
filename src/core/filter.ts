/**
 * What the filters share on the TypeScript side: staging packed keys into wasm memory in
 * chunks (one boundary crossing per chunk, never per key), loading serialized blobs with
 * typed errors, and the read-only `ResidentFilter` any blob kind loads into.
 *
 * The blob layout is documented once, in core-rs/src/filter.rs: magic "MGFB", a format
 * version, a kind byte (0 blocked Bloom, 1 ribbon, 2 sharded ribbon), a checksum over
 * everything else, a body length, then the kind's parameters and payload. Validation happens
 * in the core; this file only turns its status codes into `CorruptFilterError` messages
 * that name what was wrong.
 */
import { CorruptFilterError, InvalidArgumentError } from '../errors/index.js';
import { core } from './instance.js';
import { KEY_BYTES, type KeyArray, keyCount } from './keys.js';
import { Resident } from './resident.js';

/** The filter a blob holds, by its kind byte (0, 1, 2). */
export type FilterKind = 'bloom' | 'ribbon' | 'sharded-ribbon';

const KIND_NAMES: readonly FilterKind[] = ['bloom', 'ribbon', 'sharded-ribbon'];
const HEADER_LEN = 24;

/** Keys staged per boundary crossing: 1 MiB of keys plus their verdict bytes. */
const CHUNK_KEYS = 1 << 16;

/** Throws `InvalidArgumentError` unless `value` is an integer in [min, max]; returns it. */
export function requireInteger(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${what}: expected an integer in [${min}, ${max}], received ${String(value)}`);
  }
  return value;
}

/** Throws unless key `i` of `keys` exists; returns its first lane index. */
export function keyAt(keys: KeyArray, i: number): number {
  const n = keyCount(keys);
  if (!Number.isInteger(i) || i < 0 || i >= n) {
    throw new InvalidArgumentError(`key index ${String(i)} is out of range for ${n} key(s)`);
  }
  return i * 4;
}

/**
 * Runs `call(keysPtr, count, outPtr)` over `keys` in chunks staged in the core's scratch
 * region and gathers one verdict byte per key into `out` (allocated when not given).
 */
export function verdictBatch(
  keys: KeyArray,
  out: Uint8Array | undefined,
  call: (keysPtr: number, count: number, outPtr: number) => void,
): Uint8Array {
  const n = keyCount(keys);
  const result = out ?? new Uint8Array(n);
  if (!(result instanceof Uint8Array) || result.length < n) {
    throw new InvalidArgumentError(`out must be a Uint8Array of at least ${n} bytes, received ${out instanceof Uint8Array ? `length ${out.length}` : typeof out}`);
  }
  if (n === 0) return result;
  const c = core();
  const chunk = Math.min(n, CHUNK_KEYS);
  const base = c.scratch(chunk * (KEY_BYTES + 1));
  const outPtr = base + chunk * KEY_BYTES;
  for (let from = 0; from < n; from += chunk) {
    const count = Math.min(chunk, n - from);
    c.u32.set(keys.subarray(from * 4, (from + count) * 4), base >>> 2);
    call(base, count, outPtr);
    result.set(c.u8.subarray(outPtr, outPtr + count), from);
  }
  return result;
}

/**
 * Runs `call(keysPtr, count)` over `keys` in chunks staged in the scratch region, which has
 * `extraPerKey` bytes per key free after the chunk's keys for the call's output.
 */
export function keyBatch(keys: KeyArray, call: (keysPtr: number, count: number) => void, extraPerKey = 0): void {
  const n = keyCount(keys);
  if (n === 0) return;
  const c = core();
  const chunk = Math.min(n, CHUNK_KEYS);
  const base = c.scratch(chunk * (KEY_BYTES + extraPerKey));
  for (let from = 0; from < n; from += chunk) {
    const count = Math.min(chunk, n - from);
    c.u32.set(keys.subarray(from * 4, (from + count) * 4), base >>> 2);
    call(base, count);
  }
}

/**
 * Copies `keys` into a fresh allocation (for calls that need a whole key set at once),
 * runs `use(ptr, count)` and frees the copy, also when `use` throws.
 */
export function withKeysInCore<T>(keys: KeyArray, use: (ptr: number, count: number) => T): T {
  const n = keyCount(keys);
  const c = core();
  const len = Math.max(n * KEY_BYTES, 16);
  const ptr = c.alloc(len);
  try {
    c.u32.set(keys, ptr >>> 2);
    return use(ptr, n);
  } finally {
    c.free(ptr, len);
  }
}

/** Copies a byte buffer the core returned (a serialized blob) into JS and frees it. */
export function takeBytes(handle: number): Uint8Array {
  const ex = core().exports;
  try {
    const ptr = ex.meguri_bytes_ptr(handle) >>> 0;
    return core().copyOutBytes(ptr, ex.meguri_bytes_len(handle));
  } finally {
    ex.meguri_bytes_free(handle);
  }
}

function readU64(bytes: Uint8Array, at: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset + at, 8);
  return v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32;
}

/** The message for a core blob status code, naming the offending value. */
function corruption(status: number, bytes: Uint8Array, expected: FilterKind | undefined): CorruptFilterError {
  const kind = bytes[5] ?? 0;
  switch (status) {
    case 1:
      return new CorruptFilterError(`filter blob is truncated: ${bytes.length} byte(s), the header alone is ${HEADER_LEN}`);
    case 2: {
      const magic = Array.from(bytes.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
      return new CorruptFilterError(`not a meguri filter blob: magic bytes ${magic}, expected "MGFB" (4d 47 46 42)`);
    }
    case 3:
      return new CorruptFilterError(`filter blob format version ${bytes[4] ?? '?'} is not readable by this build (expected 1)`);
    case 4:
      return new CorruptFilterError(`unknown filter kind ${kind} (known: 0 bloom, 1 ribbon, 2 sharded ribbon)`);
    case 5:
      return new CorruptFilterError(
        `filter blob is truncated or padded: its header declares ${readU64(bytes, 16)} body bytes, ${bytes.length - HEADER_LEN} are present`,
      );
    case 6:
      return new CorruptFilterError(`filter blob checksum mismatch (${bytes.length} bytes, kind ${kind}): the contents are corrupted`);
    case 7:
      return new CorruptFilterError(`filter blob of kind ${kind} has parameters inconsistent with its ${bytes.length - HEADER_LEN}-byte body`);
    case 8:
      return new CorruptFilterError(`expected a ${expected ?? 'different'} filter blob, received kind ${kind} (${KIND_NAMES[kind] ?? 'unknown'})`);
    default:
      return new CorruptFilterError(`filter blob rejected with status ${status}`);
  }
}

/**
 * Stages `bytes` in wasm memory and calls `load(ptr, len, statusPtr)`, which returns a
 * handle or 0 with a status code. Throws `CorruptFilterError` for any rejection.
 */
export function loadBlob(
  bytes: Uint8Array,
  expected: FilterKind | undefined,
  load: (ptr: number, len: number, statusPtr: number) => number,
): number {
  if (!(bytes instanceof Uint8Array)) {
    throw new InvalidArgumentError(`expected a filter blob as a Uint8Array, received ${typeof bytes}`);
  }
  const c = core();
  const len = bytes.length + 8;
  const ptr = c.alloc(len);
  try {
    c.u8.set(bytes, ptr);
    const statusPtr = ptr + ((bytes.length + 3) & ~3);
    const handle = load(ptr, bytes.length, statusPtr);
    if (handle === 0) throw corruption(c.u32[statusPtr >>> 2]!, bytes, expected);
    return handle;
  } finally {
    c.free(ptr, len);
  }
}

/** The core functions a membership filter's wrapper calls, bound once per class. */
export interface MembershipOps {
  queryKey(handle: number, h0: number, h1: number, p0: number, p1: number): number;
  queryBatch(handle: number, keys: number, count: number, out: number): void;
  len(handle: number): number;
  payloadBits(handle: number): number;
  release(handle: number): void;
}

/**
 * The one-sided membership probe every filter answers, over whichever core exports `ops`
 * names. `false` from `mayContain` is authoritative (the key is not in the set); `true`
 * means "probably", to be confirmed against an exact set.
 */
export abstract class MembershipFilter extends Resident {
  readonly #ops: MembershipOps;

  protected constructor(handle: number, what: string, ops: MembershipOps) {
    super(handle, what, ops.release);
    this.#ops = ops;
  }

  /** Whether key `i` of `keys` (default the first) may be in the set. */
  mayContain(keys: KeyArray, i = 0): boolean {
    const h = this.handle;
    const at = keyAt(keys, i);
    return this.#ops.queryKey(h, keys[at]!, keys[at + 1]!, keys[at + 2]!, keys[at + 3]!) !== 0;
  }

  /** One verdict byte per key (1 maybe, 0 certainly absent), into `out` when given. */
  mayContainBatch(keys: KeyArray, out?: Uint8Array): Uint8Array {
    const h = this.handle;
    const query = this.#ops.queryBatch;
    return verdictBatch(keys, out, (k, n, o) => query(h, k, n, o));
  }

  /** Keys the filter holds: `add` operations, or the keys a blob was built over. */
  get len(): number {
    return this.#ops.len(this.handle);
  }

  /** Bits of filter payload (headers excluded). */
  get payloadBits(): number {
    return this.#ops.payloadBits(this.handle);
  }

  /** Resident cost per held key: payload bits / len (0 when empty). */
  get bitsPerKey(): number {
    const len = this.len;
    return len === 0 ? 0 : this.payloadBits / len;
  }
}

/** Proves a constructor call comes from this library (a loader), not from user code. */
const adopt: unique symbol = Symbol('adopt');

let residentOps: MembershipOps | undefined;
function residentFilterOps(): MembershipOps {
  const ex = core().exports;
  residentOps ??= {
    queryKey: ex.meguri_filter_query_key,
    queryBatch: ex.meguri_filter_query_batch,
    len: ex.meguri_filter_len,
    payloadBits: ex.meguri_filter_payload_bits,
    release: ex.meguri_filter_free,
  };
  return residentOps;
}

/**
 * A filter loaded from a blob: answers the one-sided membership probe and reports its
 * cost, but never inserts. Blocked-Bloom, ribbon and sharded-ribbon blobs all load into
 * this one type; `kind` says which.
 */
export class ResidentFilter extends MembershipFilter {
  /** Which filter the blob held. */
  readonly kind: FilterKind;

  /** @internal Use `loadFilter`. */
  constructor(token: typeof adopt, handle: number) {
    if (token !== adopt) throw new InvalidArgumentError('ResidentFilter is created by loadFilter(bytes), not with new');
    super(handle, 'ResidentFilter', residentFilterOps());
    this.kind = KIND_NAMES[core().exports.meguri_filter_kind(handle)] ?? 'bloom';
  }
}

/**
 * Reads a filter blob of any kind (a `BloomFilter.marshal()`, `buildRibbon` or
 * `buildShardedRibbon…` result) into a read-only `ResidentFilter`. A truncated, corrupted,
 * foreign or unknown blob throws `CorruptFilterError`; no filter is ever built from it.
 */
export function loadFilter(bytes: Uint8Array): ResidentFilter {
  const ex = core().exports;
  return new ResidentFilter(adopt, loadBlob(bytes, undefined, (p, n, s) => ex.meguri_filter_load(p, n, s)));
}
