import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltDemo, type DemoServer, buildDemo, serveDemo } from '../../demo/build.js';

/** A raw GET/HEAD/POST with the path sent exactly as given (fetch would normalize `..`). */
function get(url: string, path: string, method = 'GET'): Promise<{ status: number; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the demo build and server', () => {
  let dir: string;
  let built: BuiltDemo;
  let server: DemoServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-demo-build-'));
    built = await buildDemo({ outDir: join(dir, 'out') });
    server = await serveDemo(built.outDir);
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the page, both bundles, the service worker, the stylesheet and the wasm core', () => {
    expect(built.files).toEqual(['app.js', 'index.html', 'meguri_core.wasm', 'style.css', 'sw.js', 'worker.js']);
    expect(built.version).toMatch(/^[0-9a-f]{16}$/);
    const wasm = readFileSync(join(built.outDir, 'meguri_core.wasm'));
    expect(wasm.equals(readFileSync(new URL('../../wasm/meguri_core.wasm', import.meta.url)))).toBe(true);
    const sw = readFileSync(join(built.outDir, 'sw.js'), 'utf8');
    expect(sw).toContain(built.version);
    expect(sw).not.toMatch(/^\s*(import|export)\b/m);
  });

  it('references nothing outside its own folder (works offline, no CDN)', () => {
    const html = readFileSync(join(built.outDir, 'index.html'), 'utf8');
    for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect(m[1]!, 'an asset of index.html').toMatch(/^(?!https?:|\/\/)/);
    }
    for (const f of ['app.js', 'worker.js', 'sw.js']) {
      const js = readFileSync(join(built.outDir, f), 'utf8');
      expect(js, f).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.(com|net|org|io|dev)\/[^\s'"`]*\.(js|css|wasm)/i);
      expect(js, f).not.toMatch(/\bfrom\s*["']node:|require\(["']node:/);
    }
  });

  it('serves each file with the content type the browser needs', async () => {
    expect((await get(server.url, '/')).type).toBe('text/html; charset=utf-8');
    expect((await get(server.url, '/app.js')).type).toBe('text/javascript; charset=utf-8');
    expect((await get(server.url, '/worker.js')).type).toBe('text/javascript; charset=utf-8');
    expect((await get(server.url, '/style.css')).type).toBe('text/css; charset=utf-8');
    const wasm = await get(server.url, '/meguri_core.wasm');
    expect(wasm.status).toBe(200);
    expect(wasm.type).toBe('application/wasm');
    expect(wasm.body.subarray(0, 4)).toEqual(Buffer.from([0, 0x61, 0x73, 0x6d]));
  });

  it('answers 404, 403 and 405 where it should, and HEAD without a body', async () => {
    expect((await get(server.url, '/missing.js')).status).toBe(404);
    // Dot segments are resolved inside the root by URL parsing; escaped slashes that would
    // climb out after decoding are refused.
    expect((await get(server.url, '/../../package.json')).status).toBe(404);
    expect((await get(server.url, '/%2e%2e/%2e%2e/package.json')).status).toBe(404);
    expect((await get(server.url, '/..%2F..%2F..%2Fpackage.json')).status).toBe(403);
    expect((await get(server.url, '/', 'POST')).status).toBe(405);
    const head = await get(server.url, '/app.js', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it('binds to loopback by default', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });
});
