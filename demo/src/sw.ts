/**
 * The demo's service worker: what makes the page work offline once it has loaded.
 *
 * On install it caches every file of the build (the list and a content hash are baked in by
 * demo/build.ts), so after one visit the page, both bundles, the stylesheet and the wasm core
 * are all local. Requests go network-first with the cache as the fallback: while the server
 * runs a reload always gets the current build, and when it is gone (or the browser is
 * offline) the cached copy answers. A rebuilt demo has a new hash, hence a new cache name;
 * activation deletes the older caches. Only same-origin GETs are handled — the page loads
 * nothing from anywhere else.
 */
export {};

declare const __MEGURI_DEMO_VERSION__: string;
declare const __MEGURI_DEMO_FILES__: readonly string[];

interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response> | Response): void;
}
/** The parts of ServiceWorkerGlobalScope used here (the DOM lib does not declare it). */
interface ServiceWorkerScope {
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  readonly registration: { readonly scope: string };
}

const scope = globalThis as unknown as ServiceWorkerScope;
const PREFIX = 'meguri-demo-';
const CACHE = PREFIX + __MEGURI_DEMO_VERSION__;
/** The folder URL itself ('./') answers like index.html, so a bare navigation works offline. */
const SHELL = ['./', ...__MEGURI_DEMO_FILES__];

scope.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(SHELL.map((f) => new Request(new URL(f, scope.registration.scope), { cache: 'reload' })));
      await scope.skipWaiting();
    })(),
  );
});

scope.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      await scope.clients.claim();
    })(),
  );
});

scope.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== new URL(scope.registration.scope).origin) return;
  event.respondWith(
    (async () => {
      try {
        const fresh = await fetch(req);
        if (fresh.ok) {
          const copy = fresh.clone();
          void caches.open(CACHE).then((cache) => cache.put(req, copy));
        }
        return fresh;
      } catch (err) {
        const cached = await caches.match(req, { ignoreSearch: true });
        if (cached !== undefined) return cached;
        throw err;
      }
    })(),
  );
});
