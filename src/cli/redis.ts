/**
 * The CLI's short-lived Redis connections (`cluster status` / `limit`, `stats` / `hosts --redis`,
 * the settings read before `crawl --redis` starts a node): connect with a few quick tries and
 * bound every answer, so a command fails with a sentence naming the address instead of hanging.
 * Never: the long-lived connections of a running node (src/cluster, src/urlfrontier).
 */
import { Redis } from 'ioredis';
import { CliFailure, EXIT } from './failure.js';
import { withoutCredentials } from './saved-flags.js';

/** A Redis URL as messages show it: without a password or user name (they reach logs and terminals). */
export const redisLabel = (url: string): string => withoutCredentials(url).text;

/** How long a CLI command waits for one answer from Redis (ms). */
const REDIS_ANSWER_MS = 10_000;

/**
 * Runs `fn` on a connection for a command (`cluster status` / `limit`, `stats`/`hosts --redis`):
 * a few quick tries to connect, then a CLI failure naming the address; every command bounded
 * by `REDIS_ANSWER_MS`. Over a link that is down the tries fail at once; over one that is
 * frozen (a partition) nothing answers and nothing fails, and the command printed nothing, for
 * ever. Disconnects after.
 */
export async function withRedis<T>(url: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: REDIS_ANSWER_MS, retryStrategy: (n) => (n > 2 ? null : 200), lazyConnect: true });
  redis.on('error', () => {});
  const silent = (): CliFailure =>
    new CliFailure('ETIMEDOUT', `Redis at ${redisLabel(url)} did not answer within ${REDIS_ANSWER_MS / 1000} s`, EXIT.failure, 'check --redis and the network path to it (a partition, a firewall dropping packets, a Redis stalled by a long command)');
  try {
    let timer: NodeJS.Timeout | undefined;
    try {
      // connect() resolves once Redis answered its ready check, which a frozen link never does.
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), REDIS_ANSWER_MS)));
      if ((await Promise.race([redis.connect(), late])) === 'late') throw silent();
    } catch (err) {
      if (err instanceof CliFailure) throw err;
      throw new CliFailure('ECONNREFUSED', `cannot reach Redis at ${redisLabel(url)}: ${(err as Error).message}`, EXIT.failure, 'check --redis and that redis-server runs');
    } finally {
      clearTimeout(timer);
    }
    try {
      return await fn(redis);
    } catch (err) {
      throw err instanceof Error && /^Command timed out/.test(err.message) ? silent() : err;
    }
  } finally {
    redis.disconnect();
  }
}
