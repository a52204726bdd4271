/**
 * resolveNft over the nftables-mode corpus samples. Every expected value below was read off the
 * files themselves (chain names, map elements, numgen vmaps, dnat targets).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveNft } from '../../src/kube/resolve-nft.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { corpusDir } from '../helpers/corpus.js';
import { problemText } from '../../src/render/problems.js';

const texts = (s: Pick<ServicePort, 'problems'>) => s.problems.map(problemText);

async function resolve(rel: string): Promise<Resolution> {
  return resolveNft(await loadSnapshot([join(corpusDir(), rel)]));
}

function svc(r: Resolution, id: string): ServicePort {
  const s = r.services.find((x) => x.id === id);
  if (!s) throw new Error(`no ${id} in ${r.services.map((x) => x.id).join(', ')}`);
  return s;
}

const eps = (s: ServicePort) => s.endpoints.map((e) => `${e.ip}:${e.port}@${e.probability}`);

describe('k3s kube-proxy nftables table (tabs expanded to spaces)', () => {
  const file = 'nft/k3s-kube-proxy-nftables-table-spaces.nft';

  it('finds every Service port of service-ips and no-endpoint-services', async () => {
    const r = await resolve(file);
    expect(r.services.map((s) => `${s.id} ${s.clusterIP}:${s.port} ${s.state}`)).toEqual([
      'default/kubernetes:https/tcp 10.43.0.1:443 healthy',
      'kube-system/kube-dns:dns/udp 10.43.0.10:53 healthy',
      'kube-system/kube-dns:dns-tcp/tcp 10.43.0.10:53 healthy',
      'kube-system/kube-dns:metrics/tcp 10.43.0.10:9153 healthy',
      'kube-system/metrics-server:https/tcp 10.43.10.165:443 healthy',
      'riset/hellopod-np-svc/tcp 10.43.195.72:8000 healthy',
      'riset/latency-extender-svc:http/tcp 10.43.34.64:3001 healthy',
      'riset/opentelemetry-collector:otlp/tcp 10.43.22.243:4317 healthy',
      'riset/opentelemetry-collector:otlp-http/tcp 10.43.22.243:4318 healthy',
      'riset/otelcol-opentelemetry-collector:otlp/tcp 10.43.21.102:4317 no-endpoints',
      'riset/otelcol-opentelemetry-collector:otlp-http/tcp 10.43.21.102:4318 no-endpoints',
    ]);
    expect(r.problems).toEqual([]);
    for (const s of r.services) {
      expect(s.mode).toBe('nftables');
      expect(s.family).toBe(4);
      expect(s.problems).toEqual([]);
      expect(s.hashVerified).toBe(s.state === 'no-endpoints' ? null : true);
      expect(s.identifiedBy).toBe(s.state === 'no-endpoints' ? 'set-comment' : 'hash');
    }
  });

  it('reads the NodePort Service with 9 endpoints (unnamed port, chains listed out of order)', async () => {
    const r = await resolve(file);
    const hello = svc(r, 'riset/hellopod-np-svc/tcp');
    expect(hello).toMatchObject({ portName: null, nodePort: 30000, externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', externalIPs: [], loadBalancerIPs: [] });
    const p = 0.1111111111;
    expect(eps(hello)).toEqual(
      ['10.42.2.218', '10.42.4.201', '10.42.4.202', '10.42.4.203', '10.42.4.204', '10.42.4.205', '10.42.4.206', '10.42.4.207', '10.42.5.164'].map((ip) => `${ip}:8080@${p}`),
    );
    expect(hello.endpoints.every((e) => e.local === null)).toBe(true);
    expect(hello.chains).toMatchObject({
      service: 'service-P6J77WGM-riset/hellopod-np-svc/tcp/',
      external: 'external-P6J77WGM-riset/hellopod-np-svc/tcp/',
      endpoint8: 'endpoint-ZWSL4UYY-riset/hellopod-np-svc/tcp/__10.42.5.164/8080',
    });
    // The last endpoint chain is listed near the end of the file, far from its service chain.
    const last = hello.endpoints[8].evidence.find((e) => e.text === 'meta l4proto tcp dnat to 10.42.5.164:8080');
    expect(last).toMatchObject({ line: 258, file: join(corpusDir(), file) });
  });

  it('reads single endpoints and the no-endpoint Services from element comments', async () => {
    const r = await resolve(file);
    expect(eps(svc(r, 'default/kubernetes:https/tcp'))).toEqual(['10.34.4.142:6443@1']);
    expect(eps(svc(r, 'kube-system/metrics-server:https/tcp'))).toEqual(['10.42.0.170:10250@1']);
    expect(eps(svc(r, 'riset/opentelemetry-collector:otlp-http/tcp'))).toEqual(['10.42.0.181:4318@1']);
    const otel = svc(r, 'riset/otelcol-opentelemetry-collector:otlp/tcp');
    expect(otel).toMatchObject({ endpoints: [], chains: {}, nodePort: null });
    expect(otel.evidence).toEqual([
      {
        file: join(corpusDir(), file),
        line: 62,
        text: '10.43.21.102 . tcp . 4317 comment "riset/otelcol-opentelemetry-collector:otlp" : goto reject-chain',
        where: 'ip kube-proxy/no-endpoint-services',
      },
    ]);
  });

  it('lists the infrastructure chains as kube-proxy objects', async () => {
    const r = await resolve(file);
    expect(r.others.map((o) => o.name).sort()).toEqual(
      [
        'cluster-ips-check',
        'filter-forward',
        'filter-input',
        'filter-output',
        'filter-output-post-dnat',
        'filter-prerouting',
        'firewall-check',
        'mark-for-masquerade',
        'masquerading',
        'nat-output',
        'nat-postrouting',
        'nat-prerouting',
        'nodeport-endpoints-check',
        'reject-chain',
        'service-endpoints-check',
        'services',
      ].sort(),
    );
    expect(new Set(r.others.map((o) => o.owner))).toEqual(new Set(['kube-proxy']));
  });
});

describe('generated nft-kp.txt / nft-kp6.txt (hand-modelled on kube-proxy)', () => {
  it('nft-kp.txt: LoadBalancer with source ranges, affinity, a forged endpoint hash, a no-endpoint Service', async () => {
    const r = await resolve('generated/nft-kp.txt');
    expect(r.services.map((s) => s.id)).toEqual(['ns1/svc1:p80/tcp', 'ns2/svc2:p80/tcp']);
    const s1 = svc(r, 'ns1/svc1:p80/tcp');
    expect(s1).toMatchObject({
      clusterIP: '172.30.0.41',
      port: 80,
      nodePort: 3001,
      loadBalancerIPs: ['1.2.3.4'],
      externalIPs: [],
      loadBalancerSourceRanges: ['203.0.113.0/25', '5.6.7.8/32'],
      externalTrafficPolicy: 'Cluster',
      sessionAffinity: { timeoutSeconds: 10800 },
      hashVerified: false,
      state: 'partial',
    });
    expect(eps(s1)).toEqual(['10.180.0.1:80@0.5', '10.180.0.2:80@0.5']);
    // endpoint-ZZZZ2KTY… is not kube-proxy's hash of ns1/svc1/tcp/p80__10.180.0.2/80.
    expect(texts(s1)).toEqual(['endpoint-ZZZZ2KTY-ns1/svc1/tcp/p80__10.180.0.2/80: hash ZZZZ2KTY does not match its name (expected 2ZNDXFAB): renamed or hand-edited?']);
    expect(s1.chains.affinity0).toBe('affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
    const s2 = svc(r, 'ns2/svc2:p80/tcp');
    expect(s2).toMatchObject({ clusterIP: '172.30.0.42', nodePort: 3002, state: 'no-endpoints', identifiedBy: 'set-comment', endpoints: [] });
    // Reject for the cluster IP but drop for the NodePort: kube-proxy never writes both.
    expect(s2.problems).toHaveLength(1);
    expect(texts(s2)[0]).toMatch(/both reject .* and drop/);
    expect(r.problems).toEqual([]);
  });

  it('nft-kp6.txt: a service-ips element straight to an endpoint chain', async () => {
    const r = await resolve('generated/nft-kp6.txt');
    expect(r.services).toHaveLength(1);
    const s = r.services[0];
    expect(s).toMatchObject({ id: 'ns1/svc1:p80/tcp', family: 6, clusterIP: 'fd00:10:96::1', port: 443, state: 'partial', hashVerified: false });
    expect(eps(s)).toEqual(['fd00:10:180::1:80@1']);
    expect(texts(s)[0]).toBe('service-ips element fd00:10:96::1 . tcp . 443 goes straight to endpoint chain endpoint-AAAA-ns1/svc1/tcp/p80__fd00.10.180..1/80 (no service chain)');
    expect(r.others.map((o) => o.name)).toEqual(['nat-prerouting', 'services']);
  });
});

describe('course fragment (≥1.33 dnat numgen map, no table header)', () => {
  it('reads the dnat map shares and flags the chains cut out of the paste', async () => {
    const r = await resolve('nft/course-ch40-service-ips-numgen-dnat-map-fragment.nft');
    const web = svc(r, 'ch40/web:http/tcp');
    expect(web).toMatchObject({ clusterIP: '10.101.223.47', port: 80, state: 'healthy', hashVerified: true, family: 4, problems: [] });
    expect(eps(web)).toEqual(['10.244.0.9:8080@0.3333333333', '10.244.1.7:8080@0.3333333333', '10.244.1.8:8080@0.3333333333']);
    const others = r.services.filter((s) => s !== web);
    expect(others.map((s) => `${s.id} ${s.clusterIP}:${s.port}`)).toEqual([
      'default/kubernetes:https/tcp 10.96.0.1:443',
      'kube-system/kube-dns:dns/udp 10.96.0.10:53',
      'kube-system/kube-dns:dns-tcp/tcp 10.96.0.10:53',
      'kube-system/kube-dns:metrics/tcp 10.96.0.10:9153',
    ]);
    // The service chains were cut out of the paste: their endpoints are unknown, not missing.
    for (const s of others) {
      expect(s.state).toBe('unknown');
      expect(s.problems).toEqual([{ code: 'service-chain-absent', chain: expect.stringMatching(/^service-[A-Z2-7]{8}-/) }]);
    }
  });
});
