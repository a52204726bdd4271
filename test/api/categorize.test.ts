/**
 * kpx expects the endpoint set kube-proxy would program: the cases below are kube-proxy's own
 * (kubernetes/kubernetes pkg/proxy/topology_test.go TestCategorizeEndpoints, commit 02756999a07f,
 * the cases named in each row; the hint cases are the `hintsAnnotation: "auto"` ones, which is how
 * current kube-proxy (topology.go topologyModeFromHints) always reads hints, and the terminating
 * cases the `pteEnabled: true` ones: ProxyTerminatingEndpoints is GA), run through kpx's
 * categorizeEndpoints; then the same rules end to end from EndpointSlice YAML.
 */
import { describe, expect, it } from 'vitest';
import { categorizeEndpoints, intendedDataplane, type IntendedEndpoint } from '../../src/kube/intent.js';
import { extractK8sApi } from '../../src/extract/k8s-api.js';

interface Ep {
  e: string;
  zones?: string[];
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  local?: boolean;
}
const ep = (x: Ep): IntendedEndpoint => {
  const [ip, port] = x.e.split(':');
  const ready = x.ready ?? false;
  return { ip, port: Number(port), nodeName: x.local ? 'me' : 'other', zone: null, local: x.local ?? false, ready, serving: x.serving ?? ready, terminating: x.terminating ?? false, zoneHints: x.zones ?? [], nodeHints: [], slice: 's', where: { file: 'f', line: 1, column: 1, text: '' } };
};
const A = (...xs: string[]) => xs.map((x) => `10.1.2.${x}:80`);

/** serviceInfo flags → kpx's usesCluster/usesLocal (serviceport.go UsesClusterEndpoints/UsesLocalEndpoints). */
function uses(s: { itpLocal?: boolean; etpLocal?: boolean; nodePort?: boolean }) {
  const external = s.nodePort === true;
  return { usesCluster: !s.itpLocal || external, usesLocal: !!s.itpLocal || (!!s.etpLocal && external) };
}

