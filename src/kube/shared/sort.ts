/** The order of a resolution's Service ports, the same for every proxy mode. */
import { compareServicePorts, type ServicePort } from '../types.js';

/**
 * Sort as compareServicePorts does. It builds both sort keys on every comparison (~200k at 10k
 * Services, ~40 MB of garbage), so sort first on keys built once per Service port, then let it
 * sort that: on sorted input it compares each neighbour once. Its order decides in any case, and
 * ties keep their order either way, since equal keys stay in input order in both (stable) sorts.
 */
export function sortServicePorts(services: ServicePort[]): void {
  const keyed = services.map((s) => ({ s, key: [s.namespace ?? '\uffff', s.name ?? '\uffff', s.portName ?? '', s.protocol ?? '\uffff', String(s.port).padStart(5, '0'), s.clusterIP ?? ''] }));
  keyed.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i] < b.key[i] ? -1 : 1;
    return 0;
  });
  for (let i = 0; i < keyed.length; i++) services[i] = keyed[i].s;
  services.sort(compareServicePorts);
}
