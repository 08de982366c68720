// The composition root's factory: everything a request handler, a job or a staff command
// needs, wired once. The HTTP surfaces, the worker and the admin CLI all take a Deps.

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { type AccountService, createAccountService } from './accounts/account.service.ts';
import { type AuthService, createAuthService } from './auth/auth.service.ts';
import { createPasskeys, type Passkeys } from './auth/passkeys.ts';
import type { SessionCache } from './auth/sessions.ts';
import { createTwoFactor, type TwoFactor } from './auth/two-factor.ts';
import { relyingParty } from './auth/webauthn.ts';
import { type BackupRunAction, runBackups } from './backups/scheduler.ts';
import { type Billing, createBilling } from './billing/billing.service.ts';
import { type BillingProfileService, createBillingProfileService } from './billing/billing-profile.ts';
import { type CreditNoteService, createCreditNoteService } from './billing/credit-notes.ts';
import { createInvoiceDocuments, type InvoiceDocuments } from './billing/invoice-documents.ts';
import { createInvoiceService, type InvoiceService } from './billing/invoices.ts';
import { type Bus, createBus } from './bus.ts';
import { type CatalogService, createCatalogService } from './catalog/catalog.service.ts';
import { resolveSecretKey } from './crypto/secret-key.ts';
import { createDepositService, type DepositService } from './deposits/deposit.service.ts';
import { createRazorpayDeposits, type RazorpayDeposits } from './deposits/razorpay.ts';
import { APP_QUEUES, type AppJobs } from './jobs/catalog.ts';
import { JobQueue, type QueueDefinition } from './jobs/queue.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import { createNodeService, type NodeService } from './nodes/node.service.ts';
import { createNotificationService, type NotificationService } from './notifications/notification.service.ts';
import { createOrderService, type OrderService } from './orders/order.service.ts';
import { createPrivacy, type Privacy } from './privacy/privacy.service.ts';
import type { ProductEnv } from './product-kit/env.ts';
import { createProductRegistry, type ProductList, type ProductRegistry } from './product-kit/registry.ts';
import { PRODUCTS } from './products/index.ts';
import { createRateLimits, type LimitOverrides, type RateLimits } from './ratelimit/rate-limits.ts';
import { rateLimitStoreFor } from './ratelimit/store-for.ts';
import { createSearch, type Search } from './search/search.service.ts';
import { type Consoles, createConsoles } from './services/consoles.ts';
import { createDrivers, type Drivers, type DriverTiming } from './services/drivers.ts';
import { createReadCache } from './services/list-cache.ts';
import { createServiceActions, type ServiceActions } from './services/service-actions.ts';
import { createServiceDirectory, LIST_TABLES, type ServiceDirectory } from './services/service-directory.ts';
import { createServiceStaff, type ServiceStaff } from './services/staff.ts';
import { createSshKeyService, type SshKeyService } from './ssh/ssh-key.service.ts';
import { createStaffService, type StaffService } from './staff/staff.service.ts';
import { createStaffAuth, type StaffAuth } from './staff/staff-auth.ts';
import { type Installation, loadInstallationId } from './system/installation.ts';
import { type Clock, systemClock } from './time.ts';
import { createRequestLog, type RequestLog } from './tokens/request-log.ts';
import { createTokenService, type TokenService } from './tokens/token.service.ts';
import { createWalletService, type WalletService } from './wallet/wallet.service.ts';
import { createWebhooks, type WebhookOverrides, type Webhooks } from './webhooks/index.ts';

