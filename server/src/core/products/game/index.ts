// Game servers: a server on a Pterodactyl panel node, made from the game's egg with the plan's
// limits, owned on the panel by the account's panel user. Managed through the product's own
// route (/api/v1/client/game/, spec 4.9, CONTRACT §6) and the routes every product shares.

import { AppError } from '../../errors.ts';
import type { Product } from '../index.ts';
import { backupActions, databaseActions, scheduleActions } from './actions-data.ts';
import { fileActions } from './actions-files.ts';
import { consoleActions, infoActions } from './actions-info.ts';
import { lifecycleActions, startupActions, userActions } from './actions-settings.ts';
import { gameUnsupported, sharedActions } from './actions-shared.ts';
import { createGameLive } from './live.ts';
import { DEFAULT_BACKUPS, DEFAULT_DATABASES, type GameJob, gameJobs } from './provision.ts';
import { gameRefused, refuseWhileInstalling, serverRefOf } from './server.ts';

export const gameProduct: Product<null, GameJob> = {
  type: 'game',
  nodeKind: 'pterodactyl',
  specRules: {
    game: { kind: 'slug' },
    ram_mb: { kind: 'int', min: 512, max: 65_536 },
    cpu_percent: { kind: 'int', min: 25, max: 1600 },
    disk_gb: { kind: 'int', min: 1, max: 1024 },
    slots: { kind: 'int', min: 1, max: 1000 },
    databases: { kind: 'int', min: 0, max: 50, default: DEFAULT_DATABASES },
    backups: { kind: 'int', min: 0, max: 50, default: DEFAULT_BACKUPS },
  },
  order: {
    keys: ['server_name', 'region', 'eula'],
    domain: 'refused',
    reservesIpv4: false,
    eulaRequired: 'must be true: the game server licence (e.g. the Minecraft EULA) must be accepted',
    resolve: async () => null,
    checkGiven: async () => {},
    available: () => {},
    serviceConfig: () => ({ hostname: null, os: null }),
    reserve: async () => ({ ipv4: null }),
  },
  // Nothing is reserved on the platform's side: the panel's allocation goes with the server.
  release: async () => {},
  view(service) {
    const config = service.config as { hostname?: string | null; domain?: string | null };
    return { hostname: config.hostname ?? null, os: null, domain: config.domain ?? null };
  },
  login: () => null,
  jobs: gameJobs,
  live: createGameLive,
  actions: [
    ...infoActions,
    ...consoleActions,
    ...fileActions,
    ...backupActions,
    ...databaseActions,
    ...scheduleActions,
    ...startupActions,
    ...userActions,
    ...lifecycleActions,
    ...sharedActions,
  ],
  wrongType: () => new AppError('not_game_service', { message: 'This service is not a game server.' }),
  refused: gameRefused,
  ready: refuseWhileInstalling,
  unsupported: gameUnsupported,
  // Pterodactyl has no sign-on tokens: the server's page on the panel, where the client signs in
  // with the e-mail of their account (the panel mails new users a link to set a password).
  async sso(ctx) {
    const ref = serverRefOf(ctx.service);
    const node = await ctx.node();
    if (!ref || !node) throw gameRefused(ctx.service);
    return {
      url: `${node.endpoint.replace(/\/+$/, '')}/server/${ref.identifier}`,
      expires_at: null,
      note: 'Sign in with the e-mail address of your Hostplane account; the panel mailed you a link to set its password.',
    };
  },
};
