/**
 * The registry of lint rules (explicit: adding a rule means adding its import here), and the
 * public lint API.
 */
import type { LintRule } from './rule.js';
import danglingJump from './rules/dangling-jump.js';
import jumpLoop from './rules/jump-loop.js';
import jumpDepth from './rules/jump-depth.js';
import undefinedIpset from './rules/undefined-ipset.js';
import orphanChain from './rules/orphan-chain.js';
import serviceNoEndpoints from './rules/service-no-endpoints.js';
import localPolicyNoLocalEndpoints from './rules/local-policy-no-local-endpoints.js';
import probabilityLadder from './rules/probability-ladder.js';
import shadowedRule from './rules/shadowed-rule.js';
import nodeportsNotLast from './rules/nodeports-not-last.js';
import duplicateServiceVip from './rules/duplicate-service-vip.js';
import endpointUnroutable from './rules/endpoint-unroutable.js';
import mixedIptablesBackends from './rules/mixed-iptables-backends.js';
import staleProxyMode from './rules/stale-proxy-mode.js';
import ipvsNoRealServers from './rules/ipvs-no-real-servers.js';
import ipvsAllWeightsZero from './rules/ipvs-all-weights-zero.js';
import ipvsVipNotBound from './rules/ipvs-vip-not-bound.js';
import ipvsIpsetMismatch from './rules/ipvs-ipset-mismatch.js';
import masqueradeNotRandomFully from './rules/masquerade-not-random-fully.js';
import ipvsSysctl from './rules/ipvs-sysctl.js';
import kernelForwardingOff from './rules/kernel-forwarding-off.js';
import kernelBridgeNfOff from './rules/kernel-bridge-nf-off.js';
import kernelHairpinOff from './rules/kernel-hairpin-off.js';
import kernelRouteLocalnetOff from './rules/kernel-route-localnet-off.js';
import tunnelMtu from './rules/tunnel-mtu.js';
import rulesetSize from './rules/ruleset-size.js';
import foreignRuleBeforeKube from './rules/foreign-rule-before-kube.js';
import nftUndefinedReference from './rules/nft-undefined-reference.js';
import kubeProxySyncFailing from './rules/kube-proxy-sync-failing.js';
import kubeProxyModeFallback from './rules/kube-proxy-mode-fallback.js';
import kubeProxyNodeNotFound from './rules/kube-proxy-node-not-found.js';
import kubeProxyExited from './rules/kube-proxy-exited.js';
import kubeProxyApiUnreachable from './rules/kube-proxy-api-unreachable.js';
import kubeProxyHostPrerequisite from './rules/kube-proxy-host-prerequisite.js';
import kubeProxyConfigNotRead from './rules/kube-proxy-config-not-read.js';
import kubeProxyModeMismatch from './rules/kube-proxy-mode-mismatch.js';
import kubeProxyClusterCidrMismatch from './rules/kube-proxy-cluster-cidr-mismatch.js';
import kubeProxyMasqueradeBitMismatch from './rules/kube-proxy-masquerade-bit-mismatch.js';
import kubeProxyNodeportAddresses from './rules/kube-proxy-nodeport-addresses.js';
import kubeProxyStrictArp from './rules/kube-proxy-strict-arp.js';
import kubeFirewallDropWithoutMark from './rules/kube-firewall-drop-without-mark.js';
import apiServiceNotProgrammed from './rules/api-service-not-programmed.js';
import apiServiceStale from './rules/api-service-stale.js';
import apiEndpointNotProgrammed from './rules/api-endpoint-not-programmed.js';
import apiEndpointStale from './rules/api-endpoint-stale.js';
import apiTerminatingEndpointProgrammed from './rules/api-terminating-endpoint-programmed.js';
import apiTrafficPolicyMismatch from './rules/api-traffic-policy-mismatch.js';
import apiNodeportMismatch from './rules/api-nodeport-mismatch.js';
import apiExternalIpMismatch from './rules/api-external-ip-mismatch.js';
import apiSourceRangeMismatch from './rules/api-source-range-mismatch.js';
import conntrackStaleUdpEndpoint from './rules/conntrack-stale-udp-endpoint.js';
import conntrackUnrepliedUntranslated from './rules/conntrack-unreplied-untranslated.js';
import conntrackNoEndpoints from './rules/conntrack-no-endpoints.js';
import conntrackTableFull from './rules/conntrack-table-full.js';
import conntrackInsertFailed from './rules/conntrack-insert-failed.js';
import conntrackIpvsStaleRealServer from './rules/conntrack-ipvs-stale-real-server.js';
import migrateLocalhostNodeports from './rules/migrate-localhost-nodeports.js';
import migrateNodeportAddresses from './rules/migrate-nodeport-addresses.js';
import migrateForeignKubeReferences from './rules/migrate-foreign-kube-references.js';
import migrateCtInvalidDrop from './rules/migrate-ct-invalid-drop.js';
import migrateIpvsScheduling from './rules/migrate-ipvs-scheduling.js';
import migrateIpvsPersistence from './rules/migrate-ipvs-persistence.js';
import migrateIpvsBoundVips from './rules/migrate-ipvs-bound-vips.js';
import migrateNftablesRequirements from './rules/migrate-nftables-requirements.js';
import migrateNftablesScale from './rules/migrate-nftables-scale.js';
import migrateUnchanged from './rules/migrate-unchanged.js';

