// Every staff command, by noun and verb (CONTRACT §1 lists what must exist).
import type { Command } from './command.ts';
import { accountCommands } from './commands/accounts.ts';
import { backupCommands } from './commands/backup.ts';
import { billingCommands } from './commands/billing.ts';
import { catalogCommands } from './commands/catalog.ts';
import { deletionCommands } from './commands/deletions.ts';
import { depositCommands } from './commands/deposits.ts';
import { invoiceExportCommands } from './commands/invoice-export.ts';
import { invoiceCommands } from './commands/invoices.ts';
import { mailCommands } from './commands/mail.ts';
import { nodeCommands } from './commands/nodes.ts';
import { searchCommands } from './commands/search.ts';
import { serviceCommands } from './commands/services.ts';
import { staffCommands } from './commands/staff.ts';
import { installationCommands, systemCommands } from './commands/system.ts';
import { walletCommands } from './commands/wallet.ts';

export const COMMANDS: Command[] = [
  ...accountCommands,
  ...deletionCommands,
  ...walletCommands,
  ...depositCommands,
  ...catalogCommands,
  ...nodeCommands,
  ...serviceCommands,
  ...billingCommands,
  ...invoiceCommands,
  ...invoiceExportCommands,
  ...searchCommands,
  ...mailCommands,
  ...systemCommands,
  ...installationCommands,
  ...staffCommands,
  ...backupCommands,
];
