/**
 * The shared WebAssembly instance and its memory views.
 *
 * One instance per realm (DESIGN §3): every wrapper in the library calls `core()` and gets
 * the same `Core`, so filters, indexes and scratch buffers share one linear memory. The
 * module is compiled once and cached. Typed-array views over `memory.buffer` go stale when
 * the memory grows (the old ArrayBuffer is detached), so every access goes through the view
 * getters, which re-derive the views whenever the buffer identity changes: callers must
 * re-read a view after any call that may allocate, never hold one across such a call.
 *
 * This file imports nothing from `node:`; the Node-only synchronous loader lives in
 * `./node.ts` and registers itself here as the lazy source.
 */
import { CoreNotLoadedError, WasmAbiError, WasmOutOfMemoryError } from '../errors/index.js';
import { type CoreExports, EXPECTED_ABI_VERSION, REQUIRED_FUNCTIONS } from './abi.js';

/** The loaded core: typed exports plus memory helpers. */
export class Core {
  /** The raw exports, typed by `CoreExports`. */
  readonly exports: CoreExports;
  private readonly memory: WebAssembly.Memory;
  private buffer: ArrayBuffer;
  private u8View: Uint8Array;
  private u32View: Uint32Array;
  private i32View: Int32Array;
  private f32View: Float32Array;
  private f64View: Float64Array;
  private u64View: BigUint64Array;
  private scratchPtr = 0;
  private scratchLen = 0;
  private scratchView: Uint8Array | undefined;

  /** @internal Use `loadCore`/`loadCoreSync`; this validates an instance's exports. */
  constructor(instance: WebAssembly.Instance) {
    const ex = instance.exports as Record<string, unknown>;
    if (!(ex['memory'] instanceof WebAssembly.Memory)) {
      throw new WasmAbiError('the wasm module does not export its memory as "memory"');
    }
    for (const name of REQUIRED_FUNCTIONS) {
      if (typeof ex[name] !== 'function') {
        throw new WasmAbiError(`the wasm module lacks the export ${JSON.stringify(name)}: rebuild it with npm run build:core`);
      }
    }
    this.exports = ex as unknown as CoreExports;
    const version = this.exports.meguri_abi_version();
    if (version !== EXPECTED_ABI_VERSION) {
      throw new WasmAbiError(`wasm ABI version ${version}, expected ${EXPECTED_ABI_VERSION}: the binary and the library are from different builds`);
    }
    this.memory = this.exports.memory;
    this.buffer = this.memory.buffer;
    this.u8View = new Uint8Array(this.buffer);
    this.u32View = new Uint32Array(this.buffer);
    this.i32View = new Int32Array(this.buffer);
    this.f32View = new Float32Array(this.buffer);
    this.f64View = new Float64Array(this.buffer);
    this.u64View = new BigUint64Array(this.buffer);
  }

  /**
   * Re-derives the views when memory has grown. Growing detaches the old `ArrayBuffer`, and
   * a view over a detached buffer has length 0 (the memory is never empty: the module's
   * data and stack live in it), so checking a view's length detects growth without calling
   * the `memory.buffer` getter, which measured about 50 ns per call in Node 20 against 3–5
   * for the length check: it was a third of a one-string `xxh64` (two view reads per call).
   */
  private refresh(): void {
    if (this.u8View.length === 0 && this.memory.buffer !== this.buffer) {
      this.buffer = this.memory.buffer;
      this.u8View = new Uint8Array(this.buffer);
      this.u32View = new Uint32Array(this.buffer);
      this.i32View = new Int32Array(this.buffer);
      this.f32View = new Float32Array(this.buffer);
      this.f64View = new Float64Array(this.buffer);
      this.u64View = new BigUint64Array(this.buffer);
      this.scratchView = undefined;
    }
  }

  /** Bytes of linear memory (current view). */
  get u8(): Uint8Array {
    this.refresh();
    return this.u8View;
  }
  /** u32 lanes of linear memory; index = byte offset >>> 2. */
  get u32(): Uint32Array {
    this.refresh();
    return this.u32View;
  }
  /** i32 lanes of linear memory; index = byte offset >>> 2. */
  get i32(): Int32Array {
    this.refresh();
    return this.i32View;
  }
  /** f32 lanes of linear memory; index = byte offset >>> 2. */
  get f32(): Float32Array {
    this.refresh();
    return this.f32View;
  }
  /** f64 lanes of linear memory; index = byte offset >>> 3. */
  get f64(): Float64Array {
    this.refresh();
    return this.f64View;
  }
  /** u64 lanes of linear memory; index = byte offset >>> 3. */
  get u64(): BigUint64Array {
    this.refresh();
    return this.u64View;
  }

  /** Current size of linear memory in bytes. */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Allocates `len` bytes (16-byte aligned) in wasm memory; free with `free(ptr, len)`. */
  alloc(len: number): number {
    // i32 results arrive signed in JS; `>>> 0` keeps offsets above 2 GiB positive.
    const ptr = this.exports.meguri_alloc(len) >>> 0;
    if (ptr === 0) throw new WasmOutOfMemoryError(`could not allocate ${len} bytes of wasm memory`);
    return ptr;
  }

  /** Frees a block from `alloc` with its original length. */
  free(ptr: number, len: number): void {
    if (ptr !== 0) this.exports.meguri_free(ptr, len);
  }

