/** The API objects reader: kubectl -o json / -o yaml, lists, multi-document, single objects, legacy Endpoints, faults. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { extractK8sApi } from '../../src/extract/k8s-api.js';
import { detectFormat, parseInput } from '../../src/load/index.js';
import { assembleSnapshot } from '../../src/load/snapshot.js';
import { apiObjects, generateCluster } from '../../src/generate/index.js';

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../fixtures/k8s-api/${name}`, import.meta.url)), 'utf8');
/** The model without where each object was read (positions differ between -o json and -o yaml). */
const shape = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'where' || k === 'files' ? undefined : v)));

const cluster = generateCluster({ seed: 3, services: 25 });
const list = apiObjects(cluster).list;
const JSON_TEXT = JSON.stringify(list, null, 4);

describe('kubectl get svc,endpointslices,nodes,pods -A', () => {
  it('is recognised by content, as -o json and as -o yaml', () => {
    expect(detectFormat(JSON_TEXT)).toBe('k8s-api');
    expect(detectFormat(stringify(list))).toBe('k8s-api');
    expect(detectFormat(fixture('hints-example.yaml'))).toBe('k8s-api');
    // Not every JSON or YAML: a KubeProxyConfiguration and an nft -j listing stay theirs.
    expect(detectFormat('apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n')).toBe('kube-proxy-config');
    expect(detectFormat('{"nftables": [{"metainfo": {"version": "1.0.9"}}]}')).not.toBe('k8s-api');
    // kube-proxy's own Pod (kubectl get pod -o yaml) is read for its flags; a dump with Services stays the API's.
    const kubeProxyPod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-proxy-x7k2p\n  namespace: kube-system\nspec:\n  containers:\n  - command:\n    - /usr/local/bin/kube-proxy\n    - --proxy-mode=ipvs\n    - --cluster-cidr=10.244.0.0/16\n';
    expect(detectFormat(kubeProxyPod)).toBe('kube-proxy-config');
    expect(detectFormat(`apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\n${kubeProxyPod}`)).toBe('k8s-api');
  });

  it('-o json and -o yaml (a List, or one document per object) give the same objects', () => {
    const fromJson = extractK8sApi(JSON_TEXT, 'api.json');
    expect(fromJson.diagnostics).toEqual([]);
    expect(fromJson.data.services.length).toBe(cluster.services.length + 2);
    expect(fromJson.data.slices.length).toBeGreaterThan(10);
    expect(fromJson.data.nodes.length).toBe(cluster.nodes.length);
    expect(fromJson.data.pods.length).toBeGreaterThan(10);
    const fromYaml = extractK8sApi(stringify(list), 'api.yaml');
    expect(shape(fromYaml.data)).toEqual(shape(fromJson.data));
    const multiDoc = (list.items as object[]).map((o) => stringify(o)).join('---\n');
    expect(shape(extractK8sApi(multiDoc, 'api.yaml').data)).toEqual(shape(fromJson.data));
  });

  it('cites each object by file:line:column', () => {
    const text = JSON_TEXT;
    const r = extractK8sApi(text, 'api.json');
    const lines = text.split('\n');
    const svc = r.data.services.find((s) => s.name === 'kube-dns')!;
    // An object is cited by its name line, an endpoint by its address line; the text is the file's own line.
    expect(lines[svc.where.line - 1]).toBe(svc.where.text);
    expect(svc.where.text.trim()).toBe('"name": "kube-dns",');
    expect(svc.where.column).toBe(svc.where.text.indexOf('"kube-dns"') + 1);
    const ep = r.data.slices.flatMap((s) => s.endpoints)[0];
    expect(ep.where.text.trim()).toBe(`"${ep.addresses[0]}"`);
    const y = extractK8sApi(stringify(list), 'api.yaml').data.services.find((s) => s.name === 'kube-dns')!;
    expect(y.where.text.trim()).toBe('name: kube-dns');
  });

  it('separate files per kind make one set of objects', async () => {
    const byKind = (kind: string) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: (list.items as { kind: string }[]).filter((o) => o.kind === kind) }, null, 2);
    const files = ['Service', 'EndpointSlice', 'Node', 'Pod'].map((k) => ({ path: `${k}.json`, text: byKind(k), bytes: 1 }));
    const parsed = await Promise.all(files.map((f) => parseInput(f)));
    expect(parsed.map((p) => p.format)).toEqual(['k8s-api', 'k8s-api', 'k8s-api', 'k8s-api']);
    const snap = assembleSnapshot(parsed);
    expect(shape(snap.api)).toEqual(shape(extractK8sApi(JSON_TEXT, 'all.json').data));
  });

  it('legacy Endpoints count only when no EndpointSlice is given', async () => {
    const endpoints = 'apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: web\n  namespace: shop\nsubsets:\n- addresses:\n  - ip: 10.1.0.5\n    nodeName: n1\n  notReadyAddresses:\n  - ip: 10.1.0.6\n  ports:\n  - name: http\n    port: 8080\n    protocol: TCP\n';
    const alone = assembleSnapshot([await parseInput({ path: 'ep.yaml', text: endpoints, bytes: 1 })]);
    expect(alone.api!.slices).toHaveLength(1);
    expect(alone.api!.slices[0]).toMatchObject({ serviceName: 'web', fromEndpoints: true, ports: [{ name: 'http', port: 8080, protocol: 'tcp' }] });
    expect(alone.api!.slices[0].endpoints.map((e) => [e.addresses[0], e.conditions.ready, e.nodeName])).toEqual([
      ['10.1.0.5', true, 'n1'],
      ['10.1.0.6', false, null],
    ]);
    const withSlices = assembleSnapshot([await parseInput({ path: 'ep.yaml', text: endpoints, bytes: 1 }), await parseInput({ path: 'api.json', text: JSON_TEXT, bytes: 1 })]);
    expect(withSlices.api!.slices.some((s) => s.fromEndpoints)).toBe(false);
  });

  it('a malformed document is named by file:line:column, and every other object is still read', () => {
    const cut = JSON_TEXT.split('\n');
    const at = cut.findIndex((l) => l.includes('"kind": "EndpointSlice"'));
    const text = [...cut.slice(0, at), '            "kind": "EndpointSlice" ]]', ...cut.slice(at + 1)].join('\n');
    const r = extractK8sApi(text, 'bad.json');
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'parse/k8s-api', file: 'bad.json', line: at + 1 });
    expect(errors[0].column).toBeGreaterThan(1);
    expect(errors[0].message).toMatch(/not valid JSON\/YAML/);
    // Only the broken object is lost: every other one is read, at its own line.
    const whole = extractK8sApi(JSON_TEXT, 'api.json').data;
    expect(r.data.services.length).toBe(whole.services.length);
    expect(r.data.pods.length).toBe(whole.pods.length);
    expect(r.data.slices.length).toBe(whole.slices.length - 1);
    expect(errors[0].message).toMatch(/that object is skipped, the others are read/);
    for (const sv of r.data.services) expect(text.split('\n')[sv.where.line - 1]).toBe(sv.where.text);
  });
});

