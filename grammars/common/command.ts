/**
 * The command a paste shows before an output (issue 30): `$ kubectl get svc -A -o wide`,
 * `[root@node ~]# iptables -t nat -nvL KUBE-SERVICES --line-numbers`, `**kubectl get ep**`,
 * `## kubectl get pods -o wide`, `Output of \`kubectl get pods,svc\``. Readers use it as context
 * (which table an `iptables -L` listing is, which namespace a `kubectl get` table is of); the
 * paste splitter uses it to start a section. Words are split as a shell would for the simple
 * commands people paste (quotes kept together); pipes are noted, not followed.
 */
import { promptBody } from './text.js';

export type CommandTool = 'kubectl' | 'iptables' | 'ip6tables' | 'iptables-save' | 'ip6tables-save' | 'ipvsadm' | 'other';

export interface PastedCommand {
  readonly tool: CommandTool;
  /** Words after the tool (`get svc -A`), wrappers (`sudo`, `watch -n1`, `k3s`) removed. */
  readonly args: readonly string[];
  /** Piped through grep/head/tail/awk/sed/cut: the output shown is a selection. */
  readonly filtered: boolean;
  /** Run under `watch`: the output may repeat, one copy per refresh. */
  readonly watched: boolean;
  /** The command as written. */
  readonly text: string;
}

/** `kubectl` and what people type for it. */
const KUBECTL = new Set(['kubectl', 'k', 'kc', 'kubecolor', 'oc', 'kubectl.exe']);
const WRAPPERS = new Set(['sudo', 'doas', 'time', 'command', 'exec', 'nice']);
const FILTERS = /^(grep|egrep|fgrep|rg|head|tail|awk|sed|cut|less|more|sort|uniq|column)$/;

