// webhooks list: your webhook endpoints, read with the token (GET /api/v1/webhooks, scope read).
// Adding, changing, testing and rotating them is the panel's (the session surface, CONTRACT §13),
// where the signing secret is shown once; here an endpoint shows only its first characters.

import type { Argv } from 'yargs';
import { json, note, out, paint, table, write } from '../output.ts';
import { type GlobalArgs, session } from '../session.ts';

export function webhookCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(['webhooks', 'webhook'], 'Your webhook endpoints (read-only: manage them in the panel)', (c) =>
    c.command(
      ['list', 'ls', '$0'],
      'Endpoints with their events and state',
      (cc) => cc.example('$0 webhooks list -o json', 'the endpoint objects'),
      async (argv) => {
        const { client } = session(argv);
        const { endpoints } = await client.listWebhooks();
        if (argv.output === 'json') return json(endpoints);
        if (endpoints.length === 0) return note('No webhook endpoints: add one in the panel (Account, Webhooks).');
        write(
          table(
            ['ID', 'URL', 'EVENTS', 'STATE', 'SECRET', 'DESCRIPTION'],
            endpoints.map((e) => [
              e.id,
              e.url,
              e.events.join(','),
              e.enabled
                ? e.failing_since
                  ? paint(out.yellow, `failing since ${e.failing_since}`)
                  : paint(out.green, 'enabled')
                : paint(out.red, `disabled (${e.disabled_reason ?? 'client'})`),
              `${e.secret_hint}…`,
              e.description || null,
            ]),
          ),
        );
      },
    ),
  );
}
