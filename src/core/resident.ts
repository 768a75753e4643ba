/**
 * The ownership contract shared by every object that lives in wasm linear memory (DESIGN §3):
 * one owner holds the handle; `free()` (or `using`, through `[Symbol.dispose]`) releases it
 * exactly once; any use afterwards throws `UseAfterFreeError`. A FinalizationRegistry frees
 * a handle whose owner was garbage-collected without `free()`, but only as a backstop: GC
 * timing is unspecified and wasm memory never shrinks, so owners are expected to free.
 */
import { UseAfterFreeError } from '../errors/index.js';
import { core, isCoreLoaded } from './instance.js';

/** What the backstop needs to release a handle: the handle and the export that frees it. */
interface Held {
  readonly handle: number;
  readonly release: (handle: number) => void;
}

const backstop = new FinalizationRegistry<Held>(({ handle, release }) => {
  if (isCoreLoaded()) release(handle);
});

let readHandle: (r: Resident) => number;

/** Base class of the wasm-resident kernels: holds the handle and enforces free-once. */
export abstract class Resident {
  static {
    readHandle = (r) => r.handle;
  }

  #handle: number;
  readonly #what: string;
  readonly #release: (handle: number) => void;

  /**
   * @param handle  a non-zero handle returned by the kernel's `*_new` export
   * @param what    the class name, for `UseAfterFreeError` messages
   * @param release frees the handle (must not capture the owner, or the backstop never fires)
   */
  protected constructor(handle: number, what: string, release: (handle: number) => void) {
    this.#handle = handle;
    this.#what = what;
    this.#release = release;
    backstop.register(this, { handle, release }, this);
  }

  /** The live handle; throws `UseAfterFreeError` after `free()`. */
  protected get handle(): number {
    if (this.#handle === 0) throw new UseAfterFreeError(this.#what);
    return this.#handle;
  }

  /** Whether `free()` has been called. */
  get freed(): boolean {
    return this.#handle === 0;
  }

  /** Releases the wasm memory behind this object. Idempotent; any later use throws. */
  free(): void {
    const h = this.#handle;
    if (h === 0) return;
    this.#handle = 0;
    backstop.unregister(this);
    this.#release(h);
  }

  /** Same as `free()`, so `using x = new …` releases at scope exit. */
  [Symbol.dispose](): void {
    this.free();
  }
}

/**
 * @internal The live handle of `r` (throws `UseAfterFreeError` after `free()`), for the few
 * core wrappers whose export takes two objects in one call (src/core/seen.ts). Not part of
 * the public surface: src/core/index.ts does not re-export it.
 */
export function residentHandle(r: Resident): number {
  return readHandle(r);
}

/** Copies `count` keys (4 lanes each) of `keys`, starting at key `from`, to wasm memory at `ptr`. */
export function stageKeys(keys: Uint32Array, from: number, count: number, ptr: number): void {
  core().u32.set(keys.subarray(from * 4, (from + count) * 4), ptr >>> 2);
}
