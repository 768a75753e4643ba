/**
 * src/observe: what an operator watches — logs and metrics — built on the engine's events
 * (`open`, `progress`, `checkpoint`, `fetched`, `end`) and its `hostStates()`, never inside its
 * loop, so a crawl without a logger or metrics pays nothing.
 *
 * Owns: the pino-compatible `Logger` shape, `attachLogger` and the CLI's `lineLogger`, and
 * the Prometheus metrics (`attachMetrics`, `startMetricsServer`), with prom-client loaded only
 * when asked for (it is an optional peer dependency).
 */
export { type EngineMetrics, type MetricsOptions, type MetricsRegistry, isMetricsRegistry, pageOutcomeClass, startMetrics } from './metrics.js';
export { type HostTransition, HostWatch, LOG_LEVELS, type LineLoggerOptions, type LogLevel, type Logger, attachLogger, lineLogger } from './log.js';
