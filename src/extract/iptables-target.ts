/**
 * The typed reading of a rule's target (`-j NAME [--opt …]`, `-g NAME`), shared by the grammar's
 * reading of a rule (iptables-rule.ts) and the token-free one of kube-proxy's lines
 * (iptables-kube-lines.ts). Targets are read-only data, so rules share equal ones.
 */
import { unquote, type OptionSyntax } from '../../grammars/common/iptables-syntax.js';
import type { Target } from '../model/netfilter.js';
import { isTargetExtension } from '../model/iptables-targets.js';
import { clearSharedMatches } from './iptables-match.js';
import { parseMark, parseNatTo, parseNumber } from './iptables-values.js';

const TERMINATING_EXTENSIONS = new Set(['TPROXY', 'NETMAP', 'SYNPROXY', 'NFQUEUE', 'REDIRECT', 'DNAT', 'SNAT', 'MASQUERADE', 'REJECT', 'QUEUE', 'CLUSTERIP']);

// A big dump has 100k jumps to KUBE-MARK-MASQ and as many ACCEPTs: one object each is enough.
const ACCEPT: Target = { kind: 'accept' };
const DROP: Target = { kind: 'drop' };
const RETURN: Target = { kind: 'return' };
const QUEUE: Target = { kind: 'queue' };
const JUMPS = new Map<string, Target>();
const GOTOS = new Map<string, Target>();
const SHARED_LIMIT = 1 << 16;

/** Forget the shared jump targets and matches (after each dump, so they never keep its text alive). */
export function clearSharedTargets(): void {
  JUMPS.clear();
  GOTOS.clear();
  clearSharedMatches();
}

function jumpTo(chain: string, goto: boolean): Target {
  // Per-Service chain names are long and used once or twice: not worth a shared copy.
  if (chain.length > 16) return { kind: goto ? 'goto' : 'jump', chain };
  const cache = goto ? GOTOS : JUMPS;
  let t = cache.get(chain);
  if (t === undefined) {
    t = { kind: goto ? 'goto' : 'jump', chain };
    if (cache.size < SHARED_LIMIT) cache.set(chain, t);
  }
  return t;
}

function findOption(options: readonly OptionSyntax[], name: string): OptionSyntax | undefined {
  for (let i = 0; i < options.length; i++) if (options[i].name === name) return options[i];
  return undefined;
}

/**
 * The `-j NAME`/`-g NAME` target when NAME is a chain (the reader knows its chains and may hand
 * out one shared target per chain), else undefined.
 */
export type ChainTarget = (name: string, goto: boolean) => Target | undefined;

/** A jump or goto to a chain known only by its name (shared for short names). */
export function chainJump(name: string, goto: boolean): Target {
  return jumpTo(name, goto);
}

/** Is this target name something other than a chain (a standard verdict or a target extension iptables knows)? */
export function looksLikeExtensionTarget(name: string): boolean {
  return isTargetExtension(name);
}

/** MARK/CONNMARK as the kernel's (value, mask) (xt_MARK: `--set-mark V/M` is `--set-xmark V/(M|V)`). */
function markTarget(name: string, options: readonly OptionSyntax[]): Target {
  const connmark = name === 'CONNMARK';
  const x = findOption(options, '--set-xmark');
  if (x) {
    const m = parseMark(x.args[0] ?? '');
    if (m) return { kind: 'mark', connmark, ...m };
  }
  const set = findOption(options, '--set-mark');
  if (set) {
    const m = parseMark(set.args[0] ?? '');
    if (m) return { kind: 'mark', connmark, value: m.value, mask: (m.mask | m.value) >>> 0 };
  }
  const or = findOption(options, '--or-mark');
  if (or) {
    const v = parseNumber(or.args[0]);
    if (v !== undefined) return { kind: 'mark', connmark, value: v >>> 0, mask: v >>> 0 };
  }
  const and = findOption(options, '--and-mark');
  if (and) {
    const v = parseNumber(and.args[0]);
    if (v !== undefined) return { kind: 'mark', connmark, value: 0, mask: ~v >>> 0 };
  }
  const xor = findOption(options, '--xor-mark');
  if (xor) {
    const v = parseNumber(xor.args[0]);
    if (v !== undefined) return { kind: 'mark', connmark, value: v >>> 0, mask: 0 };
  }
  return { kind: 'extension', name, terminating: false };
}

/** DNAT, SNAT, MASQUERADE, REDIRECT. */
function natTarget(name: string, options: readonly OptionSyntax[]): Target | undefined {
  const has = (n: string) => findOption(options, n) !== undefined;
  switch (name) {
    case 'DNAT':
      return {
        kind: 'dnat',
        to: options.filter((o) => o.name === '--to-destination' || o.name === '--to').map((o) => parseNatTo(o.args[0] ?? '')),
        random: has('--random'),
        persistent: has('--persistent'),
      };
    case 'SNAT':
      return {
        kind: 'snat',
        to: options.filter((o) => o.name === '--to-source' || o.name === '--to').map((o) => parseNatTo(o.args[0] ?? '')),
        random: has('--random'),
        randomFully: has('--random-fully'),
        persistent: has('--persistent'),
      };
    case 'MASQUERADE': {
      const ports = findOption(options, '--to-ports')?.args[0];
      return { kind: 'masquerade', randomFully: has('--random-fully'), random: has('--random'), ...(ports ? { toPorts: ports } : {}) };
    }
    case 'REDIRECT': {
      const ports = findOption(options, '--to-ports')?.args[0];
      return ports ? { kind: 'redirect', toPorts: ports } : { kind: 'redirect' };
    }
  }
  return undefined;
}

export function interpretTarget(name: string, options: readonly OptionSyntax[], goto: boolean, chainTarget: ChainTarget): Target {
  const jump = chainTarget(name, goto);
  if (jump !== undefined) return jump;
  switch (name) {
    case 'ACCEPT':
      return ACCEPT;
    case 'DROP':
      return DROP;
    case 'RETURN':
      return RETURN;
    case 'QUEUE':
      return QUEUE;
    case 'REJECT': {
      const w = findOption(options, '--reject-with')?.args[0];
      return w ? { kind: 'reject', with: w } : { kind: 'reject' };
    }
    case 'MARK':
    case 'CONNMARK':
      return markTarget(name, options);
    case 'LOG':
    case 'NFLOG':
    case 'ULOG': {
      const p = findOption(options, '--log-prefix') ?? findOption(options, '--nflog-prefix') ?? findOption(options, '--ulog-prefix');
      return p ? { kind: 'log', prefix: unquote(p.args[0] ?? '') } : { kind: 'log' };
    }
  }
  return natTarget(name, options) ?? { kind: 'extension', name, terminating: TERMINATING_EXTENSIONS.has(name) };
}
