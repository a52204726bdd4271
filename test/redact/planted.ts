/**
 * A bundle with identifying values planted in every format kpx reads, for the redact leak test
 * (issue 34). CONSTRUCTED input, not a real sample: the rules, ipsets, IPVS table, routes and API
 * objects come from the generator (src/generate) with the cluster's names replaced by planted ones
 * (`payments-prod/checkout-api` on node `acme-node-17`…); the other formats are written here in
 * the shapes their tools print (the grammar tests hold the real samples of each).
 *
 * Three node folders, one per proxy mode (a cluster bundle), so each is read as one node.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCluster, writeBundle, type Mode } from '../../src/generate/index.js';
import type { Cluster, Service } from '../../src/generate/cluster.js';
import { nftNameHash } from '../../src/kube/resolve-nft.js';

/** Every value that must not survive redaction, by what it is. */
export const PLANTED = {
  namespace: 'payments-prod',
  service: 'checkout-api',
  otherService: 'ledger-sync',
  pod: 'checkout-api-7d9f8b6c5-x2kqp',
  node: 'acme-node-17',
  otherNode: 'acme-node-18',
  controlPlane: 'acme-cp-01',
  domain: 'corp.acme-example.net',
  zone: 'eu-acme-1a',
  region: 'eu-acme-1',
  labelKey: 'acme.example/team',
  labelValue: 'team-tiger',
  annotationKey: 'acme.example/owner',
  annotationValue: 'alice-acme-oncall',
  netns: 'cni-5e1f0c2a-acme',
  alias: 'uplink-to-acme-core',
  mac: '0a:58:0a:f4:01:07',
  otherMac: '52:54:00:ac:3e:11',
  clusterIP: '10.105.110.20',
  podIP: '10.244.1.8',
  nodeIP: '172.18.0.3',
  publicIP: '34.120.77.7',
  v6: 'fd00:10:244:1::8',
  lbHostname: 'a1b2c3acme.elb.example-cloud.net',
  providerID: 'aws:///eu-acme-1a/i-0acme1234deadbeef',
  image: 'registry.acme-example.net/checkout:1.2.3',
  comment: 'managed by acme billing team',
  logPrefix: 'ACME-DROP',
  context: 'acme-prod-admin',
  journaldHost: 'acme-node-17',
  kubeconfigServer: 'https://api.acme-example.net:6443',
  uid: '7f3c2a1e-acme-4b7e-9c1d-0123456789ab',
  readme: 'the acme payments cluster in eu-acme-1a',
} as const;

/** Values that are the generator's own (hashes of planted names): found after the bundle is written. */
export interface Planted {
  readonly root: string;
  readonly nodes: readonly string[];
  /** Pasted outputs (an iptables -L listing, kubectl's text table, Cilium's table): not a node. */
  readonly pastes: string;
  /** Every planted value, including the KUBE-SVC/SEP and nft hashes of the planted Service. */
  readonly values: readonly string[];
}

const RENAME: Record<string, string> = { shapes: PLANTED.namespace, loadbalancer: PLANTED.service, 'two-endpoints': PLANTED.otherService };
const NODES: Record<string, string> = { 'k8s-worker': PLANTED.node, 'k8s-worker2': PLANTED.otherNode, 'k8s-control-plane': PLANTED.controlPlane };

/** The generator's cluster with the planted names (Services, namespace, nodes), every reference kept. */
function plantedCluster(): Cluster {
  const c = generateCluster({ seed: 5, services: 12 });
  const node = (n: Cluster['node']) => ({ ...n, name: NODES[n.name] ?? n.name });
  const byOld = new Map<Service, Service>();
  for (const s of c.services) {
    byOld.set(s, {
      ...s,
      namespace: RENAME[s.namespace] ?? s.namespace,
      name: RENAME[s.name] ?? s.name,
      ports: s.ports.map((p) => ({ ...p, endpoints: p.endpoints.map((e) => ({ ...e, nodeName: NODES[e.nodeName] ?? e.nodeName })) })),
    });
  }
  const syncOrder = c.syncOrder.map((ref) => {
    const service = byOld.get(ref.service)!;
    return { service, port: service.ports[ref.service.ports.indexOf(ref.port)] };
  });
  return { ...c, node: node(c.node), nodes: c.nodes.map(node), services: c.services.map((s) => byOld.get(s)!), syncOrder };
}

