/**
 * Launching Debian's Chromium for the demo (Node side): the browser test and
 * `demo/measure.ts` share these flags and this launcher.
 *
 * The flags make a quiet, offline-safe headless browser: no sandbox (CI runs as root), no
 * GPU, no QUIC, and nothing that talks to the network on its own (first-run pages,
 * background networking, component updates, sync). Each launch gets a fresh profile folder
 * (`--user-data-dir`, through playwright's persistent context), removed on close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where scripts/install-chromium.sh puts Chromium; MEGURI_CHROMIUM overrides it. */
export const CHROMIUM_PATH = process.env['MEGURI_CHROMIUM'] ?? '/usr/bin/chromium';

/** Command-line flags of every launch. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A launched browser with its own profile folder; `close()` removes both. */
export interface LaunchedChromium {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh profile. */
export async function launchChromium(viewport = { width: 1200, height: 900 }): Promise<LaunchedChromium> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'meguri-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_FLAGS],
      viewport,
    });
    return {
      context,
      close: async () => {
        try {
          await context.close();
        } finally {
          rmSync(userDataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw err;
  }
}