export interface Deps {
  config: Config;
  logger: Logger;
  database: Database;
  jobs: JobQueue<AppJobs>;
  secretKey: Buffer;
  clock: Clock;
  limits: RateLimits;
  mailer: Mailer;
  accounts: AccountService;
  auth: AuthService;
  /** Two-factor sign-in: TOTP and recovery codes (core/auth/two-factor.ts); passkeys (core/auth/passkeys.ts). */
  twoFactor: TwoFactor;
  passkeys: Passkeys;
  catalog: CatalogService;
  nodes: NodeService;
  wallet: WalletService;
  billing: Billing;
  /** What each account's tax invoices name it by (core/billing/billing-profile.ts). */
  billingProfiles: BillingProfileService;
  /** Issued tax invoices, read-only (core/billing/invoices.ts; issued by the charging code). */
  invoices: InvoiceService;
  /** Invoices as documents: found for their owner or for staff, and their PDFs (core/billing/invoice-documents.ts). */
  invoiceDocuments: InvoiceDocuments;
  /** Credit notes: staff credits with their refund, and reading them (core/billing/credit-notes.ts). */
  creditNotes: CreditNoteService;
  search: Search;
  sshKeys: SshKeyService;
  deposits: DepositService;
  /** Online deposits through Razorpay (core/deposits/razorpay.ts); demo mode configures its emulator. */
  razorpay: RazorpayDeposits;
  notifications: NotificationService;
  /** Data exports and account deletion (core/privacy/, CONTRACT §11). */
  privacy: Privacy;
  orders: OrderService;
  services: ServiceDirectory;
  /** What the platform sells, one product per plan type (core/products/index.ts). */
  products: ProductRegistry;
  /** What a product's jobs may use (core/product-kit/env.ts). */
  productEnv: ProductEnv;
  serviceActions: ServiceActions;
  /** Scheduled backups: the worker's pass (core/backups/scheduler.ts). */
  backups: { run(input?: { at?: Date }): Promise<BackupRunAction[]> };
  drivers: Drivers;
  serviceStaff: ServiceStaff;
  bus: Bus;
  tokens: TokenService;
  requestLog: RequestLog;
  consoles: Consoles;
  sessionCache: SessionCache; // session rows between requests (core/auth/sessions.ts)
  /** This installation's id, the namespace of the external ids it creates upstream (T3-M2). */
  installation: Installation;
  /** Signed outgoing webhooks: endpoints, their log, and the dispatcher the worker runs (core/webhooks/). */
  webhooks: Webhooks;
  /** Staff members of the console, and their sign-in (core/staff/, CONTRACT §14). */
  staff: StaffService;
  staffAuth: StaffAuth;
}

export interface DepsOverrides {
  clock?: Clock;
  secretKey?: Buffer;
  /** Prefix of rate-limit keys, so tests sharing one Redis do not count each other's requests. */
  rateLimitPrefix?: string;
  /** Per-queue policy changes (tests shorten retry delays). */
  queues?: Partial<Record<keyof AppJobs, Partial<QueueDefinition>>>;
  /** Upstream driver timing (tests poll faster) and the nodes' default call budget (tests raise it). */
  driverTiming?: DriverTiming;
  /** Numbers of some rate limits (tests that drive one account hard raise the panel limits). */
  limits?: LimitOverrides;
  /** Products in place of the registered ones (tests: a throwaway product exercises the generic parts). */
  products?: Partial<ProductList>;
  /** Webhook delivery in tests: a resolver of their own, the loopback rule, the timeout. */
  webhooks?: WebhookOverrides;
}

/** What every group below is built on: settings, the queue, time, secrets, limits, the bus and the mailer. */
type Base = Pick<
  Deps,
  'config' | 'logger' | 'database' | 'jobs' | 'secretKey' | 'clock' | 'limits' | 'bus' | 'mailer' | 'installation'
>;

/** The job queue with the tests' policy changes, started (not its workers). */
async function startJobQueue(
  database: Database,
  logger: Logger,
  changes: DepsOverrides['queues'] = {},
): Promise<JobQueue<AppJobs>> {
  const queues = { ...APP_QUEUES };
  for (const [name, change] of Object.entries(changes) as [keyof AppJobs, Partial<QueueDefinition>][]) {
    queues[name] = { ...queues[name], ...change };
  }
  const jobs = new JobQueue<AppJobs>(database, queues, logger.child({ component: 'jobs' }));
  await jobs.start();
  return jobs;
}

