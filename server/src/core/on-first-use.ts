// Packages a start does not need, loaded the first time something uses them instead of with the
// server's modules (issue 39): passkeys' WebAuthn and its certificate parsing, the invoice PDF's
// pdfkit and fontkit, nodemailer, ioredis, sshpk, the QR code of two-factor set-up: about 0.45 s of
// CPU that every start spent before it could serve, on a main thread whose module loading is the
// longest step of a start. Loaded by require(), synchronously and whole, at the first call: never an
// import() beside another module graph's loading (a concurrent import() of CommonJS from ESM left
// a package's exports undefined now and then; docs/BENCHMARKS.md, start-up).

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package `specifier` (as require() resolves it from server/src), loaded at the first call. */
export function onFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(specifier) as T;
    return loaded;
  };
}
