/**
 * The hooks in the kernel's order: which base chains (iptables tables, nft base chains) a packet
 * meets at each hook, in priority order, and running a set of branches through them. When the
 * evidence holds kube-proxy's dispatch chain or map but not the hook that reaches it, the stage
 * starts there and the trace says so.
 */
import { lookupRoute } from '../model/route.js';
import { formatHostPort, formatIp } from '../model/addr.js';
import { tableShownWhole, type Chain, type Ruleset } from '../model/netfilter.js';
import type { NftChain, NftRule, NftTable } from '../model/nft.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { unknownHere, walkChain, type Branch, type Entry, type StepRef, type TableResult, type WalkEnv } from './chain-machine.js';
import { isLocalAddress, type TraceContext } from './context.js';
import { chainRef, iptablesDialect } from './iptables.js';
import type { PathState } from './match.js';
import { nftBaseChains, nftDialect, nftTableName } from './nft.js';
import type { ScenarioRun } from './scenario.js';
import type { TraceAssumption } from './types.js';

export type Hook = PathState['hook'];

/** iptables tables at each hook with their priorities (netfilter's NF_IP_PRI_*). */
const IPTABLES_STAGES: Record<Hook, readonly { table: string; priority: number }[]> = {
  PREROUTING: [
    { table: 'raw', priority: -300 },
    { table: 'mangle', priority: -150 },
    { table: 'nat', priority: -100 },
  ],
  OUTPUT: [
    { table: 'raw', priority: -300 },
    { table: 'mangle', priority: -150 },
    { table: 'nat', priority: -100 },
    { table: 'filter', priority: 0 },
    { table: 'security', priority: 50 },
  ],
  INPUT: [
    { table: 'mangle', priority: -150 },
    { table: 'filter', priority: 0 },
    { table: 'security', priority: 50 },
    { table: 'nat', priority: 100 },
  ],
  FORWARD: [
    { table: 'mangle', priority: -150 },
    { table: 'filter', priority: 0 },
    { table: 'security', priority: 50 },
  ],
  POSTROUTING: [
    { table: 'mangle', priority: -150 },
    { table: 'nat', priority: 100 },
  ],
};

/**
 * kube-proxy's dispatch chains and the built-in chains that jump to them (iptables mode). When a
 * table holds the dispatch chain but not the built-in chain at all (a grep, a restore payload),
 * the walk starts at the dispatch chain and says so.
 */
const IPTABLES_DISPATCH: Partial<Record<string, Partial<Record<Hook, string>>>> = {
  nat: { PREROUTING: 'KUBE-SERVICES', OUTPUT: 'KUBE-SERVICES' },
  filter: { FORWARD: 'KUBE-SERVICES', OUTPUT: 'KUBE-SERVICES' },
};

const NFT_HOOK: Record<Hook, string> = { PREROUTING: 'prerouting', INPUT: 'input', FORWARD: 'forward', OUTPUT: 'output', POSTROUTING: 'postrouting' };

/** One base chain at a hook: which table, its priority, and how to walk a branch through it. */
interface Stage {
  readonly priority: number;
  readonly nat: boolean;
  readonly walk: (b: Branch, env: WalkEnv) => TableResult[];
}

/** Where kube-proxy's nftables dispatch starts when no base chain of its table reaches it. */
function nftAssumedEntry(t: NftTable, hook: Hook): { chain: NftChain; startKind: 'chain' | 'map'; start: string } | undefined {
  if (hook !== 'PREROUTING' && hook !== 'OUTPUT') return undefined;
  // Any hooked chain of kube-proxy's dispatch hooks means the table is whole there: no assumption.
  if (t.chains.some((c) => c.hook === 'prerouting' || c.hook === 'output')) return undefined;
  const services = t.chains.find((c) => c.name === 'services');
  if (services) return { chain: services, startKind: 'chain', start: 'services' };
  const map = t.sets.find((s) => s.name === 'service-ips');
  if (!map) return undefined;
  // The rule kube-proxy's `services` chain holds: `ip daddr . meta l4proto . th dport vmap @service-ips`.
  const proto = t.family === 'ip6' ? 'ip6' : 'ip';
  const rule: NftRule = {
    exprs: [{ kind: 'vmap', key: { kind: 'concat', parts: [{ kind: 'payload', protocol: proto, field: 'daddr' }, { kind: 'meta', key: 'l4proto' }, { kind: 'payload', protocol: 'th', field: 'dport' }] }, map: { kind: 'ref', name: 'service-ips' }, column: 0 }],
    raw: `${proto} daddr . meta l4proto . th dport vmap @service-ips`,
    line: map.line,
    column: 0,
  };
  return { chain: { name: 'services', rules: [rule], line: map.line }, startKind: 'map', start: 'service-ips' };
}

