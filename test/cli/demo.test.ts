/**
 * `meguri demo` in a pseudo-terminal (util-linux `script`): the status block is drawn and
 * redrawn in place while the real engine crawls the simulated web, and the summary reports
 * zero politeness violations from the sim's own log, with the WARC where it says.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, RUN, STACK_LINE } from './helpers.js';
import { readWarc } from './warc-read.js';

function hasScript(): boolean {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

// Outside CI a machine without util-linux `script` skips this file; in CI (CI=true) that
// would hide a missing install step, so it fails with the fix instead.
if (!hasScript() && process.env['CI'] === 'true') {
  throw new Error("util-linux's `script` is missing (the pseudo-terminal for the demo test): apt-get install bsdutils");
}

describe.skipIf(!hasScript())('meguri demo in a terminal', () => {
  let out: string;
  let code: number | null;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-demo-test-'));
    const cmd = [process.execPath, '--import', 'tsx', RUN, 'demo', '--hosts', '8', '--out', join(dir, 'out')].map(shellQuote).join(' ');
    // script -q (no banner) -e (child's exit code) -f (flush) -c CMD; the typescript goes to /dev/null, the terminal's output to our pipe.
    const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TERM: 'xterm', COLUMNS: '120', LINES: '40' } });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (text += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (text += s));
    code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    out = text;
  }, 150_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('draws the status block and redraws it in place as the crawl advances', () => {
    // Each redraw moves the cursor up over the previous block (ESC [ n F) and clears each line (ESC [ 2 K).
    const redraws = out.split(/\x1b\[\d+F/);
    expect(redraws.length).toBeGreaterThan(3);
    const fetched = [...out.matchAll(/\x1b\[2K {2}fetched {2}(\d+) {2}\([\d.]+ pages\/s\) {3}in flight \d+ {3}queue (\d+)/g)].map((m) => Number(m[1]));
    expect(fetched.length).toBeGreaterThan(3);
    // The count only grows, and it did grow between frames.
    for (let i = 1; i < fetched.length; i++) expect(fetched[i]!).toBeGreaterThanOrEqual(fetched[i - 1]!);
    expect(new Set(fetched).size).toBeGreaterThan(2);
    expect(out).toMatch(/\x1b\[2K {2}hosts {4}\d+: ready \d+ · waiting \d+ · blocked \d+ · dead \d+ · done \d+/);
    expect(out).toMatch(/\x1b\[2K {2}answers {2}2xx \d+ · 3xx \d+ · 4xx \d+ · 429 \d+ · 5xx \d+ · errors \d+/);
    expect(out).toMatch(/\x1b\[2K {2}ETA {6}\S/);
    // Not the log-line form.
    expect(out).not.toMatch(/^\[[\d.]+ s\] fetched/m);
  });

  it('ends with a summary: zero violations judged by the sim, and where the WARC went', async () => {
    expect(code, out.slice(-3000)).toBe(0);
    const summary = out.slice(out.lastIndexOf('meguri demo: done'));
    expect(summary).toMatch(/pages {8}\d+ fetched: \d+ ok/);
    expect(summary).toMatch(/ground truth (\d+) of \1 reachable, allowed pages fetched/);
    expect(summary).toMatch(/hosts {8}\d+/);
    expect(summary).toMatch(/duplicates {3}\d+ rediscovered links not fetched again/);
    // Each parked URL under the rule that holds it (the sim's calendar host spends its budget).
    expect(summary).toMatch(/traps {8}(\d+) URLs parked \(\1 over a host's URL budget\)/);
    expect(summary).toMatch(/429s {9}\d+ absorbed/);
    expect(summary).toMatch(/politeness {3}0 violations in \d+ requests, judged by the simulated servers/);
    const warcDir = join(dir, 'out', 'warc');
    expect(summary).toContain(`WARC         ${warcDir}`);
    expect(out).not.toMatch(STACK_LINE);
    const files = readdirSync(warcDir).filter((f) => f.endsWith('.warc.gz'));
    expect(files.length).toBeGreaterThan(0);
    const records = (await Promise.all(files.map((f) => readWarc(join(warcDir, f))))).flat();
    const lines = readFileSync(join(dir, 'out', 'data', 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { status: number; warcRecordId: string | null });
    // Every answered page has its own record (a response, or a revisit of a payload stored before);
    // robots.txt answers are archived as well.
    const ids = new Set(records.filter((r) => r.type === 'response' || r.type === 'revisit').map((r) => r.id));
    const answered = lines.filter((l) => l.status !== 0);
    expect(new Set(answered.map((l) => l.warcRecordId)).size).toBe(answered.length);
    for (const l of answered) expect(ids.has(l.warcRecordId!)).toBe(true);
    expect(ids.size).toBeGreaterThan(answered.length);
    expect(existsSync(join(dir, 'out', 'data', 'frontier.meguri'))).toBe(true);
  });
});
