/**
 * Hairpin: an endpoint calls its own Service. The source is a DNAT target, an address the
 * harness keeps in the pods namespace; the harness sends from there itself when a case's
 * source `{ ip }` is a DNAT target (bridge port `hairpin on`, `accept_local` in the pods
 * namespace: see enableHairpin in harness/index.ts). This only checks that the source really
 * is an endpoint, so a hairpin case cannot silently test something else.
 */
import { formatIp, parseIp } from '../../../src/model/addr.js';
import type { KernelCase, KernelNode, KernelObservation } from '../harness/index.js';

/** Send c.packets NEW connections from `src` (a DNAT target of the dump) to the Service. */
export function sendFromEndpoint(node: KernelNode, c: Omit<KernelCase, 'from'>, src: string): Promise<KernelObservation> {
  const p = parseIp(src);
  if (!p || !node.targets.addresses.includes(formatIp(p))) throw new Error(`hairpin: ${src} is not a DNAT target of the dump`);
  return node.send({ ...c, from: { ip: src } });
}
