/**
 * TimingWheel: the due-time schedule index, a hierarchical timing wheel resident in wasm.
 *
 * Holds u32 ids (URL rows) at u32 ticks (epoch-hours for the frontier's schedule index).
 * `schedule` places or moves an id in O(1); `cancel` removes it in O(1); `advance(now)` removes
 * and returns every id whose tick is ≤ `now`, ordered by tick then id, at a cost proportional
 * to what is due — skipping months of empty ticks is free and a far-future tick costs what a
 * near one does. Ticks at or before the wheel's clock are "overdue" and come out of the next
 * `advance`. The design and its cost model are in core-rs/src/wheel.rs.
 *
 * Because the wheel is derived state (the URL table's next-due column), it has no serialized
 * form: `TimingWheel.rebuild(ids, ticks, now)` recreates it from the columns after recovery.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { core } from './instance.js';
import { Resident } from './resident.js';

/** Options of `new TimingWheel(…)`. */
export interface TimingWheelOptions {
  /** The wheel's clock at construction, a u32 tick (default 0). Ticks ≤ `now` are already due. */
  now: number;
}

const resolveOptions = defineOptions<TimingWheelOptions>('TimingWheel', {
  now: numberField({ integer: true, min: 0, max: 0xffffffff, default: 0 }),
});

/** Entries staged per wasm call of `scheduleBatch` (8 bytes each: 4 MiB of scratch). */
const CHUNK = 1 << 19;

const releaseWheel = (h: number): void => core().exports.meguri_wheel_free(h);

function checkU32(what: string, name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
    throw new InvalidArgumentError(`${what}: ${name} must be an integer in [0, 2^32), received ${String(v)}`);
  }
}

/**
 * A hierarchical timing wheel of u32 ids at u32 ticks, in wasm memory. At most one entry per
 * id. Owns its memory: call `free()` (or use `using`) when done.
 *
 * @example
 * ```ts
 * using wheel = new TimingWheel({ now: hour });
 * wheel.schedule(row, nextDueHour);
 * for (const row of wheel.advance(currentHour)) requeue(row);
 * ```
 */
export class TimingWheel extends Resident {
  /** Creates an empty wheel whose clock reads `options.now`. */
  constructor(options?: Partial<TimingWheelOptions>) {
    const { now } = resolveOptions(options);
    super(core().exports.meguri_wheel_new(now), 'TimingWheel', releaseWheel);
  }

  /** A wheel holding `(ids[i], ticks[i])` for every i (a later entry for the same id wins). */
  static rebuild(ids: Uint32Array, ticks: Uint32Array, now: number): TimingWheel {
    const wheel = new TimingWheel({ now });
    try {
      wheel.scheduleBatch(ids, ticks);
    } catch (err) {
      wheel.free();
      throw err;
    }
    return wheel;
  }

  /** Number of scheduled ids. */
  get len(): number {
    return core().exports.meguri_wheel_len(this.handle) >>> 0;
  }

  /** The wheel's clock: the `now` of the latest `advance` (or of construction). */
  get now(): number {
    return core().exports.meguri_wheel_now(this.handle) >>> 0;
  }

  /** Bytes of wasm memory the wheel holds (about 12 per id up to the largest id when ids are dense). */
  get memoryBytes(): number {
    return core().exports.meguri_wheel_memory_bytes(this.handle) >>> 0;
  }

  /** Schedules `id` at `tick`, moving it if already scheduled. A tick ≤ `now` is due at the next `advance`. */
  schedule(id: number, tick: number): void {
    checkU32('TimingWheel.schedule', 'id', id);
    checkU32('TimingWheel.schedule', 'tick', tick);
    core().exports.meguri_wheel_schedule(this.handle, id, tick);
  }

  /** Schedules `ids[i]` at `ticks[i]` for every i, in order, crossing into wasm once per 512 Ki entries. */
  scheduleBatch(ids: Uint32Array, ticks: Uint32Array): void {
    if (!(ids instanceof Uint32Array) || !(ticks instanceof Uint32Array) || ids.length !== ticks.length) {
      throw new InvalidArgumentError(
        `TimingWheel.scheduleBatch: expected two Uint32Arrays of equal length, received ${
          ids instanceof Uint32Array ? ids.length : typeof ids
        } ids and ${ticks instanceof Uint32Array ? ticks.length : typeof ticks} ticks`,
      );
    }
    const h = this.handle;
    const c = core();
    const n = ids.length;
    for (let from = 0; from < n; from += CHUNK) {
      const count = Math.min(CHUNK, n - from);
      const base = c.scratch(count * 8);
      const ticksPtr = base + count * 4;
      const u32 = c.u32;
      u32.set(ids.subarray(from, from + count), base >>> 2);
      u32.set(ticks.subarray(from, from + count), ticksPtr >>> 2);
      c.exports.meguri_wheel_schedule_batch(h, base, ticksPtr, count);
    }
  }

  /** Removes `id`; returns whether it was scheduled. */
  cancel(id: number): boolean {
    checkU32('TimingWheel.cancel', 'id', id);
    return core().exports.meguri_wheel_cancel(this.handle, id) === 1;
  }

  /** The tick `id` is scheduled at, or `undefined`. */
  tickOf(id: number): number | undefined {
    checkU32('TimingWheel.tickOf', 'id', id);
    const t = core().exports.meguri_wheel_tick_of(this.handle, id);
    return t < 0 ? undefined : t;
  }

  /** The earliest scheduled tick (overdue ones included), or `undefined` when empty. */
  nextTick(): number | undefined {
    const t = core().exports.meguri_wheel_next_tick(this.handle);
    return t < 0 ? undefined : t;
  }

  /**
   * Removes and returns every id with tick ≤ `now`, ordered by tick then id, and moves the
   * clock to `now`. The clock never runs backward: an earlier `now` only drains overdue ids
   * due by then. The ids are written into `out` when it is large enough (the result is then
   * a subarray of `out`), else into a new array.
   */
  advance(now: number, out?: Uint32Array): Uint32Array {
    checkU32('TimingWheel.advance', 'now', now);
    const h = this.handle;
    const c = core();
    const count = c.exports.meguri_wheel_advance(h, now) >>> 0;
    const ptr = c.exports.meguri_wheel_out_ptr(h) >>> 2;
    const target = out !== undefined && out.length >= count ? out.subarray(0, count) : new Uint32Array(count);
    target.set(c.u32.subarray(ptr, ptr + count));
    return target;
  }
}
