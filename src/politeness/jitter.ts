/**
 * `waitJitter`: the open-loop jitter primitive — sleep a random delay so requests do not arrive
 * on a fixed beat. Split from the governor (the closed-loop pacer) because it keeps no state
 * beyond one shared generator; it is browser-safe like the rest of the module.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { timerSleep } from './clock.js';
import { SeededRandom, randomSeed } from './random.js';

/** Seams for `waitJitter`. */
export interface JitterOptions {
  /** Source of the draw; pass a `SeededRandom` for a reproducible sequence. Default: one shared randomly seeded source. */
  readonly random?: SeededRandom | undefined;
  /** Resolves after `ms` milliseconds. Default: timers. */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

let sharedRandom: SeededRandom | undefined;

/**
 * Sleeps a random delay in [minMs, max(minMs, maxMs)] and resolves with it — the open-loop
 * jitter primitive, for spacing requests so they do not arrive on a fixed beat. Uses one step
 * of `options.random`; the sleep is asked for exactly the returned delay (skipped when 0).
 *
 * @throws InvalidArgumentError (as a rejection) when a bound is negative or not finite.
 */
export async function waitJitter(minMs: number, maxMs: number, options?: JitterOptions): Promise<number> {
  for (const [name, v] of [['minMs', minMs], ['maxMs', maxMs]] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new InvalidArgumentError(`waitJitter: expected ${name} to be a finite number >= 0, received ${String(v)}`);
    }
  }
  const random = options?.random ?? (sharedRandom ??= new SeededRandom(randomSeed()));
  const delay = random.between(minMs, maxMs);
  if (delay > 0) await (options?.sleep ?? timerSleep)(delay);
  return delay;
}