async function createBase(config: Config, database: Database, logger: Logger, overrides: DepsOverrides): Promise<Base> {
  const jobs = await startJobQueue(database, logger, overrides.queues);
  const clock = overrides.clock ?? systemClock;
  const secretKey = overrides.secretKey ?? resolveSecretKey(config);
  const db = database.db;
  const installation: { id: string } = { id: await loadInstallationId(db) };
  const limits = createRateLimits(
    rateLimitStoreFor(config, database),
    overrides.rateLimitPrefix ?? config.redisPrefix,
    overrides.limits,
  );
  const bus = await createBus(database, logger);
  const mailer = createMailer({
    db,
    jobs,
    secretKey,
    logger,
    clock,
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    engine: database.engine,
    publicUrl: config.publicUrl,
  });
  return { config, logger, database, jobs, secretKey, clock, limits, bus, mailer, installation };
}

/** Who may do what: accounts, signing in, sessions between requests, API tokens and their request log. */
function createAccess(
  base: Base,
): Pick<
  Deps,
  'accounts' | 'auth' | 'twoFactor' | 'passkeys' | 'sessionCache' | 'tokens' | 'requestLog' | 'staff' | 'staffAuth'
> {
  const { config, logger, database, clock, secretKey, limits, bus, mailer } = base;
  const db = database.db;
  const rp = relyingParty(config.publicUrl);
  const accounts = createAccountService({ db, clock, mailer, publicUrl: config.publicUrl, logger, bus });
  const auth = createAuthService({
    db,
    clock,
    secretKey,
    mailer,
    limits,
    accounts,
    publicUrl: config.publicUrl,
    logger,
    bus,
    rp,
  });
  const twoFactor = createTwoFactor({ db, clock, secretKey, limits, mailer, bus });
  const passkeys = createPasskeys({ db, clock, secretKey, rp });
  const sessionCache: SessionCache = createReadCache({
    bus,
    writes: database.writes,
    tables: ['sessions', 'accounts'],
    sharedTopics: ['sessions', 'account', 'access_revoked'],
    maxKeys: 50_000,
  });
  const tokens = createTokenService({ db, clock, bus });
  const requestLog = createRequestLog(db, logger.child({ component: 'request-log' }));
  const staff = createStaffService({ db, clock, mailer, publicUrl: config.publicUrl });
  const staffAuth = createStaffAuth({ db, clock, secretKey, limits });
  return { accounts, auth, twoFactor, passkeys, sessionCache, tokens, requestLog, staff, staffAuth };
}

/** Money: the billing cycle, the wallet, deposits and billing profiles. */
function createMoney(
  base: Base,
): Pick<
  Deps,
  'billing' | 'wallet' | 'deposits' | 'razorpay' | 'billingProfiles' | 'invoices' | 'invoiceDocuments' | 'creditNotes'
> {
  const { config, logger, database, jobs, clock, mailer } = base;
  const db = database.db;
  const billing = createBilling({
    db,
    jobs,
    mailer,
    clock,
    graceDays: config.graceDays,
    terminateDays: config.terminateDays,
    invoicing: config.invoicing,
    logger: logger.child({ component: 'billing' }),
  });
  // Money coming in pays what is unpaid, oldest first, in the same transaction (CONTRACT §7).
  const wallet = createWalletService({ db, afterCredit: billing.settle });
  const deposits = createDepositService({ db, dataDir: config.dataDir, mailer, clock, afterCredit: billing.settle });
  const razorpay = createRazorpayDeposits({
    db,
    dataDir: config.dataDir,
    mailer,
    clock,
    afterCredit: billing.settle,
    settings: config.razorpay,
    merchantName: config.upi?.payeeName ?? 'Hostplane',
    publicUrl: config.publicUrl,
    logger: logger.child({ component: 'razorpay' }),
  });
  const billingProfiles = createBillingProfileService({ db, clock });
  const invoices = createInvoiceService({ db });
  const invoiceDocuments = createInvoiceDocuments({ db });
  const creditNotes = createCreditNoteService({ db, invoicing: config.invoicing, clock, afterCredit: billing.settle });
  return { billing, wallet, deposits, razorpay, billingProfiles, invoices, invoiceDocuments, creditNotes };
}

/**
 * Services once ordered: the directory, their drivers and actions, staff operations, consoles,
 * and what the products' jobs may use.
 */
