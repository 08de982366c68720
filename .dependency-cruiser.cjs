/**
 * The house rules of server/src, checked by `npm run depcheck` in .ci/run (dependency-cruiser).
 * Each rule says why it exists; docs/ARCHITECTURE.md draws the floors these rules keep.
 * Parsed with swc: dependency-cruiser cannot drive TypeScript 7's compiler yet.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'An import circle leaves no floor to stand on: nothing in it can be understood, tested or ' +
        'replaced alone, and module start-up order inside it decides whether a value is undefined.',
      from: { path: '^server/src/' },
      to: { circular: true },
    },
    {
      name: 'core-below-surfaces',
      severity: 'error',
      comment:
        'core/ is the business: it must not know how it is reached (HTTP, the queue worker, the staff ' +
        'CLI), so every surface can call it and it can be tested without a server.',
      from: { path: '^server/src/core/' },
      to: { path: ['^server/src/(http|worker|admin)/', '(^|/)node_modules/(fastify|@fastify/)'] },
    },
    {
      name: 'product-alone',
      severity: 'error',
      comment:
        'A product folder is one product: it builds on core/product-kit and its own files, never on ' +
        'another product (shared steps and actions live in the kit) nor on the registry that lists them ' +
        '(only core/deps.ts composes products).',
      from: { path: '^server/src/core/products/([^/]+)/' },
      to: {
        path: '^server/src/core/products/',
        pathNot: ['^server/src/core/products/$1/'],
      },
    },
    {
      name: 'registry-only-in-deps',
      severity: 'error',
      comment:
        'The product registry is composed once, in core/deps.ts, and handed to orders, services, catalog ' +
        'and the worker; importing it elsewhere brings back the global and the circle through core/.',
      from: { path: '^server/src/', pathNot: ['^server/src/core/deps\\.ts$', '^server/src/core/products/'] },
      to: { path: '^server/src/core/products/index\\.ts$' },
    },
    {
      name: 'deps-on-top',
      severity: 'error',
      comment:
        'core/deps.ts is the composition root: it stands above everything in core/ it wires, so no module ' +
        'of core/ may import it (a product or service that needs something takes it as an option).',
      from: { path: '^server/src/core/', pathNot: '^server/src/core/deps\\.ts$' },
      to: { path: '^server/src/core/deps\\.ts$' },
    },
    {
      name: 'surfaces-not-drivers',
      severity: 'error',
      comment:
        'HTTP routes and the worker talk to upstream panels through core (the product and the driver ' +
        "contract), never to one panel's driver folder, so a driver can change without touching them.",
      from: { path: '^server/src/(http|worker)/' },
      to: { path: '^server/src/upstreams/[^/]+/' },
    },
    {
      name: 'routes-not-from-routes',
      severity: 'error',
      comment:
        'Surfaces share views and schemas (http/views/, http/schemas.ts), not route files: a helper ' +
        'exported from a route file ties two surfaces together through registration code.',
      from: { path: '\\.routes\\.ts$' },
      to: { path: '\\.routes\\.ts$' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    includeOnly: ['^server/src/', 'node_modules/(fastify|@fastify/)'],
  },
};
