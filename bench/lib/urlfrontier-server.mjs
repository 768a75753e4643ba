// A URLFrontier server in its own process for the urlfrontier bench (so client and server do
// not share one event loop). argv: dataDir ('' = memory only), fsync ('1' | '0'), and
// optionally the `cluster` option as JSON (a cluster node or router; dataDir unused).
// Reports { port } over IPC, answers 'cpu' with its CPU time so far (µs, user + system: the
// bench charges the server per URL in CPU, which a busy shared machine does not distort the
// way it distorts wall time), closes on 'close', then exits.
import { startUrlFrontierServer } from '../../dist/index.js';

const [dataDir, fsync, cluster] = process.argv.slice(2);
const server = await startUrlFrontierServer({
  port: 0,
  dataDir: cluster ? undefined : dataDir || undefined,
  fsync: fsync === '1',
  defaultDelayMs: 0,
  log: () => {},
  ...(cluster ? { cluster: JSON.parse(cluster) } : {}),
});
process.send({ port: server.port });
process.on('message', async (m) => {
  if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send({ cpu: u.user + u.system });
  } else if (m === 'close') {
    await server.close();
    process.exit(0);
  }
});
