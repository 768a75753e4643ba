/**
 * A cluster slot recovered on another node knows every origin of its host groups. Under
 * `registrable` grouping one group holds several origins (www.<name>.test and
 * blog.<name>.test here); the node that opens the slot from a checkpoint must ask the
 * robots.txt of each of them before their URLs go, or those URLs have no robots.txt answer and
 * are lost as Disallowed.
 *
 * The case: node A seeds both origins of each group, asks their robots.txt, and the server
 * withholds the answers — so A's accepted checkpoints carry the URLs but no robots.txt entry (an
 * answer heard after a slot's last checkpoint is lost with a killed node, and one still out when
 * a hand-off's drain bound passes is not in its checkpoint: the next owner asks again). Then
 * either A is killed (-9) and node B recovers both slots, or B joins and A hands it a slot after
 * the drain bound. Judged from this process's loopback server's request log: each moved
 * origin's robots.txt is asked by B and obeyed (www disallows /secret/, blog disallows /private/:
 * each origin's own rules), and every other page of both origins is fetched.
 *
 * Real components only: a redis-server on a random loopback port, Engine processes in
 * cluster mode (engine-child.ts).
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ClusterKeys, compareIds, readSlots, slotOf } from '../../src/cluster/index.js';
import { type NodeProc, spawnNode, until } from './child.js';
import { clusterWorld } from './redis.js';

const ENGINE = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
const WAIT_MS = 120_000;
const SLOTS = 2;
const PAGES = ['/', '/p0', '/p1', '/p2', '/p3'];
/** What each origin's robots.txt disallows (the other prefix is allowed there). */
const RULES: Record<string, string> = { www: '/secret/', blog: '/private/' };

interface Arrival {
  readonly seq: number;
  readonly host: string;
  readonly path: string;
}

