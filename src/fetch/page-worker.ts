/**
 * The worker-thread entry of `PageAnalyzer` (loaded by piscina by file name, never imported
 * by the library): loads the wasm core once per thread and analyzes each page posted.
 */
import { loadCoreSync } from '../core/node.js';
import { type PageAnalysis, type PageInput, analyzePage } from './analyze.js';

loadCoreSync();

export default function analyze(input: PageInput): PageAnalysis {
  return analyzePage(input);
}
