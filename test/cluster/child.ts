/** Spawning test/cluster/node-child.ts (or engine-child.ts) processes and reading their JSON lines. */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import type { PolitenessReport, SimRequest } from '../../src/index.js';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./node-child.ts', import.meta.url));
const SIM = fileURLToPath(new URL('./sim-child.ts', import.meta.url));

/** What test/cluster/sim-child.ts sends once its web is listening. */
export interface SimReady {
  port: number;
  dns: Record<string, string>;
  seeds: string[];
  pages: string[];
}

/** Forks the simulated web (test/cluster/sim-child.ts) with `options`; `track` gets the process for teardown. */
export function startSim(options: Record<string, unknown>, track: (proc: ChildProcess) => void): Promise<{ proc: ChildProcess; ready: SimReady }> {
  const proc = fork(SIM, [JSON.stringify(options)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  track(proc);
  return new Promise((resolve, reject) => {
    proc.once('message', (m: SimReady) => resolve({ proc, ready: m }));
    proc.once('exit', (code) => reject(new Error(`sim exited with ${code}`)));
  });
}

/** The sim's politeness report and request log. */
export function simReport(proc: ChildProcess, options: Record<string, unknown> = {}): Promise<{ report: PolitenessReport; log: SimRequest[] }> {
  return new Promise((resolve) => {
    proc.once('message', (m: { report: PolitenessReport; log: SimRequest[] }) => resolve(m));
    proc.send({ type: 'report', options });
  });
}

export interface NodeProc {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly ready: Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): void;
  kill(): void;
}

export function spawnNode(config: Record<string, unknown>, script = CHILD): NodeProc {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  let onReady: (id: string) => void = () => {};
  const ready = new Promise<string>((r) => (onReady = r));
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, i)) as Record<string, unknown>;
      buf = buf.slice(i + 1);
      lines.push(line);
      if (line['type'] === 'ready') onReady(String(line['node']));
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return {
    child,
    lines,
    ready,
    exited,
    stop: () => {
      if (child.connected) child.send('stop');
    },
    kill: () => child.kill('SIGKILL'),
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 50 ms until it returns true (or throws after `ms`). */
export async function until(check: () => Promise<boolean> | boolean, ms = 30_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