/** The web: '/' links p0–p3, /secret/x and /private/x; robots.txt is withheld until `answer(crawl)`. */
function serve(): Promise<{ server: Server; port: number; log: Arrival[] }> {
  const log: Arrival[] = [];
  const server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    log.push({ seq: log.length, host, path });
    if (path === '/robots.txt') {
      const crawl = host.split('.')[1]!.split('-')[0]!;
      const reply = (): void => void res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nDisallow: ${RULES[host.split('.')[0]!]}\n`);
      if (answering.has(crawl)) return reply();
      return void withheld.push({ crawl, reply });
    }
    const links = path === '/' ? [...PAGES.slice(1), '/secret/x', '/private/x'] : ['/'];
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, log })));
}

/** Crawls whose robots.txt requests are answered (the others' wait in `withheld`). */
const answering = new Set<string>();
const withheld: { readonly crawl: string; readonly reply: () => void }[] = [];
/** Answers `crawl`'s withheld robots.txt requests and every later one. */
function answer(crawl: string): void {
  answering.add(crawl);
  for (const w of withheld.filter((x) => x.crawl === crawl)) w.reply();
}
const world = clusterWorld(serve, 'meguri-clorigins-');

/** One registrable domain per slot, each with a www and a blog host. */
function groups(crawl: string): { domain: string; slot: number; hosts: string[] }[] {
  const out: { domain: string; slot: number; hosts: string[] }[] = [];
  for (let slot = 0; slot < SLOTS; slot++) {
    for (let n = 0; ; n++) {
      const domain = `${crawl}-${n}.test`;
      if (slotOf(crawl, domain, SLOTS) !== slot) continue;
      out.push({ domain, slot, hosts: [`www.${domain}`, `blog.${domain}`] });
      break;
    }
  }
  return out;
}

const origin = (host: string): string => `http://${host}:${world.web.port}`;
const requests = (host: string, path: string, since = 0): Arrival[] => world.web.log.filter((e) => e.seq >= since && e.host === host && e.path === path);

describe('a cluster slot recovered on another node knows every origin of its host groups', () => {
  for (const how of ['kill', 'handoff'] as const) {
    const title =
      how === 'kill'
        ? 'kill -9, robots.txt answers not in the checkpoint: the next owner asks each origin its robots.txt and fetches every allowed page of both'
        : 'hand-off past the drain bound, robots.txt answers not in the checkpoint: the next owner asks each origin its robots.txt and fetches every allowed page of both';
    it(title, async () => {
      const crawl = how === 'kill' ? 'corigk' : 'corigh';
      const gs = groups(crawl);
      const hosts = gs.flatMap((g) => g.hosts);
      const config = {
        redis: world.redis.url,
        crawl,
        store: world.store,
        grouping: 'registrable',
        dns: Object.fromEntries(hosts.map((h) => [h, '127.0.0.1'])),
        checkpointMs: 200,
        politeness: { minDelayMs: 100, startDelayMs: 100, ipMinDelayMs: 5 },
      };
      const spawn = (more: Record<string, unknown>): NodeProc => {
        const p = spawnNode({ ...config, ...more }, ENGINE);
        world.started.push(p.child);
        return p;
      };
      const a = spawn({ slots: SLOTS, seeds: hosts.map((h) => `${origin(h)}/`) });
      const b = spawn({ wait: true });
      await a.ready;
      // A asked every origin's robots.txt: its slots hold both seeds of each group.
      await until(() => hosts.every((h) => requests(h, '/robots.txt').length === 1), WAIT_MS, 'A asking every robots.txt');
      // Then each slot's accepted checkpoint has applied every entry of its inbox: it holds the
      // seeds — so B does not take them from the inbox again — and no robots.txt answer. (Counted
      // by the record's cursor, not by checkpoints written: an idle slot writes none.)
      const r = world.redis.client();
      const keys = new ClusterKeys(crawl);
      const appliedAll = async (): Promise<boolean> => {
        const recs = await readSlots(r, keys, SLOTS);
        for (const g of gs) {
          const last = (await r.xrevrange(keys.inbox(g.slot), '+', '-', 'COUNT', 1))[0]?.[0];
          if (last === undefined || recs[g.slot]!.ckpt === '' || compareIds(recs[g.slot]!.cursor, last) < 0) return false;
        }
        return true;
      };
      await until(appliedAll, WAIT_MS, "each slot's inbox applied in its accepted checkpoint");
      r.disconnect();
      await until(() => b.lines.some((l) => l['type'] === 'loaded'), WAIT_MS, 'B loaded');
      const movedAt = world.web.log.length;
      let moved: readonly string[];
      if (how === 'kill') {
        a.kill();
        await a.exited;
        answer(crawl);
        b.child.send({ type: 'go' });
        moved = hosts;
      } else {
        // A's drain waits for the robots.txt requests out (withheld), up to its bound: the
        // checkpoint it hands off holds the slot's URLs and no answer. Answered once B owns it.
        b.child.send({ type: 'go' });
        await until(() => b.lines.some((l) => l['type'] === 'checkpoint'), WAIT_MS, 'a slot handed off to B');
        answer(crawl);
        const slot = Number(b.lines.find((l) => l['type'] === 'checkpoint')!['slot']);
        moved = gs.find((g) => g.slot === slot)!.hosts;
        expect((await a.exited).code).toBe(0);
      }
      expect((await b.exited).code).toBe(0);
      expect(b.lines.filter((l) => l['type'] === 'error')).toEqual([]);

      for (const h of hosts) {
        const kind = h.split('.')[0]!;
        if (moved.includes(h)) expect(requests(h, '/robots.txt', movedAt), `${h}: robots.txt asked by B`).toHaveLength(1);
        for (const p of PAGES) expect(requests(h, p, movedAt).length, `${h}${p}`).toBeGreaterThan(0);
        // Each origin's own rules: www disallows /secret/, blog /private/.
        expect(requests(h, `${RULES[kind]}x`), `${h}: its Disallow obeyed`).toEqual([]);
        const other = kind === 'www' ? RULES['blog']! : RULES['www']!;
        expect(requests(h, `${other}x`).length, `${h}${other}x: allowed there`).toBeGreaterThan(0);
      }
      const summary = b.lines.find((l) => l['type'] === 'summary')!['summary'] as { counts: { robotsDisallowed: number } };
      // Exactly the one disallowed link of each moved origin: no URL lost for want of an answer.
      expect(summary.counts.robotsDisallowed).toBe(moved.length);
    }, 4 * WAIT_MS);
  }
});
