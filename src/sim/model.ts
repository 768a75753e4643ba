/**
 * The simulated web's site model: hosts, their behaviours, their pages and the links between
 * them, generated once from the seed and the options, plus the ground truth derived from it
 * by a breadth-first walk that behaves like a perfect polite crawler.
 *
 * Generation order is fixed and every choice comes from a generator seeded by what is being
 * chosen (the host, the page), so the same seed and options give the same web. The model owns
 * no sockets, no clock and no rendering: src/sim/content.ts turns a page into HTML and
 * src/sim/web.ts (`SimWeb`) answers requests from this model.
 */
import { ChangeProcess } from './change.js';
import type { SimMix, SimWebOptions } from './options.js';
import { capitalize, hashParts, Rng, words } from './random.js';
import { AGENT_ONLY_PREFIX, type RobotsPlan, RulesMatcher, STAR_ONLY_PREFIX, robotsText, rulesFor } from './robots.js';
import type {
  RobotsMode,
  SimBurst,
  SimHostFeatures,
  SimHostile,
  SimHostTruth,
  SimRedirect,
  SimRobotsRules,
  SimTrapFamily,
} from './types.js';

/** How a link's href is written (the server and the truth see the same page key either way). */
export type LinkStyle = 'path' | 'absolute' | 'relative' | 'utm' | 'fragment' | 'reordered';

/** A link on a page. `host` ≥ 0 is a host index; a negative value −1−k is unresolvable host k. */
export interface LinkRef {
  readonly host: number;
  readonly path: string;
  readonly text: string;
  readonly style: LinkStyle;
  readonly nofollow: boolean;
}

/** One content page. */
export interface PageNode {
  readonly index: number;
  readonly path: string;
  /** Index of the tree parent, −1 for the root. */
  readonly parent: number;
  readonly title: string;
  readonly section: string;
  readonly links: LinkRef[];
  readonly paragraphs: number;
  /** Index of the page whose text this one mirrors, −1 if none. */
  readonly mirrorOf: number;
  /** Real changes (a mirror shares its original's process). */
  readonly change: ChangeProcess;
  /** Ad rotations. */
  readonly cosmetic: ChangeProcess;
  /** Creation time as an offset from the epoch (≤ 0), ms. */
  readonly createdOffsetMs: number;
  /** Erroring hosts: how many first requests fail (0: none) and with what (0 = reset). */
  readonly failFirst: number;
  readonly failStatus: number;
}

/** A fixed resource of a host, by page key. */
export type Resource =
  | { readonly kind: 'page'; readonly page: PageNode }
  | { readonly kind: 'bait' }
  | { readonly kind: 'redirect' | 'loop'; readonly redirect: SimRedirect }
  | { readonly kind: 'hostile'; readonly hostile: SimHostile }
  | { readonly kind: 'robots' };

/** A host with everything generated for it. */
export interface HostModel {
  readonly index: number;
  readonly name: string;
  readonly ip: string;
  readonly siteName: string;
  readonly robotsMode: RobotsMode;
  readonly rules: SimRobotsRules | undefined;
  readonly matcher: RulesMatcher | undefined;
  readonly robotsText: string | undefined;
  readonly requiredIntervalMs: number;
  readonly features: SimHostFeatures;
  readonly bursts: readonly SimBurst[];
  readonly nav: readonly LinkRef[];
  readonly pages: readonly PageNode[];
  readonly resources: ReadonlyMap<string, Resource>;
  readonly calendar: SimTrapFamily | undefined;
  readonly session: SimTrapFamily | undefined;
  /** Items in the session-trap shop. */
  readonly shopItems: number;
  /** Soft-404 template body (farms only). */
  readonly soft404Template: string | undefined;
  readonly hostile: readonly SimHostile[];
  readonly redirects: readonly SimRedirect[];
  readonly nearDuplicates: readonly (readonly [string, string])[];
}

/** The generated web before the truth walk. */
export interface WebModel {
  readonly hosts: readonly HostModel[];
  readonly byName: ReadonlyMap<string, HostModel>;
  readonly unresolvable: readonly string[];
  readonly ips: readonly string[];
}

const SECTIONS = ['news', 'blog', 'docs', 'products', 'guides', 'archive', 'team', 'events', 'help', 'reviews', 'travel', 'recipes'];
const SITE_SUFFIXES = ['Journal', 'Review', 'Works', 'Times', 'Lab', 'Gazette', 'Notes', 'Collective', 'Almanac', 'Post'];
const TRACKING_PARAM = /^(utm_[a-z0-9_]*|gclid|fbclid|msclkid)$/i;

