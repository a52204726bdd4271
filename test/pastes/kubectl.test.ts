/**
 * kubectl's text output read as PARTIAL API objects (issue 30), on real public pastes
 * (test/fixtures/pastes/kubectl/*.txt, each with its .source): what each table or describe block
 * gives, what it leaves unknown, and where each object is cited.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractKubectl } from '../../src/extract/kubectl.js';
import { detectFormat } from '../../src/load/index.js';
import { knows, type ApiObjects, type ApiService } from '../../src/model/k8s-api.js';

const FIX = (name: string) => readFileSync(new URL(`../fixtures/pastes/kubectl/${name}`, import.meta.url), 'utf8');
const read = (name: string) => extractKubectl(FIX(name), name);
const svc = (d: ApiObjects, name: string): ApiService => {
  const s = d.services.find((x) => x.name === name);
  if (!s) throw new Error(`no Service ${name}: ${d.services.map((x) => x.name).join(', ')}`);
  return s;
};
const ports = (s: ApiService) => s.ports.map((p) => `${p.name ?? '-'} ${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}`);

describe('kubectl get svc tables', () => {
  it('jupyterhub#291: a custom PS1 prompt names the namespace; NodePort ports; port names, policies and selector unknown', () => {
    const r = read('jupyterhub-291-get-pod-svc.txt');
    expect(detectFormat(FIX('jupyterhub-291-get-pod-svc.txt'))).toBe('kubectl');
    expect(r.data.services.map((s) => `${s.namespace}/${s.name} ${s.type} ${s.clusterIP}`)).toEqual([
      'jupyterhub-test/hub ClusterIP 10.109.17.252',
      'jupyterhub-test/proxy-api ClusterIP 10.108.183.206',
      'jupyterhub-test/proxy-http ClusterIP 10.102.57.168',
      'jupyterhub-test/proxy-public NodePort 10.111.237.213',
    ]);
    const pub = svc(r.data, 'proxy-public');
    expect(ports(pub)).toEqual(['- 80:30088/tcp', '- 443:31606/tcp']);
    expect(pub.where).toMatchObject({ file: 'jupyterhub-291-get-pod-svc.txt', line: 12, column: 1 });
    for (const f of ['namespace', 'type', 'clusterIPs', 'externalIPs'] as const) expect(knows(pub, f), f).toBe(true);
    for (const f of ['portNames', 'selector', 'externalTrafficPolicy', 'internalTrafficPolicy', 'sessionAffinity', 'labels'] as const) expect(knows(pub, f), f).toBe(false);
    // `get svc -n NS`, unfiltered: that namespace's Services are listed whole.
    expect(r.data.serviceNamespaces).toEqual(['jupyterhub-test']);
    // The pod table (no -o wide): pods without IP or node.
    expect(r.data.pods.map((p) => [p.namespace, p.name, p.nodeName, p.podIPs.length])).toEqual([
      ['jupyterhub-test', 'hub-deployment-6c46b6bc66-v76ww', null, 0],
      ['jupyterhub-test', 'proxy-b4c8959c8-lcs7c', null, 0],
      ['jupyterhub-test', 'shell-8668d8c69f-cnpbz', null, 0],
    ]);
    // The closing bare prompt is noise, not a row.
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  });

  it('kubernetes#20652: kubectl 1.1 columns (CLUSTER_IP, SELECTOR, no TYPE); endpoints of every namespace, ready ones only', () => {
    const r = read('kubernetes-20652-old-columns.txt');
    const rc = svc(r.data, 'rc-default');
    expect([rc.clusterIP, rc.selector, knows(rc, 'type'), knows(rc, 'selector'), knows(rc, 'namespace')]).toEqual(['10.0.5.65', { name: 'rc-default' }, false, true, false]);
    expect(r.data.serviceNamespaces).toEqual([]);
    const dns = r.data.slices.find((s) => s.name === 'kube-dns')!;
    expect(dns).toMatchObject({ namespace: 'kube-system', serviceName: 'kube-dns', fromEndpoints: true });
    expect(dns.text).toMatchObject({ form: 'kubectl get endpoints', hidden: 0, wholeService: false });
    expect(dns.text!.shows.has('notReady')).toBe(false);
    expect(r.data.slices.find((s) => s.name === 'monitoring-influxdb')!.ports.map((p) => p.port)).toEqual([8083, 8086]);
    expect(r.data.slices).toHaveLength(9);
  });

  it('kubernetes#72086 and istio#10511: misaligned or collapsed columns, redacted cluster IPs (unknown, reported where they are)', () => {
    for (const f of ['kubernetes-72086-collapsed-redacted.txt', 'istio-10511-single-spaces.txt']) {
      const r = read(f);
      const ilb = svc(r.data, 'dns-ilb');
      expect([ilb.type, ilb.clusterIP, knows(ilb, 'clusterIPs'), ports(ilb)], f).toEqual(['LoadBalancer', null, false, ['- 53:30749/udp']]);
      // `<pending>` / `pending`: a LoadBalancer with no address yet — known empty.
      expect([ilb.loadBalancerIPs, knows(ilb, 'externalAddresses')], f).toEqual([[], true]);
      const bad = r.diagnostics.filter((d) => d.code === 'kubectl/bad-value');
      expect(bad.length, f).toBe(r.data.services.length);
      expect(bad[0].line, f).toBe(3);
      expect(FIX(f).split('\n')[2].slice(bad[0].column - 1)).toMatch(/^xx\.xx\.xx\.xx/);
    }
    expect(ports(svc(read('kubernetes-72086-collapsed-redacted.txt').data, 'kube-dns'))).toEqual(['- 53/udp', '- 53/tcp']);
  });

  it('website#2381 and kubernetes#34100: no TYPE column; a NodePort in PORT(S) makes the type at least NodePort; `<nodes>` is no address', () => {
    const r = read('website-2381-no-type-column.txt');
    expect(svc(r.data, 'my-service')).toMatchObject({ type: 'NodePort', clusterIP: '10.0.0.172' });
    expect(knows(svc(r.data, 'my-service'), 'type')).toBe(false);
    // `~$kubectl get services`: a command without -n: the context's namespace, unknown; nothing listed whole.
    expect(r.data.serviceNamespaces).toEqual([]);
    const foo = svc(read('kubernetes-34100-nodes-external.txt').data, 'foobar');
    expect([foo.externalIPs, foo.loadBalancerIPs, ports(foo)]).toEqual([[], [], ['- 9090:32410/tcp']]);
  });

  it('ingress-nginx#11268: `get all -o wide` — kind/ prefixes, SELECTOR, a LoadBalancer address read whole (not clipped)', () => {
    const r = read('ingress-nginx-11268-get-all-wide.txt');
    const lb = svc(r.data, 'ingress-nginx-controller');
    expect([lb.type, lb.loadBalancerIPs, knows(lb, 'externalAddresses'), ports(lb).length]).toEqual(['LoadBalancer', ['192.168.0.115'], true, 4]);
    expect(lb.selector).toEqual({ 'app.kubernetes.io/component': 'controller', 'app.kubernetes.io/instance': 'ingress-nginx', 'app.kubernetes.io/name': 'ingress-nginx' });
    expect(r.data.pods).toEqual([expect.objectContaining({ name: 'ingress-nginx-controller-99bf68dd6-bmw2c', nodeName: 'k8sm01', podIPs: ['10.32.80.24'] })]);
  });

  it('innopolis labs: `get pods,svc` under a Markdown heading, an indented header, RESTARTS `1 (14m ago)`', () => {
    const r = read('innopolis-labs-get-pods-svc.txt');
    expect(r.data.services.map((s) => `${s.name} ${s.type}`)).toEqual(['kubernetes ClusterIP', 'lab9 LoadBalancer', 'app-service LoadBalancer', 'kubernetes ClusterIP']);
    expect(r.data.pods.map((p) => p.name)).toEqual(['lab9-5bcbd77446-qg2cw', 'app-deployment-656cb6959-l9dmd', 'app-deployment-656cb6959-tzqzl', 'app-deployment-656cb6959-z7d46']);
    expect(r.diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
  });

  it('kubernetes#9329: kubectl 0.18 (LABELS, IP(S)); a second port wrapped onto its own line; `...` elision', () => {
    const r = read('kubernetes-9329-wrapped-ports.txt');
    const s = svc(r.data, 'nginx-ssl-proxy');
    expect([ports(s), s.selector, s.serviceProxyName, knows(s, 'labels')]).toEqual([['- 443/tcp', '- 80/tcp'], { name: 'nginx', role: 'ssl-proxy' }, null, true]);
  });
});

describe('kubectl get pods / endpoints / endpointslices', () => {
  it('kube-proxy#5 and coredns#2325: each pod\'s IP and node from -o wide, with or without READINESS GATES', () => {
    const a = read('kube-proxy-5-pods-all-wide.txt').data.pods;
    expect(a.map((p) => `${p.namespace}/${p.name} ${p.podIPs[0]} ${p.nodeName}`)).toEqual([
      'default/ambassador-587bcf4475-b8tds 10.241.216.40 node1',
      'default/ambassador-587bcf4475-wjgxb 10.241.224.17 node2',
      'default/apple-app 10.241.240.14 node3',
      'default/hello-node-64c578bdf8-zj2wx 10.241.240.15 node3',
      'default/httpd-87f588f84-z24ld 10.241.216.35 node1',
      'default/httpd1-dd9c68c66-cl7m5 10.241.240.16 node3',
    ]);
    const b = read('coredns-2325-pods-wide-old.txt').data.pods;
    expect(b).toHaveLength(7);
    expect(b.find((p) => p.name === 'coredns-576cbf47c7-4sftw')).toMatchObject({ namespace: 'kube-system', nodeName: 'k8s-node133', podIPs: ['192.168.124.3'] });
  });

  it('kubernetes#95149: `<none>` endpoints, IP:port lists, and an EndpointSlice table (its Service not shown)', () => {
    const r = read('kubernetes-95149-endpoints-slices.txt');
    const none = r.data.slices.find((s) => s.name === 'etcd-operator')!;
    expect([none.endpoints.length, none.text!.hidden]).toEqual([0, 0]);
    expect(r.data.slices.find((s) => s.name === 'my-nginx')!.endpoints.map((e) => e.addresses[0])).toEqual(['10.40.163.197', '10.40.238.137']);
    const slice = r.data.slices.find((s) => !s.fromEndpoints)!;
    expect(slice).toMatchObject({ name: 'kubernetes', serviceName: null, addressType: 'IPv4' });
    expect(slice.endpoints[0].conditions.ready).toBeNull();
  });
});

describe('kubectl describe', () => {
  it('kubernetes#5875: the old tab layout, two Services, multi-line labels, ClientIP affinity (timeout not shown: unknown)', () => {
    const r = read('kubernetes-5875-describe-tabs.txt');
    const k = svc(r.data, 'kubernetes');
    expect([k.namespace, k.clusterIP, ports(k), k.selector, k.sessionAffinitySeconds !== null]).toEqual(['default', '10.0.0.1', ['https 443/tcp'], null, true]);
    expect([knows(k, 'selector'), knows(k, 'sessionAffinity'), knows(k, 'sessionAffinityTimeout'), knows(k, 'internalTrafficPolicy')]).toEqual([true, true, false, false]);
    const n = svc(r.data, 'nginxsvc');
    expect(ports(n)).toEqual(['http 80:31237/tcp', 'https 443:32133/tcp']);
    expect(n.where).toMatchObject({ line: 13 });
    // Endpoints `<none>` per port: no ready endpoint shown — but not-ready ones are not shown either.
    const eps = r.data.slices.find((s) => s.serviceName === 'nginxsvc')!;
    expect([eps.endpoints.length, eps.text!.shows.has('notReady'), eps.text!.wholeService]).toEqual([0, false, false]);
  });

  it('website#35852: today\'s layout; three endpoints and `+ 1 more...` (one hidden), External Traffic Policy shown', () => {
    const r = read('website-35852-describe-nodeport.txt');
    const s = svc(r.data, 'kubernetes-bootcamp');
    expect([s.type, s.clusterIP, s.clusterIPs, ports(s), s.externalTrafficPolicy, knows(s, 'externalTrafficPolicy'), knows(s, 'internalTrafficPolicy')]).toEqual([
      'NodePort',
      '10.99.3.50',
      ['10.99.3.50'],
      ['- 8080:30624/tcp'],
      'Cluster',
      true,
      false,
    ]);
    const eps = r.data.slices[0];
    expect(eps.endpoints.map((e) => e.addresses[0])).toEqual(['172.18.0.5', '172.18.0.7', '172.18.0.8']);
    expect(eps.text!.hidden).toBe(1);
    expect(eps.endpoints[0].where).toMatchObject({ line: 15 });
  });

  it('dashboard#320: a bare describe command, old layout, one endpoint under its port\'s name', () => {
    const r = read('dashboard-320-describe-old-nodeport.txt');
    const s = svc(r.data, 'default-http-backend');
    expect([s.namespace, ports(s), s.selector]).toEqual(['kube-system', ['http 80:30295/tcp'], { 'k8s-app': 'glbc' }]);
    expect(r.data.slices[0].ports).toEqual([{ name: 'http', protocol: 'tcp', port: 8080 }]);
  });
});
