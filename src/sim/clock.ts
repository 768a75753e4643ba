/**
 * A manual simulated clock: epoch milliseconds that move only when told to. The simulated web
 * reads page versions off it, so a test can step simulated days in no real time.
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