const put = (dir: string, name: string, text: string) => writeFileSync(join(dir, name), text);

export function writePlantedBundle(root: string): Planted {
  const cluster = plantedCluster();
  const nodes: string[] = [];
  for (const mode of ['iptables', 'ipvs', 'nftables'] as Mode[]) {
    const dir = join(root, `node-${mode}`);
    writeBundle(cluster, mode, dir, { api: {} });
    nodes.push(dir);
  }
  const [ipt, ipvs, nft] = nodes;
  writeOtherFormats(ipt);
  // The IPVS node: the other text forms of the same facts.
  put(ipvs, 'ip-route.json', JSON.stringify([{ dst: '10.244.9.0/24', gateway: '10.244.9.0', dev: 'flannel.1', flags: ['onlink'] }, { dst: 'default', gateway: '172.18.0.1', dev: 'eth0' }], null, 2) + '\n');
  put(ipvs, 'ip-rule.json', JSON.stringify([{ priority: 0, src: 'all', table: 'local' }, { priority: 100, src: PLANTED.podIP, srclen: 32, table: '100' }], null, 2) + '\n');
  put(ipvs, 'ip-rule.txt', `0:\tfrom all lookup local\n100:\tfrom ${PLANTED.podIP} lookup 100\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n`);
  put(ipvs, 'ipset-save.txt', `create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 comment\nadd KUBE-CLUSTER-IP ${PLANTED.clusterIP},tcp:80 comment "${PLANTED.namespace}/${PLANTED.service}:http"\n`);
  put(ipvs, 'ip-link.json', JSON.stringify(ipLinkJson(), null, 2) + '\n');
  writeNftJson(nft);
  // Notes, a hidden dump and a link out of the bundle: never copied.
  put(root, 'README', `Bundle of ${PLANTED.readme}, node ${PLANTED.node}\n`);
  put(ipt, '.iptables-save', `*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s ${PLANTED.publicIP}/32 -m comment --comment "${PLANTED.comment}" -j DROP\nCOMMIT\n`);
  const outside = join(root, '..', `outside-${Date.now()}.txt`);
  writeFileSync(outside, `kernel.hostname = ${PLANTED.node}\n`);
  symlinkSync(outside, join(ipt, 'outside-sysctl.txt'));
  // Pasted outputs: an iptables -L listing (rewritten as text), kubectl's and Cilium's tables (not copied).
  const pastes = join(root, 'pastes');
  mkdirSync(pastes);
  put(pastes, 'iptables-L.txt', `Chain KUBE-SERVICES (2 references)\ntarget     prot opt source               destination\nKUBE-SVC-ABCDEFGHIJKLMNOP  tcp  --  0.0.0.0/0            ${PLANTED.clusterIP}        /* ${PLANTED.namespace}/${PLANTED.service}:http cluster IP */ tcp dpt:80\n`);
  put(pastes, 'kubectl-get-svc.txt', `NAMESPACE       NAME            TYPE        CLUSTER-IP      EXTERNAL-IP   PORT(S)   AGE\n${PLANTED.namespace}   ${PLANTED.service}   ClusterIP   ${PLANTED.clusterIP}   <none>        80/TCP    5d\n`);
  put(pastes, 'cilium-lb.txt', `SERVICE ADDRESS       BACKEND ADDRESS\n${PLANTED.clusterIP}:80      ${PLANTED.podIP}:8080 (1)\n`);
  const values = [...Object.values(PLANTED), ...hashesOf()];
  return { root, nodes, pastes, values };
}

/** KUBE-SVC/SEP chain hashes and nft object names of the planted Service: they must change too. */
function hashesOf(): string[] {
  const spn = `${PLANTED.namespace}/${PLANTED.service}:http`;
  // The iptables chain hashes are checked on the written dump (the test reads them); the nft name here.
  return [nftNameHash(`${PLANTED.namespace}/${PLANTED.service}/tcp/http`), spn];
}

