/**
 * KubeProxyConfiguration as pasted (issue 30): real pastes under test/fixtures/kube-proxy-config-pastes
 * (each with its .source), and constructed variants of the forms no public paste was found for (labelled).
 * Each field is read where kube-proxy reads it; what it would ignore or refuse is said.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { extractKubeProxyConfig } from '../../src/extract/kube-proxy-config.js';
import { headLines } from '../../src/load/index.js';
import { sniff } from '../../src/load/registry.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'kube-proxy-config-pastes');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));
const config = (text: string) => extractKubeProxyConfig(text, 'c.yaml');

describe('real pastes: recognised by content, read without error', () => {
  it('has samples with sources', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) expect(readdirSync(DIR)).toContain(f.replace(/\.yaml$/, '.source'));
  });
  for (const f of files) {
    it(f, () => {
      expect(sniff(headLines(read(f)))?.id).toBe('kube-proxy-config');
      expect(config(read(f)).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    });
  }
  it('a fragment without apiVersion and kind (the two lines a user appended): ipvs.strictARP, said to be a fragment', () => {
    const c = config(read('fragment-ipvs-strictarp.yaml'));
    expect(c.data.form).toBe('fragment');
    expect(c.data.strictARP).toMatchObject({ value: true, line: 2 });
    expect(c.diagnostics.map((d) => d.code)).toEqual(['config/fragment']);
  });
  it("kubeadm's `kubeProxy: config:` embedding: read from there; conntrack.max is a field kube-proxy no longer has", () => {
    const c = config(read('kubeadm-v1alpha3-embedded.yaml'));
    expect(c.data.form).toBe('kubeadm');
    expect(c.data.clusterCIDR).toMatchObject({ value: ['172.31.0.0/16'], line: 35 });
    expect(c.data.conntrackMaxPerCore).toMatchObject({ value: 32768, line: 39 });
    expect(c.data.issues).toEqual([{ kind: 'removed', path: 'conntrack.max', note: 'replaced by conntrack.maxPerCore and conntrack.min', line: 38, text: '      max: null' }]);
    // The kubeadm fields around it are not kube-proxy's and are not read as such.
    expect([...c.data.fields.keys()].some((k) => k.startsWith('apiServer') || k === 'clusterName')).toBe(false);
  });
  it('a document indented as a whole inside a markdown list (`    ---`): read as the document it is', () => {
    const c = config(read('markdown-list-indented.yaml'));
    expect(c.data.form).toBe('config');
    expect(c.data.fields.get('bindAddress')).toMatchObject({ value: '::', line: 4 });
    expect(c.data.issues).toEqual([]);
  });
});

describe('constructed variants (unit tests: no public paste of these forms was found)', () => {
  it('after a `cat` prompt, with the author\'s words above: prompt and words skipped, lines kept', () => {
    const c = config(['Here is the config on the node:', '[root@master ~]# cat /var/lib/kube-proxy/config.conf', 'apiVersion: kubeproxy.config.k8s.io/v1alpha1', 'kind: KubeProxyConfiguration', 'mode: "ipvs"', ''].join('\n'));
    expect(c.data.mode).toMatchObject({ value: 'ipvs', line: 5 });
    expect(c.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['input/prose', 1],
      ['input/noise', 2],
    ]);
  });
  it('keys in the wrong section: not read there; the section they belong to keeps its default', () => {
    const c = config(['apiVersion: kubeproxy.config.k8s.io/v1alpha1', 'kind: KubeProxyConfiguration', 'mode: ipvs', 'strictARP: true', 'ipvs:', '  masqueradeBit: 15', ''].join('\n'));
    expect(c.data.strictARP).toBeUndefined();
    expect(c.data.masqueradeBit).toBeUndefined();
    expect(c.data.issues).toEqual([
      { kind: 'misplaced', path: 'strictARP', home: 'ipvs.strictARP', default: 'false', line: 4, text: 'strictARP: true' },
      { kind: 'unknown', path: 'ipvs.masqueradeBit', line: 6, text: '  masqueradeBit: 15' },
    ]);
  });
  it('a section written twice (one appended to the file): only the last is read, whole', () => {
    const c = config(['kind: KubeProxyConfiguration', 'ipvs:', '  scheduler: lc', '  strictARP: false', 'mode: ipvs', 'ipvs:', '  strictARP: true', ''].join('\n'));
    expect(c.data.strictARP).toMatchObject({ value: true, line: 7 });
    expect(c.data.ipvsScheduler).toBeUndefined();
    expect(c.data.issues).toEqual([{ kind: 'duplicate', path: 'ipvs', first: 2, line: 6, text: 'ipvs:' }]);
  });
  it('values kube-proxy cannot decode: a quoted number, a quoted boolean; YAML 1.1 `yes` is a boolean to it', () => {
    const c = config(['kind: KubeProxyConfiguration', 'iptables:', '  masqueradeBit: "14"', 'ipvs:', '  strictARP: "true"', 'conntrack:', '  tcpBeLiberal: yes', ''].join('\n'));
    expect(c.data.issues.map((i) => (i.kind === 'bad-value' ? [i.path, i.expected, i.value] : i.kind))).toEqual([
      ['iptables.masqueradeBit', 'integer', '"14"'],
      ['ipvs.strictARP', 'boolean', '"true"'],
    ]);
    expect(c.data.masqueradeBit).toBeUndefined();
  });
  it('componentconfig/v1alpha1 (kube-proxy ≤1.9): named', () => {
    const c = config(['apiVersion: componentconfig/v1alpha1', 'kind: KubeProxyConfiguration', 'mode: iptables', ''].join('\n'));
    expect(c.data.issues).toMatchObject([{ kind: 'api-version', value: 'componentconfig/v1alpha1', line: 1 }]);
  });
  it('`kubectl edit` of the ConfigMap with its comments and block indentation reads the same fields', () => {
    const c = config(['# Please edit the object below. Lines beginning with a \'#\' will be ignored,', '#', 'apiVersion: v1', 'data:', '  config.conf: |-', '    apiVersion: kubeproxy.config.k8s.io/v1alpha1', '    kind: KubeProxyConfiguration', '    ipvs:', '      strictARP: true', '    mode: ipvs', 'kind: ConfigMap', ''].join('\n'));
    expect(c.data.form).toBe('configmap');
    expect(c.data.strictARP).toMatchObject({ value: true, line: 9 });
    expect(c.data.mode).toMatchObject({ value: 'ipvs', line: 10 });
  });
});
