/**
 * Parsed files → one NodeSnapshot. Also answers what the snapshot can and cannot say:
 * which proxy modes it shows and which dumps are missing for which questions.
 */
import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { inside } from './bundle.js';
import type { ParsedFile } from './index.js';
import { InputError, parseInput, readInputs } from './index.js';
import { DEFAULT_INPUT_SETTINGS, type InputSettings } from './input.js';
import type { LoadedFile, NodeSnapshot } from '../model/snapshot.js';
import { RESTORE_INPUT, markRestoreInput } from './restore-input.js';
import { iptablesViewOf } from '../extract/iptables-nft-view.js';
import { separateIptablesViews, separateNftViews } from './views.js';
import type { Ruleset } from '../model/netfilter.js';
import type { IpSet, IpSetDump } from '../model/ipset.js';
import type { IpvsDump } from '../model/ipvs.js';
import type { Route, RouteDump } from '../model/route.js';
import type { AddrDump, BridgePort, BridgePortDump, KernelInfo, NetInterface } from '../model/iface.js';
import type { PolicyRule, PolicyRuleDump } from '../model/policy.js';
import type { SysctlDump } from '../model/sysctl.js';
import type { NftRuleset } from '../model/nft.js';
import type { KubeProxyConfig, KubeProxyLog } from '../model/kube-proxy.js';
import { mergeApiObjects, type ApiObjects } from '../model/k8s-api.js';
import type { ConntrackStats, ConntrackTable } from '../model/conntrack.js';
import { parseIp, type Ip } from '../model/addr.js';
import type { FormatId } from './format.js';
import type { PasteData } from './paste.js';
import { diagnostic, appendAll } from '../source/index.js';

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
  /** The limits and --follow-symlinks, from the command line (default: DEFAULT_INPUT_SETTINGS). */
  readonly input?: InputSettings;
}

/** Every file's data, gathered by kind; the snapshot is built from it. */
interface Gathered {
  readonly rulesets: Ruleset[];
  /** Files whose content makes them a variant of their format (iptables-save text that is restore input). */
  readonly variants: Map<ParsedFile, string>;
  readonly ipsets: IpSet[];
  readonly ipvs: IpvsDump[];
  readonly routes: Route[];
  readonly policyRules: PolicyRule[];
  readonly interfaces: NetInterface[];
  readonly nft: NftRuleset[];
  readonly sysctls: Map<string, { value: string; file: string; line: number; absent?: boolean }>;
  readonly kubeProxyLogs: KubeProxyLog[];
  readonly kubeProxyConfigs: KubeProxyConfig[];
  readonly api: ApiObjects[];
  readonly ctTables: ConntrackTable[];
  readonly ctStats: ConntrackStats[];
  readonly bridgePorts: BridgePort[];
  kernel: KernelInfo | undefined;
}

function gatherAll(files: readonly ParsedFile[]): Gathered {
  const g: Gathered = {
    rulesets: [],
    variants: new Map(),
    ipsets: [],
    ipvs: [],
    routes: [],
    policyRules: [],
    interfaces: [],
    nft: [],
    sysctls: new Map(),
    kubeProxyLogs: [],
    kubeProxyConfigs: [],
    api: [],
    ctTables: [],
    ctStats: [],
    bridgePorts: [],
    kernel: undefined,
  };
  for (const f of files) {
    const data = f.parsed?.data;
    if (data !== undefined) absorb(g, f, f.format, data);
  }
  return g;
}

