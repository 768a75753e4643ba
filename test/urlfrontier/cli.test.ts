// `meguri serve` as a user runs it: listens, serves real gRPC calls, stops cleanly on SIGTERM
// with a checkpoint that the next start resumes.
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { bufferIo, startCli } from '../cli/helpers.js';
import { call, connect, discovered, putUrls, removeDir, tempDir } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

async function portOf(run: ReturnType<typeof startCli>): Promise<number> {
  for (;;) {
    const m = /URLFrontier 2\.6 on 127\.0\.0\.1:(\d+)/.exec(run.stdout());
    if (m) return Number(m[1]);
    if (run.child.exitCode !== null) throw new Error(`serve exited: ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('meguri serve', () => {
  it('serves on --port, keeps --data across a SIGTERM restart', async () => {
    const data = tempDir();
    dirs.push(data);
    const first = startCli(['serve', '--port', '0', '--data', data]);
    const port = await portOf(first);
    const client = connect(port);
    const acks = await putUrls(client, [discovered('https://a.example/1'), discovered('https://b.example/1')]);
    expect(acks.map((a) => a.status)).toEqual(['OK', 'OK']);
    await call(client, 'SetDelay', { key: 'a.example', delay_requestable: 42 });
    client.close();
    first.child.kill('SIGTERM');
    const end = await first.done;
    expect(end.code).toBe(0);
    expect(end.stdout).toContain('closed (checkpoint written)');

    const second = startCli(['serve', '--port', '0', '--data', data]);
    const port2 = await portOf(second);
    const c2 = connect(port2);
    expect((await call<{ value: number }>(c2, 'CountURLs', {})).value).toBe(2);
    expect((await call<{ values: string[] }>(c2, 'ListNodes', {})).values).toEqual([`127.0.0.1:${port2}`]);
    c2.close();
    second.child.kill('SIGINT');
    expect((await second.done).code).toBe(0);
  });

  it('rejects cluster flags of later builds as a usage error (exit 2)', async () => {
    const io = bufferIo();
    expect(await main(['serve', '--redis', 'redis://127.0.0.1:6379'], io)).toBe(2);
    expect(io.err()).toContain('redis');
  });
});