describe('real samples (each with a .source)', () => {
  it('the topology-aware-routing EndpointSlice with hints (kubernetes.io docs)', () => {
    const r = extractK8sApi(fixture('hints-example.yaml'), 'hints-example.yaml');
    expect(r.diagnostics).toEqual([]);
    expect(r.data.slices).toHaveLength(1);
    expect(r.data.slices[0]).toMatchObject({ name: 'example-hints', serviceName: 'example-svc', addressType: 'IPv4', ports: [{ name: 'http', protocol: 'tcp', port: 80 }] });
    expect(r.data.slices[0].endpoints[0]).toMatchObject({ addresses: ['10.1.2.3'], conditions: { ready: true, serving: null, terminating: null }, zone: 'zone-a', hints: { forZones: ['zone-a'], forNodes: [] } });
    // -o json of the same object gives the same model.
    const asJson = JSON.stringify(parse(fixture('hints-example.yaml')), null, 4);
    expect(shape(extractK8sApi(asJson, 'hints.json').data)).toEqual(shape(r.data));
  });

  it('the termination tutorial output, cut off mid-object by the page: the cut is named, nothing is guessed', () => {
    const text = fixture('terminating-truncated.json');
    const r = extractK8sApi(text, 'terminating-truncated.json');
    const err = r.diagnostics.find((d) => d.severity === 'error')!;
    // At the end of the text: the page stops inside the second endpoint.
    expect(err).toMatchObject({ code: 'parse/k8s-api', line: text.trimEnd().split('\n').length });
    expect(err.message).toMatch(/ends inside an unclosed object or list/);
    // The page cut it before its `kind` and metadata: kpx says it cannot tell what the object is, and guesses nothing.
    expect(r.diagnostics.filter((d) => d.severity !== 'error').map((d) => d.code)).toEqual(['k8s/no-kind']);
    expect(r.data.slices).toEqual([]);
  });
});

