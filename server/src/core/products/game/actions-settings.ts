// Game actions, spec 4.9 Startup, Users and Lifecycle: the egg's variables (checked against the
// egg's own rules before the panel sees a value), subusers with the panel's permission names,
// renaming, and a reinstall confirmed by the service's label.
//
// Subusers (security review 3, T3-M3): an invite of an unknown address makes a panel user, so
// invites are limited per service (LIMITS game_invite_service), an address of the platform's
// own panel users cannot be invited, and no answer names a subuser's panel username (an invite
// of an address that already had a panel user would otherwise say whose it is).

import { Type } from 'typebox';
import { type GameSubuser, PANEL_PERMISSIONS } from '../../../upstreams/game-panel.ts';
import { AppError } from '../../errors.ts';
import * as services from '../../services/service.repository.ts';
import { answer, gameAction, PlainText, UuidParam } from './action.ts';
import { eggRuleProblem } from './rules.ts';
import { ask, isPlatformPanelAddress } from './server.ts';
import { variableView } from './views.ts';

/**
 * A subuser as the server's owner sees it: the address they gave and what it may do. Never the
 * panel username, the user's age or its two-factor state: those belong to a panel user that may
 * have existed before the invite (another customer's, on a server made before panel users got
 * the platform's own addresses), and would say whose it is.
 */
const inviteeView = (user: GameSubuser) => ({ uuid: user.uuid, email: user.email, permissions: user.permissions });

const Permissions = Type.Array(Type.Union(PANEL_PERMISSIONS.map((p) => Type.Literal(p))), {
  minItems: 1,
  maxItems: PANEL_PERMISSIONS.length,
  uniqueItems: true,
  description: "the panel's permission names",
});

export const startupActions = [
  gameAction({
    name: 'startup',
    group: 'startup',
    method: 'read',
    description: 'The startup command and the variables you may see, with their rules',
    params: {},
    handler: async (ctx) => {
      const startup = await ask(ctx, (panel, ref) => panel.startup(ref));
      return answer('Startup loaded.', {
        startup: {
          command: startup.startupCommand,
          docker_images: startup.dockerImages,
          variables: startup.variables.map(variableView),
        },
      });
    },
  }),
  gameAction({
    name: 'startup_var',
    group: 'startup',
    method: 'mutate',
    description: "Set a startup variable (`key`, `value`), checked against the game's rules for it",
    params: {
      key: Type.String({ minLength: 1, maxLength: 191, pattern: '^[A-Z0-9_]+$' }),
      value: PlainText({ maxLength: 191 }),
    },
    example: () => ({ key: 'SERVER_JARFILE', value: 'server.jar' }),
    handler: async (ctx, p) => {
      const key = String(p.key);
      const value = String(p.value);
      const variable = await ask(
        ctx,
        async (panel, ref) => {
          const { variables } = await panel.startup(ref);
          const known = variables.find((v) => v.envVariable === key);
          if (!known)
            throw AppError.fields({
              key: `is not a variable of this game (${variables.map((v) => v.envVariable).join(', ')})`,
            });
          if (!known.isEditable) throw AppError.fields({ key: 'is read-only' });
          const problem = eggRuleProblem(known.rules, value);
          if (problem) throw AppError.fields({ value: problem });
          return panel.setVariable(ref, key, value);
        },
        { value: 'value', key: 'key' },
      );
      return answer('Variable saved; it applies at the next start.', { variable: variableView(variable) });
    },
  }),
];

