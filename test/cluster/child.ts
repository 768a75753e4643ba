/** Spawning test/cluster/node-child.ts (or engine-child.ts) processes and reading their JSON lines. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./node-child.ts', import.meta.url));

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
