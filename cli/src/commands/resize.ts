// resize <instance> <plan>: move a KVM instance to a larger plan (CONTRACT §13, POST
// /api/v1/instances/{id}/resize, scope instances.write). The pro-rata difference for the rest of
// the paid period is charged from the wallet at once (a short wallet is the API's 402, exit 1),
// then the server is stopped, resized and started: followed with progress unless --no-wait.
// The instance is named by its id or its label.

import type { Argv } from 'yargs';
import { UsageError } from '../errors.ts';
import { fields, json, msg, note, write } from '../output.ts';
import { follow } from '../progress.ts';
import { type GlobalArgs, session } from '../session.ts';
import { instanceFields, printJob } from './instances.ts';

export function resizeCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(
    'resize <instance> <plan>',
    'Move an instance to a larger plan: the difference for the rest of the period is paid now',
    (c) =>
      c
        .positional('instance', { type: 'string', demandOption: true, describe: 'instance id or label' })
        .positional('plan', { type: 'string', demandOption: true, describe: 'the larger plan (hostplane plans list)' })
        .option('wait', { type: 'boolean', default: true, describe: 'follow the job (--no-wait: return at once)' })
        .example('$0 resize web1 vps-4c-8g', ''),
    async (argv) => {
      const { client } = session(argv);
      const ref = String(argv.instance).trim();
      let id = /^\d+$/.test(ref) ? Number(ref) : null;
      if (id === null) {
        for await (const instance of client.instances()) if (instance.label === ref) id = instance.id;
        if (id === null) throw new UsageError(msg`no instance ${ref} (hostplane instances list)`.text);
      }
      if (argv.output !== 'json') note(msg`Resizing instance ${id} to ${argv.plan}…`);
      let job = await client.resizeInstance(id, argv.plan);
      if (!argv.wait) return printJob(argv, job, msg``);
      job = await follow(client, job, `resize ${ref}`);
      const instance = await client.getInstance(id);
      if (argv.output === 'json') return json({ instance, job });
      write(fields(instanceFields(instance)));
      note(msg`Instance ${id} now runs on ${instance.plan.label}.`);
    },
  );
}
