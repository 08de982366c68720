// Every migration, in order. Names sort by their number; never rename or edit a landed one.
import type { Migration } from 'kysely';
import * as m0001 from './0001_extensions.ts';
import * as m0002 from './0002_accounts.ts';
import * as m0003 from './0003_catalog.ts';
import * as m0004 from './0004_wallet.ts';
import * as m0005 from './0005_notifications.ts';
import * as m0006 from './0006_orders_services.ts';
import * as m0007 from './0007_api_tokens.ts';
import * as m0008 from './0008_console_sessions.ts';
import * as m0009 from './0009_game_consoles.ts';
import * as m0010 from './0010_billing.ts';
import * as m0011 from './0011_search.ts';
import * as m0012 from './0012_ssh_keys.ts';
import * as m0013 from './0013_bare_metal.ts';
import * as m0014 from './0014_snapshot_jobs.ts';
import * as m0015 from './0015_change_notices.ts';
import * as m0016 from './0016_request_log_keys.ts';
import * as m0017 from './0017_status_indexes.ts';
import * as m0018 from './0018_search_lookups.ts';
import * as m0019 from './0019_request_log_brin.ts';
import * as m0020 from './0020_installation.ts';
import * as m0021 from './0021_extids_legacy.ts';
import * as m0022 from './0022_billing_profiles.ts';
import * as m0023 from './0023_invoices.ts';
import * as m0024 from './0024_razorpay_deposits.ts';
import * as m0025 from './0025_credit_notes.ts';
import * as m0026 from './0026_two_factor.ts';
import * as m0027 from './0027_passkeys.ts';
import * as m0029 from './0029_activity.ts';
import * as m0030 from './0030_privacy.ts';
import * as m0031 from './0031_webhooks.ts';
import * as m0032 from './0032_reverse_dns.ts';
import * as m0033 from './0033_resize.ts';
import * as m0034 from './0034_backup_schedules.ts';
import * as m0035 from './0035_user_data.ts';
import * as m0036 from './0036_staff.ts';

export const migrations: Record<string, Migration> = {
  '0001_extensions': m0001,
  '0002_accounts': m0002,
  '0003_catalog': m0003,
  '0004_wallet': m0004,
  '0005_notifications': m0005,
  '0006_orders_services': m0006,
  '0007_api_tokens': m0007,
  '0008_console_sessions': m0008,
  '0009_game_consoles': m0009,
  '0010_billing': m0010,
  '0011_search': m0011,
  '0012_ssh_keys': m0012,
  '0013_bare_metal': m0013,
  '0014_snapshot_jobs': m0014,
  '0015_change_notices': m0015,
  '0016_request_log_keys': m0016,
  '0017_status_indexes': m0017,
  '0018_search_lookups': m0018,
  '0019_request_log_brin': m0019,
  '0020_installation': m0020,
  '0021_extids_legacy': m0021,
  '0022_billing_profiles': m0022,
  '0023_invoices': m0023,
  '0024_razorpay_deposits': m0024,
  '0025_credit_notes': m0025,
  '0026_two_factor': m0026,
  '0027_passkeys': m0027,
  '0029_activity': m0029,
  '0030_privacy': m0030,
  '0031_webhooks': m0031,
  '0032_reverse_dns': m0032,
  '0033_resize': m0033,
  '0034_backup_schedules': m0034,
  '0035_user_data': m0035,
  '0036_staff': m0036,
};
