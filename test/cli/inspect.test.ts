/**
 * `meguri inspect` on what is not a checkpoint (issue 23, finding 10): a device with no end
 * is read only as far as needed (a child process, given 20 s, since the old unbounded read
 * never returned), and a journal is recognized and taken apart, damage included, without
 * being touched.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import '../../src/core/node.js';
import { Journal } from '../../src/journal/index.js';
import { STACK_LINE, bufferIo, startCli } from './helpers.js';

describe('meguri inspect beyond .meguri files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-inspect-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('inspect /dev/zero ends: a bounded read, then "bad magic" (exit 1)', async () => {
    const run = startCli(['inspect', '/dev/zero']);
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 20_000);
    const r = await run.done;
    clearTimeout(timer);
    expect(r.signal, 'killed: inspect kept reading').toBeNull();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\/dev\/zero: 65,536 bytes\n {2}magic {5}00 00 00 00 00 00 00 00 {2}BAD/);
    expect(r.stderr).toMatch(/bad magic: not a \.meguri partition/);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('recognizes a journal: generation, records by kind, tail; damage makes exit 1 and the file stays as it was', async () => {
    const path = join(dir, 'journal.mgj');
    const j = Journal.create(path, 9n);
    const enc = new TextEncoder();
    for (let i = 0; i < 4; i++) j.append(enc.encode(JSON.stringify({ t: 'd', h: 'a.test', at: 1000 + i })));
    j.append(enc.encode(JSON.stringify({ t: 'r', origin: 'https://a.test', state: 'unavailable', fetchedAtMs: 1005, refreshAtMs: 2005, lastStatus: 404, redirects: 0 })));
    j.close();
    let io = bufferIo();
    expect(await main(['inspect', path], io)).toBe(0);
    expect(io.out()).toContain('meguri journal');
    expect(io.out()).toContain('generation 9 (the checkpoint it extends)');
    expect(io.out()).toContain('records   5 intact: 0 outcomes, 4 fetch starts, 1 robots.txt answers');
    expect(io.out()).toContain('damage    none');
    expect(io.err()).toBe('');
    // One flipped payload byte in record 1.
    const bad = readFileSync(path);
    bad[16 + 20 + 40 + 20 + 5]! ^= 0x20;
    writeFileSync(path, bad);
    io = bufferIo();
    expect(await main(['inspect', path, '--json'], io)).toBe(1);
    const report = JSON.parse(io.out()) as { kind: string; records: number; damage: { lostRecords: number }[]; ok: boolean };
    expect(report).toMatchObject({ kind: 'journal', records: 4, dispatches: 3, robots: 1, ok: false });
    expect(report.damage.map((d) => d.lostRecords)).toEqual([1]);
    expect(io.err()).toMatch(/journal damaged \[MEGURI_ERR_CORRUPT_JOURNAL\]\n {2}the next 'meguri crawl' on its directory keeps a copy/);
    expect(readFileSync(path)).toEqual(bad);
  });
});
