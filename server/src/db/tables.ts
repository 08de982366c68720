// Row types of every table, as Kysely sees them. Keep in step with migrations/.
// Conventions: ids are `integer generated always as identity` (JS number); money is bigint
// paise (JS string from pg, converted with BigInt in the core); times are timestamptz (Date).
//
// The product axis lives here: PLAN_TYPES and NODE_KINDS, and the tables typed by them (plans,
// nodes, services), with DB, the map of every table. The others are grouped by domain under
// ./tables/ and exported from here too, so code imports every row type from this one module.

import type { ColumnType, Generated, Selectable } from 'kysely';
import type {
  AccountExportsTable,
  AccountsTable,
  AccountTokensTable,
  ApiRequestLogTable,
  ApiTokensTable,
  LoginCodesTable,
  PasskeysTable,
  RecoveryCodesTable,
  SessionsTable,
  SshKeysTable,
  TwoFactorTable,
  WebauthnChallengesTable,
} from './tables/accounts.ts';
import type { AccountActivityTable } from './tables/activity.ts';
import type { BackupSchedulesTable } from './tables/backups.ts';
import type { BillingProfilesTable, InvoiceSeriesTable, InvoicesTable } from './tables/billing.ts';
import type { CreatedAt, NullableTimestamp, Paise } from './tables/columns.ts';
import type { GamesTable, Ipv4AddressesTable, LocationsTable, OsTemplatesTable } from './tables/inventory.ts';
import type { MailOutboxTable, NotificationsTable } from './tables/messages.ts';
import type { DepositsTable, OrdersTable, WalletsTable, WalletTransactionsTable } from './tables/money.ts';
import type {
  ConsoleSessionsTable,
  ConsoleTicketsTable,
  IdempotencyKeysTable,
  InstallationTable,
  JobsTable,
  ServiceEventsTable,
  ServiceRequestsTable,
} from './tables/operations.ts';
import type { AuditLogTable, StaffSessionsTable, StaffTable, StaffTokensTable } from './tables/staff.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable, WebhookEventsTable } from './tables/webhooks.ts';

export type * from './tables/accounts.ts';
export type * from './tables/activity.ts';
export type * from './tables/backups.ts';
export type * from './tables/billing.ts';
export type * from './tables/inventory.ts';
export type * from './tables/messages.ts';
export type * from './tables/money.ts';
export type * from './tables/operations.ts';
export { JOB_TYPES } from './tables/operations.ts';
export type * from './tables/staff.ts';
export type * from './tables/webhooks.ts';

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
  /** Cloud-init user data of the order, sealed until provisioning has used it (core/services/user-data.ts). */
  user_data_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  period_end: NullableTimestamp;
  created_at: CreatedAt;
  activated_at: NullableTimestamp;
  suspended_at: NullableTimestamp;
  terminated_at: NullableTimestamp;
  /** Why it is suspended (null when it is not): only an overdue suspension is lifted by paying. */
  suspend_reason: ColumnType<SuspendReason | null, SuspendReason | null | undefined, SuspendReason | null>;
  /** The paid_until the renewal reminder was sent for (once per period). */
  reminded_for: NullableTimestamp;
  /** The PTR name of its IPv4 address, lower-case without the trailing dot (null: none set; migration 0032). */
  ptr: ColumnType<string | null, string | null | undefined, string | null>;
}

export type SuspendReason = 'staff' | 'client' | 'overdue';

export interface DB {
  installation: InstallationTable;
  accounts: AccountsTable;
  sessions: SessionsTable;
  account_tokens: AccountTokensTable;
  login_codes: LoginCodesTable;
  two_factor: TwoFactorTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  account_activity: AccountActivityTable;
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
  billing_profiles: BillingProfilesTable;
  invoice_series: InvoiceSeriesTable;
  invoices: InvoicesTable;
  account_exports: AccountExportsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  backup_schedules: BackupSchedulesTable;
  staff: StaffTable;
  staff_tokens: StaffTokensTable;
  staff_sessions: StaffSessionsTable;
  audit_log: AuditLogTable;
}

export type Plan = Selectable<PlansTable>;
export type NodeRow = Selectable<NodesTable>;
export type Service = Selectable<ServicesTable>;