/** Every base chain at a hook, iptables tables and nft chains together, in priority order. */
export function stagesAt(snapshot: NodeSnapshot, rs: Ruleset | undefined, hook: Hook, family: 4 | 6, ctx: TraceContext, assumed: TraceAssumption[]): Stage[] {
  const stages: Stage[] = [];
  if (rs) {
    for (const s of IPTABLES_STAGES[hook]) {
      const table = rs.tables.find((t) => t.name === s.table);
      if (!table) {
        // Listings (`iptables -t filter -L`) show the tables they were asked for: a nat table they do
        // not show is not an empty one, and nat is where a Service's packet is sent on (issue 30).
        const listing = rs.tables.find((t) => t.coverage);
        if (listing && s.table === 'nat' && IPTABLES_DISPATCH.nat?.[hook]) {
          const reason = { code: 'chain-not-listed', chain: hook, table: 'nat', file: listing.file } as const;
          const ref: StepRef = { dialect: 'iptables', table: 'nat', chain: hook, file: listing.file, line: null };
          stages.push({ priority: s.priority, nat: true, walk: (b) => [unknownHere(b, ref, reason)] });
        }
        continue;
      }
      const nat = s.table === 'nat';
      const builtin = table.chainsByName.get(hook);
      const dispatchName = IPTABLES_DISPATCH[s.table]?.[hook];
      // Only when no built-in chain that kube-proxy hooks there is in the table at all (a grep, a
      // restore payload): a declared chain without the jump is a dump that really lacks it.
      const hooks = Object.keys(IPTABLES_DISPATCH[s.table] ?? {});
      const fragment = !hooks.some((h) => table.chainsByName.has(h));
      const dispatch = fragment && dispatchName ? table.chainsByName.get(dispatchName) : undefined;
      // A grep's table is an inference (or a guess): said as an assumption wherever the walk uses it.
      if (table.implicit && table.inferred) assumed.push({ code: 'table-inferred', file: rs.file, table: table.name, ...table.inferred });
      if (table.coverage?.interfacesHidden && (builtin || dispatch) && !assumed.some((a) => a.code === 'listing-interfaces-hidden' && a.table === table.name)) {
        assumed.push({ code: 'listing-interfaces-hidden', table: table.name, file: table.file });
      }
      if (builtin) {
        const entry: Entry<Chain> = { chain: builtin, policy: builtin.policy === 'DROP' ? 'DROP' : 'ACCEPT', base: 'built-in', policyRef: chainRef(table, builtin, rs.file) };
        stages.push({ priority: s.priority, nat, walk: (b, env) => walkChain(iptablesDialect(table, ctx), entry, b, env) });
      } else if (dispatch && !(s.table === 'filter' && ctx.assumptions.established)) {
        assumed.push({ code: 'entry-assumed', dialect: 'iptables', table: s.table, start: dispatch.name, startKind: 'chain', hook });
        const entry: Entry<Chain> = { chain: dispatch, policy: 'ACCEPT', base: 'assumed-entry', policyRef: chainRef(table, dispatch, rs.file) };
        stages.push({ priority: s.priority, nat, walk: (b, env) => walkChain(iptablesDialect(table, ctx), entry, b, env) });
      } else if (table.coverage && !tableShownWhole(table) && hooks.includes(hook) && !table.chainsByName.has(hook)) {
        // A listing of some chains (`iptables -t nat -L KUBE-SVC-X`): the hook's chain is not shown, so
        // what this table does here is unknown — never "no rule matched".
        const reason = { code: 'chain-not-listed', chain: hook, table: s.table, file: table.file } as const;
        const ref: StepRef = { dialect: 'iptables', table: s.table, chain: hook, file: table.file, line: null };
        stages.push({ priority: s.priority, nat, walk: (b) => [unknownHere(b, ref, reason)] });
      } else if (fragment && nat && dispatchName && !table.chainsByName.has(dispatchName) && table.chainsByName.has('KUBE-NODEPORTS')) {
        // A grep of one NodePort Service (KUBE-NODEPORTS and its KUBE-EXT chain, no KUBE-SERVICES):
        // KUBE-SERVICES sends packets for the node's own addresses there (`--dst-type LOCAL`).
        const nodePorts = table.chainsByName.get('KUBE-NODEPORTS')!;
        assumed.push({ code: 'entry-assumed', dialect: 'iptables', table: s.table, start: nodePorts.name, startKind: 'chain', hook });
        const entry: Entry<Chain> = { chain: nodePorts, policy: 'ACCEPT', base: 'assumed-entry', policyRef: chainRef(table, nodePorts, rs.file) };
        stages.push({
          priority: s.priority,
          nat,
          walk: (b, env) => (ctx.knowsLocal && !isLocalAddress(ctx, b.st.dst) ? [{ branch: b, verdict: 'accept' }] : walkChain(iptablesDialect(table, ctx), entry, b, env)),
        });
      }
    }
  }
  for (const n of snapshot.nft) {
    for (const b of nftBaseChains(n.tables, NFT_HOOK[hook], family)) {
      const entry: Entry<NftChain> = { chain: b.chain, policy: b.chain.policy === 'drop' ? 'DROP' : 'ACCEPT', base: 'base', policyRef: { dialect: 'nft', table: nftTableName(b.table), chain: b.chain.name, file: b.table.file, line: b.chain.line } };
      stages.push({ priority: b.priority, nat: b.chain.type === 'nat', walk: (br, env) => walkChain(nftDialect(b.table, ctx), entry, br, env) });
    }
    for (const t of n.tables) {
      if (t.fromIptablesNft || !(t.family === '' || t.family === 'inet' || t.family === (family === 4 ? 'ip' : 'ip6'))) continue;
      const a = nftAssumedEntry(t, hook);
      if (!a) continue;
      const tableName = nftTableName(t);
      assumed.push({ code: 'entry-assumed', dialect: 'nft', table: tableName, start: a.start, startKind: a.startKind, hook });
      const entry: Entry<NftChain> = { chain: a.chain, policy: 'ACCEPT', base: 'assumed-entry', policyRef: { dialect: 'nft', table: tableName, chain: a.chain.name, file: t.file, line: a.chain.line } };
      // kube-proxy's nat-prerouting / nat-output run at dstnat priority.
      stages.push({ priority: -100, nat: true, walk: (br, env) => walkChain(nftDialect(t, ctx), entry, br, env) });
    }
  }
  return stages.sort((a, b) => a.priority - b.priority);
}

