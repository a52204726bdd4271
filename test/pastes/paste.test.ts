/**
 * Pastes of several outputs (issue 30): cut into sections at commands, fences and headings, each
 * read by its format's reader with the file's own line numbers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { snapshotOf } from '../lint/helpers.js';
import { detectFormat } from '../../src/load/index.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { knows } from '../../src/model/k8s-api.js';

const FIX = (name: string) => readFileSync(new URL(`../fixtures/pastes/${name}`, import.meta.url), 'utf8');

describe('real pastes of several outputs', () => {
  it('kubernetes.io "Debug Services": the Service as JSON after its bare command, a pods table, an endpoints table; prose ignored', async () => {
    const text = FIX('mixed/website-debug-service-api.md');
    expect(detectFormat(text)).toBe('paste');
    const snap = await snapshotOf({ 'debug-service.md': text });
    expect(snap.files[0]).toMatchObject({ format: 'paste', variant: 'k8s-api + kubectl tables' });
    expect(snap.files[0].diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const api = snap.api!;
    const svc = api.services.find((s) => s.name === 'hostnames')!;
    // The JSON object, read whole (cited at its name line), not the table.
    expect(svc).toMatchObject({ namespace: 'default', clusterIP: '10.0.1.175', ports: [{ name: 'default', port: 80, targetPort: 9376, protocol: 'tcp' }] });
    expect(svc.text).toBeUndefined();
    expect(svc.where.line).toBe(text.split('\n').findIndex((l) => l.includes('"name": "hostnames"')) + 1);
    // `kubectl get service hostnames -o json` names its object: the API listing is not whole.
    expect(api.serviceNamespaces).toEqual([]);
    expect(api.pods.map((p) => p.name)).toEqual(['hostnames-632524106-bbpiw', 'hostnames-632524106-ly40y', 'hostnames-632524106-tlaok']);
    const eps = api.slices.find((s) => s.serviceName === 'hostnames')!;
    expect(eps.endpoints.map((e) => e.addresses[0])).toEqual(['10.244.0.5', '10.244.0.6', '10.244.0.7']);
    expect(eps.where.line).toBe(text.split('\n').findIndex((l) => l.startsWith('hostnames   10.244')) + 1);
  });

  it('the same page\'s iptables-save grep and ipvsadm -ln: two readers, one file, the lines kept', async () => {
    const text = FIX('mixed/website-debug-service-proxy.md');
    const snap = await snapshotOf({ 'proxy.md': text });
    expect(snap.files[0]).toMatchObject({ format: 'paste', variant: 'iptables-save + ipvsadm' });
    expect(snap.files[0].diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const res = await resolveServices(snap);
    const ipt = res.services.find((s) => s.mode === 'iptables')!;
    expect([ipt.clusterIP, ipt.port, ipt.endpoints.map((e) => e.ip)]).toEqual(['10.0.1.175', 80, ['10.244.1.7', '10.244.2.3', '10.244.3.6']]);
    expect(ipt.evidence[0].line).toBe(text.split('\n').findIndex((l) => l.startsWith('-A KUBE-SERVICES')) + 1);
    const vs = snap.ipvs[0].virtualServers[0];
    expect([vs.realServers.length, vs.line]).toEqual([3, text.split('\n').findIndex((l) => l.startsWith('TCP  10.0.1.175:80')) + 1]);
  });

  it('cisen/blog#319: prompts, `curl` output and an author\'s `#` note on a describe line: one kubectl reading, the note not an address', async () => {
    const snap = await snapshotOf({ 'blog.txt': FIX('mixed/cisen-blog-319-svc-curl-describe.txt') });
    expect(snap.files[0]).toMatchObject({ format: 'kubectl', variant: 'tables, describe' });
    const kube = snap.api!.services.find((s) => s.name === 'kube-node')!;
    // The describe block (more fields shown) wins over the table row of the same Service.
    expect(kube.text!.form).toBe('kubectl describe');
    expect(knows(kube, 'selector')).toBe(true);
    expect(snap.api!.slices[0].endpoints.map((e) => e.addresses[0])).toEqual(['10.244.1.71', '10.244.2.81']);
  });
});

describe('constructed pastes (unit tests: shapes from the issue, not collected)', () => {
  // `**…**` captions around a kubectl table and the YAML of one of its Services.
  const BOLD = [
    'Here is what I see:',
    '',
    '**kubectl get svc -n shop**',
    'NAME   TYPE       CLUSTER-IP    EXTERNAL-IP   PORT(S)        AGE',
    'web    NodePort   10.96.45.12   <none>        80:30080/TCP   2d',
    '',
    '**$ kubectl get svc web -n shop -o yaml**',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: web',
    '  namespace: shop',
    'spec:',
    '  clusterIP: 10.96.45.12',
    '  externalTrafficPolicy: Local',
    '  internalTrafficPolicy: Cluster',
    '  ports:',
    '  - name: http',
    '    nodePort: 30080',
    '    port: 80',
    '    protocol: TCP',
    '    targetPort: 8080',
    '  selector:',
    '    app: web',
    '  type: NodePort',
    '',
  ].join('\n');

  it('a table and the YAML behind bold captions: both read (the YAML object whole), captions and prose are noise', async () => {
    const snap = await snapshotOf({ 'issue.md': BOLD });
    expect(snap.files[0]).toMatchObject({ format: 'paste', variant: 'kubectl tables + k8s-api' });
    expect(snap.files[0].diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const web = snap.api!.services.find((s) => s.name === 'web')!;
    expect([web.text, web.externalTrafficPolicy, web.where.line]).toEqual([undefined, 'Local', 11]);
    // `get svc -n shop` (no name, not filtered): shop is listed whole; the -o yaml of one object adds nothing.
    expect(snap.api!.serviceNamespaces).toEqual(['shop']);
  });

  it('a paste holding one format only is read by that format\'s reader directly', () => {
    expect(detectFormat(BOLD.slice(0, BOLD.indexOf('**$')))).toBe('kubectl');
    expect(detectFormat(BOLD.slice(BOLD.indexOf('**$')))).toBe('k8s-api');
  });
});
