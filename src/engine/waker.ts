/**
 * One sleeping loop's alarm clock: `wait(delayMs)` resolves when the timer fires or when
 * `notify()` is called, whichever is first, and never spins. A `notify()` while nobody waits
 * is remembered (once), so a completion that lands between two waits is not lost. `wakeups`
 * counts resolutions: the engine's "never a busy loop" promise is tested by bounding it.
 */
/**
 * Longest single timer: Node runs a longer `setTimeout` after 1 ms instead (a busy loop), so a
 * far-off wake-up is capped here and the loop simply looks again.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Waker {
  /** How many times a wait ended. */
  wakeups = 0;
  /** How many of those ended by the timer. */
  timerWakeups = 0;
  #resolve: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pending = false;

  /** Ends the current wait now, or the next one as soon as it starts. */
  notify(): void {
    const resolve = this.#resolve;
    if (resolve === undefined) {
      this.#pending = true;
      return;
    }
    this.#resolve = undefined;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.wakeups++;
    resolve();
  }

  /** Sleeps until `notify()` or, when `delayMs` is a finite number, that many ms (at least 1). */
  wait(delayMs?: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      this.wakeups++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      if (delayMs !== undefined && Number.isFinite(delayMs)) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.timerWakeups++;
          this.notify();
        }, Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(delayMs))));
      }
    });
  }

  /** Cancels a pending timer (the waiter stays asleep until notified). */
  cancel(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