/** The conntrack entry's DNAT binding on a branch (once: the first nat stage of the hook). */
function applyPin(b: Branch, pin: NonNullable<TraceContext['assumptions']['pinnedTo']>): void {
  const moved = pin.ip.family === b.st.family && (pin.ip.value !== b.st.dst.value || (pin.port !== undefined && pin.port !== b.st.dport));
  if (moved) {
    b.st.dst = pin.ip;
    if (pin.port !== undefined) b.st.dport = pin.port;
    b.st.dnatDone = true;
    b.claimed = true;
  }
  b.steps.push({ dialect: 'kernel', table: 'conntrack', chain: 'entry', rule: pin.line, file: pin.file, code: 'conntrack-nat', to: formatHostPort(formatIp(b.st.dst), b.st.dport) });
}

/** The address a MASQUERADE picks: the route's preferred source, else the out interface's address. */
function masqSource(ctx: TraceContext, st: PathState): string | undefined {
  const r = lookupRoute(ctx.snapshot.routes, st.dst);
  if (r?.src) return r.src;
  const dev = r?.dev;
  const iface = dev ? ctx.snapshot.interfaces.find((i) => i.name === dev) : undefined;
  return iface?.addresses.find((x) => x.family === st.family)?.address;
}

/** What one run of a trace shares: the scenario's answers, the branch budget, the assumptions met. */
export interface RunEnv {
  readonly snapshot: NodeSnapshot;
  readonly rs: Ruleset | undefined;
  readonly ctx: TraceContext;
  readonly run: ScenarioRun;
  readonly budget: { branches: number };
  readonly assumed: TraceAssumption[];
}

/**
 * Run branches through every base chain at a hook. Branches that a chain drops, rejects or cannot
 * follow go to `finished`; the others are returned.
 */
export function runStages(env: RunEnv, hook: Hook, branches: Branch[], finished: Branch[]): Branch[] {
  let current = branches;
  if (current.length === 0) return current;
  const family = current[0].st.family;
  const walkEnv: WalkEnv = { ctx: env.ctx, run: env.run, budget: env.budget, masqSource: (st) => masqSource(env.ctx, st) };
  const pin = env.ctx.assumptions.pinnedTo;
  for (const s of stagesAt(env.snapshot, env.rs, hook, family, env.ctx, env.assumed)) {
    // A packet of a tracked connection gets the entry's NAT binding where the nat table would run.
    if (s.nat && pin && (hook === 'PREROUTING' || hook === 'OUTPUT')) {
      for (const b of current) if (!b.st.dnatDone) applyPin(b, pin);
      continue;
    }
    // NAT chains see only a connection's first packet; once one binds a NAT at this hook, later ones are skipped.
    if (s.nat && env.ctx.assumptions.established) continue;
    const next: Branch[] = [];
    for (const b of current) {
      const bound = hook === 'POSTROUTING' || hook === 'INPUT' ? b.st.snatDone : b.st.dnatDone;
      if (s.nat && bound) {
        next.push(b);
        continue;
      }
      b.st.hook = hook;
      for (const r of s.walk(b, walkEnv)) {
        if (r.verdict === 'accept') next.push(r.branch);
        else {
          if (r.verdict === 'drop' || r.verdict === 'reject') r.branch.end = { verdict: r.verdict === 'drop' ? 'DROP' : 'REJECT' };
          finished.push(r.branch);
        }
      }
    }
    current = next;
  }
  return current;
}