function ipLinkJson(): unknown {
  return [
    { ifindex: 2, ifname: 'eth0', flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'], mtu: 1500, operstate: 'UP', link_type: 'ether', address: PLANTED.otherMac, broadcast: 'ff:ff:ff:ff:ff:ff', ifalias: PLANTED.alias,
      addr_info: [{ family: 'inet', local: PLANTED.nodeIP, prefixlen: 16, scope: 'global', label: 'eth0' }] },
    { ifindex: 7, ifname: 'veth1a2b3c4d', link_index: 3, link_netns: PLANTED.netns, flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'], mtu: 1450, master: 'cni0', operstate: 'UP', link_type: 'ether', address: PLANTED.mac, broadcast: 'ff:ff:ff:ff:ff:ff', addr_info: [] },
  ];
}

function writeNftJson(dir: string): void {
  const svc = `${PLANTED.namespace}/${PLANTED.service}/tcp/http`;
  const name = `service-${nftNameHash(svc)}-${svc}`;
  const ep = `${svc}__${PLANTED.podIP}/8080`;
  const epName = `endpoint-${nftNameHash(ep)}-${ep}`;
  const doc = {
    nftables: [
      { metainfo: { version: '1.0.9', json_schema_version: 1 } },
      { table: { family: 'ip', name: 'kube-proxy-json', handle: 2, comment: 'rules for kube-proxy' } },
      { map: { family: 'ip', name: 'service-ips', table: 'kube-proxy-json', type: ['ipv4_addr', 'inet_proto', 'inet_service'], handle: 5, map: 'verdict',
        elem: [[{ elem: { val: { concat: [PLANTED.clusterIP, 'tcp', 80] }, comment: `${PLANTED.namespace}/${PLANTED.service}:http` } }, { goto: { target: name } }]] } },
      { chain: { family: 'ip', table: 'kube-proxy-json', name, handle: 7 } },
      { chain: { family: 'ip', table: 'kube-proxy-json', name: epName, handle: 8 } },
      { rule: { family: 'ip', table: 'kube-proxy-json', chain: name, handle: 9, comment: PLANTED.comment, expr: [{ goto: { target: epName } }] } },
      { rule: { family: 'ip', table: 'kube-proxy-json', chain: epName, handle: 10, expr: [{ dnat: { addr: PLANTED.podIP, port: 8080 } }] } },
    ],
  };
  put(dir, 'nft-ruleset.json', JSON.stringify(doc, null, 2) + '\n');
}

/** The iptables node: every other text format, in its tool's shape. */
function writeOtherFormats(dir: string): void {
  const p = PLANTED;
  put(dir, 'sysctl.txt', `kernel.hostname = ${p.node}\nkernel.domainname = ${p.domain}\nnet.ipv4.ip_forward = 1\nnet.ipv4.conf.all.route_localnet = 1\n`);
  put(dir, 'uname.txt', `Linux ${p.node} 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux\n`);
  put(
    dir,
    'ip-link.txt',
    [
      `2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc fq_codel state UP mode DEFAULT group default qlen 1000`,
      `    link/ether ${p.otherMac} brd ff:ff:ff:ff:ff:ff promiscuity 0 minmtu 68 maxmtu 65535`,
      `    alias ${p.alias}`,
      `7: veth1a2b3c4d@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue master cni0 state UP mode DEFAULT group default`,
      `    link/ether ${p.mac} brd ff:ff:ff:ff:ff:ff link-netns ${p.netns} promiscuity 1 minmtu 68 maxmtu 65535`,
      `    veth`,
      `    bridge_slave state forwarding priority 32 cost 2 hairpin on guard off root_block off fastleave off learning on flood on`,
      '',
    ].join('\n'),
  );
  put(dir, 'ip6-addr.txt', `3: eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc fq_codel state UP group default qlen 1000\n    link/ether ${p.otherMac} brd ff:ff:ff:ff:ff:ff\n    inet6 ${p.v6}/64 scope global\n       valid_lft forever preferred_lft forever\n`);
  put(dir, 'ip-route-extra.txt', `10.244.0.0/24 via 10.244.0.0 dev flannel.1 onlink\n${p.publicIP.replace(/\.\d+$/, '.0')}/24 via 172.18.0.1 dev eth0\n`);
  put(dir, 'bridge-link.txt', `7: veth1a2b3c4d@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 master cni0 state forwarding priority 32 cost 2\n    hairpin on guard off root_block off fastleave off learning on flood on mcast_flood on\n`);
  put(dir, 'hairpin.txt', '/sys/class/net/cni0/brif/veth1a2b3c4d/hairpin_mode:1\n');
  put(
    dir,
    'ip6tables-save.txt',
    `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -s ${p.v6}/128 -m mac --mac-source ${p.mac} -m comment --comment "${p.comment}" -j LOG --log-prefix "${p.logPrefix}: "\nCOMMIT\n`,
  );
  put(dir, 'conntrack.txt', `tcp      6 86397 ESTABLISHED src=${p.podIP} dst=${p.clusterIP} sport=40312 dport=80 src=10.244.2.11 dst=${p.podIP} sport=8080 dport=40312 [ASSURED] mark=0 use=1\nudp      17 29 src=${p.publicIP} dst=${p.nodeIP} sport=43145 dport=53 [UNREPLIED] src=${p.nodeIP} dst=${p.publicIP} sport=53 dport=43145 mark=0 use=1\n`);
  put(dir, 'conntrack-stats.txt', 'cpu=0           found=0 invalid=1 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 search_restart=3\n');
  put(
    dir,
    'kube-proxy.log',
    [
      `I1025 16:06:08.409876       1 server_others.go:69] "Using iptables proxy"`,
      `I1025 16:06:08.463579       1 node.go:141] Successfully retrieved node IP: ${p.nodeIP}`,
      `I1025 16:06:08.470852       1 server.go:528] "Successfully retrieved node IP(s)" IPs=["${p.nodeIP}"] node="${p.node}"`,
      `I1025 16:06:09.100000       1 proxier.go:853] "Syncing iptables rules"`,
      `I1025 16:06:09.200000       1 service.go:324] "Service updated ports" service="${p.namespace}/${p.service}" portCount=1`,
      `E1025 16:06:10.300000       1 endpointslicecache.go:303] "Error getting endpoint slice cache keys" err="no kubernetes.io/service-name label set on endpoint slice: ${p.namespace}/${p.service}-abcde" pod="${p.namespace}/${p.pod}"`,
      '',
    ].join('\n'),
  );
  put(
    dir,
    'kube-proxy-journal.log',
    `Nov 14 11:06:11 ${p.journaldHost} kube-proxy[12085]: I1114 11:06:11.100000   12085 proxier.go:853] "Syncing iptables rules"\nNov 14 11:06:11 ${p.journaldHost} kube-proxy[12085]: I1114 11:06:11.200000   12085 service.go:324] "Service updated ports" service="${p.namespace}/${p.otherService}" portCount=1\n`,
  );
  put(
    dir,
    'kube-proxy-docker.log',
    JSON.stringify({ log: `I0602 07:02:20.655104       1 server.go:198] "Using iptables proxy" node="${p.node}"\n`, stream: 'stderr', time: '2019-06-02T07:02:20.655440465Z' }) +
      '\n' +
      JSON.stringify({ log: `W0602 07:02:21.100000       1 proxier.go:480] Failed to sync endpoints for service ${p.namespace}/${p.service}: pod ${p.pod} on ${p.node}\n`, stream: 'stderr', time: '2019-06-02T07:02:21.100000000Z' }) +
      '\n',
  );
  put(
    dir,
    'kube-proxy-configmap.yaml',
    [
      'apiVersion: v1',
      'data:',
      '  config.conf: |-',
      '    apiVersion: kubeproxy.config.k8s.io/v1alpha1',
      '    bindAddress: 0.0.0.0',
      '    clientConnection:',
      '      kubeconfig: /var/lib/kube-proxy/kubeconfig.conf',
      '    clusterCIDR: 10.244.0.0/16',
      `    hostnameOverride: ${p.node}`,
      '    kind: KubeProxyConfiguration',
      '    mode: iptables',
      '  kubeconfig.conf: |-',
      '    apiVersion: v1',
      '    clusters:',
      '    - cluster:',
      `        server: ${p.kubeconfigServer}`,
      `      name: ${p.context}`,
      'kind: ConfigMap',
      'metadata:',
      '  annotations:',
      `    ${p.annotationKey}: ${p.annotationValue}`,
      '  labels:',
      `    ${p.labelKey}: ${p.labelValue}`,
      '  name: kube-proxy',
      '  namespace: kube-system',
      `  uid: ${p.uid}`,
      '',
    ].join('\n'),
  );
  put(dir, 'kube-proxy-flags.txt', `$ ps -ef | grep kube-proxy\nroot 1750 1697 0 01:20 ? 00:00:09 kube-proxy --cluster-cidr=10.244.0.0/16 --hostname-override=${p.node} --proxy-mode=iptables --kubeconfig=/etc/acme-example/${p.context}.kubeconfig\n`);
  put(dir, 'api-extra.yaml', apiYaml());
  put(dir, 'api-extra.json', JSON.stringify(apiJson(), null, 2) + '\n');
  put(
    dir,
    'manifest.json',
    JSON.stringify(
      {
        kind: 'kpx-bundle',
        host: p.node,
        collectedAt: '2026-11-22T01:04:04.268Z',
        kpxVersion: '0.1.0',
        steps: [{ file: 'iptables-save.txt', command: 'iptables-save', status: 'ok', bytes: 100 }],
        api: { status: 'ok', context: p.context, collectedAt: '2026-11-22T01:04:05.000Z' },
      },
      null,
      2,
    ) + '\n',
  );
}

/** A Node, a Pod and an EndpointSlice with every field people fill in (labels, annotations, images, provider IDs). */
function apiJson(): unknown {
  const p = PLANTED;
  const meta = (name: string, ns?: string) => ({
    name,
    ...(ns ? { namespace: ns } : {}),
    uid: p.uid,
    labels: { [p.labelKey]: p.labelValue, 'topology.kubernetes.io/zone': p.zone, 'topology.kubernetes.io/region': p.region, 'kubernetes.io/hostname': p.node },
    annotations: { [p.annotationKey]: p.annotationValue, 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ metadata: { name, namespace: ns } }) },
    managedFields: [{ manager: `${p.context}-operator`, operation: 'Update' }],
  });
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Node', metadata: meta(p.node), spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: p.providerID }, status: { addresses: [{ type: 'InternalIP', address: p.nodeIP }, { type: 'Hostname', address: p.node }, { type: 'InternalDNS', address: `${p.node}.${p.domain}` }], nodeInfo: { machineID: p.uid }, images: [{ names: [p.image] }] } },
      { apiVersion: 'v1', kind: 'Pod', metadata: meta(p.pod, p.namespace), spec: { nodeName: p.node, containers: [{ name: p.service, image: p.image, env: [{ name: 'DB', value: p.kubeconfigServer }] }] }, status: { phase: 'Running', podIP: p.podIP, podIPs: [{ ip: p.podIP }], hostIP: p.nodeIP } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { ...meta(`${p.service}-abcde`, p.namespace), labels: { 'kubernetes.io/service-name': p.service, [p.labelKey]: p.labelValue } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [p.podIP], conditions: { ready: true, serving: true, terminating: false }, nodeName: p.node, zone: p.zone, targetRef: { kind: 'Pod', name: p.pod, namespace: p.namespace, uid: p.uid }, hints: { forZones: [{ name: p.zone }] } }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(`${p.service}-config`, p.namespace), data: { url: p.kubeconfigServer } },
    ],
  };
}

function apiYaml(): string {
  const p = PLANTED;
  return [
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    `  name: ${p.service}`,
    `  namespace: ${p.namespace}`,
    `  uid: ${p.uid}`,
    '  labels:',
    `    ${p.labelKey}: ${p.labelValue}`,
    '  annotations:',
    `    ${p.annotationKey}: ${p.annotationValue}`,
    'spec:',
    '  type: LoadBalancer',
    `  clusterIP: ${p.clusterIP}`,
    '  selector:',
    `    app: ${p.service}`,
    '  ports:',
    '  - name: http',
    '    port: 80',
    '    protocol: TCP',
    '    targetPort: 8080',
    'status:',
    '  loadBalancer:',
    '    ingress:',
    `    - ip: ${p.publicIP}`,
    `      hostname: ${p.lbHostname}`,
    '',
  ].join('\n');
}
