// Web hosting actions, spec 4.10 Mail: the mailboxes of the account's domain (named by their
// local part or their full address), within the plan's limit.

import { Type } from 'typebox';
import type { WebMailbox } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { answer, panelAction } from '../../product-kit/panel-action.ts';
import { askWeb } from './account.ts';
import { limitReached, Password, specsOf } from './action.ts';
import { webDomainOf } from './data.ts';

const LOCAL_PART = /^[a-z0-9](?:[a-z0-9._+-]{0,62}[a-z0-9])?$/;

/** The mailbox address of `email` (a local part or a full address of the account's domain). */
function mailboxOf(ctx: ActionContext, email: string, field = 'email'): { local: string; domain: string } {
  const domain = webDomainOf(ctx.service);
  const lower = email.trim().toLowerCase();
  const [local, at] = lower.includes('@')
    ? [lower.slice(0, lower.lastIndexOf('@')), lower.slice(lower.lastIndexOf('@') + 1)]
    : [lower, domain];
  if (at !== domain) {
    throw new AppError('bad_mailbox', {
      message: `Mailboxes are of ${domain}.`,
      fields: { [field]: `must be an address of ${domain}` },
    });
  }
  if (!LOCAL_PART.test(local ?? '')) {
    throw new AppError('bad_mailbox', {
      message:
        'A mailbox name is 1–64 letters, digits, dots, dashes, underscores or +, starting and ending with a letter or digit.',
      fields: { [field]: 'is not a valid mailbox name' },
    });
  }
  return { local: local as string, domain };
}

const mailboxView = (m: WebMailbox) => ({
  email: m.email,
  disk_used_bytes: m.diskUsedBytes,
  quota_bytes: m.quotaBytes,
  login_suspended: m.suspendedLogin,
});

export const mailActions = [
  panelAction({
    name: 'mailboxes',
    group: 'mail',
    method: 'read',
    description: "The domain's mailboxes with their quota and usage, and the plan limit",
    params: {},
    handler: async (ctx) => {
      const specs = await specsOf(ctx);
      const list = await askWeb(ctx, (panel, account) => panel.listMailboxes(account.username, account.domain));
      return answer('Mailboxes loaded.', { mailboxes: list.map(mailboxView), limit: specs.mailboxes });
    },
  }),
  panelAction({
    name: 'mailbox_create',
    group: 'mail',
    method: 'mutate',
    description: 'Create a mailbox (`email`: the name or the full address, `password`, `quota_mb`, 0 = unlimited)',
    params: {
      email: Type.String({ minLength: 1, maxLength: 254 }),
      password: Password,
      quota_mb: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_048_576, default: 1024 })),
    },
    example: () => ({ email: 'info', password: 'Correct-Horse-42-Battery' }),
    handler: async (ctx, p) => {
      const specs = await specsOf(ctx);
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(
        ctx,
        async (panel, account) => {
          const existing = await panel.listMailboxes(account.username, domain);
          if (existing.length >= specs.mailboxes) throw limitReached('mailboxes', specs.mailboxes);
          await panel.createMailbox(account.username, {
            local,
            domain,
            password: String(p.password),
            quotaMb: Number(p.quota_mb ?? 1024),
          });
        },
        'email',
      );
      return answer(
        'Mailbox created.',
        { mailbox: { email: `${local}@${domain}`, quota_mb: Number(p.quota_mb ?? 1024) } },
        201,
      );
    },
  }),
  panelAction({
    name: 'mailbox_delete',
    group: 'mail',
    method: 'mutate',
    description: 'Delete a mailbox (`email`) and its mail',
    params: { email: Type.String({ minLength: 1, maxLength: 254 }) },
    handler: async (ctx, p) => {
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(ctx, (panel, account) => panel.deleteMailbox(account.username, local, domain), 'email');
      return answer('Mailbox deleted.', { email: `${local}@${domain}` });
    },
  }),
  panelAction({
    name: 'mailbox_password',
    group: 'mail',
    method: 'mutate',
    description: "Change a mailbox's (`email`) password (`password`)",
    params: { email: Type.String({ minLength: 1, maxLength: 254 }), password: Password },
    handler: async (ctx, p) => {
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(
        ctx,
        (panel, account) => panel.setMailboxPassword(account.username, local, domain, String(p.password)),
        'email',
      );
      return answer('Mailbox password changed.', { email: `${local}@${domain}` });
    },
  }),
  panelAction({
    name: 'mailbox_quota',
    group: 'mail',
    method: 'mutate',
    description: "Change a mailbox's (`email`) quota (`quota_mb`, 0 = unlimited)",
    params: {
      email: Type.String({ minLength: 1, maxLength: 254 }),
      quota_mb: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    },
    handler: async (ctx, p) => {
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(
        ctx,
        (panel, account) => panel.setMailboxQuota(account.username, local, domain, Number(p.quota_mb)),
        'email',
      );
      return answer('Mailbox quota changed.', { email: `${local}@${domain}`, quota_mb: p.quota_mb });
    },
  }),
];
