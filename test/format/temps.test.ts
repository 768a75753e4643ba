/**
 * Checkpoint temp files a kill left behind (issue 23, finding 8) are removed by the next
 * checkpoint write — only those of processes no longer alive, never this process's or a live
 * one's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Frontier, writePartition } from '../../src/index.js';

describe('stale checkpoint temp files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-temps-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a checkpoint write removes a dead writer's temp files and keeps everything else", () => {
    // A pid that existed and has exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const names = {
      dead: `.frontier.meguri.${dead}.0.tmp`,
      deadLater: `.frontier.meguri.${dead}.17.tmp`,
      live: `.frontier.meguri.${process.ppid}.3.tmp`,
      own: `.frontier.meguri.${process.pid}.99.tmp`,
      otherFile: `.other.meguri.${dead}.0.tmp`,
      unrelated: 'notes.txt',
    };
    for (const n of Object.values(names)) writeFileSync(join(dir, n), 'partial checkpoint');
    const f = new Frontier(0, 0);
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    writePartition(join(dir, 'frontier.meguri'), f.checkpointBytes());
    f.free();
    expect(readdirSync(dir).sort()).toEqual([names.live, names.otherFile, names.own, 'frontier.meguri', 'notes.txt'].sort());
  });
});
