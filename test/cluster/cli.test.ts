/**
 * `meguri crawl --redis URL --crawl NAME --store DIR --data DIR` (a child process, a real
 * redis-server, the sim on loopback): the crawl is created with its crawl-wide flags recorded
 * and runs to its end; a node joining with another --agent is refused naming both values;
 * `meguri stats` and `meguri hosts` read the cluster crawl from its slots' accepted checkpoints;
 * a node prints progress while it runs and, stopped by Ctrl-C, the command that rejoins it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_MIX } from '../../src/index.js';
import { rejoinCommand } from '../../src/cli/crawl.js';
import { STACK_LINE, runCli, startCli } from '../cli/helpers.js';
import { until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

const SIM = fileURLToPath(new URL('./sim-child.ts', import.meta.url));

describe('meguri crawl on a cluster crawl', () => {
  let server: RedisServer;
  let dir: string;
  let sim: ChildProcess;
  let ready: { dns: Record<string, string>; seeds: string[]; pages: string[] };
  beforeAll(async () => {
    server = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'meguri-ccli-'));
    sim = fork(SIM, [JSON.stringify({ seed: 5, hosts: 4, pagesPerHost: 4, ips: 2, hostIntervalMs: 50, ipIntervalMs: 20, mix: PLAIN_MIX })], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    ready = await new Promise((resolve) => sim.once('message', resolve));
  });
  afterAll(async () => {
    if (sim.exitCode === null) sim.kill('SIGKILL');
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the crawl and crawls it; refuses a differing --agent naming both; stats and hosts read it', async () => {
    const cluster = ['--redis', server.url, '--crawl', 'cli', '--store', join(dir, 'store')];
    const resolve = Object.entries(ready.dns).flatMap(([n, ip]) => ['--resolve', `${n}=${ip}`]);
    const first = await runCli(['crawl', ...ready.seeds, ...cluster, '--slots', '8', '--grouping', 'host', '--min-delay', '100ms', '--start-delay', '100ms', '--data', join(dir, 'a'), '--agent', 'first/1.0', '--allow-private', ...resolve, '--json']);
    expect(first.stderr).not.toMatch(STACK_LINE);
    expect(first.code, first.stderr).toBe(0);
    const fetched = new Set(first.stdout.split('\n').filter((l) => l.includes('"page"')).map((l) => (JSON.parse(l) as { url: string }).url));
    expect(ready.pages.filter((u) => !fetched.has(u))).toEqual([]);
    // A node holds no frontier at its end: its end event names no URL count (it said 0).
    const end = first.stdout.split('\n').find((l) => l.includes('"end"'));
    expect(JSON.parse(end!)).toMatchObject({ urls: null });

    const refused = await runCli(['crawl', ...cluster, '--data', join(dir, 'b'), '--agent', 'second/2.0', '--allow-private', ...resolve]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('first/1.0');
    expect(refused.stderr).toContain('second/2.0');
    expect(refused.stderr).not.toMatch(STACK_LINE);

    // A node joining the drained crawl fetches nothing and says where the crawl's counts are. It
    // repeats the crawl's --min-delay alone: the recorded --start-delay stands (it was refused,
    // its start taken as the default 1 s and so differing from the record).
    const late = await runCli(['crawl', ...cluster, '--data', join(dir, 'c'), '--agent', 'first/1.0', '--allow-private', ...resolve, '--min-delay', '100ms']);
    expect(late.code, late.stderr).toBe(0);
    expect(late.stdout).toContain("0 fetched this run, 0 in the campaign (0 OK) by this node (the crawl's URLs: meguri stats --redis");
    expect(late.stdout).not.toContain('URLs known');

    const stats = await runCli(['stats', ...cluster, '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    const st = JSON.parse(stats.stdout) as { total: { slots: number; urls: number; hosts: number; byStatus: Record<string, number> } };
    expect(st.total.hosts).toBe(4);
    expect(st.total.urls).toBeGreaterThanOrEqual(ready.pages.length);
    expect(st.total.slots).toBeGreaterThan(0);
    const text = await runCli(['stats', ...cluster]);
    expect(text.stdout).toContain('slots with an accepted checkpoint');

    const hosts = await runCli(['hosts', ...cluster, '--json']);
    expect(hosts.code, hosts.stderr).toBe(0);
    expect(hosts.stdout.trim().split('\n')).toHaveLength(4);

    // Every node has left a finished crawl: the status says it is over (its slots have no live
    // owner, which is not a failure here).
    const status = await runCli(['cluster', 'status', '--redis', server.url, '--crawl', 'cli']);
    expect(status.stdout).toMatch(/0 live node\(s\).*orphan slots 8/);
    expect(status.stdout).toContain('  drained: every slot is idle and every inbox read — the campaign is over');
    expect((JSON.parse((await runCli(['cluster', 'status', '--redis', server.url, '--crawl', 'cli', '--json'])).stdout) as { drained: boolean }).drained).toBe(true);

    // Redis loses its data: stats and hosts read each slot's newest checkpoint from the store
    // (they said "no crawl"), and say so.
    const r = new Redis(server.url);
    await r.flushall();
    r.disconnect();
    const lost = await runCli(['stats', ...cluster, '--json']);
    expect(lost.code, lost.stderr).toBe(0);
    expect((JSON.parse(lost.stdout) as { total: { urls: number; hosts: number } }).total).toMatchObject({ urls: st.total.urls, hosts: 4 });
    expect((await runCli(['stats', ...cluster])).stdout).toContain('Redis has no record of it (lost its data?)');
    const lostHosts = await runCli(['hosts', ...cluster]);
    expect(lostHosts.stderr).toContain('Redis has no record of crawl "cli"');
    const none = await runCli(['stats', '--redis', server.url, '--crawl', 'nope', '--store', join(dir, 'store')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no crawl "nope"');
    expect(none.stderr).toContain('crawl.json');
  }, 120_000);

  it('--max-pages counts the crawl over every node (it was refused with --redis): the node stops at the limit and says it is the crawl\'s', async () => {
    const cluster = ['--redis', server.url, '--crawl', 'cli-budget', '--store', join(dir, 'store-budget')];
    const resolve = Object.entries(ready.dns).flatMap(([n, ip]) => ['--resolve', `${n}=${ip}`]);
    const run = await runCli(['crawl', ...ready.seeds, ...cluster, '--slots', '4', '--grouping', 'host', '--min-delay', '50ms', '--start-delay', '50ms', '--max-pages', '5', '--data', join(dir, 'budget'), '--agent', 'first/1.0', '--allow-private', ...resolve]);
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^meguri crawl: page limit reached after .* — 5 fetched this run, 5 in the campaign \(5 OK\) by this node/m);
    expect(run.stdout).toContain("  limit  the crawl's --max-pages counts every node's fetches and is spent");
    expect(run.stdout).not.toContain('run it again with a higher --max-pages');
    const status = await runCli(['cluster', 'status', '--redis', server.url, '--crawl', 'cli-budget']);
    expect(status.stdout).toContain('budget: 5 of 5 pages fetched OK (--max-pages): spent, the crawl stops');
    const stats = await runCli(['stats', ...cluster]);
    expect(stats.stdout).toContain('  budget      5 of 5 pages fetched OK (--max-pages): spent, the crawl stops\n');
    const json = JSON.parse((await runCli(['stats', ...cluster, '--json'])).stdout) as { budgets: unknown };
    expect(json.budgets).toEqual([{ kind: 'pages', limit: 5, spent: 5, held: 0 }]);

    // Raised, then the node started again without the flag: it goes on to the new limit.
    const again = await runCli(['crawl', ...cluster, '--max-pages', '9', '--data', join(dir, 'budget2'), '--agent', 'first/1.0', '--allow-private', ...resolve]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('meguri cluster limit');
    expect((await runCli(['cluster', 'limit', '--redis', server.url, '--crawl', 'cli-budget', '--max-pages', '9'])).stderr).toContain('--store DIR is needed');
    // A --store that is not the crawl's is refused before anything changes (a typo there would
    // leave the real store disagreeing with Redis, and no node could join).
    const wrong = await runCli(['cluster', 'limit', '--redis', server.url, '--crawl', 'cli-budget', '--store', join(dir, 'store'), '--max-pages', '9']);
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringContaining("is --store this crawl's checkpoint store?")]);
    const raised = await runCli(['cluster', 'limit', '--redis', server.url, '--crawl', 'cli-budget', '--store', join(dir, 'store-budget'), '--max-pages', '9']);
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toContain('crawl cli-budget: --max-pages 5 → 9');
    expect(raised.stdout).toContain('counted so far: 5 pages fetched OK');
    const more = await runCli(['crawl', ...cluster, '--data', join(dir, 'budget2'), '--agent', 'first/1.0', '--allow-private', ...resolve]);
    expect(more.code, more.stderr).toBe(0);
    expect(more.stdout).toMatch(/page limit reached after .* — 4 fetched this run, 4 in the campaign \(4 OK\) by this node/);
    // 0 removes it: the crawl runs to its end.
    expect((await runCli(['cluster', 'limit', '--redis', server.url, '--crawl', 'cli-budget', '--store', join(dir, 'store-budget'), '--max-pages', '0'])).stdout).toContain('--max-pages 9 → unlimited');
    const rest = await runCli(['crawl', ...cluster, '--data', join(dir, 'budget3'), '--agent', 'first/1.0', '--allow-private', ...resolve, '--json']);
    expect(rest.code, rest.stderr).toBe(0);
    const end = JSON.parse(rest.stdout.split('\n').find((l) => l.includes('"end"'))!) as { reason: string };
    expect(end.reason).toBe('drained');
  }, 120_000);

  it('a node reports progress, and stopped by Ctrl-C says how to rejoin the cluster crawl, not to resume a settings.json it never wrote', async () => {
    const store = join(dir, 'store-rejoin');
    const cluster = ['--redis', server.url, '--crawl', 'cli-rejoin', '--store', store];
    const resolve = Object.entries(ready.dns).flatMap(([n, ip]) => ['--resolve', `${n}=${ip}`]);
    const data = join(dir, 'rejoin');
    const node = startCli(['crawl', ...ready.seeds, ...cluster, '--slots', '4', '--min-delay', '500ms', '--data', data, '--agent', 'first/1.0', '--allow-private', ...resolve, '--interval', '200ms']);
    // A node reports progress while it runs (it printed nothing until its end before), over the
    // hosts of the slots it runs.
    await until(() => /fetched [1-9]/.test(node.stderr()), 60_000, 'a progress line with a page fetched');
    const line = /hosts ready\/waiting\/blocked\/dead (\d+)\/(\d+)\/(\d+)\/(\d+)/.exec(node.stderr().split('\n').find((l) => /fetched [1-9]/.test(l))!)!;
    expect(line.slice(1).reduce((n, x) => n + Number(x), 0)).toBeGreaterThan(0);
    node.child.kill('SIGINT');
    const run = await node.done;
    expect(run.code, run.stdout + run.stderr).toBe(130);
    expect(run.stdout).toContain(
      `  rejoin npx meguri crawl --redis ${server.url} --crawl cli-rejoin --store ${store} --data ${data}   (the crawl's settings are in Redis; give this node's own --resolve / --allow-private again)`,
    );
    expect(run.stdout).not.toContain('settings.json');
    // Stopped mid-way, the crawl is not over.
    const status = await runCli(['cluster', 'status', '--redis', server.url, '--crawl', 'cli-rejoin']);
    expect(status.stdout).toMatch(/0 live node\(s\)/);
    expect(status.stdout).not.toContain('drained');
  }, 120_000);
});

describe('rejoinCommand', () => {
  it('names the crawl, its store and the node\'s --data, and never prints a Redis password', () => {
    const r = rejoinCommand({ redis: 'redis://:s3cret@10.0.0.5:6379/2', crawl: 'news', store: '/mnt/crawl' }, '/srv/node-a');
    expect(r.command).toBe('npx meguri crawl --redis redis://10.0.0.5:6379/2 --crawl news --store /mnt/crawl --data /srv/node-a');
    expect(r.note).toContain("add the Redis URL's user:password");
    expect(JSON.stringify(r)).not.toContain('s3cret');
  });
});
