import type { Command } from 'commander';
import { usageError } from './cli-error.js';
import { OUTPUT_FORMATS } from './output.js';

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;

interface Node {
  /** Subcommand words from the root ('' for the root). */
  path: string;
  subcommands: Array<{ name: string; description: string }>;
  options: string[];
  optionsWithValues: string[];
}

/** Every command of the tree with its subcommands and option flags, root first. */
function walk(command: Command, prefix = ''): Node[] {
  const options = command.options.flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
  const optionsWithValues = command.options
    .filter((o) => o.required || o.optional)
    .flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
  const visible = command.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  const node: Node = {
    path: prefix,
    subcommands: visible.map((c) => ({ name: c.name(), description: c.description() })),
    options: [...options, '--help'],
    optionsWithValues,
  };
  return [node, ...visible.flatMap((c) => walk(c, prefix === '' ? c.name() : `${prefix} ${c.name()}`))];
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function bash(nodes: Node[]): string {
  const paths = nodes.filter((n) => n.path !== '').map((n) => quote(n.path));
  const valued = [...new Set(nodes.flatMap((n) => n.optionsWithValues))];
  const cases = nodes
    .map(
      (n) =>
        `    ${quote(n.path)}) words=${quote([...n.subcommands.map((s) => s.name), ...n.options].join(' '))} ;;`,
    )
    .join('\n');
  return `# berth completion for bash: source <(berth completion bash)
_berth() {
  local cur prev path candidate i words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
    -o|--output) COMPREPLY=( $(compgen -W ${quote(OUTPUT_FORMATS.join(' '))} -- "$cur") ); return 0 ;;
  esac
  path=""
  for (( i = 1; i < COMP_CWORD; i++ )); do
    case "\${COMP_WORDS[i]}" in
      ${valued.join('|')}) (( i++ )); continue ;;
      -*) continue ;;
    esac
    if [ -z "$path" ]; then candidate="\${COMP_WORDS[i]}"; else candidate="$path \${COMP_WORDS[i]}"; fi
    case "$candidate" in
      ${paths.join('|')}) path="$candidate" ;;
    esac
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
  return 0
}
complete -o default -F _berth berth
`;
}

function zsh(nodes: Node[]): string {
  return `#compdef berth
# berth completion for zsh: source <(berth completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash(nodes).split('\n').slice(1).join('\n')}`;
}

function fish(nodes: Node[]): string {
  const lines = ['# berth completion for fish: berth completion fish | source', 'complete -c berth -f'];
  for (const node of nodes) {
    const words = node.path === '' ? [] : node.path.split(' ');
    // The condition: exactly this command path has been typed, and none of its subcommands yet.
    const seen = words.map((w) => `__fish_seen_subcommand_from ${w}`);
    const notYet = node.subcommands.length
      ? [`not __fish_seen_subcommand_from ${node.subcommands.map((s) => s.name).join(' ')}`]
      : [];
    const condition = node.path === '' ? ['__fish_use_subcommand'] : [...seen, ...notYet];
    const when = `-n ${quote(condition.join('; and '))}`;
    for (const sub of node.subcommands) {
      lines.push(`complete -c berth ${when} -a ${quote(sub.name)} -d ${quote(sub.description.slice(0, 60))}`);
    }
    for (const flag of node.options) {
      const arg = flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
      const values =
        flag === '-o' || flag === '--output'
          ? ` -x -a ${quote(OUTPUT_FORMATS.join(' '))}`
          : node.optionsWithValues.includes(flag)
            ? ' -r'
            : '';
      lines.push(`complete -c berth ${when} ${arg}${values}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A completion script for `shell`, generated from the program's commands and options. */
export function completionScript(program: Command, shell: string): string {
  const nodes = walk(program);
  switch (shell) {
    case 'bash':
      return bash(nodes);
    case 'zsh':
      return zsh(nodes);
    case 'fish':
      return fish(nodes);
    default:
      throw usageError(
        `completion: unknown shell ${JSON.stringify(shell)}; use one of ${COMPLETION_SHELLS.join(', ')}`,
      );
  }
}
