// The worker's side of web hosting: provisioning as steps (the plan's package on the server, the
// account's username, marker and password chosen and stored before the panel sees them, the
// account), and what suspending, lifting a suspension and terminating do on the panel. Every
// step is idempotent: the claim (username and marker, the account's contact e-mail) is recorded
// first and reused, and an account on the server is adopted only when it has the claimed
// username, the service's domain and the marker. Any other account is not ours: a candidate
// name it holds is taken (the next one is tried), and the domain held by it fails the order with
// 422 domain_taken (refunded), whatever the account's name.

import type { Plan } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import type { WebAccountInfo, WebPackageSpec, WebPanel } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import { generatePassword } from '../../product-kit/credentials.ts';
import type { JobEnv, ProductJobs } from '../../product-kit/jobs.ts';
import type { Step } from '../../product-kit/steps.ts';
import { openCredentials, sealCredentials } from '../../services/credentials.ts';
import { recordEvent } from '../../services/events.ts';
import * as services from '../../services/service.repository.ts';
import { externalName } from '../../system/installation.ts';
import { accountOf, claimOf, type WebAccountRef, type WebClaim } from './account.ts';
import { webDomainOf, webSpecsOf } from './data.ts';
import { accountMarker, usernameCandidate } from './username.ts';

/** How many usernames are tried before the job gives up (each refused as taken on the server). */
const CANDIDATES = 30;

export interface WebJob {
  env: JobEnv;
  panel: WebPanel | null;
  account: WebAccountRef | null;
  credentials?: { username: string; password: string };
  /** The username and marker this attempt creates the account with (recorded first). */
  claim?: WebClaim;
}

const panelOf = (c: WebJob): WebPanel => {
  if (!c.panel) throw new Error('no driver for the node');
  return c.panel;
};

/** The package of a plan on the server: its limits, under the plan's label. */
export function packageOf(plan: Plan): WebPackageSpec {
  const specs = webSpecsOf(plan);
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

const domainOf = (c: WebJob) => webDomainOf(c.env.service);

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The marker of this service's account: its contact e-mail, unique to the installation and the service. */
const markerOf = (c: WebJob) =>
  accountMarker(externalName(c.env.installation.id, 'svc', c.env.service.id), c.env.publicUrl);

/** Whether the account on the server is the one this service claimed: its name, its domain and our marker. */
function isClaimed(account: WebAccountInfo, claim: WebClaim, domain: string): boolean {
  return (
    same(account.username, claim.username) &&
    same(account.domain, domain) &&
    account.contactEmail !== null &&
    same(account.contactEmail, claim.marker)
  );
}

/**
 * Record the username and marker the account is about to be created with, and its credentials,
 * before the panel sees them: a later attempt then adopts only the account that carries both.
 */
async function recordClaim(c: WebJob, claim: WebClaim, password: string): Promise<void> {
  const { env } = c;
  const { service } = env;
  const credentials = { username: claim.username, password };
  await env.db.transaction().execute(async (trx) => {
    await services.setExternal(trx, service.id, JSON.stringify({ claim: claim.username, marker: claim.marker }));
    await services.setCredentials(trx, service.id, sealCredentials(env.secretKey, service.id, credentials));
  });
  c.claim = claim;
  c.credentials = credentials;
}

/**
 * The first candidate username from `from` on that no account on the server holds (or that this
 * service's own account holds). An account under a candidate that does not carry our marker is
 * someone else's, whatever its domain: the name is taken.
 */
async function freeUsername(c: WebJob, marker: string, from: number): Promise<string> {
  const domain = domainOf(c);
  for (let n = Math.max(0, from); n < CANDIDATES; n++) {
    const username = usernameCandidate(domain, n);
    const existing = await panelOf(c).findAccount(username);
    if (!existing || isClaimed(existing, { username, marker }, domain)) return username;
  }
  throw new UpstreamError('rejected', `no free username for ${domain} after ${CANDIDATES} tries`, {
    retryable: false,
  });
}

/** The position of `username` among the domain's candidates (-1: not one of them). */
function candidateIndex(domain: string, username: string): number {
  for (let n = 0; n < CANDIDATES; n++) if (usernameCandidate(domain, n) === username) return n;
  return -1;
}

/** The claim and password the first step recorded on the job (it always runs before the others). */
function claimed(c: WebJob): { claim: WebClaim; password: string } {
  if (!c.claim || !c.credentials) throw new Error('the claim is made by the first step');
  return { claim: c.claim, password: c.credentials.password };
}

export const provisionSteps: readonly Step<WebJob>[] = [
  {
    name: 'preparing',
    progress: 5,
    async run(c) {
      const { env } = c;
      const { service, plan } = env;
      await panelOf(c).ensurePackage(packageOf(plan));
      const stored = openCredentials(env.secretKey, service);
      const claim = claimOf(service);
      if (claim && stored?.username === claim.username) {
        c.claim = claim;
        c.credentials = stored;
        return;
      }
      // First attempt (or a service whose attempt began before markers were recorded): claim a
      // free name now, under a marker that stays the service's for every later attempt.
      const marker = claim?.marker ?? markerOf(c);
      const username = claim?.username ?? (await freeUsername(c, marker, 0));
      await recordClaim(c, { username, marker }, stored?.password ?? generatePassword());
    },
  },
  {
    name: 'creating the hosting account',
    progress: 30,
    async run(c) {
      const { env } = c;
      const { service, plan } = env;
      const domain = domainOf(c);
      const { claim: recorded, password } = claimed(c);
      let claim = recorded;
      for (;;) {
        try {
          await panelOf(c).createAccount({
            username: claim.username,
            domain,
            package: packageOf(plan).name,
            password,
            contactEmail: claim.marker,
          });
          break;
        } catch (error) {
          if (!(error instanceof UpstreamError && error.kind === 'rejected')) throw error;
          if (error.reason === 'domain_taken') {
            // Said to the client as it is (an AppError is never retried and keeps its words);
            // never which account holds it.
            throw new AppError('domain_taken', {
              message: `${domain} is already hosted on the server by another account; it cannot be set up here.`,
            });
          }
          // The name is held by an account that is not ours (made meanwhile, or sharing its first
          // 8 characters): the next candidate, claimed before it is tried.
          if (error.reason !== 'exists') throw error;
          const next = await freeUsername(c, claim.marker, candidateIndex(domain, claim.username) + 1);
          claim = { username: next, marker: claim.marker };
          await recordClaim(c, claim, password);
        }
      }
      const account: WebAccountRef = { username: claim.username, domain };
      if (accountOf(service)?.username !== account.username) {
        await services.setExternal(env.db, service.id, JSON.stringify({ ...account, marker: claim.marker }));
        await recordEvent(
          env.db,
          service.id,
          'account_created',
          `Hosting account ${account.username} created for ${domain}`,
          { username: account.username },
        );
      }
      c.account = account;
    },
    // Only the account this service claimed, of its domain and carrying its marker, is ours to
    // remove; a service recorded before markers has nothing provably its own, so nothing goes.
    async undo(c) {
      const claim = c.claim ?? claimOf(c.env.service);
      if (!claim) return;
      const account = await panelOf(c).findAccount(claim.username);
      if (account && isClaimed(account, claim, domainOf(c))) await panelOf(c).removeAccount(claim.username);
    },
  },
];

export const webJobs: ProductJobs<WebJob> = {
  open(env) {
    const account = accountOf(env.service);
    const needsNode = account !== null || env.job.type === 'provision';
    return { env, panel: needsNode ? env.drivers.driverFor(env.node, 'webPanel') : null, account };
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
