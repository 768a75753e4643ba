/**
 * `ensureDirectory` / `directoryProblem`: directories made one level at a time, never with
 * Node's recursive mkdir (which spins forever on /proc, issue 23), and the reason named
 * when a level cannot be made.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { directoryProblem } from '../../src/format/file.js';
import { Engine, ensureDirectory } from '../../src/index.js';

describe('ensureDirectory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes every missing level, and is a no-op on an existing directory', () => {
    const deep = join(dir, 'a', 'b', 'c');
    expect(directoryProblem(deep)).toBeUndefined();
    expect(existsSync(join(dir, 'a'))).toBe(false); // the probe leaves nothing behind
    ensureDirectory(deep);
    expect(existsSync(deep)).toBe(true);
    ensureDirectory(deep);
    expect(directoryProblem(deep)).toBeUndefined();
  });

  it('fails at once under /proc (ENOENT although the parent exists) and below a file (ENOTDIR, naming the file)', () => {
    expect(() => ensureDirectory('/proc/meguri-test/x')).toThrow(expect.objectContaining({ code: 'ENOENT', path: '/proc/meguri-test' }));
    expect(directoryProblem('/proc/meguri-test/x')).toBe('this file system does not allow creating a directory here (ENOENT) at /proc/meguri-test');
    const file = join(dir, 'f');
    writeFileSync(file, '');
    expect(() => ensureDirectory(join(file, 'x', 'y'))).toThrow(expect.objectContaining({ code: 'ENOTDIR', path: file }));
    expect(directoryProblem(join(file, 'x'))).toBe(`not a directory (ENOTDIR) at ${file}`);
    expect(readdirSync(dir).sort()).toEqual(['a', 'f']);
  });

  it('an Engine with its dataDir under /proc refuses to run instead of spinning', async () => {
    const engine = new Engine({ agent: 'meguri/1.0 (+https://example.test/bot)', dataDir: '/proc/meguri-engine', seeds: [] });
    await expect(engine.run().next()).rejects.toThrow(expect.objectContaining({ code: 'ENOENT' }));
    await engine.close();
  });
});