const CASES: { name: string; zone?: string; svc: Parameters<typeof uses>[0]; eps: Ep[]; cluster: string[] | null; local: string[] | null; all?: string[] }[] = [
  {
    name: 'normal endpoint filtering, auto annotation',
    zone: 'zone-a',
    svc: {},
    eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: true }, { e: '10.1.2.4:80', zones: ['zone-b'], ready: true }, { e: '10.1.2.5:80', zones: ['zone-c'], ready: true }, { e: '10.1.2.6:80', zones: ['zone-a'], ready: true }],
    cluster: A('3', '6'),
    local: null,
  },
  { name: 'node in different zone, no endpoint filtering', zone: 'zone-b', svc: {}, eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: true }], cluster: A('3'), local: null },
  { name: 'empty node labels', svc: {}, eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: true }], cluster: A('3'), local: null },
  {
    name: 'unready endpoint',
    zone: 'zone-a',
    svc: {},
    eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: true }, { e: '10.1.2.4:80', zones: ['zone-b'], ready: true }, { e: '10.1.2.5:80', zones: ['zone-c'], ready: true }, { e: '10.1.2.6:80', zones: ['zone-a'], ready: false }],
    cluster: A('3'),
    local: null,
  },
  {
    name: 'only unready endpoints in same zone (should not filter)',
    zone: 'zone-a',
    svc: {},
    eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: false }, { e: '10.1.2.4:80', zones: ['zone-b'], ready: true }, { e: '10.1.2.5:80', zones: ['zone-c'], ready: true }, { e: '10.1.2.6:80', zones: ['zone-a'], ready: false }],
    cluster: A('4', '5'),
    local: null,
  },
  {
    name: 'missing hints, no filtering applied',
    zone: 'zone-a',
    svc: {},
    eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: true }, { e: '10.1.2.4:80', zones: ['zone-b'], ready: true }, { e: '10.1.2.5:80', ready: true }, { e: '10.1.2.6:80', zones: ['zone-a'], ready: true }],
    cluster: A('3', '4', '5', '6'),
    local: null,
  },
  {
    name: 'multiple hints per endpoint, filtering includes any endpoint with zone included',
    zone: 'zone-c',
    svc: {},
    eps: [{ e: '10.1.2.3:80', zones: ['zone-a', 'zone-b', 'zone-c'], ready: true }, { e: '10.1.2.4:80', zones: ['zone-b', 'zone-c'], ready: true }, { e: '10.1.2.5:80', zones: ['zone-b', 'zone-d'], ready: true }, { e: '10.1.2.6:80', zones: ['zone-c'], ready: true }],
    cluster: A('3', '4', '6'),
    local: null,
  },
  {
    name: 'externalTrafficPolicy: Local, topology ignored for Local endpoints',
    zone: 'zone-a',
    svc: { etpLocal: true, nodePort: true },
    eps: [{ e: '10.1.2.3:80', zones: ['zone-a'], ready: true, local: true }, { e: '10.1.2.4:80', zones: ['zone-b'], ready: true, local: true }, { e: '10.1.2.5:80', zones: ['zone-c'], ready: true }, { e: '10.1.2.6:80', zones: ['zone-a'], ready: true }],
    cluster: A('3', '6'),
    local: A('3', '4'),
    all: A('3', '4', '6'),
  },
  {
    name: 'conflicting topology and localness require merging allEndpoints',
    zone: 'zone-a',
    svc: { etpLocal: true, nodePort: true },
    eps: [{ e: '10.0.0.0:80', zones: ['zone-a'], ready: true, local: true }, { e: '10.0.0.1:80', zones: ['zone-b'], ready: true, local: true }, { e: '10.0.0.2:80', zones: ['zone-a'], ready: true }, { e: '10.0.0.3:80', zones: ['zone-b'], ready: true }],
    cluster: ['10.0.0.0:80', '10.0.0.2:80'],
    local: ['10.0.0.0:80', '10.0.0.1:80'],
    all: ['10.0.0.0:80', '10.0.0.1:80', '10.0.0.2:80'],
  },
  { name: 'internalTrafficPolicy: Local, but all endpoints are remote', svc: { itpLocal: true }, eps: [{ e: '10.0.0.0:80', ready: true }, { e: '10.0.0.1:80', ready: true }], cluster: null, local: [] },
  { name: 'internalTrafficPolicy: Local, some endpoints are local', svc: { itpLocal: true }, eps: [{ e: '10.0.0.0:80', ready: true, local: true }, { e: '10.0.0.1:80', ready: true }], cluster: null, local: ['10.0.0.0:80'] },
  { name: 'Cluster traffic policy, endpoints not Ready', svc: {}, eps: [{ e: '10.0.0.0:80' }, { e: '10.0.0.1:80' }], cluster: [], local: null },
  {
    name: 'Cluster traffic policy, PTE enabled, all endpoints are terminating',
    svc: {},
    eps: [{ e: '10.0.0.0:80', serving: true, terminating: true, local: true }, { e: '10.0.0.1:80', serving: true, terminating: true }],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: null,
  },
  {
    name: 'iTP: Local, eTP: Local, PTE enabled, all endpoints remote and terminating',
    svc: { itpLocal: true, etpLocal: true, nodePort: true },
    eps: [{ e: '10.0.0.0:80', serving: true, terminating: true }, { e: '10.0.0.1:80', serving: true, terminating: true }],
    cluster: ['10.0.0.0:80', '10.0.0.1:80'],
    local: [],
    all: ['10.0.0.0:80', '10.0.0.1:80'],
  },
  {
    name: 'iTP: Cluster, eTP: Local, PTE enabled, with terminating endpoints',
    svc: { etpLocal: true, nodePort: true },
    eps: [{ e: '10.0.0.0:80', ready: true }, { e: '10.0.0.1:80', serving: false, local: true }, { e: '10.0.0.2:80', serving: true, terminating: true, local: true }, { e: '10.0.0.3:80', serving: true, terminating: true }],
    cluster: ['10.0.0.0:80'],
    local: ['10.0.0.2:80'],
    all: ['10.0.0.0:80', '10.0.0.2:80'],
  },
  { name: 'externalTrafficPolicy ignored if not externally accessible', svc: { etpLocal: true }, eps: [{ e: '10.0.0.0:80', ready: true }, { e: '10.0.0.1:80', ready: true, local: true }], cluster: ['10.0.0.0:80', '10.0.0.1:80'], local: null },
  { name: 'no cluster endpoints for iTP:Local internal-only service', svc: { itpLocal: true }, eps: [{ e: '10.0.0.0:80', ready: true }, { e: '10.0.0.1:80', ready: true, local: true }], cluster: null, local: ['10.0.0.1:80'] },
];

const keys = (xs: readonly IntendedEndpoint[]) => xs.map((e) => `${e.ip}:${e.port}`).sort();

