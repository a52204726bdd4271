/**
 * Which formats kpx reads. Sniffers are cheap and always loaded; each parser module (and so
 * Chevrotain and that grammar) is imported only when a file of its format is present.
 */
import type { FormatId, FormatParser, FormatSniffer } from './format.js';
import { iptablesSaveSniffer } from '../../grammars/iptables-save/sniff.js';
import { iptablesListSniffer } from '../../grammars/iptables-list/sniff.js';
import { ipsetListSniffer, ipsetSaveSniffer } from '../../grammars/ipset/sniff.js';
import { ipvsadmSniffer } from '../../grammars/ipvsadm/sniff.js';
import { ipRouteJsonSniffer, ipRouteSniffer } from '../../grammars/iproute/sniff.js';
import { ipAddrJsonSniffer, ipAddrSniffer } from '../../grammars/ipaddr/sniff.js';
import { sysctlSniffer } from '../../grammars/sysctl/sniff.js';
import { bridgeLinkSniffer } from '../../grammars/bridge/sniff.js';
import { sysfsNetSniffer } from '../../grammars/sysfs/sniff.js';
import { unameSniffer } from '../../grammars/uname/sniff.js';
import { ipRuleJsonSniffer, ipRuleSniffer } from '../../grammars/iprule/sniff.js';
import { nftJsonSniffer, nftSniffer } from '../../grammars/nft/sniff.js';
import { kubeProxyLogSniffer } from '../../grammars/kube-proxy-log/sniff.js';
import { kubeProxyConfigSniffer } from '../../grammars/kube-proxy-config/sniff.js';
import { k8sApiSniffer } from '../../grammars/k8s-api/sniff.js';
import { kubectlSniffer } from '../../grammars/kubectl/sniff.js';
import { conntrackSniffer, conntrackStatsSniffer } from '../../grammars/conntrack/sniff.js';
import { foreignSniffer } from '../../grammars/foreign/sniff.js';

export const sniffers: readonly FormatSniffer[] = [
  // First: a log quoting an iptables-restore payload also looks like iptables-save, and ties go to the first.
  kubeProxyLogSniffer,
  kubeProxyConfigSniffer,
  k8sApiSniffer,
  kubectlSniffer,
  // Before iptables-save: a listing with `-A` lines pasted in it is read by the listing reader.
  iptablesListSniffer,
  iptablesSaveSniffer,
  ipsetListSniffer,
  ipsetSaveSniffer,
  ipvsadmSniffer,
  ipRouteSniffer,
  ipRouteJsonSniffer,
  // Before ip addr: a `bridge link` header is shaped like `ip link`'s, and ties go to the first.
  bridgeLinkSniffer,
  ipAddrSniffer,
  ipAddrJsonSniffer,
  ipRuleSniffer,
  ipRuleJsonSniffer,
  sysctlSniffer,
  sysfsNetSniffer,
  unameSniffer,
  nftSniffer,
  nftJsonSniffer,
  conntrackSniffer,
  conntrackStatsSniffer,
  // Last: a table or capture that is not kube-proxy's is named only when no reader takes the file.
  foreignSniffer,
];

export async function parserFor(id: FormatId): Promise<FormatParser> {
  switch (id) {
    case 'iptables-save':
      return (await import('../extract/iptables-save.js')).iptablesSaveParser;
    case 'ipset-list':
      return (await import('../extract/ipset.js')).ipsetListParser;
    case 'ipset-save':
      return (await import('../extract/ipset.js')).ipsetSaveParser;
    case 'ipvsadm':
      return (await import('../extract/ipvsadm.js')).ipvsadmParser;
    case 'ip-route':
      return (await import('../extract/iproute.js')).ipRouteParser;
    case 'ip-route-json':
      return (await import('../extract/iproute.js')).ipRouteJsonParser;
    case 'ip-addr':
      return (await import('../extract/ipaddr.js')).ipAddrParser;
    case 'ip-addr-json':
      return (await import('../extract/ipaddr.js')).ipAddrJsonParser;
    case 'ip-rule':
      return (await import('../extract/iprule.js')).ipRuleParser;
    case 'ip-rule-json':
      return (await import('../extract/iprule.js')).ipRuleJsonParser;
    case 'sysctl':
      return (await import('../extract/sysctl.js')).sysctlParser;
    case 'bridge-link':
      return (await import('../extract/bridge.js')).bridgeLinkParser;
    case 'sysfs-net':
      return (await import('../extract/sysfs.js')).sysfsNetParser;
    case 'uname':
      return (await import('../extract/uname.js')).unameParser;
    case 'nft':
      return (await import('../extract/nft.js')).nftParser;
    case 'nft-json':
      return (await import('../extract/nft.js')).nftJsonParser;
    case 'kube-proxy-log':
      return (await import('../extract/kube-proxy-log.js')).kubeProxyLogParser;
    case 'kube-proxy-config':
      return (await import('../extract/kube-proxy-config.js')).kubeProxyConfigParser;
    case 'k8s-api':
      return (await import('../extract/k8s-api.js')).k8sApiParser;
    case 'kubectl':
      return (await import('../extract/kubectl.js')).kubectlParser;
    case 'iptables-list':
      return (await import('../extract/iptables-list.js')).iptablesListParser;
    case 'paste': {
      const { parsePaste } = await import('./paste.js');
      return {
        id: 'paste',
        // The loader reads a paste as a stream (below); its sections' readers are imported as needed.
        parse: () => {
          throw new Error('a paste is read with parseStream()');
        },
        parseStream: async (stream, file) => {
          const blocks: string[] = [];
          for await (const b of stream) blocks.push(b);
          return parsePaste(blocks.join(''), file, sniff, parserFor);
        },
      };
    }
    case 'conntrack':
      return (await import('../extract/conntrack.js')).conntrackParser;
    case 'conntrack-stats':
      return (await import('../extract/conntrack.js')).conntrackStatsParser;
    case 'foreign':
      return (await import('../extract/foreign.js')).foreignParser;
  }
}

/** The best-matching format for these lines, or undefined when nothing is confident enough. */
export function sniff(lines: readonly string[]): { id: FormatId; confidence: number } | undefined {
  let best: { id: FormatId; confidence: number } | undefined;
  for (const s of sniffers) {
    const c = s.sniff(lines);
    if (c > 0 && (!best || c > best.confidence)) best = { id: s.id, confidence: c };
  }
  return best && best.confidence >= 0.3 ? best : undefined;
}
