// completion [bash|zsh|fish]: the shell completion script on stdout.
//
// bash and zsh ask `hostplane --get-yargs-completions …` at each TAB (yargs' own protocol), so
// they know every command and option of the hostplane on the PATH. fish gets a static script made
// from the command table: `recordCommands` runs the CLI's own yargs definitions (the `parser` of
// main.ts, every command registered there) against a recorder that notes each command, alias,
// description, option and positional choice instead of parsing, so a command added to main.ts
// appears in the fish script without anything more, and the script cannot drift from the CLI that
// printed it.

import type { Argv } from 'yargs';
import { json, write } from '../output.ts';
import type { GlobalArgs } from '../session.ts';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

export interface OptionSpec {
  name: string;
  aliases: string[];
  description: string;
  choices: string[];
  /** A flag (no value follows it). */
  boolean: boolean;
}

export interface CommandSpec {
  name: string;
  aliases: string[];
  description: string;
  /** Positional names in order, with their choices (empty: any value). */
  positionals: { name: string; choices: string[] }[];
  options: OptionSpec[];
  commands: CommandSpec[];
}

export type CommandTable = Omit<CommandSpec, 'name' | 'aliases' | 'description'>;

type Dict = Record<string, unknown>;
const strings = (v: unknown): string[] =>
  v === undefined || v === null ? [] : (Array.isArray(v) ? v : [v]).map((x) => String(x));

/** `power <id> [action]` → name power, positionals id and action. */
function parseCommand(text: string): { name: string; positionals: string[] } {
  const [name = '', ...rest] = text.trim().split(/\s+/);
  return { name, positionals: rest.map((p) => p.replace(/^[<[]|(\.\.)?[>\]]$/g, '')) };
}

function optionSpec(name: string, o: Dict): OptionSpec {
  return {
    name,
    aliases: strings(o.alias),
    description: typeof o.describe === 'string' ? o.describe : typeof o.description === 'string' ? o.description : '',
    choices: strings(o.choices),
    boolean: o.type === 'boolean' || o.boolean === true,
  };
}

/** A stand-in for a yargs instance that records definitions; every other method is a no-op. */
function recorder(level: CommandTable): Argv {
  const self: Argv = new Proxy({} as Argv, {
    get(_target, property) {
      // Not a thenable: nothing may take the recorder for a promise.
      if (property === 'then') return undefined;
      if (property === 'command' || property === 'commands') {
        return (...args: unknown[]) => {
          record(args);
          return self;
        };
      }
      if (property === 'option' || property === 'options') {
        return (name: string | Dict, o: Dict = {}) => {
          if (typeof name === 'string') level.options.push(optionSpec(name, o));
          else for (const [key, value] of Object.entries(name)) level.options.push(optionSpec(key, value as Dict));
          return self;
        };
      }
      if (property === 'positional') {
        return (name: string, o: Dict = {}) => {
          const known = level.positionals.find((p) => p.name === name);
          if (known) known.choices = strings(o.choices);
          return self;
        };
      }
      return () => self;
    },
  });

  function record(args: unknown[]): void {
    let [cmd, description, builder] = args;
    if (cmd !== null && typeof cmd === 'object' && !Array.isArray(cmd)) {
      // The CommandModule form: {command, aliases, describe, builder, handler}.
      const m = cmd as Dict;
      cmd = [...strings(m.command), ...strings(m.aliases)];
      description = m.describe ?? m.description;
      builder = m.builder;
    }
    if (description === false) return;
    const names = strings(cmd).map(parseCommand);
    const primary = names.find((n) => n.name !== '$0');
    if (!primary) return;
    const spec: CommandSpec = {
      name: primary.name,
      aliases: names.map((n) => n.name).filter((n) => n !== '$0' && n !== primary.name),
      description: typeof description === 'string' ? description : '',
      positionals: primary.positionals.map((name) => ({ name, choices: [] })),
      options: [],
      commands: [],
    };
    if (typeof builder === 'function') builder(recorder(spec));
    else if (builder && typeof builder === 'object') {
      for (const [key, value] of Object.entries(builder as Dict)) spec.options.push(optionSpec(key, value as Dict));
    }
    level.commands.push(spec);
  }
  return self;
}

