/**
 * Without prom-client installed, asking for metrics fails with a clear, coded error (the
 * package is simulated missing: its import throws as Node's resolver would).
 */
import { describe, expect, it, vi } from 'vitest';

vi.mock('prom-client', () => {
  throw Object.assign(new Error("Cannot find package 'prom-client'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('metrics without prom-client', () => {
  it('run() rejects with MissingDependencyError naming the package', async () => {
    const { Engine } = await import('../../src/engine/index.js');
    const engine = new Engine({ agent: 'T/1 (+https://example.test)', metrics: { port: 0 } });
    const it = engine.run();
    await expect(it.next()).rejects.toMatchObject({ code: 'MEGURI_ERR_MISSING_DEPENDENCY', message: expect.stringMatching(/npm install prom-client/) });
    await engine.close();
  });
});
