// What the process (main.ts) needs once its database is open, imported by main.ts while the
// database opens: loading these modules is most of a start's CPU on the main thread (about 1.5 s),
// and the embedded database opens in its own thread meanwhile, so the two overlap instead of
// following each other.

export { startAdminSocket } from './admin/socket.ts';
export { seedDemoCatalog } from './core/catalog/demo-seed.ts';
export { closeDeps, createDeps } from './core/deps.ts';
export { analyzeEmbedded } from './core/housekeeping.ts';
export { startDemoUpstreams } from './demo.ts';
export { markDraining, proxyStopped } from './http/health.routes.ts';
export { startMetricsListener } from './http/metrics.routes.ts';
export { buildServer } from './http/server.ts';
export { startWorker } from './worker/worker.ts';
