/**
 * Bounded waits on Redis for a node that is leaving or retrying. Over a link that is down the
 * client's commands fail; over one that is frozen (a partition: no answer, no reset) they
 * neither answer nor fail, so anything awaiting them — a shutdown's final acceptance, a retry
 * loop's re-read — waited for as long as the link stayed frozen. Never: decide what a timed-out
 * command did (it may still run): callers treat "no answer" as the failure their fencing
 * already covers (a checkpoint never accepted, a heartbeat that expires instead of a leave).
 */

const mono = (): number => performance.now();

/**
 * `p`'s value, or undefined once `deadline` (monotonic ms, `performance.now()`) passed or `p`
 * failed. `p` is not cancelled; its failure after the deadline is swallowed.
 */
export async function settleBefore<T>(p: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - mono()))));
  try {
    return await Promise.race([p.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
