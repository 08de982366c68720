#!/usr/bin/env node
// The `hostplane` binary. The CLI and the SDK are TypeScript that node runs by stripping the types
// (node >= 22.18 does so by default), like every entry point of this repository (`npm start` is
// `node server/src/main.ts`): no build step, so nothing to go stale between a checkout and what runs.
// Node's compile cache (V8's code of each module, in NODE_COMPILE_CACHE or the system's temporary
// directory) makes every run after the first start about a fifth faster.

import module from 'node:module';

module.enableCompileCache?.();
await import('../src/main.ts');
