/**
 * Ownership of wasm-resident objects (DESIGN §3): a JS wrapper owns exactly one handle into
 * the core's memory and releases it with `free()` or `using` (`Symbol.dispose`). Freeing is
 * idempotent; any other use after it throws `UseAfterFreeError` instead of touching memory
 * the core may have reused. A FinalizationRegistry frees handles whose wrapper was dropped
 * without `free()`, but only as a backstop: collection timing is unspecified, so an owner
 * that cares about memory frees explicitly.
 */
import { UseAfterFreeError } from '../errors/index.js';

interface Held {
  handle: number;
  release: (handle: number) => void;
}

const backstop = new FinalizationRegistry<Held>((held) => held.release(held.handle));

/** Base of every class that owns a handle into wasm memory. */
export abstract class WasmResident {
  #handle: number;
  readonly #what: string;
  readonly #release: (handle: number) => void;

  /**
   * Takes ownership of `handle` (non-zero). `what` names the object in errors; `release`
   * frees the handle in the core and must not reference the wrapper.
   */
  protected constructor(handle: number, what: string, release: (handle: number) => void) {
    this.#handle = handle;
    this.#what = what;
    this.#release = release;
    backstop.register(this, { handle, release }, this);
  }

  /** The live handle; throws `UseAfterFreeError` once freed. */
  protected get handle(): number {
    if (this.#handle === 0) throw new UseAfterFreeError(this.#what);
    return this.#handle;
  }

  /** Whether `free()` has run. */
  get freed(): boolean {
    return this.#handle === 0;
  }

  /** Releases the wasm memory now. Safe to call more than once. */
  free(): void {
    const h = this.#handle;
    if (h === 0) return;
    this.#handle = 0;
    backstop.unregister(this);
    this.#release(h);
  }

  /** `using` support: same as `free()`. */
  [Symbol.dispose](): void {
    this.free();
  }
}
