/**
 * The nft view of iptables-nft's tables → the iptables model. On current distributions iptables
 * is iptables-nft: kube-proxy's iptables mode writes `table ip nat`/`table ip filter` in nf_tables,
 * and `nft list ruleset` prints them in nft syntax. Most of a kube-proxy rule has a native nft
 * form (`ip daddr`, `tcp dport`, `fib daddr type local`, `meta mark & …`, `dnat to`, iptables-nft
 * ≥ 1.8.8's `meta random & 2147483647 < N` for `-m statistic`); what has none is printed as
 * `xt match NAME` / `xt target NAME` with its options hidden, and `-m comment` appears only where
 * nft prints the rule's userdata (`comment "…"`).
 *
 * Reading those tables as iptables tables lets the one resolver and the one chain machine answer
 * from them. Nothing is invented: an `xt` match becomes a match whose options are not in the
 * evidence (`residue`), so the trace asks it as an undecided fact and the resolver says what it
 * cannot know (shares, affinity); an `xt` target is an extension whose parameters are unknown.
 * A rule keeps its nft text and line as its evidence.
 */
import type { NftChain, NftExpr, NftOperand, NftRule, NftRuleset, NftTable } from '../model/nft.js';
import { operandText, rightValues, nftNumber } from '../model/nft.js';
import { BUILTIN_CHAINS, rulesetOfTables, type Chain, type Match, type NatTo, type PortRange, type Rule, type Ruleset, type Table, type Target } from '../model/netfilter.js';
import { parseCidr } from '../model/addr.js';

const IPTABLES_TABLES = new Set(Object.keys(BUILTIN_CHAINS));
/** Targets that end a rule's evaluation (as iptables-rule.ts reads `-j NAME`). */
const TERMINATING = new Set(['TPROXY', 'NETMAP', 'SYNPROXY', 'NFQUEUE', 'REDIRECT', 'DNAT', 'SNAT', 'MASQUERADE', 'REJECT', 'QUEUE', 'CLUSTERIP']);
/** `meta random & 2147483647 < N`: iptables-nft's native `-m statistic --mode random --probability N/2^31`. */
const RANDOM_SCALE = 2 ** 31;

const family = (t: NftTable): 4 | 6 | undefined => (t.family === 'ip' ? 4 : t.family === 'ip6' ? 6 : t.family === '' ? 4 : undefined);

/** A pasted chain without its `table` line: nat when it NATs or is one of kube-proxy's nat chains, else filter. */
function inferTable(t: NftTable): string {
  for (const c of t.chains) {
    if (/^KUBE-(SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|POSTROUTING)-?/.test(c.name) || c.name === 'POSTROUTING') return 'nat';
    if (c.name === 'KUBE-SERVICES' && c.rules.some((r) => r.exprs.some((e) => e.kind === 'verdict' && e.chain?.startsWith('KUBE-SVC-')))) return 'nat';
    if (c.rules.some((r) => r.exprs.some((e) => e.kind === 'dnat' || e.kind === 'masquerade' || e.kind === 'snat'))) return 'nat';
  }
  return 'filter';
}

/** Is this nft table one iptables-nft wrote for `family`, and under which iptables table name? */
function iptablesName(t: NftTable, fam: 4 | 6): string | undefined {
  if (!t.fromIptablesNft || family(t) !== fam) return undefined;
  if (t.implicit || t.name === '') return inferTable(t);
  return IPTABLES_TABLES.has(t.name) ? t.name : undefined;
}

/**
 * The iptables rulesets the nft listings show for `fam`: one per listing holding iptables-nft
 * tables of that family; undefined when there are none.
 */
export function iptablesViewOf(n: NftRuleset, fam: 4 | 6): Ruleset | undefined {
  const tables: Table[] = [];
  for (const t of n.tables) {
    const name = iptablesName(t, fam);
    if (name === undefined || tables.some((x) => x.name === name)) continue;
    tables.push(tableOf(t, name));
  }
  if (tables.length === 0) return undefined;
  return { ...rulesetOfTables(tables[0].file, fam, 'nf_tables', tables), viewOf: 'nft' };
}

