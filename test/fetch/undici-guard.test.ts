/**
 * undici 7 throws an uncaught AssertionError when a server closes the connection while a slow
 * body read has its HTTP/1 parser paused (nodejs/undici#5360): a `Connection: close` response
 * read late ended the whole crawl. The guard (src/fetch/undici-guard.ts) completes the parser
 * instead. Each case runs in a child process, so a crash is an exit code, not a lost worker.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const GUARD = new URL('../../src/fetch/undici-guard.ts', import.meta.url).pathname;
const FETCH = new URL('../../src/fetch/index.ts', import.meta.url).pathname;

/**
 * Runs one response through undici in a child: the server sends the head and `bytes` body
 * bytes (`framing`: Content-Length, EOF-delimited, or a Content-Length twice the bytes sent)
 * and closes; the client reads the body 300 ms late. Prints what it read or the error's name.
 */
function run(framing: 'cl' | 'eof' | 'short', bytes: number, guard: 'none' | 'guard' | 'fetcher'): { status: number | null; out: string; err: string } {
  const script = `
    import { createServer } from 'node:net';
    import { Pool } from 'undici';
    const body = Buffer.alloc(${bytes}, 0x61);
    const length = ${JSON.stringify(framing)} === 'cl' ? body.length : ${JSON.stringify(framing)} === 'short' ? body.length * 2 : undefined;
    const server = createServer((sock) => sock.once('data', () => {
      sock.write('HTTP/1.1 200 OK\\r\\n' + (length === undefined ? '' : 'Content-Length: ' + length + '\\r\\n') + 'Connection: close\\r\\n\\r\\n');
      sock.write(body);
      sock.end();
    }));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    if (${JSON.stringify(guard)} === 'guard') (await import(${JSON.stringify(GUARD)})).guardPausedParserEnd();
    if (${JSON.stringify(guard)} === 'fetcher') new (await import(${JSON.stringify(FETCH)})).HttpFetcher({ agent: 'TestBot/1.0 (+http://x.test)' });
    const pool = new Pool('http://127.0.0.1:' + server.address().port);
    const res = await pool.request({ path: '/', method: 'GET' });
    await new Promise((r) => setTimeout(r, 300));
    let n = 0;
    try {
      for await (const c of res.body) n += c.length;
      console.log('read ' + n);
    } catch (err) {
      console.log('error ' + err.name);
    }
    if (${JSON.stringify(guard)} !== 'none') console.log('guarded ' + (await import(${JSON.stringify(GUARD)})).pausedParserGuarded());
    await pool.close();
    server.close();
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: r.stdout.trim(), err: r.stderr };
}

describe("undici's paused parser at the server's close", () => {
  it('without the guard undici 7 crashes the process (if this fails, undici fixed #5360 and the guard can go)', () => {
    const r = run('cl', 65_536, 'none');
    expect(r.status).not.toBe(0);
    expect(r.err).toContain('AssertionError');
  }, 90_000);

  it('with the guard the body is read whole, Content-Length or EOF-delimited; a short one is an error, not a crash', () => {
    for (const [framing, bytes] of [['cl', 65_536], ['eof', 65_536], ['eof', 70_000], ['cl', 200_000]] as const) {
      const r = run(framing, bytes, 'guard');
      expect(r.err, `${framing} ${bytes}`).not.toContain('AssertionError');
      expect(r.out, `${framing} ${bytes}`).toBe(`read ${bytes}\nguarded true`);
    }
    const short = run('short', 65_536, 'guard');
    expect(short.out).toBe('error ResponseContentLengthMismatchError\nguarded true');
  }, 180_000);

  it('HttpFetcher installs the guard', () => {
    const r = run('cl', 65_536, 'fetcher');
    expect(r.out).toBe('read 65536\nguarded true');
  }, 90_000);
});
