/**
 * Simulated clocks: a manual one (epoch milliseconds that move only when told to) so a test
 * can step simulated days in no real time, and an accelerated one for demos, where simulated
 * time runs `factor` times faster than a monotonic clock the caller supplies.
 */
import { InvalidArgumentError } from '../errors/index.js';

/** A clock that starts at `startMs` and moves only by `advance` / `set`. */
export class SimClock {
  private ms: number;

  constructor(startMs: number) {
    if (!Number.isFinite(startMs)) throw new InvalidArgumentError(`SimClock: expected a finite start time (epoch ms), received ${startMs}`);
    this.ms = startMs;
  }

  /** Current simulated time, epoch ms. */
  now(): number {
    return this.ms;
  }

  /** Moves forward by `ms` (≥ 0). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new InvalidArgumentError(`SimClock.advance: expected a finite number of ms >= 0, received ${ms}`);
    this.ms += ms;
  }

  /** Jumps to `ms`, which must not be earlier than now (simulated time never runs back). */
  set(ms: number): void {
    if (!Number.isFinite(ms) || ms < this.ms) {
      throw new InvalidArgumentError(`SimClock.set: expected a time >= the current ${this.ms}, received ${ms}`);
    }
    this.ms = ms;
  }
}

/**
 * A simulated clock (epoch ms) that starts at `startMs` and runs `factor` times as fast as
 * `monotonic` (e.g. `() => performance.now()`): with factor 3600 a simulated hour passes every
 * real second, so a demo sees pages change.
 */
export function acceleratedClock(startMs: number, factor: number, monotonic: () => number): () => number {
  if (!Number.isFinite(startMs)) throw new InvalidArgumentError(`acceleratedClock: expected a finite start time (epoch ms), received ${startMs}`);
  if (!Number.isFinite(factor) || factor <= 0) throw new InvalidArgumentError(`acceleratedClock: expected a factor > 0, received ${factor}`);
  if (typeof monotonic !== 'function') throw new InvalidArgumentError('acceleratedClock: expected a monotonic clock function');
  const origin = monotonic();
  return () => startMs + (monotonic() - origin) * factor;
}
