import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';

const wasmBytes = readFileSync(new URL('../../wasm/meguri_core.wasm', import.meta.url));

// Each case imports a fresh copy of the loader so the per-realm singleton starts empty.
async function freshInstance() {
  vi.resetModules();
  return import('../../src/core/instance.js');
}

afterEach(() => {
  vi.resetModules();
});

describe('the core loader', () => {
  it('refuses kernel calls before loading when no Node source is registered (browser behaviour)', async () => {
    const mod = await freshInstance();
    expect(mod.isCoreLoaded()).toBe(false);
    expect(() => mod.core()).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_CORE_NOT_LOADED' }));
  });

  it('loads synchronously in Node and shares one instance', async () => {
    vi.resetModules();
    const node = await import('../../src/core/node.js');
    const inst = await import('../../src/core/instance.js');
    const a = node.loadCoreSync();
    expect(inst.core()).toBe(a);
    expect(await inst.loadCore()).toBe(a);
    expect(a.exports.meguri_abi_version()).toBe(1);
  });

  it('self-loads on first use once the Node entry is imported', async () => {
    vi.resetModules();
    await import('../../src/core/node.js');
    const inst = await import('../../src/core/instance.js');
    expect(inst.isCoreLoaded()).toBe(false);
    expect(inst.core()).toBeDefined();
    expect(inst.isCoreLoaded()).toBe(true);
  });

  it('loads asynchronously from bytes, and concurrent loads share one instance', async () => {
    const mod = await freshInstance();
    const [a, b] = await Promise.all([mod.loadCore(wasmBytes), mod.loadCore(wasmBytes)]);
    expect(a).toBe(b);
    expect(mod.core()).toBe(a);
  });

  it('loads from a compiled module', async () => {
    const mod = await freshInstance();
    const c = await mod.loadCore(new WebAssembly.Module(wasmBytes));
    expect(c.exports.meguri_abi_version()).toBe(1);
  });

  it('streams from a URL served as application/wasm, and falls back for other types', async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': req.url === '/plain' ? 'application/octet-stream' : 'application/wasm' });
      res.end(wasmBytes);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const spy = vi.spyOn(WebAssembly, 'compileStreaming');
      let mod = await freshInstance();
      await mod.loadCore(new URL(`http://127.0.0.1:${port}/meguri_core.wasm`));
      expect(spy).toHaveBeenCalledTimes(1);
      mod = await freshInstance();
      await mod.loadCore(`http://127.0.0.1:${port}/plain`);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(mod.isCoreLoaded()).toBe(true);
      expect(requests).toBe(2);
      spy.mockRestore();
    } finally {
      server.close();
    }
  });

  it('rejects bytes that are not wasm, and HTTP errors, with a typed error', async () => {
    let mod = await freshInstance();
    await expect(mod.loadCore(new Uint8Array([1, 2, 3]))).rejects.toMatchObject({ code: 'MEGURI_ERR_WASM_ABI' });
    const server = createServer((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      mod = await freshInstance();
      await expect(mod.loadCore(`http://127.0.0.1:${port}/x.wasm`)).rejects.toThrow(/HTTP 404/);
      // A failed load leaves nothing half-loaded: a good source still works afterwards.
      await expect(mod.loadCore(wasmBytes)).resolves.toBeDefined();
    } finally {
      server.close();
    }
  });

  it('rejects a module missing an export or with another ABI version', async () => {
    const mod = await freshInstance();
    // A minimal module exporting only a memory.
    const onlyMemory = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 5, 3, 1, 0, 1, 7, 10, 1, 6, 109, 101, 109, 111, 114, 121, 2, 0]);
    await expect(mod.loadCore(onlyMemory)).rejects.toThrow(/lacks the export "meguri_abi_version"/);
  });

  it('re-derives views after memory grows', async () => {
    const mod = await freshInstance();
    const c = await mod.loadCore(wasmBytes);
    const before = c.u8;
    const bytes = c.memoryBytes;
    const ptr = c.alloc(bytes * 2); // forces memory.grow
    expect(c.memoryBytes).toBeGreaterThan(bytes);
    expect(before.byteLength).toBe(0); // the old view's buffer was detached by the grow
    expect(c.u8.byteLength).toBe(c.memoryBytes);
    c.u8[ptr + bytes] = 7;
    expect(c.u8[ptr + bytes]).toBe(7);
    c.free(ptr, bytes * 2);
  });

  it('reports out-of-memory as a typed error instead of aborting', async () => {
    const mod = await freshInstance();
    const c = await mod.loadCore(wasmBytes);
    expect(() => c.alloc(0xffff_fff0)).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_WASM_OOM' }));
  });
});
