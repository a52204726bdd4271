/**
 * Parsed files → one NodeSnapshot. Also answers what the snapshot can and cannot say:
 * which proxy modes it shows and which dumps are missing for which questions.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { ParsedFile } from './index.js';
import { parseInput, readInputs } from './index.js';
import type { LoadedFile, NodeSnapshot, ProxyMode } from '../model/snapshot.js';
import type { Ruleset } from '../model/netfilter.js';
import type { IpSet, IpSetDump } from '../model/ipset.js';
import type { IpvsDump } from '../model/ipvs.js';
import type { Route, RouteDump } from '../model/route.js';
import type { AddrDump, NetInterface } from '../model/iface.js';
import type { PolicyRule, PolicyRuleDump } from '../model/policy.js';
import type { SysctlDump } from '../model/sysctl.js';
import type { NftRuleset } from '../model/nft.js';
import { parseIp, type Ip } from '../model/addr.js';
import type { FormatId } from './format.js';

export interface SnapshotOptions {
  readonly name?: string;
  readonly nodeIps?: readonly string[];
  /** Force a format for every input (skips sniffing). */
  readonly format?: FormatId;
  readonly stdin?: () => Buffer;
  /** Called as files are parsed (progress display). */
  readonly onFile?: (path: string, index: number, total: number) => void;
  /** A big file is being parsed: lines read so far, of how many (see ParseProgress). */
  readonly onParse?: (path: string, linesDone: number, linesTotal: number) => void;
}

export function assembleSnapshot(files: readonly ParsedFile[], opts: SnapshotOptions = {}): NodeSnapshot {
  const rulesets: Ruleset[] = [];
  const ipsets: IpSet[] = [];
  const ipvs: IpvsDump[] = [];
  const routes: Route[] = [];
  const policyRules: PolicyRule[] = [];
  const interfaces: NetInterface[] = [];
  const nft: NftRuleset[] = [];
  const sysctls = new Map<string, { value: string; file: string; line: number }>();
  for (const f of files) {
    const data = f.parsed?.data;
    if (data === undefined) continue;
    switch (f.format) {
      case 'iptables-save':
        rulesets.push(data as Ruleset);
        break;
      case 'ipset-list':
      case 'ipset-save':
        ipsets.push(...(data as IpSetDump).sets);
        break;
      case 'ipvsadm':
        ipvs.push(data as IpvsDump);
        break;
      case 'ip-route':
      case 'ip-route-json':
        routes.push(...(data as RouteDump).routes);
        break;
      case 'ip-addr':
      case 'ip-addr-json':
        interfaces.push(...(data as AddrDump).interfaces);
        break;
      case 'ip-rule':
      case 'ip-rule-json':
        policyRules.push(...(data as PolicyRuleDump).rules);
        break;
      case 'sysctl':
        for (const e of (data as SysctlDump).entries) sysctls.set(e.key, { value: e.value, file: f.path, line: e.line });
        break;
      case 'nft':
      case 'nft-json':
        nft.push(data as NftRuleset);
        break;
    }
  }
  const loaded: LoadedFile[] = files.map((f) => ({ path: f.path, format: f.format, ...(f.parsed?.variant ? { variant: f.parsed.variant } : {}), counts: f.parsed?.counts ?? {}, diagnostics: f.diagnostics, bytes: f.bytes }));
  const extraNodeIps = (opts.nodeIps ?? []).map((t) => parseIp(t)).filter((x): x is Ip => x !== undefined);
  return {
    name: opts.name ?? 'node',
    files: loaded,
    rulesets,
    ipsets,
    ipsetsByName: new Map(ipsets.map((s) => [s.name, s])),
    ipvs,
    routes,
    policyRules,
    interfaces,
    sysctls,
    nft,
    extraNodeIps,
  };
}

/** Read, sniff, parse and assemble. Throws InputError only for unreadable paths. */
export async function loadSnapshot(paths: readonly string[], opts: SnapshotOptions = {}): Promise<NodeSnapshot> {
  const inputs = readInputs(paths, opts.stdin);
  opts = opts.name === undefined ? { ...opts, name: nodeNameOf(paths) } : opts;
  const parsed: ParsedFile[] = [];
  for (let i = 0; i < inputs.length; i++) {
    opts.onFile?.(inputs[i].path, i, inputs.length);
    const path = inputs[i].path;
    const onParse = opts.onParse;
    parsed.push(await parseInput(inputs[i], opts.format, onParse && ((done, total) => onParse(path, done, total))));
  }
  return assembleSnapshot(parsed, opts);
}

/** A bundle's node name: the host in kpx collect's manifest, else the bundle directory's name. */
function nodeNameOf(paths: readonly string[]): string {
  for (const p of paths) {
    try {
      if (!statSync(p).isDirectory()) continue;
      const m = join(p, 'manifest.json');
      if (existsSync(m)) {
        const host = (JSON.parse(readFileSync(m, 'utf8')) as { host?: unknown }).host;
        if (typeof host === 'string' && host) return host;
      }
      return basename(resolve(p));
    } catch {
      continue;
    }
  }
  return 'this node';
}

const isKubeIptablesChain = (n: string) => /^KUBE-(SVC|SVL|EXT|FW|SEP|XLB)-/.test(n);

/** Which kube-proxy modes this snapshot shows evidence of. */
export function proxyModes(s: NodeSnapshot): ProxyMode[] {
  const modes: ProxyMode[] = [];
  if (s.rulesets.some((r) => r.tables.some((t) => t.chains.some((c) => isKubeIptablesChain(c.name))))) modes.push('iptables');
  const ipvsSets = s.ipsets.some((x) => x.name === 'KUBE-CLUSTER-IP' || x.name === 'KUBE-6-CLUSTER-IP');
  const ipvsRules = s.rulesets.some((r) => r.tables.some((t) => t.chains.some((c) => c.rules.some((rule) => rule.matches.some((m) => m.kind === 'set' && /^KUBE-(6-)?CLUSTER-IP$/.test(m.name))))));
  const dummy = s.interfaces.some((i) => i.name === 'kube-ipvs0');
  if (s.ipvs.some((d) => d.virtualServers.length > 0) || ipvsSets || ipvsRules || dummy) modes.push('ipvs');
  if (s.nft.some((n) => n.tables.some((t) => t.name === 'kube-proxy'))) modes.push('nftables');
  return modes;
}

/** What is missing for which questions, as short sentences for `kpx inspect`. */
export function missingDumps(s: NodeSnapshot): string[] {
  const out: string[] = [];
  const modes = proxyModes(s);
  if (s.rulesets.length === 0 && s.nft.length === 0) out.push('no iptables-save or nft ruleset: Service rules cannot be resolved');
  if (s.interfaces.length === 0 && s.extraNodeIps.length === 0) out.push("no `ip addr`: the node's own addresses (addrtype LOCAL, NodePorts) are unknown unless given with --node-ip");
  if (s.routes.length === 0) out.push('no `ip route`: where a packet goes after DNAT cannot be said');
  if (modes.includes('ipvs') && s.ipvs.length === 0) out.push('IPVS mode, but no `ipvsadm -Ln`: virtual servers and real servers are unknown');
  if (modes.includes('ipvs') && s.ipsets.length === 0) out.push('IPVS mode, but no `ipset list`: set matches cannot be decided');
  if (s.rulesets.some((r) => r.tables.some((t) => t.chains.some((c) => c.rules.some((x) => x.matches.some((m) => m.kind === 'set')))))) {
    if (s.ipsets.length === 0) out.push('rules use -m set, but no `ipset list` was given: those matches cannot be decided');
  }
  return out;
}
