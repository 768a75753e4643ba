// A redis-server child on a random loopback port for the cluster bench (same rules as
// test/cluster/redis.ts: temp dir, no RDB, killed at the end).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const BIN = [process.env.REDIS_SERVER, '/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => p && existsSync(p));

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function startRedis({ appendfsync } = {}) {
  if (!BIN) throw new Error('redis-server not found: run `bash scripts/install-redis.sh` or set REDIS_SERVER');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'meguri-bench-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', appendfsync ? 'yes' : 'no', '--logfile', ''];
  if (appendfsync) args.push('--appendfsync', appendfsync);
  const child = spawn(BIN, args, { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      c.disconnect();
      break;
    } catch {
      c.disconnect();
      if (i > 400) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url,
    pid: child.pid,
    client: () => new Redis(url),
    async stop() {
      await new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGKILL');
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Redis's own CPU seconds so far (user + sys), from INFO CPU. */
export async function redisCpu(client) {
  const info = await client.info('cpu');
  const get = (k) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return get('used_cpu_user') + get('used_cpu_sys');
}