/** Split a command line into words: spaces separate, '…' and "…" hold spaces. */
export function shellWords(text: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The tool of a command's first word (a path such as /usr/sbin/iptables counts). */
function toolOf(word: string): CommandTool | undefined {
  const base = word.slice(word.lastIndexOf('/') + 1);
  if (KUBECTL.has(base)) return 'kubectl';
  if (base === 'ipvsadm') return 'ipvsadm';
  const m = /^(ip6?tables)(?:-nft|-legacy)?(-save)?$/.exec(base);
  if (m) return `${m[1]}${m[2] ?? ''}` as CommandTool;
  return undefined;
}

/** Parse a command text (without its prompt). Undefined when it is not a command kpx knows. */
export function parseCommand(text: string): PastedCommand | undefined {
  const pipeAt = text.search(/\s\|\s?|\|\s/);
  const head = pipeAt >= 0 ? text.slice(0, pipeAt) : text;
  const rest = pipeAt >= 0 ? text.slice(pipeAt) : '';
  const words = shellWords(head);
  let i = 0;
  let watched = false;
  for (;;) {
    const w = words[i];
    if (w === undefined) return undefined;
    if (WRAPPERS.has(w)) i++;
    else if (w === 'watch') {
      watched = true;
      i++;
      while (words[i]?.startsWith('-')) i += /^-(n|-interval)$/.test(words[i]) ? 2 : 1;
    } else if (w === 'ip' && words[i + 1] === 'netns' && words[i + 2] === 'exec') i += 4;
    else if (w === 'nsenter') {
      i++;
      while (words[i]?.startsWith('-')) i += /^-[a-z]$/.test(words[i]) && !/^-[a-z]$/.test(words[i + 1] ?? '-') && words[i + 1] !== '--' && /^-t$/.test(words[i]) ? 2 : 1;
      if (words[i] === '--') i++;
    } else if ((w === 'k3s' || w === 'microk8s' || w === 'k8s' || w === 'minikube') && words[i + 1] === 'kubectl') {
      i++;
      if (words[i + 1] === '--') i++;
    } else break;
  }
  const tool = toolOf(words[i]);
  if (!tool) return undefined;
  const args = words.slice(i + 1);
  const filtered = /\|\s*(\S+)/.test(rest) && [...rest.matchAll(/\|\s*(\S+)/g)].some((m) => FILTERS.test(m[1]));
  return { tool, args, filtered, watched, text: text.trim() };
}

/**
 * A caption naming a command: `**kubectl get svc**`, `## kubectl get svc`, `- \`kubectl get ep\``,
 * `Output of \`kubectl get pods,svc\`:`. The command is the whole caption or its code span.
 */
const CAPTION = /^\s*(?:#{1,6}\s+|\*\*|[-*]\s+|>\s+)?(?:[^`*]*`)?(?:[$#>]\s*)?((?:sudo\s+)?(?:kubectl|k|oc|ip6?tables(?:-nft|-legacy)?(?:-save)?|watch)\s[^`*]*?)\s*`?(?:\*\*)?:?\s*$/;

/** A command on a line of its own, without a prompt (a code block's first line in docs and issues). */
const BARE = /^\s*((?:sudo\s+)?(?:kubectl|oc|ip6?tables(?:-nft|-legacy)?(?:-save)?|ipvsadm)(?:\s+(?:get|describe|-[-\w]+)\b.*|\s*(?:\|.*)?))$/;

/** A command introduced by a prompt, a Markdown caption or heading, or an inline code span; or a bare one. */
export function commandOfLine(line: string): PastedCommand | undefined {
  // `**$ kubectl get svc -o yaml**`, `` `$ kubectl get svc` ``: the emphasis is the author's, not the command's.
  const wrapped = /^\s*(\*\*|__|`)(.+)\1:?\s*$/.exec(line);
  const body = promptBody(wrapped ? wrapped[2] : line);
  if (body !== undefined) return parseCommand(body);
  const bare = BARE.exec(line);
  if (bare) return parseCommand(bare[1]);
  // **kubectl get svc**, ## kubectl get svc, `kubectl get svc`, Output of `kubectl get pods,svc`:
  const caption = CAPTION.exec(line);
  return caption ? parseCommand(caption[1]) : undefined;
}

/** What a `kubectl get|describe …` command asks for. */
export interface KubectlRequest {
  readonly verb: 'get' | 'describe' | 'other';
  /** Canonical kinds asked for: `service`, `endpoints`, `endpointslice`, `pod`, `node`, `all`, or another word. */
  readonly kinds: readonly string[];
  /** Object names given on the command line (a selection, not a listing). */
  readonly names: readonly string[];
  /** `-n NS` / `--namespace NS`; `*` for `-A` / `--all-namespaces`; undefined: the context's namespace. */
  readonly namespace?: string;
  /** `-o wide|yaml|json|name|…`. */
  readonly output?: string;
  /** `-l` / `--selector` / `--field-selector`: a selection. */
  readonly selected: boolean;
}

const KIND_ALIASES: Record<string, string> = {
  svc: 'service',
  service: 'service',
  services: 'service',
  ep: 'endpoints',
  endpoint: 'endpoints',
  endpoints: 'endpoints',
  endpointslice: 'endpointslice',
  endpointslices: 'endpointslice',
  'endpointslices.discovery.k8s.io': 'endpointslice',
  'endpointslice.discovery.k8s.io': 'endpointslice',
  po: 'pod',
  pod: 'pod',
  pods: 'pod',
  no: 'node',
  node: 'node',
  nodes: 'node',
  all: 'all',
};

/** Canonical kind of a kubectl resource word (`svc` → `service`), or the word itself. */
export function kubectlKind(word: string): string {
  return KIND_ALIASES[word.toLowerCase()] ?? word.toLowerCase();
}

/** Flags of kubectl that take a value as the next word. */
const KUBECTL_VALUE_FLAGS = new Set(['-n', '--namespace', '-o', '--output', '-l', '--selector', '--field-selector', '--context', '--cluster', '--kubeconfig', '-c', '--sort-by', '--chunk-size', '-L', '--label-columns', '--template', '--user', '-s', '--server']);

export function kubectlRequest(cmd: PastedCommand): KubectlRequest | undefined {
  if (cmd.tool !== 'kubectl') return undefined;
  const positional: string[] = [];
  let namespace: string | undefined;
  let output: string | undefined;
  let selected = false;
  const a = cmd.args;
  for (let i = 0; i < a.length; i++) {
    const w = a[i];
    const eq = /^(--?[\w-]+)=(.*)$/.exec(w);
    const flag = eq ? eq[1] : w;
    const value = eq ? eq[2] : a[i + 1];
    const takes = () => {
      if (!eq) i++;
      return value;
    };
    if (flag === '-A' || flag === '--all-namespaces') namespace = '*';
    else if (flag === '-n' || flag === '--namespace') namespace = takes();
    else if (/^-n\S+$/.test(w) && !eq) namespace = w.slice(2);
    else if (flag === '-o' || flag === '--output') output = takes();
    else if (/^-o\S+$/.test(w) && !eq) output = w.slice(2);
    else if (flag === '-l' || flag === '--selector' || flag === '--field-selector') {
      selected = true;
      takes();
    } else if (KUBECTL_VALUE_FLAGS.has(flag)) takes();
    else if (w.startsWith('-')) continue;
    else positional.push(w);
  }
  const verb = positional[0] === 'get' || positional[0] === 'describe' ? positional[0] : 'other';
  if (verb === 'other') return { verb, kinds: [], names: [], selected, ...(namespace ? { namespace } : {}), ...(output ? { output } : {}) };
  const what = positional.slice(1);
  const kinds: string[] = [];
  const names: string[] = [];
  for (const w of what) {
    if (w.includes('/')) {
      // svc/kube-dns: a kind and a name.
      const [k, n] = w.split('/', 2);
      kinds.push(kubectlKind(k));
      if (n) names.push(n);
    } else if (kinds.length === 0) kinds.push(...w.split(',').filter(Boolean).map(kubectlKind));
    else names.push(w);
  }
  return { verb, kinds: [...new Set(kinds)], names, selected, ...(namespace ? { namespace } : {}), ...(output ? { output } : {}) };
}

/** What an `iptables`/`ip6tables` command lists. */
export interface IptablesRequest {
  readonly family: 4 | 6;
  /** `-t TABLE`; undefined: not given (iptables then lists `filter`). */
  readonly table?: string;
  /** `-L` (listing) or `-S` (rules as iptables-save writes them); undefined for other commands. */
  readonly action?: 'list' | 'rules' | 'save';
  /** The chain named after -L/-S: only that chain is shown. */
  readonly chain?: string;
  readonly numeric: boolean;
  readonly verbose: boolean;
  readonly exact: boolean;
  readonly lineNumbers: boolean;
}

export function iptablesRequest(cmd: PastedCommand): IptablesRequest | undefined {
  const family = cmd.tool === 'ip6tables' || cmd.tool === 'ip6tables-save' ? 6 : cmd.tool === 'iptables' || cmd.tool === 'iptables-save' ? 4 : undefined;
  if (family === undefined) return undefined;
  let table: string | undefined;
  let action: IptablesRequest['action'] = cmd.tool.endsWith('-save') ? 'save' : undefined;
  let chain: string | undefined;
  let numeric = false;
  let verbose = false;
  let exact = false;
  let lineNumbers = false;
  const a = cmd.args;
  for (let i = 0; i < a.length; i++) {
    const w = a[i];
    if (w === '-t' || w === '--table') table = a[++i];
    else if (w.startsWith('--table=')) table = w.slice(8);
    else if (w === '--list' || w === '--list-rules') {
      action = w === '--list' ? 'list' : 'rules';
      if (a[i + 1] && !a[i + 1].startsWith('-')) chain = a[++i];
    } else if (w === '--numeric') numeric = true;
    else if (w === '--verbose') verbose = true;
    else if (w === '--exact') exact = true;
    else if (w === '--line-numbers') lineNumbers = true;
    else if (/^-[a-zA-Z]+$/.test(w)) {
      // A cluster of short flags: -nvL, -vnxL, -Lnv, -S.
      for (const c of w.slice(1)) {
        if (c === 'n') numeric = true;
        else if (c === 'v') verbose = true;
        else if (c === 'x') exact = true;
        else if (c === 'L') action = 'list';
        else if (c === 'S') action = 'rules';
      }
      // `-vnt nat`: a cluster ending in t takes the table; one with L or S may be followed by a chain.
      if (w.endsWith('t')) table = a[++i];
      else if ((w.includes('L') || w.includes('S')) && a[i + 1] && !a[i + 1].startsWith('-') && /^[A-Za-z0-9_.-]+$/.test(a[i + 1])) chain = a[++i];
    }
  }
  return { family, ...(table ? { table } : {}), ...(action ? { action } : {}), ...(chain ? { chain } : {}), numeric, verbose, exact, lineNumbers };
}
