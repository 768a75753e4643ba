// DESIGN §9.5 with freshness on: the simulated web crawled through the real Frontier and
// withFreshness, checkpointed and recovered mid-run (mid-hour and between background passes),
// continues with the identical dispatch schedule, the identical measurements and the
// identical final partition bytes — also with the capped hosts held to rate caps over a
// window (`Frontier.setHostCap`, checkpointed in the `caps` section).
import { describe, expect, it } from 'vitest';
import { simulate } from '../../bench/freshness/engine.js';
import { MeguriFrontierPolicy } from '../../bench/freshness/frontier-policy.js';
import { partitionSections } from '../../src/index.js';
import { makeWorld } from '../../bench/freshness/world.js';

describe('recovery with freshness on', () => {
  const world = makeWorld({ n: 400, seed: 5, days: 40, warmupDays: 10 });

  function run(recoverAfter: number[], capWindowSlots = 0, slotCalendar = false) {
    const policy = new MeguriFrontierPolicy({ recoverAfter, capWindowSlots, freshness: { slotCalendar } });
    policy.log = [];
    const result = simulate(world, policy, () => 0);
    const bytes = policy.frontier.checkpointBytes();
    return { policy, result, bytes, log: policy.log };
  }

  it.each([
    [0, false],
    [6, false],
    [0, true],
  ])('checkpoint → recover → continue gives the identical schedule and partition (window slots %i, slot calendar %s)', (slots, calendar) => {
    const full = run([], slots, calendar);
    const sections = partitionSections(full.bytes);
    expect(sections.some((x) => x.name === 'caps')).toBe(slots > 0);
    // The freshness state is version 4 (the learned hazard), with the saturated hosts' calendars
    // when the calendar is on.
    const fs = sections.find((x) => x.name === 'freshness');
    expect(fs).toBeDefined();
    const body = full.bytes.subarray(fs!.offset, fs!.offset + fs!.length);
    const tag = body.findIndex((_, i) => body[i] === 0x4d && body[i + 1] === 0x47 && body[i + 2] === 0x46 && body[i + 3] === 0x53);
    expect(tag).toBeGreaterThanOrEqual(0);
    expect(body[tag + 4]).toBe(4);
    expect(full.log.length).toBeGreaterThan(400 * 40 * 0.2 * 0.9);
    const hourOf = (entry: string) => Math.floor(Number(entry.split('@')[1]) / 3_600_000);
    // The last dispatch before a 6-hour background pass, and the first one after it (the pass
    // runs at the first dispatch of the hour), in the first-crawl pass and in steady state.
    const edges: number[] = [];
    for (let i = 1; i < full.log.length && edges.length < 6; i++) {
      const h = hourOf(full.log[i]!);
      if (h % 6 === 0 && hourOf(full.log[i - 1]!) !== h && (i > 2000 || edges.length < 2)) edges.push(i, i + 1);
    }
    // Mid-hour cuts: between dispatches that share a clock hour.
    const cuts = [...new Set([37, 401, 1203, 2222, ...edges, full.log.length - 5])].sort((a, b) => a - b);
    expect(cuts.length).toBeGreaterThanOrEqual(9);
    const cut = run(cuts, slots, calendar);
    expect(cut.policy.recoveries).toEqual(cuts.map(() => true));
    expect(cut.log).toEqual(full.log);
    expect(cut.result).toEqual(full.result);
    expect(cut.bytes).toEqual(full.bytes);
  });
});
