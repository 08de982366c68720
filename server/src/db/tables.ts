// Row types of every table, as Kysely sees them. Keep in step with migrations/.
// Conventions: ids are `integer generated always as identity` (JS number); money is bigint
// paise (JS string from pg, converted with BigInt in the core); times are timestamptz (Date).

import type { ColumnType, Generated, Selectable } from 'kysely';

/** A timestamptz the database fills in by default. */
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  email: string;
  username: string;
  password_hash: string;
  email_verified_at: NullableTimestamp;
  suspended_at: NullableTimestamp;
  suspended_reason: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface SessionsTable {
  id_hash: string;
  account_id: number;
  remember: boolean;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
}

export interface AccountTokensTable {
  id: Generated<number>;
  account_id: number;
  purpose: 'verify_email' | 'reset_password';
  token_hash: string;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface LoginCodesTable {
  id: Generated<number>;
  account_id: number;
  code_hash: string;
  attempts: Generated<number>;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export type MailStatus = 'queued' | 'sent' | 'stored' | 'failed';

export interface MailOutboxTable {
  id: Generated<number>;
  account_id: number | null;
  to_address: string;
  template: string;
  subject: string;
  body_sealed: string | null;
  status: ColumnType<MailStatus, MailStatus | undefined, MailStatus>;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: CreatedAt;
  sent_at: NullableTimestamp;
}

export interface LocationsTable {
  id: Generated<number>;
  code: string;
  name: string;
  city: string;
  country: ColumnType<string, string | undefined, string>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export interface Ipv4AddressesTable {
  id: Generated<number>;
  location_id: number;
  address: string;
  prefix: number;
  gateway: string;
  status: ColumnType<'free' | 'allocated' | 'reserved', 'free' | 'allocated' | 'reserved' | undefined>;
  service_id: number | null;
  allocated_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface OsTemplatesTable {
  id: Generated<number>;
  slug: string;
  name: string;
  family: string;
  version: string;
  template_vmid: number;
  min_disk_gb: ColumnType<number, number | undefined, number>;
  /** The install image a bare-metal machine boots as virtual media (http(s)); null: not for bare metal. */
  image_url: ColumnType<string | null, string | null | undefined, string | null>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export interface GamesTable {
  id: Generated<number>;
  slug: string;
  name: string;
  nest_id: number;
  egg_id: number;
  docker_image: string;
  startup: string;
  environment: ColumnType<Record<string, string>, string | undefined, string>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

/**
 * What the platform sells: the values of `plans.type` (and of `services.type`), in catalog order.
 * Every product list derives from this one (the registry in core/products/index.ts is typed to
 * hold one product per entry); a new type also needs a migration widening the CHECK constraints.
 */
export const PLAN_TYPES = ['vps', 'game', 'web', 'baremetal'] as const;
export type PlanType = (typeof PLAN_TYPES)[number];

export interface PlansTable {
  id: Generated<number>;
  label: string;
  name: string;
  type: PlanType;
  /** Monthly price in paise (bigint, read as a string). */
  price_paise: ColumnType<string, bigint | string, bigint | string>;
  specs: ColumnType<Record<string, unknown>, string, string>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  sort_order: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface PlanLocationsTable {
  plan_id: number;
  location_id: number;
}

/** The kinds of upstream node, one per driver (upstreams/registry.ts DRIVERS); CHECK-constrained too. */
export const NODE_KINDS = ['proxmox', 'pterodactyl', 'cpanel', 'redfish'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export interface NodesTable {
  id: Generated<number>;
  name: string;
  kind: NodeKind;
  location_id: number;
  endpoint: string;
  credentials_sealed: string;
  settings: ColumnType<Record<string, unknown>, string | undefined, string>;
  capacity: number;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  health: ColumnType<'unknown' | 'up' | 'down', 'unknown' | 'up' | 'down' | undefined>;
  health_detail: string | null;
  checked_at: NullableTimestamp;
  created_at: CreatedAt;
}

type Paise = ColumnType<string, bigint | string, bigint | string>;

export interface WalletsTable {
  account_id: number;
  balance_paise: ColumnType<string, bigint | string | undefined, bigint | string>;
  updated_at: CreatedAt;
}

export type LedgerKind = 'deposit' | 'order' | 'renewal' | 'refund' | 'adjustment';

export interface WalletTransactionsTable {
  id: Generated<number>;
  public_id: string;
  account_id: number;
  kind: LedgerKind;
  amount_paise: Paise;
  balance_after_paise: Paise;
  reference_type: string | null;
  reference_id: number | null;
  note: string | null;
  created_at: CreatedAt;
}

export type DepositStatus = 'pending' | 'approved' | 'rejected';
export type UploadType = 'png' | 'jpeg' | 'webp' | 'pdf';

export interface DepositsTable {
  id: Generated<number>;
  public_id: string;
  account_id: number;
  amount_paise: Paise;
  txn_ref: string;
  screenshot_file: string;
  screenshot_type: UploadType;
  screenshot_bytes: number;
  status: ColumnType<DepositStatus, DepositStatus | undefined, DepositStatus>;
  reason: string | null;
  reviewed_by: string | null;
  reviewed_at: NullableTimestamp;
  transaction_id: number | null;
  created_at: CreatedAt;
}

export interface NotificationsTable {
  id: Generated<number>;
  account_id: number;
  kind: string;
  title: string;
  body: string;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  read_at: NullableTimestamp;
  created_at: CreatedAt;
}

export type ServiceStatus = 'pending' | 'provisioning' | 'active' | 'suspended' | 'failed' | 'terminated';

export interface ServicesTable {
  id: Generated<number>;
  account_id: number;
  plan_id: number;
  order_id: number | null;
  type: PlanType;
  label: string;
  status: ColumnType<ServiceStatus, ServiceStatus | undefined, ServiceStatus>;
  location_id: number;
  node_id: number | null;
  price_paise: Paise;
  config: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** Where the service lives upstream, e.g. `{vmid, node, name}`; null until created. */
  external: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  credentials_sealed: string | null;
  period_end: NullableTimestamp;
  created_at: CreatedAt;
  activated_at: NullableTimestamp;
  suspended_at: NullableTimestamp;
  terminated_at: NullableTimestamp;
  /** Why it is suspended (null when it is not): only an overdue suspension is lifted by paying. */
  suspend_reason: ColumnType<SuspendReason | null, SuspendReason | null | undefined, SuspendReason | null>;
  /** The paid_until the renewal reminder was sent for (once per period). */
  reminded_for: NullableTimestamp;
}

export type SuspendReason = 'staff' | 'client' | 'overdue';

export type OrderStatus = 'unpaid' | 'paid' | 'refunded' | 'cancelled';

export interface OrdersTable {
  id: Generated<number>;
  public_id: string;
  account_id: number;
  plan_id: number;
  service_id: number | null;
  kind: 'new' | 'renewal';
  status: OrderStatus;
  amount_paise: Paise;
  config: ColumnType<Record<string, unknown>, string | undefined, string>;
  domain: string | null;
  location_id: number | null;
  transaction_id: number | null;
  refund_transaction_id: number | null;
  created_at: CreatedAt;
  paid_at: NullableTimestamp;
  /** A renewal: the paid_until it extends by a month (unique per service: one order per period). */
  renews_from: NullableTimestamp;
}

/** Every job type (CONTRACT §3; the jobs.type check, migration 0014): `snapshot` changes a VPS's snapshots. */
export const JOB_TYPES = ['provision', 'power', 'reinstall', 'suspend', 'unsuspend', 'terminate', 'snapshot'] as const;
export type JobType = (typeof JOB_TYPES)[number];
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobsTable {
  id: Generated<number>;
  account_id: number;
  service_id: number;
  type: JobType;
  params: ColumnType<Record<string, unknown>, string | undefined, string>;
  status: ColumnType<JobStatus, JobStatus | undefined, JobStatus>;
  progress: ColumnType<number, number | undefined, number>;
  step: string | null;
  error_code: string | null;
  error_message: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface ServiceEventsTable {
  id: Generated<number>;
  service_id: number;
  kind: string;
  message: string;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
}

export interface ServiceRequestsTable {
  id: Generated<number>;
  service_id: number;
  account_id: number;
  kind: 'suspend' | 'terminate';
  status: ColumnType<'pending' | 'approved' | 'rejected', 'pending' | 'approved' | 'rejected' | undefined>;
  note: string | null;
  reason: string | null;
  reviewed_by: string | null;
  job_id: number | null;
  created_at: CreatedAt;
  decided_at: NullableTimestamp;
}

export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  scope: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: CreatedAt;
}

export interface ApiTokensTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  token_hash: string;
  /** `svc_` and the first characters of the secret, to recognise a token in a list. */
  hint: string;
  scopes: string[];
  allowed_cidrs: ColumnType<string[], string[] | undefined, string[]>;
  expires_at: NullableTimestamp;
  created_at: CreatedAt;
  last_used_at: NullableTimestamp;
  last_used_ip: string | null;
  revoked_at: NullableTimestamp;
}

export interface ApiRequestLogTable {
  id: ColumnType<string, never, never>;
  token_id: number | null;
  account_id: number | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  ip: string | null;
  duration_ms: number;
  request_id: string | null;
  created_at: CreatedAt;
}

export interface ConsoleTicketsTable {
  id: Generated<number>;
  ticket_hash: string;
  account_id: number;
  service_id: number;
  kind: 'vnc' | 'serial' | 'game';
  upstream_sealed: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface SshKeysTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** Normalised: `type base64 comment`. */
  public_key: string;
  key_type: string;
  bits: number;
  /** `SHA256:…`, as ssh-keygen -l prints it. */
  fingerprint: string;
  created_at: CreatedAt;
}

export interface ConsoleSessionsTable {
  id: Generated<number>;
  account_id: number;
  service_id: number;
  node_id: number;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

/** The one row naming this installation (core/system/installation.ts). */
export interface InstallationTable {
  singleton: Generated<boolean>;
  id: string;
  created_at: CreatedAt;
  rotated_at: NullableTimestamp;
}

export interface DB {
  installation: InstallationTable;
  accounts: AccountsTable;
  sessions: SessionsTable;
  account_tokens: AccountTokensTable;
  login_codes: LoginCodesTable;
  mail_outbox: MailOutboxTable;
  locations: LocationsTable;
  ipv4_addresses: Ipv4AddressesTable;
  os_templates: OsTemplatesTable;
  games: GamesTable;
  plans: PlansTable;
  plan_locations: PlanLocationsTable;
  nodes: NodesTable;
  wallets: WalletsTable;
  wallet_transactions: WalletTransactionsTable;
  deposits: DepositsTable;
  notifications: NotificationsTable;
  services: ServicesTable;
  orders: OrdersTable;
  jobs: JobsTable;
  service_events: ServiceEventsTable;
  service_requests: ServiceRequestsTable;
  idempotency_keys: IdempotencyKeysTable;
  api_tokens: ApiTokensTable;
  api_request_log: ApiRequestLogTable;
  console_tickets: ConsoleTicketsTable;
  console_sessions: ConsoleSessionsTable;
  ssh_keys: SshKeysTable;
}

export type Account = Selectable<AccountsTable>;
export type Session = Selectable<SessionsTable>;
export type MailRow = Selectable<MailOutboxTable>;
export type Location = Selectable<LocationsTable>;
export type OsTemplate = Selectable<OsTemplatesTable>;
export type Game = Selectable<GamesTable>;
export type SshKey = Selectable<SshKeysTable>;
export type Plan = Selectable<PlansTable>;
export type NodeRow = Selectable<NodesTable>;
export type LedgerRow = Selectable<WalletTransactionsTable>;
export type Deposit = Selectable<DepositsTable>;
export type Notification = Selectable<NotificationsTable>;
export type Service = Selectable<ServicesTable>;
export type Order = Selectable<OrdersTable>;
export type Job = Selectable<JobsTable>;
export type ServiceEvent = Selectable<ServiceEventsTable>;
export type ServiceRequest = Selectable<ServiceRequestsTable>;
export type ApiToken = Selectable<ApiTokensTable>;
