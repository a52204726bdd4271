/**
 * A node snapshot: everything kpx knows about one node's dataplane, from however many files.
 */
import type { Ip } from './addr.js';
import type { Ruleset } from './netfilter.js';
import type { IpSet } from './ipset.js';
import type { IpvsDump } from './ipvs.js';
import type { Route } from './route.js';
import type { PolicyRule } from './policy.js';
import type { BridgePort, KernelInfo, NetInterface } from './iface.js';
import type { NftRuleset } from './nft.js';
import type { KubeProxyConfig, KubeProxyLog } from './kube-proxy.js';
import type { ApiObjects } from './k8s-api.js';
import type { ConntrackStats, ConntrackTable } from './conntrack.js';
import type { Diagnostic } from '../source/index.js';
import type { FormatId } from '../../grammars/common/format.js';

export type ProxyMode = 'iptables' | 'ipvs' | 'nftables';

export interface LoadedFile {
  readonly path: string;
  readonly format: FormatId | 'unknown' | 'empty';
  /** ParsedInput.variant (e.g. `transaction` for `nft -f` input). */
  readonly variant?: string;
  readonly counts: Readonly<Record<string, number>>;
  readonly diagnostics: readonly Diagnostic[];
  readonly bytes: number;
}

/**
 * A second view of a ruleset already read (src/load/views.ts): kube-proxy's iptables-restore input
 * beside iptables-save, an `nft -f` transaction beside `nft list ruleset`, or the same dump twice.
 * Not resolved again (nothing is counted twice); each of its rules is matched to the dump's.
 */
export interface SecondView {
  readonly kind: 'iptables-restore-input' | 'iptables-save' | 'nft-transaction';
  /** The view's file. */
  readonly file: string;
  /** The dump it is a view of (the one kpx reads). */
  readonly of: string;
  readonly family?: 4 | 6;
  /** Rules (and map elements) in the view, and how many of them the dump holds. */
  readonly rules: number;
  readonly matched: number;
  /** The view's rules the dump does not hold (the first few), and how many there are. */
  readonly differing: readonly { readonly line: number; readonly text: string; readonly chain: string }[];
  readonly differingCount: number;
  /** The dump's rule line → the view's line of the same rule: each line of either stays citable. */
  readonly lines: ReadonlyMap<number, number>;
}

export interface NodeSnapshot {
  readonly name: string;
  readonly files: readonly LoadedFile[];
  readonly rulesets: readonly Ruleset[];
  readonly ipsets: readonly IpSet[];
  readonly ipsetsByName: ReadonlyMap<string, IpSet>;
  readonly ipvs: readonly IpvsDump[];
  readonly routes: readonly Route[];
  /** `ip rule` (policy routing); empty = the kernel's default rules. */
  readonly policyRules: readonly PolicyRule[];
  readonly interfaces: readonly NetInterface[];
  /** Bridge ports' settings (hairpin, learning, state): `bridge -d link`, sysfs `hairpin_mode`, `ip -d link`'s bridge_slave. */
  readonly bridgePorts?: readonly BridgePort[];
  /** `uname -r` / `uname -a` / `/proc/version`. */
  readonly kernel?: KernelInfo;
  /** `absent`: sysctl said the key does not exist in this kernel (the value is then ``). */
  readonly sysctls: ReadonlyMap<string, { readonly value: string; readonly file: string; readonly line: number; readonly absent?: boolean }>;
  readonly nft: readonly NftRuleset[];
  /** Node addresses given with --node-ip (added to what `ip addr` says). */
  readonly extraNodeIps: readonly Ip[];
  /** kube-proxy's own account: its logs and its configuration, when given (optional: older callers build snapshots without them). */
  readonly kubeProxy?: { readonly logs: readonly KubeProxyLog[]; readonly configs: readonly KubeProxyConfig[] };
  /** The API server's objects (`kubectl get svc,endpointslices,nodes,pods -o json|yaml`), when given: the intent. */
  readonly api?: ApiObjects;
  /** Second views of rulesets already read (restore input, `nft -f` input, a dump given twice): read once (optional). */
  readonly secondViews?: readonly SecondView[];
  /** Connection tracking: `conntrack -L` / `/proc/net/nf_conntrack` tables and `conntrack -S`/`-C` (optional: older callers build snapshots without them). */
  readonly conntrack?: { readonly tables: readonly ConntrackTable[]; readonly stats: readonly ConntrackStats[] };
}

export function hasIptables(s: NodeSnapshot, family?: 4 | 6): boolean {
  return s.rulesets.some((r) => family === undefined || r.family === family);
}