/** The command table of a parser built by `build` (given a recorder in place of yargs). */
export function recordCommands(build: (root: Argv) => unknown): CommandTable {
  const table: CommandTable = { positionals: [], options: [], commands: [] };
  build(recorder(table));
  return table;
}

// The scripts.

const BASH = `###-begin-hostplane-completions-###
# hostplane completion for bash (made by \`hostplane completion bash\`). At each TAB it asks the
# hostplane on your PATH (--get-yargs-completions), so it knows every command and option it has.
# Install: hostplane completion bash > ~/.local/share/bash-completion/completions/hostplane
#      or: hostplane completion bash >> ~/.bashrc
_hostplane_yargs_completions()
{
    local cur_word args type_list
    cur_word="\${COMP_WORDS[COMP_CWORD]}"
    args=("\${COMP_WORDS[@]:0:COMP_CWORD+1}")
    # Plain words (not zsh's name:description), whatever the login shell is.
    mapfile -t type_list < <(SHELL=bash ZSH_NAME= hostplane --get-yargs-completions "\${args[@]}" 2>/dev/null)
    mapfile -t COMPREPLY < <(compgen -W "$( printf '%q ' "\${type_list[@]}" )" -- "\${cur_word}" |
        awk '/ / { print "\\""$0"\\"" } /^[^ ]+$/ { print $0 }')
    return 0
}
complete -o bashdefault -o default -F _hostplane_yargs_completions hostplane
###-end-hostplane-completions-###
`;

const ZSH = `#compdef hostplane
###-begin-hostplane-completions-###
# hostplane completion for zsh (made by \`hostplane completion zsh\`). At each TAB it asks the
# hostplane on your PATH (--get-yargs-completions) for the words and their descriptions.
# Install: hostplane completion zsh > "\${fpath[1]}/_hostplane"   (a directory of your fpath; then compinit)
#      or: echo 'source <(hostplane completion zsh)' >> ~/.zshrc   (after compinit)
_hostplane_yargs_completions()
{
  local reply
  local si=$IFS
  IFS=$'\\n' reply=($(COMP_CWORD="$((CURRENT-1))" COMP_LINE="$BUFFER" COMP_POINT="$CURSOR" SHELL=zsh hostplane --get-yargs-completions "\${words[@]:0:$CURRENT}" 2>/dev/null))
  IFS=$si
  if [[ \${#reply} -gt 0 ]]; then
    _describe 'values' reply
  else
    _default
  fi
}
if [[ "\${zsh_eval_context[-1]}" == "loadautofunc" ]]; then
  _hostplane_yargs_completions "$@"
else
  compdef _hostplane_yargs_completions hostplane
fi
###-end-hostplane-completions-###
`;

/** A fish single-quoted string. */
const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
/** A description on one line, short enough for a completion pager. */
const d = (s: string) => q(s.replace(/\s+/g, ' ').trim().slice(0, 100));
/** A command path as __hostplane_at takes it: each level's names joined by commas. */
const path = (p: CommandSpec[]) => p.map((c) => [c.name, ...c.aliases].join(',')).join(' ');
const takesFiles = (name: string) => name === 'file' || name === 'out';

function optionLines(o: OptionSpec, condition: string): string {
  const flags = [`-l ${o.name}`];
  for (const alias of o.aliases) flags.push(alias.length === 1 ? `-s ${alias}` : `-l ${alias}`);
  if (!o.boolean) {
    if (o.choices.length > 0) flags.push(`-xa ${q(o.choices.join(' '))}`);
    else flags.push(takesFiles(o.name) ? '-rF' : '-x');
  }
  if (o.description) flags.push(`-d ${d(o.description)}`);
  return `complete -c hostplane${condition} ${flags.join(' ')}`;
}

