// Every staff command, by noun and verb (CONTRACT §1 lists what must exist).
import type { Command } from './command.ts';
import { accountCommands } from './commands/accounts.ts';
import { mailCommands } from './commands/mail.ts';
import { systemCommands } from './commands/system.ts';

export const COMMANDS: Command[] = [...accountCommands, ...mailCommands, ...systemCommands];
