/** All Service ports a snapshot implements, whatever the proxy mode. */
import type { NodeSnapshot } from '../model/snapshot.js';
import { resolveIptables } from './resolve-iptables.js';
import { compareServicePorts, type Resolution } from './types.js';

export async function resolveServices(snapshot: NodeSnapshot): Promise<Resolution> {
  const parts: Resolution[] = [resolveIptables(snapshot)];
  if (snapshot.ipvs.length > 0 || snapshot.ipsets.some((s) => s.name.startsWith('KUBE-'))) {
    const { resolveIpvs } = await import('./resolve-ipvs.js');
    parts.push(resolveIpvs(snapshot));
  }
  if (snapshot.nft.some((n) => n.tables.some((t) => !t.fromIptablesNft))) {
    const { resolveNft } = await import('./resolve-nft.js');
    const nft = resolveNft(snapshot);
    if (nft.services.length || nft.others.length) parts.push(nft);
  }
  const res: Resolution = {
    services: parts.flatMap((p) => p.services).sort(compareServicePorts),
    others: parts.flatMap((p) => p.others),
    problems: parts.flatMap((p) => p.problems),
  };
  // The API's objects, when given, name what the dumps leave unnamed (IPVS virtual servers above all).
  return snapshot.api ? (await import('./api-names.js')).withApiNames(snapshot, res) : res;
}