function tableOf(t: NftTable, name: string): Table {
  const builtins = BUILTIN_CHAINS[name] ?? [];
  const chains = t.chains.map((c): Chain => chainOf(c, name, t.file, builtins.includes(c.name) && c.hook !== undefined));
  return {
    name,
    file: t.file,
    line: t.line,
    endLine: t.endLine,
    // A listing cut before the table's closing brace is a truncated table (see chainsPastCut).
    committed: !t.truncated,
    implicit: Boolean(t.implicit),
    chains,
    chainsByName: new Map(chains.map((c) => [c.name, c])),
  };
}

function chainOf(c: NftChain, table: string, file: string, builtin: boolean): Chain {
  const rules = c.rules.map((r, i) => ruleOf(r, table, c.name, i, file));
  return { table, name: c.name, builtin, policy: builtin ? (c.policy ?? 'accept').toUpperCase() : '-', line: c.line, rules };
}

function ruleOf(r: NftRule, table: string, chain: string, index: number, file: string): Rule {
  const matches: Match[] = [];
  let target: Target | undefined;
  const comments = r.comment !== undefined ? [r.comment] : [];
  for (const c of comments) matches.push({ kind: 'comment', text: c });
  const setTarget = (t: Target) => {
    // An iptables rule has one target; iptables-nft writes one verdict or statement per rule.
    if (!target || target.kind === 'extension' || target.kind === 'log') target = t;
  };
  for (const e of r.exprs) {
    const m = matchOf(e);
    if (m) {
      if (!matches.some((x) => x.kind === 'protocol' && m.kind === 'protocol' && x.protocol === m.protocol && x.negated === m.negated)) matches.push(m);
      continue;
    }
    const t = targetOf(e);
    if (t) setTarget(t);
  }
  return {
    table,
    chain,
    index,
    file,
    line: r.line,
    column: r.column,
    raw: r.raw,
    ...(r.counter ? { counters: { packets: String(r.counter.packets), bytes: String(r.counter.bytes) } } : {}),
    items: [],
    matches,
    ...(target ? { target } : {}),
    ...(comments.length ? { comment: comments[0] } : {}),
    comments,
  };
}

const unsupported = (text: string, module = ''): Match => ({ kind: 'unsupported', module, text, known: false });

function matchText(e: Extract<NftExpr, { kind: 'match' }>): string {
  const right = e.right.kind === 'value' ? e.right.text : e.right.kind === 'list' ? e.right.items.join(',') : operandText(e.right);
  return `${operandText(e.left)}${e.op === 'implicit' ? '' : ` ${e.op}`} ${right}`;
}

function portRanges(values: readonly string[]): PortRange[] | undefined {
  const out: PortRange[] = [];
  for (const v of values) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(v.trim());
    if (!m) return undefined;
    out.push({ from: Number(m[1]), to: Number(m[2] ?? m[1]) });
  }
  return out;
}

/** nft's interface wildcard `eth*` is iptables' `eth+`. */
const ifaceName = (v: string) => v.replace(/^"|"$/g, '').replace(/\*$/, '+');

