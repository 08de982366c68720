#!/usr/bin/env node
// The `hostplane` binary. The CLI and the SDK are TypeScript that node runs by stripping the types
// (node >= 22.18 does so by default), like every entry point of this repository (`npm start` is
// `node server/src/main.ts`): no build step, so nothing to go stale between a checkout and what runs.

await import('../src/main.ts');
