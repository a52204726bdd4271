import { createRule } from '../rule.js';

/** `6.1.0-18-amd64` → [6, 1]; undefined when the release does not start with a version. */
export function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Compare dotted versions (`1.0.10` > `1.0.9`). */
export function compareVersions(a: string, b: string): number {
  const x = a.split(/[.-]/).map((p) => parseInt(p, 10) || 0);
  const y = b.split(/[.-]/).map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** kubernetes pkg/util/kernel: NFTablesKubeProxyKernelVersion. */
const MIN_KERNEL: [number, number] = [5, 13];

/**
 * supported.go (getNFTablesInterface): kube-proxy's own nft must be ≥ 1.0.1 (knftables.New), and
 * the kernel ≥ 5.13 "under the assumption that the distro will have an nft binary that supports the
 * same features as its kernel does" (issues.k8s.io/122743); the docs: "requires kernel 5.13 or later".
 */
export default createRule({
  id: 'migrate-nftables-requirements',
  meta: {
    category: 'migration',
    description: "The kernel (uname) and nft (nft -j's metainfo) versions against what kube-proxy's nftables mode requires: kernel 5.13+, nft 1.0.1+.",
    severity: 'error',
    requires: ['kernel'],
    docs: [
      'kube-proxy refuses nftables mode on a kernel older than 5.13: "kube-proxy in nftables mode requires kernel',
      '5.13 or later" (kubernetes pkg/proxy/nftables/supported.go; kubernetes.io, *Virtual IPs and Service',
      'Proxies*: "requires kernel 5.13 or later"). The real need is `nft` 1.0.1 or later on the host — older nft',
      'parses every table and can crash on rules newer nft wrote (issues.k8s.io/122743) — and the kernel stands in',
      'for it. `KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK` bypasses the check at your own risk. The kernel',
      'also needs the nft_fib, nft_numgen, nft_reject and nft_nat modules (a kernel built without',
      'CONFIG_NFT_FIB_IPV4 fails with "Could not process rule: No such file or directory", siderolabs/pkgs#951).',
      '',
      'The kernel comes from `uname -r`/`-a`; the host\'s nft version only from `nft -j list ruleset` (its',
      '`metainfo`): the text listing does not carry it. With nft 1.1.3 or later on the host, a kube-proxy without',
      'the fix of kubernetes#137501 (1.33–1.35 patch releases of March 2026) fails to sync (kubernetes#136786).',
      'Versions that meet the requirement are reported as info.',
      '',
      '**Fix:** upgrade the node OS (kernel and nftables) before switching, or stay in iptables mode on this node.',
    ].join('\n'),
    messages: {
      kernelOld: 'kernel {{release}} is older than 5.13: kube-proxy will not start in nftables mode ("requires kernel 5.13 or later")',
      kernelOk: 'kernel {{release}} meets nftables mode\'s 5.13 or later',
      nftOld: "nft {{version}} on the host is older than 1.0.1: kube-proxy's nftables rules can break the host's own nft",
      nftNew: 'nft {{version}} on the host: kube-proxy releases without the fix of kubernetes#137501 fail to sync next to tables it wrote (kubernetes#136786)',
      nftOk: 'nft {{version}} on the host meets 1.0.1 or later',
      nftUnknown: "the host's nft version is not in these dumps (only `nft -j list ruleset` says it): nftables mode needs 1.0.1 or later",
    },
  },
  check(ctx) {
    const k = ctx.snapshot.kernel;
    if (k) {
      const v = kernelVersion(k.release);
      const at = { file: k.file, line: k.line, text: k.text, data: { release: k.release } };
      if (v && (v[0] < MIN_KERNEL[0] || (v[0] === MIN_KERNEL[0] && v[1] < MIN_KERNEL[1]))) ctx.report({ messageId: 'kernelOld', ...at });
      else if (v) ctx.report({ messageId: 'kernelOk', severity: 'info', ...at });
    }
    const versions = ctx.snapshot.nft.map((n) => n.nftVersion).filter((x) => x !== undefined);
    const nv = versions[0];
    if (!nv) {
      if (k) ctx.report({ messageId: 'nftUnknown', severity: 'info', file: k.file, line: 0 });
      return;
    }
    const at = { file: nv.file, line: nv.line, text: `"version": "${nv.version}"`, data: { version: nv.version } };
    if (compareVersions(nv.version, '1.0.1') < 0) ctx.report({ messageId: 'nftOld', ...at });
    else if (compareVersions(nv.version, '1.1.3') >= 0) ctx.report({ messageId: 'nftNew', severity: 'warning', ...at });
    else ctx.report({ messageId: 'nftOk', severity: 'info', ...at });
  },
});
