import { appendAll } from '../source/index.js';
/**
 * What kube-proxy itself pipes into `iptables-restore --noflush` for a node (issue 14): only its
 * own chains of the filter and nat tables, each declared `:CHAIN - [0:0]` (no built-in chain,
 * no other program's rule), and every rule written in kube-proxy's option order rather than
 * the canonical order iptables-save prints. Source: kubernetes pkg/proxy/iptables/proxier.go
 * (syncProxyRules, writeServiceToEndpointRules) and pkg/proxy/ipvs/proxier.go
 * (writeIptablesRules): rules are built as
 *   -A CHAIN -m comment --comment C [-m recent …|-m statistic …|-m set …] -m PROTO -p PROTO
 *            -d VIP --dport PORT [-m addrtype …] [! -s CIDR] -j TARGET …
 * with bare addresses (`-d 10.96.0.10`, no `/32`), probabilities printed `%0.10f`, and the
 * masquerade marks as `--or-mark 0x4000` / `--xor-mark 0x4000`.
 *
 * The payload is written from the node's iptables-save text (the generator's, so the same
 * rules by construction): each kube-proxy rule re-ordered, nothing else.
 */

/** Chains named KUBE-… that kubelet (or kube-proxy outside its restore payload) owns. */
const NOT_IN_PAYLOAD = new Set(['KUBE-IPTABLES-HINT', 'KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY', 'KUBE-FIREWALL', 'KUBE-MARK-DROP']);

/** Tables kube-proxy restores, in the order it writes them. */
const TABLES = ['filter', 'nat'];

export function isKubeProxyPayloadChain(name: string): boolean {
  return name.startsWith('KUBE-') && !NOT_IN_PAYLOAD.has(name);
}

/** The restore payload of the node whose `iptables-save` / `ip6tables-save` is `saveText`. */
export function kubeProxyRestorePayload(saveText: string): string {
  const chains = new Map<string, string[]>();
  const rules = new Map<string, string[]>();
  let table: string | undefined;
  for (const line of saveText.split('\n')) {
    if (line.startsWith('*')) {
      table = line.slice(1);
      chains.set(table, []);
      rules.set(table, []);
    } else if (table !== undefined && line.startsWith(':')) {
      const name = line.slice(1).split(' ')[0];
      if (isKubeProxyPayloadChain(name)) chains.get(table)!.push(name);
    } else if (table !== undefined && line.startsWith('-A ')) {
      const chain = line.split(' ')[1];
      if (isKubeProxyPayloadChain(chain)) rules.get(table)!.push(kubeProxyOrder(line));
    }
  }
  const out: string[] = [];
  for (const t of TABLES) {
    const declared = chains.get(t);
    if (declared === undefined || declared.length === 0) continue;
    out.push(`*${t}`);
    for (const c of declared) out.push(`:${c} - [0:0]`);
    appendAll(out, rules.get(t)!);
    out.push('COMMIT');
  }
  return out.join('\n') + '\n';
}

/** The words of a line the generator printed: bare words and "quoted strings" (with \" inside). */
function words(line: string): string[] {
  return line.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

interface Parsed {
  chain: string;
  generic: Map<string, string[]>;
  modules: { name: string; words: string[] }[];
  target: string[];
}

/** A canonical rule (generic options, then `-m` blocks, then `-j`), split into its parts. */
function parseCanonical(line: string): Parsed {
  const w = words(line);
  const parsed: Parsed = { chain: w[1], generic: new Map(), modules: [], target: [] };
  let i = 2;
  let bang = false;
  while (i < w.length) {
    const word = w[i];
    if (word === '!') {
      bang = true;
      i++;
      continue;
    }
    if (word === '-m') {
      const block = { name: w[i + 1], words: [] as string[] };
      i += 2;
      while (i < w.length && w[i] !== '-m' && w[i] !== '-j' && w[i] !== '-g') block.words.push(w[i++]);
      parsed.modules.push(block);
    } else if (word === '-j' || word === '-g') {
      parsed.target = w.slice(i);
      break;
    } else {
      parsed.generic.set(word, [...(bang ? ['!'] : []), word, w[i + 1]]);
      i += 2;
    }
    bang = false;
  }
  return parsed;
}

/** `10.96.0.10/32` → `10.96.0.10`: kube-proxy writes single addresses without a prefix. */
function bare(address: string): string {
  return address.replace(/\/(32|128)$/, '');
}

function generic(p: Parsed, option: string): string[] {
  const g = p.generic.get(option);
  if (g === undefined) return [];
  return g.map((x, k) => (k === g.length - 1 && (option === '-s' || option === '-d') ? bare(x) : x));
}

/** kube-proxy prints `%0.10f` of 1/n; iptables-save printed the kernel's value with 11 digits. */
function kubeProxyProbability(saved: string): string {
  const p = Number(saved);
  const n = Math.round(1 / p);
  return Math.abs(1 / n - p) < 1e-9 ? (1 / n).toFixed(10) : p.toFixed(10);
}

function moduleWords(m: { name: string; words: string[] }): string[] {
  const ws = m.name === 'statistic' ? m.words.map((x, k) => (m.words[k - 1] === '--probability' ? kubeProxyProbability(x) : x)) : m.words;
  return ['-m', m.name, ...ws];
}

/** MARK as kube-proxy writes it: `--or-mark V` (saved `V/V`), `--xor-mark V` (saved `V/0x0`). */
function targetWords(target: string[]): string[] {
  if (target[1] !== 'MARK' || target[2] !== '--set-xmark') return target;
  const [value, mask] = target[3].split('/');
  if (mask === value) return ['-j', 'MARK', '--or-mark', value];
  if (/^0x0+$/.test(mask)) return ['-j', 'MARK', '--xor-mark', value];
  return target;
}

/** One canonical kube-proxy rule in the order proxier.go writes its words. */
export function kubeProxyOrder(line: string): string {
  const p = parseCanonical(line);
  const protocol = p.generic.get('-p')?.at(-1);
  const protoModule = p.modules.find((m) => m.name === protocol);
  const comment = p.modules.filter((m) => m.name === 'comment');
  const addrtype = p.modules.filter((m) => m.name === 'addrtype');
  const others = p.modules.filter((m) => m.name !== 'comment' && m.name !== 'addrtype' && m !== protoModule);
  const out = ['-A', p.chain];
  for (const m of comment) appendAll(out, moduleWords(m));
  for (const m of others) appendAll(out, moduleWords(m));
  if (protocol !== undefined) {
    if (protoModule !== undefined) out.push('-m', protocol);
    appendAll(out, generic(p, '-p'));
    appendAll(out, generic(p, '-d'));
    if (protoModule !== undefined) appendAll(out, protoModule.words);
  }
  for (const m of addrtype) appendAll(out, moduleWords(m));
  if (protocol === undefined) appendAll(out, generic(p, '-d'));
  appendAll(out, generic(p, '-i'));
  appendAll(out, generic(p, '-o'));
  appendAll(out, generic(p, '-s'));
  appendAll(out, targetWords(p.target));
  return out.join(' ');
}