function createServiceGroup(
  base: Base,
  products: ProductRegistry,
  nodes: NodeService,
  driverTiming: DriverTiming | undefined,
): Pick<Deps, 'services' | 'drivers' | 'serviceActions' | 'serviceStaff' | 'consoles' | 'productEnv'> {
  const { config, logger, database, jobs, clock, secretKey, limits, bus, installation } = base;
  const db = database.db;
  const services = createServiceDirectory({
    db,
    secretKey,
    clock,
    products,
    listCache: createReadCache({
      bus,
      writes: database.writes,
      tables: LIST_TABLES,
      sharedTopics: ['catalog'],
      accountTopic: 'account_services',
    }),
  });
  const drivers = createDrivers(nodes, driverTiming, undefined, config.reverseDns);
  const serviceActions = createServiceActions({
    db,
    jobs,
    drivers,
    services,
    bus,
    limits,
    clock,
    publicUrl: config.publicUrl,
    secretKey,
    products,
    invoicing: config.invoicing,
    nodeCache: createReadCache({ bus, writes: database.writes, tables: ['nodes'], sharedTopics: ['nodes'] }),
  });
  const serviceStaff = createServiceStaff({ db, jobs, nodes, drivers, clock });
  const consoles = createConsoles({
    db,
    secretKey,
    clock,
    publicUrl: config.publicUrl,
    actions: serviceActions,
    limits,
  });
  const productEnv: ProductEnv = {
    db,
    drivers,
    clock,
    bus,
    secretKey,
    timing: drivers.timing,
    installation,
    publicUrl: config.publicUrl,
    baremetalInstallTimeoutSeconds: config.baremetalInstallTimeoutSeconds,
    logger,
  };
  return { services, drivers, serviceActions, serviceStaff, consoles, productEnv };
}

/** Wire the core over an open, migrated database and start the job queue (not its workers). */
export async function createDeps(
  config: Config,
  database: Database,
  logger: Logger,
  overrides: DepsOverrides = {},
): Promise<Deps> {
  const base = await createBase(config, database, logger, overrides);
  const { jobs, clock, bus, secretKey } = base;
  const db = database.db;
  const access = createAccess(base);
  const products = createProductRegistry({ ...PRODUCTS, ...overrides.products });
  const catalog = createCatalogService({ db, bus, products });
  const nodes = createNodeService({ db, secretKey });
  const money = createMoney(base);
  const notifications = createNotificationService({ db, clock });
  const privacy = createPrivacy({ ...base, db, publicUrl: config.publicUrl, dataDir: config.dataDir });
  const search = createSearch({
    db,
    publicUrl: config.publicUrl,
    // Which plans a text names, per text; dropped whenever the catalog changes (here or elsewhere).
    planCache: createReadCache({
      bus,
      writes: database.writes,
      tables: ['plans'],
      sharedTopics: ['catalog'],
      maxKeys: 1000,
    }),
  });
  const sshKeys = createSshKeyService({ db });
  const orders = createOrderService({
    db,
    jobs,
    clock,
    billing: money.billing,
    products,
    invoicing: config.invoicing,
    secretKey,
  });
  const serviceGroup = createServiceGroup(base, products, nodes, overrides.driverTiming);
  const { publicUrl, demo } = config;
  const webhooks = createWebhooks({
    db,
    secretKey,
    clock,
    mailer: base.mailer,
    logger,
    publicUrl,
    demo,
    overrides: overrides.webhooks ?? {},
  });
  const backupOptions = { db, jobs, mailer: base.mailer, clock, logger: logger.child({ component: 'backups' }) };
  return {
    ...base,
    ...access,
    ...money,
    ...serviceGroup,
    backups: { run: (input) => runBackups(backupOptions, input) },
    products,
    catalog,
    nodes,
    notifications,
    privacy,
    search,
    sshKeys,
    orders,
    webhooks,
  };
}

/** Stop what createDeps started. The database is closed by whoever opened it. */
export async function closeDeps(deps: Deps): Promise<void> {
  await deps.webhooks.dispatcher.stop();
  await deps.requestLog.close();
  deps.tokens.close();
  await deps.jobs.stop();
  await deps.bus.close();
  await deps.limits.close();
  deps.mailer.close();
  deps.drivers.close();
  deps.razorpay.close();
}
