// login, logout, whoami and contexts: a context is a server URL and a token under a name
// (`default` unless told), so one person can keep, say, production and staging side by side.

import type { Argv } from 'yargs';
import { loadConfig, saveConfig } from '../config.ts';
import { CliError, UsageError } from '../errors.ts';
import { err, fields, json, msg, note, out, paint, rupees, table, write } from '../output.ts';
import { ask } from '../prompt.ts';
import { checkUrl, client, DEFAULT_URL, type GlobalArgs, session } from '../session.ts';

export function authCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y
    .command(
      'login',
      'Log in with an API token (made in the dashboard, or POST /api/v1/client/tokens/)',
      (c) =>
        c
          .option('token', {
            type: 'string',
            describe:
              'the token (else HOSTPLANE_TOKEN, else asked for without echo). Avoid: other users can read it in the process list',
          })
          .example('$0 login --url https://panel.example.in', 'asks for the token')
          .example('echo "$TOKEN" | $0 login --context ci', 'reads it from standard input'),
      async (argv) => {
        const config = loadConfig();
        const name = argv.context ?? config.current ?? 'default';
        const url = checkUrl(
          argv.url ?? (process.env.HOSTPLANE_URL || config.contexts[name]?.url || DEFAULT_URL),
          argv.insecure,
        );
        if (argv.token !== undefined) {
          // The command line is readable by every local user (ps, /proc/<pid>/cmdline) and is
          // kept in the shell's history. It still works, for scripts that already use it.
          note(
            paint(
              err.yellow,
              'warning: --token puts the token where other users of this machine can read it (the process list) ' +
                'and in your shell history. Run `hostplane login` to be asked for it without echo, pipe it in ' +
                '(`hostplane login < token-file`), or set HOSTPLANE_TOKEN.',
            ),
          );
        }
        let token = argv.token ?? process.env.HOSTPLANE_TOKEN ?? '';
        if (token === '') token = await ask(msg`API token for ${url}: `.text, { silent: true });
        if (token === '') throw new UsageError('no token given');
        const me = await client(url, token).me();
        config.contexts[name] = { url, token };
        config.current = name;
        saveConfig(config);
        if (argv.output === 'json') return json({ context: name, url, account: me.account, token: me.token });
        write(
          msg`Logged in to ${url} as ${paint(out.bold, me.account.email)} (context ${name}; token ${me.token.name}).`,
        );
      },
    )
    .command(
      'logout',
      'Forget the token of the current context (or of --context)',
      (c) => c,
      async (argv) => {
        const config = loadConfig();
        const name = argv.context ?? config.current;
        if (!name || !config.contexts[name]) throw new CliError('not logged in');
        delete config.contexts[name];
        if (config.current === name) config.current = Object.keys(config.contexts)[0] ?? null;
        saveConfig(config);
        if (argv.output === 'json') return json({ context: name, current: config.current });
        write(msg`Logged out of ${name}.${config.current ? msg` The current context is now ${config.current}.` : ''}`);
      },
    )
    .command(
      'whoami',
      'The account, its wallet and this token',
      (c) => c,
      async (argv) => {
        const s = session(argv);
        const me = await s.client.me();
        if (argv.output === 'json') return json(me);
        write(
          fields([
            ['account', `${me.account.name} <${me.account.email}>`],
            ['username', me.account.username],
            ['balance', rupees(me.wallet.balance)],
            ['token', `${me.token.name} (id ${me.token.id})`],
            ['scopes', me.token.scopes.join(', ')],
            ['expires', me.token.expires_at ?? 'never'],
            ['server', s.url],
            ['context', s.context ?? '(environment)'],
          ]),
        );
      },
    )
    .command('context', 'Named logins: list them, pick one', (c) =>
      c
        .command(
          'list',
          'Every context (tokens are not shown)',
          (cc) => cc,
          (argv) => {
            const config = loadConfig();
            const rows = Object.entries(config.contexts).map(([name, ctx]) => ({
              name,
              url: ctx.url,
              current: name === config.current,
            }));
            if (argv.output === 'json') return json(rows);
            if (rows.length === 0) return note('No contexts: run `hostplane login`.');
            write(
              table(
                ['CURRENT', 'NAME', 'URL'],
                rows.map((r) => [r.current ? '*' : '', r.name, r.url]),
              ),
            );
          },
        )
        .command(
          'use <name>',
          'Make a context the current one',
          (cc) => cc.positional('name', { type: 'string', demandOption: true }),
          (argv) => {
            const config = loadConfig();
            if (!config.contexts[argv.name]) {
              throw new UsageError(msg`no context named ${argv.name} (hostplane context list)`.text);
            }
            config.current = argv.name;
            saveConfig(config);
            if (argv.output === 'json') return json({ current: argv.name });
            write(msg`Now using ${argv.name} (${config.contexts[argv.name]?.url}).`);
          },
        )
        .demandCommand(1, 'Name a context command: list or use.'),
    );
}
