import { createSimWeb, PLAIN_MIX } from '../src/index.js';
const h = () => process.getActiveResourcesInfo().filter((t) => t === 'TCPServerWrap').length;
const first = createSimWeb({ seed: 4, hosts: 2, ips: 2, mix: PLAIN_MIX });
await first.start();
console.log('first', h(), first.port);
const second = createSimWeb({ seed: 4, hosts: 2, ips: 3, port: first.port, mix: PLAIN_MIX });
try { await second.start(); } catch (e) { console.log('err', (e as any).code); }
console.log('after fail', h());
await new Promise(r => setTimeout(r, 100));
console.log('after 100', h(), process.getActiveResourcesInfo());
await first.close();
