/**
 * robots.txt on the simulated web: the text each host serves and the ground-truth matcher
 * the sim judges requests with.
 *
 * The matcher implements RFC 9309 §2.2.2 for the rules the sim writes: a rule matches when
 * its pattern matches a prefix of the path-and-query (`*` any run of characters, a final `$`
 * the end); the longest matching pattern wins; on a tie `allow` wins; no match allows. It is
 * the sim's referee, kept apart from the crawler's own robots layer (src/fetch) on purpose: a
 * test that judged the crawler with the crawler's own matcher would prove nothing.
 */
import type { SimRobotsRules } from './types.js';

interface CompiledRule {
  readonly allow: boolean;
  readonly length: number;
  readonly regex: RegExp;
}

function compile(pattern: string, allow: boolean): CompiledRule {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return { allow, length: pattern.length, regex: new RegExp(`^${source}${anchored ? '$' : ''}`) };
}

/** A compiled rule group: `isAllowed(pathAndQuery)` by RFC 9309 precedence. */
export class RulesMatcher {
  private readonly rules: readonly CompiledRule[];

  constructor(rules: SimRobotsRules) {
    this.rules = [
      ...rules.allow.map((p) => compile(p, true)),
      ...rules.disallow.filter((p) => p !== '').map((p) => compile(p, false)),
    ];
  }

  /** Whether the path (with its query, if any) may be fetched. */
  isAllowed(pathAndQuery: string): boolean {
    if (pathAndQuery === '/robots.txt') return true;
    let best: CompiledRule | undefined;
    for (const rule of this.rules) {
      if (!rule.regex.test(pathAndQuery)) continue;
      if (!best || rule.length > best.length || (rule.length === best.length && rule.allow && !best.allow)) best = rule;
    }
    return best ? best.allow : true;
  }
}

/** What a host's readable robots.txt says, before rendering. */
export interface RobotsPlan {
  readonly crawlDelaySec: number | undefined;
  /** Adds a group for the agent token (which then replaces `*` for that agent). */
  readonly agentGroup: boolean;
  readonly agentToken: string;
}

const SHARED_DISALLOW = ['/private/', '/search', '/*.pdf$'];
const SHARED_ALLOW = ['/private/press/'];
/** Only in the agent-specific group. */
export const AGENT_ONLY_PREFIX = '/nomeguri/';
/** Only in the `*` group of hosts that also have an agent group: allowed for the agent. */
export const STAR_ONLY_PREFIX = '/members/';

/** The rule group that applies to the agent token. */
export function rulesFor(plan: RobotsPlan): SimRobotsRules {
  const disallow = plan.agentGroup ? [...SHARED_DISALLOW, AGENT_ONLY_PREFIX] : [...SHARED_DISALLOW];
  return Object.freeze({
    allow: Object.freeze([...SHARED_ALLOW]),
    disallow: Object.freeze(disallow),
    crawlDelaySec: plan.crawlDelaySec,
    agentSpecific: plan.agentGroup,
  });
}

/** The robots.txt text (without padding). */
export function robotsText(hostName: string, plan: RobotsPlan): string {
  const lines = [`# robots.txt for ${hostName} (meguri simulated web)`, '', 'User-agent: otherbot', 'Disallow: /', ''];
  const group = (agents: string[], extraDisallow: string[]): void => {
    for (const a of agents) lines.push(`User-agent: ${a}`);
    for (const p of [...SHARED_DISALLOW, ...extraDisallow]) lines.push(`Disallow: ${p}`);
    for (const p of SHARED_ALLOW) lines.push(`Allow: ${p}`);
    if (plan.crawlDelaySec !== undefined) lines.push(`Crawl-delay: ${plan.crawlDelaySec}`);
    lines.push('');
  };
  if (plan.agentGroup) {
    // The product token is matched case-insensitively (RFC 9309 §2.2.1): write it capitalized.
    const token = plan.agentToken[0]!.toUpperCase() + plan.agentToken.slice(1);
    group([token], [AGENT_ONLY_PREFIX]);
    group(['*'], [STAR_ONLY_PREFIX]);
  } else {
    group(['*'], []);
  }
  return lines.join('\n');
}
