import { createSimWeb, PLAIN_MIX } from '/work/wt/sim/src/index.js';
import { hashParts } from '/work/wt/sim/src/sim/random.js';
function simhash(text: string): [number, number] {
  const counts = new Map<string, number>();
  for (const m of text.toLowerCase().matchAll(/[a-z0-9]+/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  const v = new Float64Array(64);
  for (const [tok, w] of counts) {
    const a = hashParts(1, tok), b = hashParts(2, tok);
    for (let i = 0; i < 32; i++) { v[i] += (a >>> i) & 1 ? w : -w; v[32 + i] += (b >>> i) & 1 ? w : -w; }
  }
  let lo = 0, hi = 0;
  for (let i = 0; i < 32; i++) { if (v[i]! > 0) lo |= 1 << i; if (v[32 + i]! > 0) hi |= 1 << i; }
  return [lo >>> 0, hi >>> 0];
}
const pop = (x: number) => { let c = 0; while (x) { x &= x - 1; c++; } return c; };
const ham = (a: [number, number], b: [number, number]) => pop((a[0] ^ b[0]) >>> 0) + pop((a[1] ^ b[1]) >>> 0);
const strip = (html: string) => html.replace(/<[^>]*>/g, ' ');
const sim = createSimWeb({ seed: 3, hosts: 10, pagesPerHost: 40, port: 8080, mix: { ...PLAIN_MIX, nearDuplicates: 0.2, cosmeticPages: 0.5, changingPages: 1, changeRatesPerHour: [1] } });
for (const mode of ['raw', 'text'] as const) {
  const f = (s: string) => simhash(mode === 'raw' ? s : strip(s));
  const hist = (xs: number[]) => { const h: Record<number, number> = {}; for (const x of xs) h[x] = (h[x] ?? 0) + 1; return JSON.stringify(h); };
  const distinct: number[] = [], mirror: number[] = [], cosmetic: number[] = [], real: number[] = [];
  for (const h of sim.truth.hosts) {
    const urls = h.pages.map(p => sim.url(h.name, p));
    const hs = urls.map(u => f(sim.snapshot(u, sim.options.epochMs).body));
    const fam = new Map<string,string>(); for (const [a,b] of h.nearDuplicates) fam.set(b, a);
    const root = (p: string) => fam.get(p) ?? p;
    for (let i = 0; i < hs.length; i++) for (let j = i + 1; j < hs.length; j++) if (root(h.pages[i]!) !== root(h.pages[j]!)) distinct.push(ham(hs[i]!, hs[j]!));
    for (const [a, b] of h.nearDuplicates) mirror.push(ham(f(sim.snapshot(sim.url(h.name, a), sim.options.epochMs).body), f(sim.snapshot(sim.url(h.name, b), sim.options.epochMs).body)));
    for (const u of urls) {
      // find times with version change / cosmetic change
      let t = sim.options.epochMs; const v0 = sim.versionAt(u, t);
      for (let k = 1; k < 2000; k++) {
        const t2 = t + k * 60_000; const v = sim.versionAt(u, t2);
        if (v.version === v0.version && v.cosmetic !== v0.cosmetic) { cosmetic.push(ham(f(sim.snapshot(u, t).body), f(sim.snapshot(u, t2).body))); break; }
        if (v.version !== v0.version) { real.push(ham(f(sim.snapshot(u, t).body), f(sim.snapshot(u, t2).body))); break; }
      }
    }
  }
  const le3 = (xs: number[]) => xs.filter(x => x <= 3).length / xs.length;
  console.log(mode, 'distinct <=3:', le3(distinct), 'min', Math.min(...distinct), 'n', distinct.length);
  console.log(mode, 'mirror', hist(mirror), le3(mirror));
  console.log(mode, 'cosmetic', hist(cosmetic), le3(cosmetic));
  console.log(mode, 'real', hist(real), le3(real));
}