/** One file's reading; a paste (./paste.ts) gives several, one per format it holds. */
function absorb(g: Gathered, f: ParsedFile, format: FormatId | 'unknown' | 'empty', data: unknown): void {
  switch (format) {
    case 'iptables-save': {
      const rs = markRestoreInput(data as Ruleset);
      if (rs.restoreInput) g.variants.set(f, RESTORE_INPUT);
      g.rulesets.push(rs);
      break;
    }
    case 'iptables-list':
      appendAll(g.rulesets, (data as readonly Ruleset[]));
      break;
    case 'ipset-list':
    case 'ipset-save':
      appendAll(g.ipsets, (data as IpSetDump).sets);
      break;
    case 'ipvsadm':
      g.ipvs.push(data as IpvsDump);
      break;
    case 'ip-route':
    case 'ip-route-json':
      appendAll(g.routes, (data as RouteDump).routes);
      break;
    case 'ip-addr':
    case 'ip-addr-json':
      appendAll(g.interfaces, (data as AddrDump).interfaces);
      break;
    case 'ip-rule':
    case 'ip-rule-json':
      appendAll(g.policyRules, (data as PolicyRuleDump).rules);
      break;
    case 'bridge-link':
    case 'sysfs-net':
      appendAll(g.bridgePorts, (data as BridgePortDump).ports);
      break;
    case 'uname':
      g.kernel ??= data as KernelInfo;
      break;
    case 'sysctl':
      for (const a of (data as SysctlDump).absent ?? []) if (!g.sysctls.has(a.key)) g.sysctls.set(a.key, { value: '', file: f.path, line: a.line, absent: true });
      for (const e of (data as SysctlDump).entries) g.sysctls.set(e.key, { value: e.value, file: f.path, line: e.line });
      break;
    case 'nft':
    case 'nft-json':
      g.nft.push(data as NftRuleset);
      break;
    case 'kube-proxy-log':
      g.kubeProxyLogs.push(data as KubeProxyLog);
      break;
    case 'kube-proxy-config':
      g.kubeProxyConfigs.push(data as KubeProxyConfig);
      break;
    case 'k8s-api':
    case 'kubectl':
      g.api.push(data as ApiObjects);
      break;
    case 'conntrack':
      g.ctTables.push(data as ConntrackTable);
      break;
    case 'conntrack-stats':
      g.ctStats.push(data as ConntrackStats);
      break;
    case 'paste':
      for (const part of (data as PasteData).parts) if (part.data !== undefined) absorb(g, f, part.format, part.data);
      break;
  }
}

/**
 * kube-proxy's iptables mode on an iptables-nft node, seen only through `nft list ruleset`: its
 * tables are read as iptables tables (residue and all), unless iptables-save for that family was given.
 */
function addIptablesViewsOfNft(rulesets: Ruleset[], nft: readonly NftRuleset[]): void {
  for (const fam of [4, 6] as const) {
    if (rulesets.some((r) => r.family === fam)) continue;
    for (const n of nft) {
      const view = iptablesViewOf(n, fam);
      if (view) rulesets.push(view);
    }
  }
}

export function assembleSnapshot(files: readonly ParsedFile[], opts: SnapshotOptions = {}): NodeSnapshot {
  const g = gatherAll(files);
  addIptablesViewsOfNft(g.rulesets, g.nft);
  // One ruleset written twice (a restore payload, an nft -f transaction, the dump given twice) is read once.
  const ipt = separateIptablesViews(g.rulesets);
  const transactions = new Set(files.filter((f) => f.parsed?.variant === 'transaction').map((f) => f.path));
  const nftViews = separateNftViews(g.nft, transactions);
  const secondViews = [...ipt.views, ...nftViews.views];
  const loaded: LoadedFile[] = files.map((f) => {
    const variant = g.variants.get(f) ?? f.parsed?.variant;
    return { path: f.path, format: f.format, ...(variant ? { variant } : {}), counts: f.parsed?.counts ?? {}, diagnostics: f.diagnostics, bytes: f.bytes };
  });
  const extraNodeIps = (opts.nodeIps ?? []).map((t) => parseIp(t)).filter((x): x is Ip => x !== undefined);
  const { ipsets, kernel, kubeProxyLogs, kubeProxyConfigs, api, ctTables, ctStats } = g;
  return {
    name: opts.name ?? 'node',
    files: loaded,
    rulesets: ipt.rulesets,
    ipsets,
    ipsetsByName: new Map(ipsets.map((s) => [s.name, s])),
    ipvs: g.ipvs,
    routes: g.routes,
    policyRules: g.policyRules,
    interfaces: mergeInterfaces(g.interfaces),
    bridgePorts: [...g.bridgePorts, ...portsOfLinks(g.interfaces)],
    ...(kernel ? { kernel } : {}),
    sysctls: g.sysctls,
    nft: nftViews.nft,
    extraNodeIps,
    ...(secondViews.length ? { secondViews } : {}),
    ...(kubeProxyLogs.length || kubeProxyConfigs.length ? { kubeProxy: { logs: kubeProxyLogs, configs: kubeProxyConfigs } } : {}),
    ...(api.length ? { api: mergeApiObjects(api) } : {}),
    ...(ctTables.length || ctStats.length ? { conntrack: { tables: ctTables, stats: ctStats } } : {}),
  };
}

