/**
 * A loopback port where connections are never made: what a crawler meets when its network
 * drops packets silently (a dead uplink behind a working Wi-Fi, a firewall dropping SYNs). A
 * child process listens with a backlog of one and then blocks its event loop, so it never
 * accepts; the helper fills the kernel's accept queue, after which the kernel drops every new
 * SYN and a connect() waits until the client's own timeout. (With `tcp_abort_on_overflow` set
 * the kernel answers a reset instead; `holds()` tells which.) Killing the child frees the port;
 * it exits by itself after a minute.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type Socket, connect } from 'node:net';

const CHILD = `
const s = require('node:net').createServer(() => {});
s.listen({ port: Number(process.argv[1]), host: '127.0.0.1', backlog: 1 }, () => {
  // A pipe write is synchronous here: the port is out before the loop stops. Then never return
  // to the event loop, so nothing is ever accepted; a minute at most, so a test that dies
  // without close() leaves no listener behind.
  require('node:fs').writeSync(1, String(s.address().port) + '\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
  process.exit(0);
});
`;

export interface Blackhole {
  readonly port: number;
  /** Whether a new connection to the port is left waiting (true) rather than refused. */
  holds(): Promise<boolean>;
  /** Kills the child and closes the sockets that filled its queue; the port is free again. */
  close(): Promise<void>;
}

/** Starts a blackhole on `port` (0: any free one) of 127.0.0.1. */
export async function blackhole(port = 0): Promise<Blackhole> {
  const child: ChildProcess = spawn(process.execPath, ['-e', CHILD, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const bound = await new Promise<number>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`blackhole: cannot start the listener: ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`blackhole: the listener exited (${String(code)}) before listening on ${port} (in use?)`)));
    child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
  });
  child.removeAllListeners('exit');
  child.removeAllListeners('error');
  child.on('error', () => undefined);
  // Nothing more is read from it, and it must not hold the test process open.
  child.stdout!.destroy();
  child.unref();
  // The child blocked as it wrote the port: fill its accept queue (backlog 1 holds two connections).
  const fill: Socket[] = [];
  for (let i = 0; i < 4; i++) {
    const s = connect(bound, '127.0.0.1');
    s.on('error', () => undefined);
    fill.push(s);
  }
  await new Promise((r) => setTimeout(r, 100));
  return {
    port: bound,
    holds: () =>
      new Promise<boolean>((resolve) => {
        const s = connect(bound, '127.0.0.1');
        const timer = setTimeout(() => {
          s.destroy();
          resolve(true);
        }, 300);
        s.once('connect', () => {
          clearTimeout(timer);
          s.destroy();
          resolve(false);
        });
        s.once('error', () => {
          clearTimeout(timer);
          resolve(false);
        });
      }),
    close: async () => {
      for (const s of fill) s.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
