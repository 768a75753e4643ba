import { describe, expect, it } from 'vitest';
import { Frontier, type Outcome, type FetchRequest } from '../../src/index.js';

const ok = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200 });

describe('smoke', () => {
  it('seeds and drains', () => {
    const f = new Frontier(1, 0, {});
    for (let h = 0; h < 3; h++) for (let i = 0; i < 4; i++) f.seed(`https://h${h}.example/p${i}`, `h${h}.example`, i, 0, 0, 0);
    expect(f.len()).toBe(12);
    expect(f.pending()).toBe(12);
    const log = f.drain(0, ok);
    expect(log.length).toBe(12);
    console.log(log.map((d) => `${d.atMs} ${d.url}`).join('\n'));
    expect(f.pending()).toBe(0);
    const bytes = f.checkpointBytes();
    const g = Frontier.recover(bytes);
    expect(g.len()).toBe(12);
    expect(g.stats(0).byStatus['Crawled']).toBe(12);
  });
});