/** Diagnostics of an input that was not read at all (the input layer's refusals and read errors). */
const NOT_READ = new Set(['input/unreadable', 'input/too-large', 'input/special-file', 'input/symlink-loop', 'input/too-deep', 'input/too-many-entries', 'input/duplicate']);

/**
 * A small JSON file of a bundle (kpx's manifest.json): only a regular file, only up to 4 MiB, so
 * that a FIFO or a huge file under that name cannot hang or exhaust kpx. Undefined when absent or unreadable.
 */
export function readSmallJson(path: string): unknown {
  try {
    // A manifest that is a link out of its folder is not the bundle's (and not read: it could be anything).
    if (lstatSync(path).isSymbolicLink() && !inside(realpathSync(dirname(path)), realpathSync(path))) return undefined;
    const st = statSync(path);
    if (!st.isFile() || st.size > 4 * 1024 * 1024) return undefined;
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * `ip addr` and `ip -d link` describe the same interfaces (one has the addresses, the other the
 * link details): one interface per name, addresses from every file (each once), details from
 * whichever has them. The first file's header line stays the interface's evidence.
 */
function mergeInterfaces(list: readonly NetInterface[]): NetInterface[] {
  const byName = new Map<string, NetInterface>();
  for (const i of list) {
    const prev = byName.get(i.name);
    if (!prev) {
      byName.set(i.name, i);
      continue;
    }
    const seen = new Set(prev.addresses.map((a) => `${a.family}:${a.address}/${a.prefix}`));
    const merged: NetInterface = {
      ...i,
      ...prev,
      flags: prev.flags.length ? prev.flags : i.flags,
      addresses: [...prev.addresses, ...i.addresses.filter((a) => !seen.has(`${a.family}:${a.address}/${a.prefix}`))],
      extra: { ...i.extra, ...prev.extra },
      ...(prev.linkInfo ?? i.linkInfo ? { linkInfo: prev.linkInfo ?? i.linkInfo } : {}),
    };
    byName.set(i.name, merged);
  }
  return [...byName.values()];
}

/** Bridge ports as `ip -d link` shows them (its `bridge_slave` lines). */
function portsOfLinks(list: readonly NetInterface[]): BridgePort[] {
  return list.flatMap((i) => (i.linkInfo?.bridgePort ? [{ ...i.linkInfo.bridgePort, port: i.name, file: i.file, ...(i.master && !i.linkInfo.bridgePort.bridge ? { bridge: i.master } : {}) }] : []));
}

/** Read, sniff, parse and assemble. Throws InputError only for unreadable paths. */
export async function loadSnapshot(paths: readonly string[], opts: SnapshotOptions = {}): Promise<NodeSnapshot> {
  const settings = opts.input ?? DEFAULT_INPUT_SETTINGS;
  const inputs = readInputs(paths, opts.stdin, settings);
  opts = opts.name === undefined ? { ...opts, name: nodeNameOf(paths) } : opts;
  const parsed: ParsedFile[] = [];
  for (let i = 0; i < inputs.length; i++) {
    // Between files, let the event loop run: a spinner's frame, a Ctrl-C handler (live mode removes
    // its temporary bundle then), a test runner's messages. A file's own parse is synchronous.
    if (i > 0) await yieldToEventLoop();
    opts.onFile?.(inputs[i].path, i, inputs.length);
    const path = inputs[i].path;
    const onParse = opts.onParse;
    parsed.push(await parseInput(inputs[i], opts.format, onParse && ((done, total) => onParse(path, done, total)), settings.limits));
  }
  // Nothing could be read at all (every input unreadable or refused by a limit): an input error, one line each.
  const refusals = parsed.map((f) => f.diagnostics.find((d) => d.severity === 'error' && NOT_READ.has(d.code)));
  if (parsed.length > 0 && refusals.every((d) => d !== undefined)) {
    throw new InputError(parsed.map((f, i) => `${f.path}: ${refusals[i]!.message.replace(/^cannot read: /, '')}`).join('\n'));
  }
  return assembleSnapshot(withCollectionFailures(paths, parsed), opts);
}

/**
 * A `kpx collect` bundle whose manifest says a command failed (e.g. iptables-save as non-root:
 * Permission denied) lacks that dump, or holds only part of it. Say so as an error on that file
 * (a row of its own when nothing was written), so answers built on the bundle cannot pass the
 * missing rules off as "no Services".
 */
function withCollectionFailures(paths: readonly string[], parsed: ParsedFile[]): ParsedFile[] {
  const out = [...parsed];
  for (const p of paths) {
    let steps: unknown;
    let incomplete: unknown;
    try {
      if (p === '-' || !statSync(p).isDirectory()) continue;
      const m = readSmallJson(join(p, 'manifest.json')) as { steps?: unknown; incomplete?: unknown; kind?: unknown } | undefined;
      steps = m?.steps;
      incomplete = m?.kind === 'kpx-bundle' ? m.incomplete : undefined;
    } catch {
      continue; // no manifest (not a collected bundle) or an unreadable one: nothing to add
    }
    if (incomplete !== undefined) {
      // A collection that did not finish: what is there is read, and every answer says the bundle is partial.
      const file = join(p, 'manifest.json');
      const why = typeof incomplete === 'string' && incomplete ? incomplete : 'it did not finish';
      const d = diagnostic('error', 'collect/incomplete', `the collection of this bundle did not finish (${why}): dumps after that are missing, so this bundle is not the whole node`, file, 1, 1);
      const i = out.findIndex((f) => f.path === file);
      if (i >= 0) out[i] = { ...out[i], diagnostics: [d, ...out[i].diagnostics.filter((x) => x.code !== 'input/left-out')] };
      else out.push({ path: file, bytes: 0, format: 'unknown', diagnostics: [d] });
    }
    if (!Array.isArray(steps)) continue;
    for (const st of steps as { file?: unknown; command?: unknown; status?: unknown; detail?: unknown }[]) {
      if (st?.status !== 'failed' || typeof st.file !== 'string' || typeof st.command !== 'string') continue;
      const file = join(p, st.file);
      const d = diagnostic('error', 'collect/failed', `\`${st.command}\` failed when the bundle was collected${typeof st.detail === 'string' && st.detail ? `: ${st.detail}` : ''}; this dump is missing or incomplete`, file, 1, 1);
      const i = out.findIndex((f) => f.path === file);
      if (i >= 0) out[i] = { ...out[i], diagnostics: [d, ...out[i].diagnostics] };
      else out.push({ path: file, bytes: 0, format: 'unknown', diagnostics: [d] });
    }
  }
  return out;
}

/** A bundle's node name: the host in kpx collect's manifest, else the bundle directory's name. */
function nodeNameOf(paths: readonly string[]): string {
  for (const p of paths) {
    try {
      if (!statSync(p).isDirectory()) continue;
      const host = (readSmallJson(join(p, 'manifest.json')) as { host?: unknown } | undefined)?.host;
      if (typeof host === 'string' && host) return host;
      return basename(resolve(p));
    } catch {
      continue;
    }
  }
  return 'this node';
}