/** A match expression as an iptables match; an `xt match` as residue; undefined for statements. */
function matchOf(e: NftExpr): Match | undefined {
  if (e.kind === 'xt') return e.match ? { kind: 'unsupported', module: e.name, text: `xt match ${e.name}`, known: false, residue: true } : undefined;
  if (e.kind === 'limit') return { kind: 'unsupported', module: 'limit', text: e.text, known: true };
  if (e.kind !== 'match') return undefined;
  const negated = e.op === '!=';
  const plain = e.op === 'implicit' || e.op === '==' || e.op === '!=';
  const values = rightValues(e.right);
  const one = values && values.length === 1 ? values[0] : undefined;
  const l = e.left;
  if (plain && one !== undefined && ((l.kind === 'meta' && l.key === 'l4proto') || (l.kind === 'payload' && ((l.protocol === 'ip' && l.field === 'protocol') || (l.protocol === 'ip6' && l.field === 'nexthdr')))))
    return { kind: 'protocol', negated, protocol: one };
  if (plain && one !== undefined && l.kind === 'payload' && (l.protocol === 'ip' || l.protocol === 'ip6') && (l.field === 'saddr' || l.field === 'daddr')) {
    const cidr = parseCidr(one);
    return { kind: 'address', dir: l.field === 'saddr' ? 'src' : 'dst', negated, text: one, ...(cidr ? { cidr } : {}) };
  }
  if (plain && values && l.kind === 'payload' && ['tcp', 'udp', 'sctp', 'th', 'udplite', 'dccp'].includes(l.protocol) && (l.field === 'dport' || l.field === 'sport')) {
    const ranges = portRanges(values);
    if (ranges) return { kind: 'port', module: values.length > 1 ? 'multiport' : l.protocol, dir: l.field === 'sport' ? 'src' : 'dst', negated, ranges };
  }
  if (plain && one !== undefined && l.kind === 'meta' && (l.key === 'iifname' || l.key === 'oifname')) return { kind: 'interface', dir: l.key === 'iifname' ? 'in' : 'out', negated, name: ifaceName(one) };
  if (plain && values && l.kind === 'fib' && l.result === 'type' && (l.flags.includes('saddr') || l.flags.includes('daddr'))) {
    const limitIface = l.flags.includes('iif') ? 'in' : l.flags.includes('oif') ? 'out' : undefined;
    return { kind: 'addrtype', dir: l.flags.includes('saddr') ? 'src' : 'dst', negated, types: values.map((v) => v.toUpperCase()), ...(limitIface ? { limitIface } : {}) };
  }
  if (plain && values && l.kind === 'ct' && l.key === 'state' && !l.dir) return { kind: 'ctstate', negated, states: values.map((v) => v.toUpperCase()) };
  // `meta mark & MASK == VALUE`, `meta mark VALUE`; `ct mark …` likewise.
  const markOf = (o: NftOperand): { connmark: boolean; mask: number } | undefined => {
    if (o.kind === 'meta' && o.key === 'mark') return { connmark: false, mask: 0xffffffff };
    if (o.kind === 'ct' && o.key === 'mark' && !o.dir) return { connmark: true, mask: 0xffffffff };
    if (o.kind === 'binop' && o.op === '&' && o.right.kind === 'value') {
      const inner = markOf(o.left);
      const mask = nftNumber(o.right.text);
      return inner && inner.mask === 0xffffffff && mask !== undefined ? { connmark: inner.connmark, mask } : undefined;
    }
    return undefined;
  };
  const mark = plain && one !== undefined ? markOf(l) : undefined;
  const markValue = one !== undefined ? nftNumber(one) : undefined;
  if (mark && markValue !== undefined) return { kind: 'mark', connmark: mark.connmark, negated, value: markValue >>> 0, mask: mark.mask >>> 0 };
  // iptables-nft's statistic: `meta random & 2147483647 < N` holds with probability N / 2^31.
  if (e.op === '<' && l.kind === 'binop' && l.op === '&' && l.left.kind === 'meta' && l.left.key === 'random' && l.right.kind === 'value' && nftNumber(l.right.text) === RANDOM_SCALE - 1 && one !== undefined) {
    const n = nftNumber(one);
    if (n !== undefined) return { kind: 'statistic', mode: 'random', probability: Math.min(1, n / RANDOM_SCALE), negated: false };
  }
  return unsupported(matchText(e), l.kind === 'payload' ? l.protocol : l.kind);
}

function natTo(e: Extract<NftExpr, { kind: 'dnat' | 'snat' }>): NatTo[] {
  if (!e.to) return [];
  const addr = e.to.addr?.replace(/^\[|\]$/g, '');
  const [ip, ipEnd] = addr ? addr.split('-') : [];
  const [port, portEnd] = e.to.port ? e.to.port.split('-').map(Number) : [];
  return [{ text: e.to.text, ...(ip ? { ip } : {}), ...(ipEnd ? { ipEnd } : {}), ...(port !== undefined && Number.isFinite(port) ? { port } : {}), ...(portEnd !== undefined && Number.isFinite(portEnd) ? { portEnd } : {}) }];
}

