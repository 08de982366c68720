// Every staff command, by noun and verb (CONTRACT §1 lists what must exist).
import type { Command } from './command.ts';
import { systemCommands } from './commands/system.ts';

export const COMMANDS: Command[] = [...systemCommands];
