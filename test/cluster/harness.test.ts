import { afterEach, describe, expect, it } from 'vitest';
import { type RedisServer, redisServerPath, startRedis } from './redis.js';

describe('redis test harness', () => {
  let server: RedisServer | undefined;
  afterEach(async () => {
    await server?.dispose();
    server = undefined;
  });

  it('finds redis-server or fails with instructions', () => {
    expect(redisServerPath()).toMatch(/redis-server$/);
  });

  it('starts on a random loopback port, keeps AOF data across a restart, and kills on teardown', async () => {
    server = await startRedis({ appendonly: 'always' });
    const c = server.client();
    await c.set('k', 'v');
    expect(await c.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
    c.disconnect();
    await server.restart('SIGKILL');
    const d = server.client();
    expect(await d.get('k')).toBe('v');
    d.disconnect();
  });

  it('without AOF a restart loses the data', async () => {
    server = await startRedis();
    const c = server.client();
    await c.set('k', 'v');
    c.disconnect();
    await server.restart('SIGKILL');
    const d = server.client();
    expect(await d.get('k')).toBeNull();
    d.disconnect();
  });
});