  /**
   * Returns the base of a reusable scratch region of at least `len` bytes (16-byte aligned).
   * The region is owned by the Core and reused by the next `scratch` call, so a caller lays
   * out its whole batch (inputs and outputs) in one region, makes its calls and copies the
   * results out before any other wrapper runs. Not reentrant, by design: batch wrappers are
   * synchronous and never nest.
   */
  scratch(len: number): number {
    if (len > this.scratchLen) {
      // Grow geometrically so a sequence of slightly larger batches does not reallocate each time.
      const next = Math.max(len, this.scratchLen * 2, 64 * 1024);
      this.free(this.scratchPtr, this.scratchLen);
      this.scratchPtr = 0;
      this.scratchLen = 0;
      this.scratchPtr = this.alloc(next);
      this.scratchLen = next;
      this.scratchView = undefined;
    }
    return this.scratchPtr;
  }

  /**
   * A Uint8Array over the whole scratch region (at least `len` bytes), cached until the
   * region or memory changes. Encoding a string with `encodeInto(s, view)` writes at the
   * region's start without allocating a subarray per call, which is the measured cost of
   * short single-string calls.
   */
  scratchBytes(len: number): Uint8Array {
    this.scratch(len);
    this.refresh();
    if (this.scratchView === undefined) {
      this.scratchView = new Uint8Array(this.buffer, this.scratchPtr, this.scratchLen);
    }
    return this.scratchView;
  }

  /** Copies a typed array into wasm memory at byte offset `ptr`. */
  copyIn(ptr: number, data: ArrayBufferView): void {
    this.u8.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), ptr);
  }

  /** Copies `len` bytes from wasm memory at `ptr` into a new Uint8Array. */
  copyOutBytes(ptr: number, len: number): Uint8Array {
    return this.u8.slice(ptr, ptr + len);
  }
}

/** Anything `loadCore` accepts as the binary. */
export type CoreSource =
  | string
  | URL
  | Request
  | Response
  | ArrayBuffer
  | ArrayBufferView
  | WebAssembly.Module;

let shared: Core | undefined;
let pending: Promise<Core> | undefined;
let compiled: WebAssembly.Module | undefined;
let syncSource: (() => Uint8Array) | undefined;
let defaultUrl: (() => URL) | undefined = () => new URL('../../wasm/meguri_core.wasm', import.meta.url);

/** @internal The Node entry registers a synchronous byte source so `core()` can self-load. */
export function registerSyncSource(read: () => Uint8Array): void {
  syncSource = read;
  defaultUrl = undefined;
}

function instantiateModule(module: WebAssembly.Module): Core {
  compiled = module;
  const instance = new WebAssembly.Instance(module, {});
  return new Core(instance);
}

function compileBytes(bytes: ArrayBuffer | ArrayBufferView): WebAssembly.Module {
  try {
    return new WebAssembly.Module(bytes as BufferSource);
  } catch (err) {
    throw new WasmAbiError(`the bytes given are not a valid WebAssembly module: ${String(err)}`, { cause: err });
  }
}

/**
 * Instantiates the core synchronously from bytes or a compiled module and makes it the
 * shared instance (returning the existing one if the core is already loaded).
 */
export function loadCoreFrom(source: ArrayBuffer | ArrayBufferView | WebAssembly.Module): Core {
  if (shared) return shared;
  const module = source instanceof WebAssembly.Module ? source : compileBytes(source);
  shared = instantiateModule(module);
  return shared;
}

async function compileFromResponse(response: Response): Promise<WebAssembly.Module> {
  if (!response.ok) {
    throw new WasmAbiError(`fetching the wasm core failed: HTTP ${response.status} ${response.statusText}`);
  }
  const type = response.headers.get('content-type') ?? '';
  if (typeof WebAssembly.compileStreaming === 'function' && type.split(';')[0]?.trim() === 'application/wasm') {
    try {
      return await WebAssembly.compileStreaming(response);
    } catch (err) {
      throw new WasmAbiError(`streaming compile of the wasm core failed: ${String(err)}`, { cause: err });
    }
  }
  return compileBytes(await response.arrayBuffer());
}

async function resolveModule(source: CoreSource | undefined): Promise<WebAssembly.Module> {
  if (source === undefined) {
    if (compiled) return compiled;
    if (syncSource) return compileBytes(syncSource());
    if (!defaultUrl) throw new CoreNotLoadedError('no default location for the wasm core; pass its URL or bytes to loadCore()');
    return compileFromResponse(await fetch(defaultUrl()));
  }
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return compileBytes(source);
  if (typeof Response !== 'undefined' && source instanceof Response) return compileFromResponse(source);
  return compileFromResponse(await fetch(source as string | URL | Request));
}

/**
 * Loads the WebAssembly core once per realm and resolves to the shared instance.
 *
 * In a browser pass the URL of `meguri_core.wasm` (or its bytes, a `Response` or a compiled
 * module); with no argument the URL next to this module is fetched, which is what bundlers
 * that understand `new URL(…, import.meta.url)` expect. A URL or `Response` served as
 * `application/wasm` is compiled while it streams. In Node no argument is needed: the
 * binary shipped in the package is read from disk. Concurrent calls share one load.
 */
export function loadCore(source?: CoreSource): Promise<Core> {
  if (shared) return Promise.resolve(shared);
  if (!pending) {
    pending = resolveModule(source)
      .then((module) => {
        if (!shared) shared = instantiateModule(module);
        return shared;
      })
      .finally(() => {
        pending = undefined;
      });
  }
  return pending;
}

/**
 * The shared core. In Node it loads itself synchronously on first use; in a browser it
 * throws `CoreNotLoadedError` until `loadCore()` has resolved.
 */
export function core(): Core {
  if (shared) return shared;
  if (syncSource) return loadCoreFrom(syncSource());
  throw new CoreNotLoadedError();
}

/** Whether the shared core has been loaded in this realm. */
export function isCoreLoaded(): boolean {
  return shared !== undefined;
}
