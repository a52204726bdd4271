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
  /** Connection tracking: `conntrack -L` / `/proc/net/nf_conntrack` tables and `conntrack -S`/`-C` (optional: older callers build snapshots without them). */
  readonly conntrack?: { readonly tables: readonly ConntrackTable[]; readonly stats: readonly ConntrackStats[] };
}

export function hasIptables(s: NodeSnapshot, family?: 4 | 6): boolean {
  return s.rulesets.some((r) => family === undefined || r.family === family);
}