export const userActions = [
  gameAction({
    name: 'users',
    group: 'users',
    method: 'read',
    description: 'The people you gave access to the server on the game panel, with their permissions',
    params: {},
    handler: async (ctx) => {
      const users = await ask(ctx, (panel, ref) => panel.listSubusers(ref));
      return answer('Users loaded.', { users: users.map(inviteeView) });
    },
  }),
  gameAction({
    name: 'user_invite',
    group: 'users',
    method: 'mutate',
    description: 'Give someone (`email`) access with `permissions` (panel names, e.g. control.console, file.read)',
    params: {
      email: Type.String({ minLength: 3, maxLength: 191, format: 'email' }),
      permissions: Permissions,
    },
    example: () => ({ email: 'friend@example.net', permissions: ['control.console'] }),
    handler: async (ctx, p) => {
      const email = String(p.email).toLowerCase();
      if (isPlatformPanelAddress(ctx.publicUrl, email)) {
        throw AppError.fields({ email: "is an address of the platform's own panel users and cannot be invited" });
      }
      // Counted before the panel is asked (each invite of a new address makes a panel user);
      // one the panel refused (already a subuser, a bad address) made nothing and is given back.
      const key = `service:${ctx.service.id}`;
      await ctx.limits.consume('game_invite_service', key);
      let user: GameSubuser;
      try {
        user = await ask(ctx, (panel, ref) => panel.inviteSubuser(ref, email, p.permissions as string[]), {
          email: 'email',
          permissions: 'permissions',
        });
      } catch (error) {
        // The panel answered with a refusal (4xx): no user was made. Not after a timeout, which may have made one.
        if (error instanceof AppError && error.status < 500) await ctx.limits.refund('game_invite_service', key);
        throw error;
      }
      return answer('User invited.', { user: inviteeView(user) }, 201);
    },
  }),
  gameAction({
    name: 'user_update',
    group: 'users',
    method: 'mutate',
    description: "Replace a user's (`uuid`) permissions",
    params: { uuid: UuidParam, permissions: Permissions },
    handler: async (ctx, p) => {
      const user = await ask(ctx, (panel, ref) => panel.updateSubuser(ref, String(p.uuid), p.permissions as string[]), {
        permissions: 'permissions',
      });
      return answer('Permissions saved.', { user: inviteeView(user) });
    },
  }),
  gameAction({
    name: 'user_remove',
    group: 'users',
    method: 'mutate',
    description: "Take a user's (`uuid`) access away",
    params: { uuid: UuidParam },
    handler: async (ctx, p) => {
      await ask(ctx, (panel, ref) => panel.removeSubuser(ref, String(p.uuid)));
      return answer('User removed.', { uuid: p.uuid });
    },
  }),
];

export const lifecycleActions = [
  gameAction({
    name: 'settings_rename',
    group: 'lifecycle',
    method: 'mutate',
    description: 'Rename the server on the panel (`name`, optional `description`); the service label stays',
    params: {
      name: PlainText({ minLength: 1, maxLength: 191 }),
      description: Type.Optional(PlainText({ maxLength: 500 })),
    },
    example: () => ({ name: 'My server' }),
    handler: async (ctx, p) => {
      const name = String(p.name).trim();
      if (name === '') throw AppError.fields({ name: 'must not be blank' });
      await ask(ctx, (panel, ref) => panel.rename(ref, name, (p.description as string | undefined) ?? null), {
        name: 'name',
        description: 'description',
      });
      await services.setConfigField(ctx.db, ctx.service.id, 'server_name', name);
      return answer('Renamed.', { name });
    },
  }),
  gameAction({
    name: 'reinstall',
    group: 'lifecycle',
    method: 'mutate',
    description:
      "Reinstall the game (the panel runs the install script again; files may be replaced). `confirm` must be the service's label",
    params: { confirm: Type.String({ maxLength: 128, description: "the service's label" }) },
    // Like every product's reinstall, also on POST /services/action/ and /instances/{id}/reinstall.
    surfaces: { session: ['panel', 'action'], token: 'action' },
    example: (service) => ({ confirm: service.label }),
    handler: async (ctx, p) => {
      if (p.confirm !== ctx.service.label) {
        throw new AppError('confirmation_mismatch', {
          message: `Send the service's label (${ctx.service.label}) as confirm to reinstall it.`,
          fields: { confirm: 'must equal the service label' },
        });
      }
      const job = await ctx.startJob('reinstall');
      return { kind: 'job', job, message: 'Reinstall started.' };
    },
  }),
];
