// The worker's side of web hosting: provisioning as steps (the plan's package on the server, the
// account's username and password chosen and stored before the panel sees them, the account),
// and what suspending, lifting a suspension and terminating do on the panel. Every step is
// idempotent: the username and password are stored first and reused, and an account already
// holding the service's domain under its username is the one an earlier attempt made.

import type { Plan } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/hypervisor.ts';
import type { WebPackageSpec, WebPanel } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import { recordEvent } from '../../services/events.ts';
import * as services from '../../services/service.repository.ts';
import { openCredentials, sealCredentials } from '../../services/service.service.ts';
import type { JobEnv, ProductJobs } from '../jobs.ts';
import type { Step } from '../steps.ts';
import { generatePassword } from '../vps/machine.ts';
import { accountOf, type WebAccountRef } from './account.ts';
import { usernameCandidate } from './username.ts';

/** Plan specs of a web plan (./index.ts specRules). */
export interface WebSpecs {
  sites: number;
  disk_gb: number;
  mailboxes: number;
  databases: number;
}

/** How many usernames are tried before the job gives up (each refused as taken on the server). */
const CANDIDATES = 30;

export interface WebJob {
  env: JobEnv;
  panel: WebPanel | null;
  account: WebAccountRef | null;
  credentials?: { username: string; password: string };
}

const panelOf = (c: WebJob): WebPanel => {
  if (!c.panel) throw new Error('no driver for the node');
  return c.panel;
};

/** The package of a plan on the server: its limits, under the plan's label. */
export function packageOf(plan: Plan): WebPackageSpec {
  const specs = plan.specs as unknown as WebSpecs;
  return {
    name: `hostplane_${plan.label}`,
    diskMb: specs.disk_gb * 1024,
    maxMailboxes: specs.mailboxes,
    maxDatabases: specs.databases,
    maxAddonDomains: Math.max(0, specs.sites - 1),
    maxSubdomains: specs.sites * 10,
    maxMailboxQuotaMb: 0,
  };
}

const domainOf = (c: WebJob) => (c.env.service.config as { domain: string }).domain;

async function storeCredentials(c: WebJob, credentials: { username: string; password: string }): Promise<void> {
  const { deps, service } = c.env;
  await services.setCredentials(deps.database.db, service.id, sealCredentials(deps.secretKey, service.id, credentials));
  c.credentials = credentials;
}

/** The first candidate username the server does not have (or has for this very domain: ours). */
async function freeUsername(c: WebJob, from: number): Promise<{ username: string; index: number }> {
  for (let n = from; n < CANDIDATES; n++) {
    const username = usernameCandidate(domainOf(c), n);
    const existing = await panelOf(c).findAccount(username);
    if (!existing || existing.domain === domainOf(c)) return { username, index: n };
  }
  throw new UpstreamError('rejected', `no free username for ${domainOf(c)} after ${CANDIDATES} tries`, {
    retryable: false,
  });
}

export const provisionSteps: readonly Step<WebJob>[] = [
  {
    name: 'preparing',
    progress: 5,
    async run(c) {
      const { deps, service, plan } = c.env;
      await panelOf(c).ensurePackage(packageOf(plan));
      const stored = openCredentials(deps.secretKey, service);
      if (stored) {
        c.credentials = stored;
        return;
      }
      const { username } = await freeUsername(c, 0);
      await storeCredentials(c, { username, password: generatePassword() });
    },
  },
  {
    name: 'creating the hosting account',
    progress: 30,
    async run(c) {
      const { deps, service, plan } = c.env;
      const domain = domainOf(c);
      const owner = await deps.database.db
        .selectFrom('accounts')
        .select('email')
        .where('id', '=', service.account_id)
        .executeTakeFirstOrThrow();
      let credentials = c.credentials as { username: string; password: string };
      const onServer = await panelOf(c).findAccountByDomain(domain);
      if (onServer && onServer.username !== credentials.username) {
        // Said to the client as it is (an AppError is never retried and keeps its words).
        throw new AppError('bad_domain', {
          message: `${domain} is already hosted on the server by another account; it cannot be set up here.`,
        });
      }
      let index = 0;
      for (;;) {
        try {
          await panelOf(c).createAccount({
            username: credentials.username,
            domain,
            package: packageOf(plan).name,
            password: credentials.password,
            contactEmail: owner.email,
          });
          break;
        } catch (error) {
          // Taken meanwhile by another domain (or its first 8 characters are): the next candidate.
          if (!(error instanceof UpstreamError && error.reason === 'exists')) throw error;
          const next = await freeUsername(c, index + 1);
          index = next.index;
          credentials = { username: next.username, password: credentials.password };
          await storeCredentials(c, credentials);
        }
      }
      const account: WebAccountRef = { username: credentials.username, domain };
      if (accountOf(service)?.username !== account.username) {
        await services.setExternal(deps.database.db, service.id, JSON.stringify(account));
        await recordEvent(
          deps.database.db,
          service.id,
          'account_created',
          `Hosting account ${account.username} created for ${domain}`,
          { username: account.username },
        );
      }
      c.account = account;
    },
    // Only an account of this domain under the stored username is ours to remove.
    async undo(c) {
      const username = c.credentials?.username ?? openCredentials(c.env.deps.secretKey, c.env.service)?.username;
      if (!username) return;
      const account = await panelOf(c).findAccount(username);
      if (account && account.domain === domainOf(c)) await panelOf(c).removeAccount(username);
    },
  },
];

export const webJobs: ProductJobs<WebJob> = {
  open(env) {
    const account = accountOf(env.service);
    const needsNode = account !== null || env.job.type === 'provision';
    return { env, panel: needsNode ? env.deps.backends.webPanel(env.node) : null, account };
  },
  provision: provisionSteps,
  reinstall: {
    steps: [],
    async done() {
      throw new Error('web hosting has no reinstall');
    },
  },
  power: {},
  async suspend(c) {
    if (c.account) await panelOf(c).suspend(c.account.username, 'Suspended by Hostplane');
  },
  async unsuspend(c) {
    if (c.account) await panelOf(c).unsuspend(c.account.username);
  },
  async terminate(c) {
    if (c.account) await panelOf(c).removeAccount(c.account.username);
  },
};
