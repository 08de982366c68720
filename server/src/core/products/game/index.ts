// Game servers: a server on a Pterodactyl panel node, made from the game's egg with the plan's
// limits, owned on the panel by the account's panel user. Managed through the product's own
// route (/api/v1/client/game/, spec 4.9, CONTRACT §6) and the routes every product shares.

import { randomBytes } from 'node:crypto';
import type { GameServerRef, PanelUser } from '../../../upstreams/game-panel.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { readStored } from '../../product-kit/data.ts';
import type { Product } from '../../product-kit/product.ts';
import { answer, gameAction } from './action.ts';
import { backupActions, databaseActions, scheduleActions } from './actions-data.ts';
import { fileActions } from './actions-files.ts';
import { consoleActions, infoActions } from './actions-info.ts';
import { lifecycleActions, startupActions, userActions } from './actions-settings.ts';
import { gameUnsupported, sharedActions } from './actions-shared.ts';
import { gameConfig, gameSpecs } from './data.ts';
import { createGameLive } from './live.ts';
import { type GameJob, gameJobs } from './provision.ts';
import { ask, gameExternalOf, gameRefused, refuseWhileInstalling, serverRefOf } from './server.ts';

/** An account's own panel user, by its external id: `hp-acct-<id>`, or `hp-<installation>-acct-<id>`. */
const accountUser = (accountId: number) => new RegExp(`^hp-(?:[a-z0-9]+-)?acct-${accountId}$`);

/**
 * The panel user a client signs in as: the owner of the service's server, and only when it is the
 * account's own user (never a root admin, nor a user the server was moved to on the panel).
 */
async function panelLogin(ctx: ActionContext): Promise<{ user: PanelUser; base: string; ref: GameServerRef }> {
  const ref = serverRefOf(ctx.service);
  const node = await ctx.node();
  if (!ref || !node) throw gameRefused(ctx.service);
  const user = await ask(ctx, (panel, at) => panel.serverOwner(at));
  const recordedUser = gameExternalOf(ctx.service)?.user_id;
  const own =
    recordedUser !== undefined ? recordedUser === user.id : accountUser(ctx.accountId).test(user.externalId ?? '');
  if (user.rootAdmin || !own) {
    throw new AppError('conflict', {
      message: 'This game server is not held by your panel user; ask support to look at it.',
    });
  }
  return { user, base: node.endpoint.replace(/\/+$/, ''), ref };
}

const signInNote = (ctx: ActionContext, user: PanelUser) =>
  `The game panel has no one-time sign-in: sign in as ${user.username} with your panel password. ` +
  `Set a new one (shown once) with POST /api/v1/client/game/?service=${ctx.service.id}&action=panel_password; ` +
  'it is the password of your panel user, the same for all your game servers on this panel.';

const panelLoginActions = [
  gameAction({
    name: 'panel_password',
    group: 'users',
    method: 'mutate',
    description:
      'Set a new password for your own user on the game panel and show it once, with the username and the sign-in address (the panel has no one-time sign-in)',
    params: {},
    handler: async (ctx) => {
      const { user, base } = await panelLogin(ctx);
      const password = randomBytes(18).toString('base64url');
      await ask(ctx, (panel) => panel.setUserPassword(user.id, password));
      return answer('Panel password set; keep it, it is shown only now.', {
        panel: { url: `${base}/auth/login`, username: user.username, password },
      });
    },
  }),
];

export const gameProduct: Product<null, GameJob> = {
  type: 'game',
  nodeKind: 'pterodactyl',
  specs: gameSpecs,
  async checkSpecs(db, specs): Promise<Record<string, string>> {
    const game = typeof specs === 'object' && specs !== null && 'game' in specs ? specs.game : null;
    if (typeof game !== 'string') return { game: 'must be a slug' };
    const known = await db.selectFrom('games').select('id').where('slug', '=', game).executeTakeFirst();
    return known ? {} : { game: `no game "${game}"` };
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
    const config = readStored(gameConfig, service.config, `the config of service ${service.id}`);
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
    ...panelLoginActions,
    ...lifecycleActions,
    ...sharedActions,
  ],
  wrongType: () => new AppError('not_game_service', { message: 'This service is not a game server.' }),
  refused: gameRefused,
  ready: refuseWhileInstalling,
  unsupported: gameUnsupported,
  // Pterodactyl has no one-time sign-in: the server's page on the panel, and how to sign in there
  // (the account's panel user, whose password the client sets with panel_password).
  async sso(ctx) {
    const { user, base, ref } = await panelLogin(ctx);
    return {
      url: `${base}/server/${ref.identifier}`,
      expires_at: null,
      username: user.username,
      note: signInNote(ctx, user),
    };
  },
};