/**
 * `meta mark set mark or 0x4000` and the like as MARK --set-xmark value/mask, where
 * mark = (mark & ~mask) ^ value: `or V` is V/V, `xor V` is V/0, `and A` is 0/~A, `and A xor V` is V/~A,
 * a constant V is V/0xffffffff. Undefined for shapes MARK cannot write.
 */
function xmarkOf(expr: NftOperand, self: 'meta' | 'ct'): { value: number; mask: number } | undefined {
  const isSelf = (o: NftOperand) => (o.kind === 'meta' && o.key === 'mark' && self === 'meta') || (o.kind === 'ct' && o.key === 'mark' && self === 'ct') || (o.kind === 'selector' && o.words.join(' ') === 'mark');
  if (expr.kind === 'value') {
    const v = nftNumber(expr.text);
    return v === undefined ? undefined : { value: v >>> 0, mask: 0xffffffff };
  }
  if (expr.kind !== 'binop' || expr.right.kind !== 'value') return undefined;
  const v = nftNumber(expr.right.text);
  if (v === undefined) return undefined;
  if (isSelf(expr.left)) {
    if (expr.op === '|') return { value: v >>> 0, mask: v >>> 0 };
    if (expr.op === '^') return { value: v >>> 0, mask: 0 };
    if (expr.op === '&') return { value: 0, mask: ~v >>> 0 };
    return undefined;
  }
  if (expr.op === '^' && expr.left.kind === 'binop' && expr.left.op === '&' && isSelf(expr.left.left) && expr.left.right.kind === 'value') {
    const a = nftNumber(expr.left.right.text);
    return a === undefined ? undefined : { value: v >>> 0, mask: ~a >>> 0 };
  }
  return undefined;
}

/** A verdict or statement as an iptables target; undefined for counters and matches. */
function targetOf(e: NftExpr): Target | undefined {
  switch (e.kind) {
    case 'verdict':
      if (e.verdict === 'jump' || e.verdict === 'goto') return e.chain ? { kind: e.verdict, chain: e.chain } : undefined;
      if (e.verdict === 'continue') return undefined;
      return { kind: e.verdict };
    case 'dnat':
    case 'snat': {
      const to = natTo(e);
      if (e.map || to.length === 0) return { kind: 'extension', name: e.kind.toUpperCase(), terminating: true };
      const random = e.flags.includes('random');
      const persistent = e.flags.includes('persistent');
      return e.kind === 'dnat' ? { kind: 'dnat', to, random, persistent } : { kind: 'snat', to, random, randomFully: e.flags.includes('fully-random'), persistent };
    }
    case 'masquerade':
      return { kind: 'masquerade', randomFully: e.flags.includes('fully-random'), random: e.flags.includes('random'), ...(e.to?.port ? { toPorts: e.to.port } : {}) };
    case 'redirect':
      return { kind: 'redirect', ...(e.to?.port ? { toPorts: e.to.port } : {}) };
    case 'reject':
      return { kind: 'reject', ...(e.with !== undefined ? { with: e.with } : {}) };
    case 'mark-set': {
      const x = xmarkOf(e.expr, e.target);
      return x ? { kind: 'mark', connmark: e.target === 'ct', ...x } : { kind: 'extension', name: e.target === 'ct' ? 'CONNMARK' : 'MARK', terminating: false };
    }
    case 'log':
      return { kind: 'log', ...(e.prefix !== undefined ? { prefix: e.prefix } : {}) };
    case 'xt':
      // `xt target NAME`: the target is known by name only; its parameters are not in the listing.
      return e.match ? undefined : { kind: 'extension', name: e.name, terminating: TERMINATING.has(e.name), residue: true };
    case 'statement':
      return { kind: 'extension', name: e.name, terminating: false };
    default:
      return undefined;
  }
}