/** Size of the session-trap shop (items under /shop/item/). */
const SHOP_ITEMS = 5;
/** Decoded size of the decompression bomb. */
export const BOMB_DECODED_BYTES = 32 * 1024 * 1024;
/** Size of the oversized body. */
export const HUGE_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The page key of a request target: fragment dropped, tracking parameters and the session
 * parameter removed, the other query pairs sorted by name (stably), an empty query dropped.
 */
export function pageKey(target: string, sessionParam: string): string {
  let t = target;
  const hash = t.indexOf('#');
  if (hash >= 0) t = t.slice(0, hash);
  const q = t.indexOf('?');
  const path = (q < 0 ? t : t.slice(0, q)) || '/';
  if (q < 0) return path;
  const pairs = t
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      if (pair === '') return false;
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return !TRACKING_PARAM.test(name) && name !== sessionParam;
    });
  const nameOf = (pair: string): string => {
    const eq = pair.indexOf('=');
    return eq < 0 ? pair : pair.slice(0, eq);
  };
  pairs.sort((a, b) => {
    const x = nameOf(a);
    const y = nameOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return pairs.length ? `${path}?${pairs.join('&')}` : path;
}

/** How many hosts a share selects: at least one for any share above zero, at most `n`. */
function countOf(share: number, n: number): number {
  if (share <= 0 || n === 0) return 0;
  return Math.min(n, Math.max(1, Math.round(share * n)));
}

/** A seeded selection of `countOf(share, candidates.length)` of the candidates. */
function select(seed: number, label: string, candidates: readonly number[], share: number): Set<number> {
  const rng = new Rng(seed, 'select', label);
  const order = rng.shuffle([...candidates]);
  return new Set(order.slice(0, countOf(share, candidates.length)));
}

function titleWords(rng: Rng, n: number): string {
  const vocab = words();
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(capitalize(vocab[rng.int(vocab.length)]!));
  return out.join(' ');
}

function slugWord(rng: Rng): string {
  const vocab = words();
  return vocab[rng.int(vocab.length)]!;
}

interface HostPlan {
  readonly robotsMode: RobotsMode;
  readonly agentGroup: boolean;
  readonly crawlDelaySec: number | undefined;
  readonly features: SimHostFeatures;
  readonly ip: string;
}

const READABLE: ReadonlySet<RobotsMode> = new Set<RobotsMode>(['normal', 'flaky', 'redirect', 'huge']);

/** Decides each host's behaviours: exclusive robots modes by slices of one shuffle, the rest independently. */
function planHosts(o: Readonly<SimWebOptions>, ips: readonly string[]): HostPlan[] {
  const n = o.hosts;
  const mix: Readonly<SimMix> = o.mix;
  const all = Array.from({ length: n }, (_, i) => i);
  const modes: RobotsMode[] = new Array<RobotsMode>(n).fill('normal');
  const order = new Rng(o.seed, 'robots-modes').shuffle([...all]);
  let at = 0;
  const slices: [RobotsMode, number][] = [
    ['missing', mix.robotsMissing],
    ['error', mix.robotsError],
    ['flaky', mix.robotsFlaky],
    ['redirect', mix.robotsRedirect],
    ['binary', mix.robotsBinary],
    ['huge', mix.robotsHuge],
  ];
  for (const [mode, s] of slices) {
    const c = Math.min(countOf(s, n), n - at);
    for (let k = 0; k < c; k++) modes[order[at + k]!] = mode;
    at += c;
  }
  const readable = all.filter((i) => READABLE.has(modes[i]!));
  const agent = select(o.seed, 'agent-group', readable, mix.agentGroup);
  const delayed = select(o.seed, 'crawl-delay', readable, mix.crawlDelay);
  const slow = select(o.seed, 'slow', all, mix.slow);
  const throttled = select(o.seed, 'throttled', all, mix.throttled);
  const erroring = select(o.seed, 'erroring', all, mix.erroring);
  const redirects = select(o.seed, 'redirects', all, mix.redirects);
  const soft = select(o.seed, 'soft404', all, mix.soft404);
  const calendar = select(o.seed, 'calendar', all, mix.calendarTrap);
  const session = select(o.seed, 'session', all, mix.sessionTrap);
  const hostile = select(o.seed, 'hostile', all, mix.hostile);
  const ipOrder = new Rng(o.seed, 'ip-assignment').shuffle([...all]);
  const ipOf = new Array<string>(n);
  ipOrder.forEach((host, j) => {
    ipOf[host] = ips[j % ips.length]!;
  });
  return all.map((i) => {
    const rng = new Rng(o.seed, 'host-plan', i);
    return {
      robotsMode: modes[i]!,
      agentGroup: agent.has(i),
      crawlDelaySec: delayed.has(i) ? rng.pick(mix.crawlDelaySeconds) : undefined,
      ip: ipOf[i]!,
      features: Object.freeze({
        slowMs: slow.has(i) ? Math.round(mix.slowMs * (0.5 + rng.float())) : 0,
        throttled: throttled.has(i),
        erroring: erroring.has(i),
        redirects: redirects.has(i),
        soft404: soft.has(i),
        calendarTrap: calendar.has(i),
        sessionTrap: session.has(i),
        hostile: hostile.has(i),
      }),
    };
  });
}

/** Generates the whole web. */
export function generateWeb(o: Readonly<SimWebOptions>): WebModel {
  // 250 addresses per /24 (.2 … .251), so the first 250 are the familiar 127.0.0.x.
  const ips = Array.from({ length: o.ips }, (_, k) => `127.0.${Math.floor(k / 250)}.${2 + (k % 250)}`);
  const plans = planHosts(o, ips);
  const names = plans.map((_, i) => `h${i}.${o.domain}`);
  const unresolvable = Array.from({ length: countOf(o.mix.unresolvable, o.hosts) }, (_, k) => `nx${k}.${o.domain}`);
  // Page paths and titles first (cross-host links need every host's pages to exist).
  const skeletons = plans.map((plan, i) => skeleton(o, i, plan));
  const hosts = plans.map((plan, i) => buildHost(o, i, names, plan, skeletons, unresolvable.length));
  const byName = new Map(hosts.map((h) => [h.name, h]));
  return { hosts, byName, unresolvable, ips };
}

interface PageSkeleton {
  readonly path: string;
  readonly title: string;
  readonly section: string;
}

function skeleton(o: Readonly<SimWebOptions>, hostIndex: number, plan: HostPlan): PageSkeleton[] {
  const rng = new Rng(o.seed, 'skeleton', hostIndex);
  const sections = rng.shuffle([...SECTIONS]).slice(0, rng.range(3, 5));
  const n = o.pagesPerHost;
  const out: PageSkeleton[] = [];
  const siteTitle = `${capitalize(slugWord(rng))} ${rng.pick(SITE_SUFFIXES)}`;
  out.push({ path: '/', title: siteTitle, section: '' });
  const sectionPages = Math.min(sections.length, n - 1);
  for (let s = 0; s < sectionPages; s++) {
    out.push({ path: `/${sections[s]}/`, title: `${capitalize(sections[s]!)} · ${siteTitle}`, section: sections[s]! });
  }
  const readable = READABLE.has(plan.robotsMode);
  // Special pages that exercise canonicalization and robots precedence, when there is room.
  const specials: ((i: number) => PageSkeleton)[] = [
    (i) => {
      const sec = rng.pick(sections);
      return { path: `/${sec}/list?page=${i}&sort=new`, title: `${capitalize(sec)} page ${i}`, section: sec };
    },
  ];
  if (readable) {
    specials.push(
      (i) => ({ path: `/private/press/${slugWord(rng)}-${i}.html`, title: `Press ${titleWords(rng, 2)}`, section: 'press' }),
      (i) => ({ path: `/files/${slugWord(rng)}-${i}.pdf?download=1`, title: `File ${titleWords(rng, 2)}`, section: 'files' }),
    );
    if (plan.agentGroup) {
      specials.push((i) => ({ path: `${STAR_ONLY_PREFIX}${slugWord(rng)}-${i}.html`, title: `Members ${titleWords(rng, 2)}`, section: 'members' }));
    }
  }
  for (let i = out.length; i < n; i++) {
    const special = specials.shift();
    if (special && n - i > 2) {
      out.push(special(i));
      continue;
    }
    const sec = rng.pick(sections);
    out.push({ path: `/${sec}/${slugWord(rng)}-${i}.html`, title: titleWords(rng, rng.range(2, 5)), section: sec });
  }
  return out;
}

function buildHost(
  o: Readonly<SimWebOptions>,
  index: number,
  names: readonly string[],
  plan: HostPlan,
  skeletons: readonly PageSkeleton[][],
  unresolvableCount: number,
): HostModel {
  const mix = o.mix;
  const name = names[index]!;
  const own = skeletons[index]!;
  const rng = new Rng(o.seed, 'host', index);
  const n = own.length;
  const resources = new Map<string, Resource>();
  const readable = READABLE.has(plan.robotsMode);

  // Robots.
  const robotsPlan: RobotsPlan | undefined = readable
    ? { crawlDelaySec: plan.crawlDelaySec, agentGroup: plan.agentGroup, agentToken: o.agentToken }
    : undefined;
  const rules = robotsPlan ? rulesFor(robotsPlan) : undefined;
  const text = robotsPlan ? robotsText(name, robotsPlan) : undefined;
  if (plan.robotsMode === 'redirect') resources.set('/robots-main.txt', { kind: 'robots' });
  const delayMs = rules?.crawlDelaySec !== undefined ? rules.crawlDelaySec * 1000 : 0;

  // Tree, mirrors and change processes.
  const mirrorOf = new Array<number>(n).fill(-1);
  const firstLeafCandidate = 1 + Math.min(n - 1, own.filter((p) => p.path.endsWith('/') && p.path !== '/').length);
  // Originals a mirror may copy: every earlier non-mirror page but the root.
  const originals: number[] = [];
  for (let j = 1; j < firstLeafCandidate; j++) originals.push(j);
  for (let i = firstLeafCandidate; i < n; i++) {
    if (rng.chance(mix.nearDuplicates) && originals.length) mirrorOf[i] = rng.pick(originals);
    else originals.push(i);
  }
  const parent = new Array<number>(n).fill(-1);
  const children: number[][] = Array.from({ length: n }, () => []);
  const parentPool: number[] = [0];
  for (let i = 1; i < n; i++) {
    parent[i] = own[i]!.path.endsWith('/') && i < firstLeafCandidate ? 0 : rng.pick(parentPool);
    children[parent[i]!]!.push(i);
    if (mirrorOf[i] === -1) parentPool.push(i);
  }

  const linkTo = (hostIdx: number, page: number, style: LinkStyle = 'path', nofollow = false): LinkRef => {
    const sk = skeletons[hostIdx]![page]!;
    return { host: hostIdx, path: sk.path, text: sk.title, style: hostIdx === index ? style : 'absolute', nofollow };
  };
  const styles: LinkStyle[] = ['path', 'path', 'path', 'relative', 'absolute', 'utm', 'fragment'];

  const pages: PageNode[] = [];
  const linkLists: LinkRef[][] = [];
  for (let i = 0; i < n; i++) {
    const prng = new Rng(o.seed, 'page', index, i);
    const links: LinkRef[] = [];
    for (const c of children[i]!) links.push(linkTo(index, c, prng.pick(styles)));
    if (i > 0) links.push(linkTo(index, parent[i]!, 'relative'));
    for (let k = 0; k < o.linksPerPage && n > 1; k++) links.push(linkTo(index, prng.int(n), prng.pick(styles), prng.chance(0.05)));
    for (let k = 0; k < o.crossLinksPerPage && names.length > 1; k++) {
      let other = prng.int(names.length - 1);
      if (other >= index) other++;
      const size = skeletons[other]!.length;
      links.push(linkTo(other, size > 1 ? 1 + prng.int(size - 1) : 0));
    }
    if (unresolvableCount > 0 && prng.chance(mix.unresolvable)) {
      const k = prng.int(unresolvableCount);
      links.push({ host: -1 - k, path: '/', text: 'A partner site', style: 'absolute', nofollow: false });
    }
    if (own[i]!.path.includes('?page=')) {
      // The query-bearing page is linked with its pairs out of order from the root.
      linkLists[0]?.push({ host: index, path: own[i]!.path, text: own[i]!.title, style: 'reordered', nofollow: false });
    }
    linkLists.push(links);
    const original = mirrorOf[i]!;
    const changing = prng.chance(mix.changingPages);
    const ratePerHour = changing ? prng.pick(mix.changeRatesPerHour) : 0;
    const cosmeticRate = prng.chance(mix.cosmeticPages) || original >= 0 ? mix.cosmeticRatePerHour : 0;
    const failing = plan.features.erroring && i > 0 && prng.chance(mix.errorPages);
    pages.push({
      index: i,
      path: own[i]!.path,
      parent: parent[i]!,
      title: own[i]!.title,
      section: own[i]!.section,
      // A mirror shows its original's link list (the same array), so only the ad line and
      // its title tell the two apart.
      links: original >= 0 ? linkLists[original]! : links,
      paragraphs: prng.range(4, 7),
      mirrorOf: original,
      change: original >= 0 ? pages[original]!.change : new ChangeProcess(ratePerHour, o.seed, index, own[i]!.path),
      cosmetic: new ChangeProcess(cosmeticRate, o.seed, 'ad', index, own[i]!.path),
      createdOffsetMs: -Math.floor(prng.float() * 365 * 24 * 3_600_000),
      failFirst: failing ? prng.range(1, 2) : 0,
      failStatus: failing ? prng.pick([500, 502, 503, 0]) : 0,
    });
  }
  for (const page of pages) resources.set(page.path, { kind: 'page', page });
  const nearDuplicates = pages.filter((p) => p.mirrorOf >= 0).map((p) => Object.freeze([pages[p.mirrorOf]!.path, p.path] as const));

  const extraLink = (path: string, text: string, style: LinkStyle = 'path', on?: number): void => {
    const target = on ?? rng.int(n);
    pages[target]!.links.push({ host: index, path, text, style, nofollow: false });
  };

  // Robots bait: linked paths the rules disallow.
  if (rules) {
    for (let k = 0; k < 2; k++) {
      const p = `/private/${slugWord(rng)}-${k}.html`;
      resources.set(p, { kind: 'bait' });
      extraLink(p, 'Private area');
    }
    const search = `/search?q=${slugWord(rng)}`;
    resources.set(search, { kind: 'bait' });
    extraLink(search, 'Search');
    const pdf = `/files/${slugWord(rng)}.pdf`;
    resources.set(pdf, { kind: 'bait' });
    extraLink(pdf, 'Download the PDF');
    if (plan.agentGroup) {
      const p = `${AGENT_ONLY_PREFIX}${slugWord(rng)}.html`;
      resources.set(p, { kind: 'bait' });
      extraLink(p, 'Not for meguri');
    }
  }

  // Redirects and loops.
  const redirects: SimRedirect[] = [];
  if (plan.features.redirects) {
    const other = names.length > 1 ? (index + 1 + rng.int(names.length - 1)) % names.length : index;
    const otherPages = skeletons[other]!;
    const someOwn = (): string => own[rng.int(n)]!.path;
    const list: SimRedirect[] = [
      { from: '/go/0', status: 301, toHost: name, toPath: someOwn() },
      { from: '/go/1', status: 302, toHost: names[other]!, toPath: otherPages[rng.int(otherPages.length)]!.path },
      { from: '/go/2', status: 307, toHost: name, toPath: '/go/3' },
      { from: '/go/3', status: 308, toHost: name, toPath: someOwn() },
    ];
    for (const r of list) {
      resources.set(r.from, { kind: 'redirect', redirect: r });
      redirects.push(r);
    }
    const loops: SimRedirect[] = [
      { from: '/loop/a', status: 302, toHost: name, toPath: '/loop/b' },
      { from: '/loop/b', status: 302, toHost: name, toPath: '/loop/a' },
      { from: '/loop/self', status: 301, toHost: name, toPath: '/loop/self' },
    ];
    for (const r of loops) {
      resources.set(r.from, { kind: 'loop', redirect: r });
      redirects.push(r);
    }
    for (const p of ['/go/0', '/go/1', '/go/2', '/loop/a', '/loop/self']) extraLink(p, 'Moved');
  }

  // Broken links and soft-404 dead links.
  const farm = plan.features.soft404;
  for (let i = 0; i < n; i++) {
    const prng = new Rng(o.seed, 'dead', index, i);
    const dead = farm ? prng.range(1, 2) : prng.chance(mix.brokenLinks) ? 1 : 0;
    for (let k = 0; k < dead; k++) extraLink(`/${farm ? 'gone' : 'old'}/${slugWord(prng)}-${i}-${k}.html`, 'Older article', 'path', i);
  }

  // Traps.
  let calendar: SimTrapFamily | undefined;
  if (plan.features.calendarTrap) {
    const d = new Date(o.epochMs);
    const entry = `/calendar/${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/`;
    calendar = Object.freeze({ id: `calendar@${name}`, kind: 'calendar', host: name, prefix: '/calendar/', entry, finitePaths: Object.freeze([]) });
    extraLink(entry, 'Events calendar', 'path', 0);
    extraLink(entry, 'Upcoming events');
  }
  let session: SimTrapFamily | undefined;
  if (plan.features.sessionTrap) {
    const finitePaths = ['/shop/', ...Array.from({ length: SHOP_ITEMS }, (_, k) => `/shop/item/${k}`)];
    session = Object.freeze({
      id: `session@${name}`,
      kind: 'session',
      host: name,
      prefix: '/shop/',
      entry: '/shop/',
      param: mix.sessionParam,
      finitePaths: Object.freeze(finitePaths),
    });
    const sid = (hashParts(o.seed, 'sid-entry', name) >>> 0).toString(16).padStart(8, '0');
    extraLink(`/shop/?${mix.sessionParam}=${sid}`, 'Shop', 'path', 0);
  }

  // Hostile resources.
  const hostile: SimHostile[] = [];
  if (plan.features.hostile) {
    hostile.push(
      { host: name, path: '/download/bomb.html', kind: 'bomb', decodedBytes: BOMB_DECODED_BYTES },
      { host: name, path: '/download/huge.html', kind: 'huge', decodedBytes: HUGE_BODY_BYTES },
    );
    for (const h of hostile) {
      resources.set(h.path, { kind: 'hostile', hostile: h });
      extraLink(h.path, h.kind === 'bomb' ? 'Compressed archive' : 'Full dataset', 'path', 0);
    }
  }

  const nav: LinkRef[] = [linkTo(index, 0)];
  for (let s = 1; s < n && own[s]!.path.endsWith('/') && s < firstLeafCandidate; s++) nav.push(linkTo(index, s));

  const bursts: SimBurst[] = [];
  if (plan.features.throttled) {
    const first: SimBurst = {
      atRequest: rng.range(1, 3),
      length: rng.range(1, 3),
      status: 429,
      retryAfterSec: rng.pick(mix.retryAfterSeconds),
      form: 'seconds',
    };
    const second: SimBurst = {
      atRequest: first.atRequest + first.length + rng.range(2, 5),
      length: rng.range(1, 2),
      status: 503,
      retryAfterSec: rng.pick(mix.retryAfterSeconds),
      form: 'date',
    };
    bursts.push(Object.freeze(first), Object.freeze(second));
  }

  return {
    index,
    name,
    ip: plan.ip,
    siteName: own[0]!.title,
    robotsMode: plan.robotsMode,
    rules,
    matcher: rules ? new RulesMatcher(rules) : undefined,
    robotsText: text,
    requiredIntervalMs: Math.max(o.hostIntervalMs, delayMs),
    features: plan.features,
    bursts,
    nav,
    pages,
    resources,
    calendar,
    session,
    shopItems: SHOP_ITEMS,
    soft404Template: farm ? soft404Template(o.seed, name, own[0]!.title) : undefined,
    hostile,
    redirects,
    nearDuplicates,
  };
}

function soft404Template(seed: number, host: string, siteName: string): string {
  const rng = new Rng(seed, 'soft404', host);
  const vocab = words();
  const sentence = Array.from({ length: 24 }, () => vocab[rng.int(vocab.length)]!).join(' ');
  return [
    '<!doctype html>',
    `<html lang="en"><head><meta charset="utf-8"><title>${siteName}</title></head>`,
    '<body><main><h1>We could not find that page</h1>',
    `<p>${capitalize(sentence)}.</p>`,
    '<p><a href="/">Back to the front page</a></p>',
    '</main></body></html>',
    '',
  ].join('\n');
}

/** What a page key resolves to on a host (fixed resources, traps, then unknown). */
export type Resolution =
  | Resource
  | { readonly kind: 'calendar'; readonly year: number; readonly month: number }
  | { readonly kind: 'session'; readonly item: number }
  | { readonly kind: 'soft404' }
  | { readonly kind: 'missing' };

const CALENDAR_PATH = /^\/calendar\/(\d{4})\/(\d{2})\/$/;
const SHOP_ITEM_PATH = /^\/shop\/item\/(\d+)$/;

/** Resolves a page key on a host. `/robots.txt` is handled by the server, not here. */
export function resolveKey(host: HostModel, key: string): Resolution {
  const fixed = host.resources.get(key);
  if (fixed) return fixed;
  if (host.calendar) {
    const m = CALENDAR_PATH.exec(key);
    if (m) {
      const year = Number(m[1]);
      const month = Number(m[2]);
      if (year >= 1000 && month >= 1 && month <= 12) return { kind: 'calendar', year, month };
    }
  }
  if (host.session) {
    if (key === '/shop/') return { kind: 'session', item: -1 };
    const m = SHOP_ITEM_PATH.exec(key);
    if (m && Number(m[1]) < host.shopItems && String(Number(m[1])) === m[1]) return { kind: 'session', item: Number(m[1]) };
  }
  return host.soft404Template !== undefined ? { kind: 'soft404' } : { kind: 'missing' };
}

/** Whether the host's rules (for the agent token) forbid a page key; robots 5xx means all. */
export function isDisallowedKey(host: HostModel, key: string): boolean {
  if (key === '/robots.txt') return false;
  if (host.robotsMode === 'error') return true;
  return host.matcher ? !host.matcher.isAllowed(key) : false;
}

/**
 * Walks the web like a perfect polite crawler seeded with every host root: fetches allowed
 * pages, follows their links and redirects, never enters a trap or a disallowed path, and
 * skips hosts whose robots.txt never answers. Returns each host's ground truth.
 */
export function computeTruth(web: WebModel): SimHostTruth[] {
  interface Acc {
    pages: Set<string>;
    disallowed: Set<string>;
    loops: Set<string>;
    missing: Set<string>;
    soft404: Set<string>;
  }
  const acc: Acc[] = web.hosts.map(() => ({
    pages: new Set(),
    disallowed: new Set(),
    loops: new Set(),
    missing: new Set(),
    soft404: new Set(),
  }));
  // One seen-set per host keyed by the model's own path strings (no concatenation per link).
  const seen = web.hosts.map(() => new Set<string>());
  const queue: [number, string][] = [];
  const push = (h: number, key: string): void => {
    if (h < 0) return; // unresolvable host
    const set = seen[h]!;
    if (set.has(key)) return;
    set.add(key);
    queue.push([h, key]);
  };
  for (const h of web.hosts) push(h.index, '/');
  for (let qi = 0; qi < queue.length; qi++) {
    const [h, key] = queue[qi]!;
    const host = web.hosts[h]!;
    if (host.robotsMode === 'error') continue;
    const a = acc[h]!;
    if (isDisallowedKey(host, key)) {
      a.disallowed.add(key);
      continue;
    }
    const r = resolveKey(host, key);
    switch (r.kind) {
      case 'page':
        a.pages.add(key);
        for (const l of host.nav) push(l.host, l.path);
        for (const l of r.page.links) if (!l.nofollow) push(l.host, l.path);
        break;
      case 'redirect':
      case 'loop': {
        if (r.kind === 'loop') a.loops.add(key);
        const target = web.byName.get(r.redirect.toHost);
        if (target) push(target.index, r.redirect.toPath);
        break;
      }
      case 'missing':
        a.missing.add(key);
        break;
      case 'soft404':
        a.soft404.add(key);
        break;
      default:
        break; // bait (never allowed), traps, hostile, robots
    }
  }
  return web.hosts.map((host, i) => {
    const a = acc[i]!;
    const order = new Map(host.pages.map((p) => [p.path, p.index]));
    const pages = [...a.pages].sort((x, y) => (order.get(x) ?? 0) - (order.get(y) ?? 0));
    return Object.freeze({
      name: host.name,
      index: host.index,
      ip: host.ip,
      robotsMode: host.robotsMode,
      rules: host.rules,
      robotsText: host.robotsText,
      requiredIntervalMs: host.requiredIntervalMs,
      features: host.features,
      bursts: host.bursts,
      pages: Object.freeze(pages),
      disallowed: Object.freeze([...a.disallowed].sort()),
      redirects: Object.freeze(host.redirects),
      loops: Object.freeze([...a.loops].sort()),
      missing: Object.freeze([...a.missing].sort()),
      nearDuplicates: Object.freeze(host.nearDuplicates.filter(([x, y]) => a.pages.has(x) && a.pages.has(y))),
      soft404: Object.freeze([...a.soft404].sort()),
      soft404Template: host.soft404Template,
      traps: Object.freeze([host.calendar, host.session].filter((t): t is SimTrapFamily => t !== undefined)),
      hostile: Object.freeze(host.hostile),
    });
  });
}
