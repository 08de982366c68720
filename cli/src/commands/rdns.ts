// rdns set|clear: the reverse DNS (PTR) of an instance's IPv4 address (the second surface's
// PUT /instances/{id}/rdns, CONTRACT §13). `-o json` prints the API's {ipv4, ptr}.

import type { Argv } from 'yargs';
import { UsageError } from '../errors.ts';
import { json, msg, write } from '../output.ts';
import { type GlobalArgs, session } from '../session.ts';

/** The instance id given, or bad usage (exit 2). */
function instanceId(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError('<instance> must be an instance id (a number)');
  return value;
}

export function rdnsCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(['rdns', 'reverse-dns'], "Reverse DNS (PTR) of an instance's IPv4 address", (c) =>
    c
      .command(
        'set <instance> <hostname>',
        "Point the instance's IPv4 address back at a hostname (a PTR record)",
        (cc) =>
          cc
            .positional('instance', { type: 'number', demandOption: true, describe: 'the instance id' })
            .positional('hostname', {
              type: 'string',
              demandOption: true,
              describe: 'e.g. mail.example.in (RFC 1123 labels, at most 253 characters)',
            }),
        async (argv) => {
          const { client } = session(argv);
          const rdns = await client.setReverseDns(instanceId(argv.instance), argv.hostname);
          if (argv.output === 'json') return json(rdns);
          write(msg`Reverse DNS of ${rdns.ipv4} set to ${rdns.ptr ?? ''}.`);
        },
      )
      .command(
        'clear <instance>',
        "Remove the PTR record of the instance's IPv4 address",
        (cc) => cc.positional('instance', { type: 'number', demandOption: true, describe: 'the instance id' }),
        async (argv) => {
          const { client } = session(argv);
          const rdns = await client.setReverseDns(instanceId(argv.instance), null);
          if (argv.output === 'json') return json(rdns);
          write(msg`Reverse DNS of ${rdns.ipv4} cleared.`);
        },
      )
      .demandCommand(1, 'Name an rdns command: set or clear.'),
  );
}