describe('CategorizeEndpoints, kube-proxy\'s own cases (pkg/proxy/topology_test.go)', () => {
  it.each(CASES)('$name', (c) => {
    const u = uses(c.svc);
    const r = categorizeEndpoints(c.eps.map(ep), u, 'me', c.zone ?? null);
    // kube-proxy's nil ("does not use this kind") is kpx's usesCluster/usesLocal false.
    expect(u.usesCluster).toBe(c.cluster !== null);
    expect(u.usesLocal).toBe(c.local !== null);
    if (c.cluster !== null) expect(keys(r.cluster)).toEqual([...c.cluster].sort());
    if (c.local !== null) expect(keys(r.localSet)).toEqual([...c.local].sort());
    const all = c.all ?? c.cluster ?? c.local ?? [];
    expect(keys(r.reachable)).toEqual([...all].sort());
  });
});

describe('from EndpointSlices and Nodes, as kubectl prints them', () => {
  const api = (nodeZone: string, conditions: string[]) =>
    extractK8sApi(
      [
        'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels:\n    topology.kubernetes.io/zone: ' + nodeZone + '\nstatus:\n  addresses:\n  - type: InternalIP\n    address: 172.18.0.2',
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  clusterIP: 10.96.0.50\n  ports:\n  - name: http\n    port: 80\n    protocol: TCP\n    targetPort: 8080',
        'apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-abc\n  namespace: shop\n  labels:\n    kubernetes.io/service-name: web\naddressType: IPv4\nports:\n- name: http\n  port: 8080\n  protocol: TCP\nendpoints:\n' +
          conditions.join(''),
      ].join('\n---\n'),
      'api.yaml',
    ).data;
  const endpoint = (ip: string, zone: string, cond: string) => `- addresses: ["${ip}"]\n  conditions: {${cond}}\n  nodeName: node-${zone.slice(-1)}\n  zone: ${zone}\n  hints:\n    forZones: [{name: ${zone}}]\n`;
  const node = { name: 'node-a', interfaces: [], extraNodeIps: [] };

  it('topology hints narrow the set to the Node\'s zone (from its topology.kubernetes.io/zone label)', () => {
    const intent = intendedDataplane(api('zone-a', [endpoint('10.0.1.1', 'zone-a', 'ready: true'), endpoint('10.0.2.1', 'zone-b', 'ready: true')]), node);
    expect(intent.zone).toBe('zone-a');
    expect(intent.ports).toHaveLength(1);
    expect(intent.ports[0].topologyMode).toBe('PreferSameZone');
    expect(keys(intent.ports[0].reachable)).toEqual(['10.0.1.1:8080']);
    // A node in a zone no endpoint is hinted for falls back to every ready endpoint.
    const other = intendedDataplane(api('zone-c', [endpoint('10.0.1.1', 'zone-a', 'ready: true'), endpoint('10.0.2.1', 'zone-b', 'ready: true')]), node);
    expect(other.ports[0].topologyMode).toBe('');
    expect(keys(other.ports[0].reachable)).toEqual(['10.0.1.1:8080', '10.0.2.1:8080']);
  });

  it('terminating endpoints are used only when none is ready; not-serving ones never', () => {
    const both = intendedDataplane(api('zone-a', [endpoint('10.0.1.1', 'zone-a', 'ready: false, serving: true, terminating: true'), endpoint('10.0.1.2', 'zone-a', 'ready: true, serving: true, terminating: false')]), node);
    expect(keys(both.ports[0].reachable)).toEqual(['10.0.1.2:8080']);
    const onlyTerminating = intendedDataplane(api('zone-a', [endpoint('10.0.1.1', 'zone-a', 'ready: false, serving: true, terminating: true'), endpoint('10.0.1.3', 'zone-a', 'ready: false, serving: false, terminating: true')]), node);
    expect(keys(onlyTerminating.ports[0].reachable)).toEqual(['10.0.1.1:8080']);
    expect(onlyTerminating.ports[0].clusterFallback).toBe(true);
  });

  it('headless and ExternalName Services are explained, not expected on the node', () => {
    const r = extractK8sApi('apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: data}\nspec: {clusterIP: None, ports: [{port: 5432}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: mail, namespace: default}\nspec: {type: ExternalName, externalName: smtp.example.com}\n', 'x.yaml').data;
    const intent = intendedDataplane(r, node);
    expect(intent.ports).toEqual([]);
    expect(intent.withoutRules.map((w) => [w.service.name, w.reason])).toEqual([
      ['db', 'headless'],
      ['mail', 'external-name'],
    ]);
  });
});