export function fishScript(table: CommandTable): string {
  const valueOptions = new Set<string>();
  const lines: string[] = [];
  const walk = (level: CommandTable, at: CommandSpec[]) => {
    const where = path(at);
    for (const o of level.options) {
      if (!o.boolean) for (const n of [o.name, ...o.aliases]) valueOptions.add(n.length === 1 ? `-${n}` : `--${n}`);
      lines.push(optionLines(o, at.length === 0 ? '' : ` -n ${q(`__hostplane_in ${where}`)}`));
    }
    level.positionals.forEach((p, i) => {
      const condition = ` -n ${q(`__hostplane_at ${i} ${where}`)}`;
      if (p.choices.length > 0) lines.push(`complete -c hostplane${condition} -xa ${q(p.choices.join(' '))}`);
      else if (takesFiles(p.name)) lines.push(`complete -c hostplane${condition} -F`);
    });
    for (const c of level.commands) {
      const condition = ` -n ${q(`__hostplane_at 0 ${where}`.trimEnd())}`;
      lines.push(`complete -c hostplane${condition} -a ${q(c.name)}${c.description ? ` -d ${d(c.description)}` : ''}`);
    }
    for (const c of level.commands) walk(c, [...at, c]);
  };
  walk(table, []);
  const skip = [...valueOptions].sort().map(q).join(' ');
  return `# hostplane completion for fish (made by \`hostplane completion fish\` from the CLI's command table).
# Install: hostplane completion fish > ~/.config/fish/completions/hostplane.fish
# Run it again after upgrading hostplane: the commands are written into this file.

function __hostplane_words --description 'the command words after hostplane, without options and their values'
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        if contains -- $t ${skip || "''"}
            set skip 1
        else if not string match -q -- '-*' $t
            echo $t
        end
    end
end

function __hostplane_at --description 'N, then a command path (names,aliases per level): the path was typed, then N more words'
    set -l more $argv[1]
    set -e argv[1]
    set -l words (__hostplane_words)
    test (count $words) -eq (math (count $argv) + $more); or return 1
    for i in (seq (count $argv))
        contains -- $words[$i] (string split , -- $argv[$i]); or return 1
    end
end

function __hostplane_in --description 'a command path (names,aliases per level): it was typed, maybe with more words'
    set -l words (__hostplane_words)
    test (count $words) -ge (count $argv); or return 1
    for i in (seq (count $argv))
        contains -- $words[$i] (string split , -- $argv[$i]); or return 1
    end
end

complete -c hostplane -e
complete -c hostplane -f
complete -c hostplane -s h -l help -d 'Show help'
complete -c hostplane -l version -d 'Show the version'
${lines.join('\n')}
`;
}

function scriptFor(shell: Shell, table: () => CommandTable): string {
  if (shell === 'bash') return BASH;
  if (shell === 'zsh') return ZSH;
  return fishScript(table());
}

/** `completion [shell]`; `table` records the whole CLI (main.ts passes its own parser). */
export function completionCommands(y: Argv<GlobalArgs>, table: () => CommandTable): Argv<GlobalArgs> {
  return y.command(
    'completion [shell]',
    'Print the shell completion script: bash, zsh or fish (default: your $SHELL)',
    (c) =>
      c
        .positional('shell', { choices: SHELLS, describe: 'the shell the script is for' })
        .example('$0 completion bash > ~/.local/share/bash-completion/completions/hostplane', '')
        .example('$0 completion zsh > ~/.zfunc/_hostplane', 'a directory of your fpath')
        .example('$0 completion fish > ~/.config/fish/completions/hostplane.fish', ''),
    (argv) => {
      const login = (process.env.SHELL ?? '').split('/').pop() ?? '';
      const shell = argv.shell ?? (SHELLS.find((s) => s === login) || 'bash');
      const script = scriptFor(shell, table);
      if (argv.output === 'json') return json({ shell, script });
      write(script.trimEnd());
    },
  );
}
