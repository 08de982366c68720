// The client panel's build: two entries — index.html (the client panel) and staff.html (the staff
// console at /staff, docs/STAFF.md), so neither bundle holds the other's pages — code split per area by the router's lazy
// imports, content-hashed files under /assets/ (served immutable by server/src/http/panel.ts).
// `npm run dev -w web` serves it with hot reload and sends the API paths to a running server.

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const API = process.env.HOSTPLANE_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // No inline <script> or style: the panel's Content-Security-Policy has no 'unsafe-inline'.
    assetsInlineLimit: 0,
    manifest: true,
    rollupOptions: {
      input: { index: 'index.html', staff: 'staff.html' },
    },
  },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/api': API,
      '/ws': { target: API, ws: true },
    },
  },
});
