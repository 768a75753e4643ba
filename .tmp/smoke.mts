import { createSimWeb } from '/work/wt/sim/src/index.js';
import http from 'node:http';
const sim = createSimWeb({ seed: 7, hosts: 12, pagesPerHost: 15 });
await sim.start();
console.log(sim.summary());
function get(url: string, headers: Record<string,string> = {}): Promise<{status:number, headers: http.IncomingHttpHeaders, body: string}> {
  const u = new URL(url);
  return new Promise((res, rej) => {
    sim.resolve(u.hostname).then(ip => {
      const r = http.request({ host: ip, port: u.port, path: u.pathname + u.search, headers: { host: u.host, ...headers }, agent: false }, (resp) => {
        const chunks: Buffer[] = []; resp.on('data', c => chunks.push(c)); resp.on('end', () => res({ status: resp.statusCode!, headers: resp.headers, body: Buffer.concat(chunks).toString() }));
      }); r.on('error', rej); r.end();
    }, rej);
  });
}
const h = sim.truth.hosts[0]!;
console.log(h.name, h.robotsMode, h.features, h.pages.length, h.disallowed, h.redirects.length);
const r = await get(sim.url(h.name, '/robots.txt'));
console.log(r.status, r.body.slice(0, 400));
const p = await get(sim.url(h.name, '/'));
console.log(p.status, p.headers, p.body);
for (const t of sim.truth.hosts) console.log(t.name, t.ip, t.robotsMode, t.pages.length, t.disallowed.length, t.soft404.length, t.missing.length, t.traps.map(x=>x.id), JSON.stringify(t.features), t.requiredIntervalMs);
console.log(sim.truth.unresolvable, sim.truth.hostile);
console.log(sim.log.map(e => [e.seq, e.host, e.ip, e.key, e.status, e.kind, (e.finishedAtMs! - e.arrivedAtMs).toFixed(2)]));
await sim.close();
console.log(process.getActiveResourcesInfo());
