/**
 * A virtual monotonic clock for politeness tests: `sleep(ms)` records the request and
 * advances the clock at once, so no test ever waits for real time.
 */
export class VirtualClock {
  /** Current virtual time, ms. */
  t: number;
  /** Every delay `sleep` was asked for, in order. */
  readonly sleeps: number[] = [];

  constructor(start = 0) {
    this.t = start;
  }

  readonly now = (): number => this.t;

  readonly sleep = (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    this.t += ms;
    return Promise.resolve();
  };
}