export const RULES: readonly LintRule[] = [
  danglingJump,
  jumpLoop,
  jumpDepth,
  undefinedIpset,
  orphanChain,
  serviceNoEndpoints,
  localPolicyNoLocalEndpoints,
  probabilityLadder,
  shadowedRule,
  nodeportsNotLast,
  duplicateServiceVip,
  endpointUnroutable,
  mixedIptablesBackends,
  staleProxyMode,
  ipvsNoRealServers,
  ipvsAllWeightsZero,
  ipvsVipNotBound,
  ipvsIpsetMismatch,
  masqueradeNotRandomFully,
  ipvsSysctl,
  kernelForwardingOff,
  kernelBridgeNfOff,
  kernelHairpinOff,
  kernelRouteLocalnetOff,
  tunnelMtu,
  rulesetSize,
  foreignRuleBeforeKube,
  nftUndefinedReference,
  kubeProxySyncFailing,
  kubeProxyModeFallback,
  kubeProxyNodeNotFound,
  kubeProxyExited,
  kubeProxyApiUnreachable,
  kubeProxyHostPrerequisite,
  kubeProxyConfigNotRead,
  kubeProxyModeMismatch,
  kubeProxyClusterCidrMismatch,
  kubeProxyMasqueradeBitMismatch,
  kubeProxyNodeportAddresses,
  kubeProxyStrictArp,
  kubeFirewallDropWithoutMark,
  apiServiceNotProgrammed,
  apiServiceStale,
  apiEndpointNotProgrammed,
  apiEndpointStale,
  apiTerminatingEndpointProgrammed,
  apiTrafficPolicyMismatch,
  apiNodeportMismatch,
  apiExternalIpMismatch,
  apiSourceRangeMismatch,
  conntrackStaleUdpEndpoint,
  conntrackUnrepliedUntranslated,
  conntrackNoEndpoints,
  conntrackTableFull,
  conntrackInsertFailed,
  conntrackIpvsStaleRealServer,
  // `kpx migrate-check --to nftables` (category 'migration').
  migrateLocalhostNodeports,
  migrateNodeportAddresses,
  migrateForeignKubeReferences,
  migrateCtInvalidDrop,
  migrateIpvsScheduling,
  migrateIpvsPersistence,
  migrateIpvsBoundVips,
  migrateNftablesRequirements,
  migrateNftablesScale,
  migrateUnchanged,
];

/** The rules `kpx lint` runs: what is wrong with this node. */
export const LINT_RULES: readonly LintRule[] = RULES.filter((r) => (r.meta.category ?? 'lint') === 'lint');
/** The rules `kpx migrate-check --to nftables` runs: what will behave differently in nftables mode. */
export const MIGRATION_RULES: readonly LintRule[] = RULES.filter((r) => r.meta.category === 'migration');

export const RULES_BY_ID: ReadonlyMap<string, LintRule> = new Map(RULES.map((r) => [r.id, r]));

export type { Finding, LintRule, Related, Severity, RuleMeta, RuleCategory } from './rule.js';
export { createRule } from './rule.js';
export type { LintContext } from './context.js';
export { buildContext } from './context.js';
