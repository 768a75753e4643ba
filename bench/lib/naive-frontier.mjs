// The baseline a crawler author writes first: a Set<string> for dedup, a Map of per-host
// arrays (FIFO with a read index), and a binary heap of hosts keyed by next-eligible time with
// a fixed politeness interval. No priorities, no per-IP throttle, no persistence format beyond
// JSON. Same logical clock and the same dispatch/report loop as meguri's drain.

export class NaiveFrontier {
  constructor(intervalMs = 250) {
    this.intervalMs = intervalMs;
    this.seen = new Set();
    this.hosts = new Map();
    this.heap = [];
  }

  add(url, host) {
    if (this.seen.has(url)) return false;
    this.seen.add(url);
    let h = this.hosts.get(host);
    if (h === undefined) {
      h = { name: host, queue: [], pos: 0, next: 0, queued: false };
      this.hosts.set(host, h);
    }
    h.queue.push(url);
    if (!h.queued) this.push(h);
    return true;
  }

  push(h) {
    h.queued = true;
    const a = this.heap;
    let i = a.length;
    a.push(h);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (before(a[p], h)) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = h;
  }

  pop() {
    const a = this.heap;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0) {
      let i = 0;
      const n = a.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(a[r], a[l]) ? r : l;
        if (before(last, a[c])) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    top.queued = false;
    return top;
  }

  /** Dispatch + immediate report over a logical clock; returns the number dispatched. */
  drain(fetch) {
    let now = 0;
    let n = 0;
    while (this.heap.length > 0) {
      const h = this.pop();
      if (h.next > now) now = h.next;
      const url = h.queue[h.pos++];
      fetch(url, h.name, now);
      n++;
      h.next = now + this.intervalMs;
      if (h.pos < h.queue.length) this.push(h);
    }
    return n;
  }

  /** JSON checkpoint of the whole state. */
  checkpoint() {
    const hosts = [];
    for (const h of this.hosts.values()) hosts.push([h.name, h.next, h.pos, h.queue]);
    return JSON.stringify({ hosts });
  }

  static recover(text, intervalMs) {
    const f = new NaiveFrontier(intervalMs);
    for (const [name, next, pos, queue] of JSON.parse(text).hosts) {
      const h = { name, queue, pos, next, queued: false };
      f.hosts.set(name, h);
      for (const u of queue) f.seen.add(u);
      if (pos < queue.length) f.push(h);
    }
    return f;
  }
}

function before(a, b) {
  return a.next !== b.next ? a.next < b.next : a.name < b.name;
}
