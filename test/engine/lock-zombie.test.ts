/**
 * A data directory's lock names the process holding it; a lock whose process is gone is stale and
 * taken over. A process killed but not yet reaped (a zombie: its parent never waits, as a
 * container whose PID 1 is a shell) still answers signal 0 — and held a killed crawl's directory
 * "in use" for as long as its parent lived. Linux's /proc says what it is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDir, processAlive } from '../../src/engine/datadir.js';

/** A process that stays alive (`parent`) with a zombie child it never reaps (`zombie`). */
async function zombieOf(): Promise<{ parent: ChildProcess; zombie: number }> {
  // sh starts a short child, prints its pid, then becomes `sleep`, which never waits for it.
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const zombie = await new Promise<number>((resolve) => parent.stdout!.once('data', (b: Buffer) => resolve(Number.parseInt(b.toString(), 10))));
  // Up to 30 s: a loaded CI machine once took longer than 2 s to run and end `sleep 0`.
  for (let i = 0; i < 3000; i++) {
    let stat = '';
    try {
      stat = readFileSync(`/proc/${zombie}/stat`, 'latin1');
    } catch {
      break;
    }
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return { parent, zombie };
    await new Promise((r) => setTimeout(r, 10));
  }
  parent.kill('SIGKILL');
  throw new Error(`process ${zombie} did not become a zombie (is /proc mounted?)`);
}

describe('the data directory lock and a killed, unreaped process', () => {
  let world: { parent: ChildProcess; zombie: number };
  let dir: string;
  beforeAll(async () => {
    world = await zombieOf();
    dir = mkdtempSync(join(tmpdir(), 'meguri-zombie-'));
  });
  afterAll(() => {
    world.parent.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a zombie is not alive; its parent is', () => {
    // Signal 0 alone says both are there.
    expect(() => process.kill(world.zombie, 0)).not.toThrow();
    expect(processAlive(world.zombie)).toBe(false);
    expect(processAlive(world.parent.pid!)).toBe(true);
  });

  it("a lock naming a zombie is stale and taken over; one naming a live process is refused", () => {
    const lock = join(dir, 'lock');
    writeFileSync(lock, `${world.parent.pid}\n`);
    expect(() => DataDir.checkFree(dir)).toThrow(/in use by process/);
    expect(() => new DataDir(dir).lock()).toThrow(/in use by process/);
    writeFileSync(lock, `${world.zombie}\n`);
    expect(() => DataDir.checkFree(dir)).not.toThrow();
    new DataDir(dir).lock();
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
  });
});
