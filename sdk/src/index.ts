// @hostplane/sdk: the typed client of Hostplane's token API (README "Client CLI and SDK").

export * from './client.ts';
export { HostplaneError, type HostplaneErrorFields } from './errors.ts';
export type { components, operations, paths } from './schema.ts';
