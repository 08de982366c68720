#!/usr/bin/env node
// The `hostplane` binary. The CLI and the SDK are TypeScript run through tsx, like every entry
// point of this repository (`npm start` is `node --import tsx …`): no build step, so nothing to
// go stale between a checkout and what runs. Node >= 20.6 registers the loader from here.

import { register } from 'tsx/esm/api';

register({ tsconfig: false });
await import('../src/main.ts');
