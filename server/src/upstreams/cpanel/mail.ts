// Mailboxes of an account through UAPI `Email::*` as that account (upstreams.md §3.4; the
// module is absent from the source snapshot, so parameters follow cPanel's docs): each mailbox
// addressed by its local part and domain, quotas in MB with 0 = unlimited (cPanel's own meaning).

import type { WebMailbox } from '../web-panel.ts';
import type { CpanelClient } from './client.ts';
import { rows, toMailbox } from './mapping.ts';

const mail = { area: 'mailbox' } as const;
const mailWrite = { area: 'mailbox', write: true } as const;

export async function listMailboxes(client: CpanelClient, username: string, domain: string): Promise<WebMailbox[]> {
  const data = await client.uapi(username, 'Email', 'list_pops_with_disk', { domain }, mail);
  if (!Array.isArray(data)) throw client.garbled('a mailbox list');
  const suffix = `@${domain.toLowerCase()}`;
  // The account's default (system) mailbox has no @domain: it is not one of the domain's mailboxes.
  return rows(data)
    .map(toMailbox)
    .filter((m) => m.email.toLowerCase().endsWith(suffix));
}

export async function createMailbox(
  client: CpanelClient,
  username: string,
  input: { local: string; domain: string; password: string; quotaMb: number },
): Promise<void> {
  await client.uapi(
    username,
    'Email',
    'add_pop',
    {
      email: input.local,
      domain: input.domain,
      password: input.password,
      quota: input.quotaMb,
      send_welcome_email: 0,
    },
    mailWrite,
  );
}

export async function deleteMailbox(
  client: CpanelClient,
  username: string,
  local: string,
  domain: string,
): Promise<void> {
  await client.uapi(username, 'Email', 'delete_pop', { email: local, domain }, mailWrite);
}

export async function setMailboxPassword(
  client: CpanelClient,
  username: string,
  local: string,
  domain: string,
  password: string,
): Promise<void> {
  await client.uapi(username, 'Email', 'passwd_pop', { email: local, domain, password }, mailWrite);
}

export async function setMailboxQuota(
  client: CpanelClient,
  username: string,
  local: string,
  domain: string,
  quotaMb: number,
): Promise<void> {
  await client.uapi(username, 'Email', 'edit_pop_quota', { email: local, domain, quota: quotaMb }, mailWrite);
}
