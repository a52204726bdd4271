/**
 * ipset files of ../shared/corpus, read in place: every one parses without error diagnostics,
 * and the extracted values are the ones in the file.
 */
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ipsetListParser, ipsetSaveParser } from '../../src/extract/ipset.js';
import { parseCidr, parseIp } from '../../src/model/addr.js';
import type { IpSet, IpSetDump } from '../../src/model/ipset.js';
import { ipsetListSniffer, ipsetSaveSniffer } from '../../grammars/ipset/sniff.js';
import { splitInput } from '../../grammars/common/text.js';
import type { ParsedInput } from '../../src/load/format.js';
import { corpusFiles, readCorpus } from '../helpers/corpus.js';

const files = corpusFiles(/^(ipset\/.*\.ipset|generated\/ipset-.*\.txt)$/);

function parse(path: string): ParsedInput<IpSetDump> {
  const text = readCorpus(path);
  return (/save/.test(basename(path)) ? ipsetSaveParser : ipsetListParser).parse(text, path);
}

function set(p: ParsedInput<IpSetDump>, name: string): IpSet {
  const s = p.data.sets.find((x) => x.name === name);
  if (!s) throw new Error(`no set ${name} in ${p.file}`);
  return s;
}

function file(name: string): string {
  const f = files.find((x) => x.endsWith(name));
  if (!f) throw new Error(`corpus file ${name} missing`);
  return f;
}

const host = (ip: string) => ({ kind: 'ip', cidr: parseCidr(ip) });

describe('every corpus ipset file', () => {
  it('finds the six known files', () => {
    expect(files.map((f) => basename(f))).toEqual([
      'ipset-list-t.txt',
      'ipset-list-xml.txt',
      'ipset-list.txt',
      'ipset-save.txt',
      'kind-ipvs-kube-sets-elided.ipset',
      'kube-router-618-timeout0-redacted.ipset',
    ]);
  });

  it.each(files)('%s parses with no error diagnostics and is sniffed as its own format', (path) => {
    const p = parse(path);
    expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(p.data.unsupported).toEqual([]);
    expect(p.counts.sets).toBeGreaterThan(0);
    const lines = splitInput(readCorpus(path)).lines;
    const isSave = /save/.test(basename(path));
    expect((isSave ? ipsetSaveSniffer : ipsetListSniffer).sniff(lines)).toBeGreaterThan(0.8);
    expect((isSave ? ipsetListSniffer : ipsetSaveSniffer).sniff(lines)).toBe(0);
  });
});

describe('kind-ipvs-kube-sets-elided.ipset (fragment with "..." elisions, revision 5)', () => {
  const p = parse(file('kind-ipvs-kube-sets-elided.ipset'));

  it('keeps the four listed sets and records the two elisions as noise', () => {
    expect(p.data.sets.map((s) => [s.name, s.type, s.members.length])).toEqual([
      ['KUBE-LOOP-BACK', 'hash:ip,port,ip', 6],
      ['KUBE-LOAD-BALANCER', 'hash:ip,port', 0],
      ['KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'hash:ip,port', 0],
      ['KUBE-CLUSTER-IP', 'hash:ip,port', 4],
    ]);
    expect(p.data.noise).toEqual([
      { line: 2, text: '...', reason: 'elision' },
      { line: 50, text: '...', reason: 'elision' },
    ]);
    expect(p.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(p.counts).toEqual({ sets: 4, members: 10 });
  });

  it('reads header fields of KUBE-LOOP-BACK', () => {
    const s = set(p, 'KUBE-LOOP-BACK');
    expect(s).toMatchObject({ revision: 5, sizeInMemory: 680, references: 1, declaredEntries: 6, family: 'inet', terse: false, line: 4 });
    expect(s.header).toEqual({ family: 'inet', hashsize: '1024', maxelem: '65536' });
    expect(s.members[0]).toMatchObject({ text: '10.244.0.2,tcp:9153,10.244.0.2', line: 12, column: 1, nomatch: false });
    expect(s.members[0].parts).toEqual([host('10.244.0.2'), { kind: 'port', proto: 'tcp', port: 9153 }, host('10.244.0.2')]);
  });

  it('reads KUBE-CLUSTER-IP members', () => {
    const s = set(p, 'KUBE-CLUSTER-IP');
    expect(s.members.map((m) => m.text)).toEqual(['10.96.0.1,tcp:443', '10.96.0.10,tcp:53', '10.96.0.10,udp:53', '10.96.0.10,tcp:9153']);
    expect(s.members[2].parts).toEqual([host('10.96.0.10'), { kind: 'port', proto: 'udp', port: 53 }]);
    expect(s.references).toBe(2);
  });
});

describe('kube-router-618-timeout0-redacted.ipset (ipset 6.x: no "Number of entries", timeout 0, redacted address)', () => {
  const p = parse(file('kube-router-618-timeout0-redacted.ipset'));

  it('reads three sets with no declared entry count', () => {
    expect(p.data.sets.map((s) => [s.name, s.type, s.revision, s.members.length, s.declaredEntries])).toEqual([
      ['kube-router-local-ips', 'hash:ip', 4, 3, undefined],
      ['kube-router-service-ips', 'hash:ip', 4, 5, undefined],
      ['kube-router-ipvs-services', 'hash:ip,port', 5, 6, undefined],
    ]);
    expect(set(p, 'kube-router-local-ips').header).toEqual({ family: 'inet', hashsize: '1024', maxelem: '65536', timeout: '0' });
  });

  it('reads "timeout 0" on every member', () => {
    for (const s of p.data.sets) for (const m of s.members) expect(m.timeout).toBe(0);
    const svc = set(p, 'kube-router-ipvs-services').members.find((m) => m.text === '10.206.32.10,tcp:30080');
    expect(svc?.parts).toEqual([host('10.206.32.10'), { kind: 'port', proto: 'tcp', port: 30080 }]);
  });

  it('keeps the redacted address as a raw part with a warning at its position', () => {
    const m = set(p, 'kube-router-local-ips').members[1];
    expect(m).toMatchObject({ text: 'XXX.XXX.174.108', parts: [{ kind: 'raw', text: 'XXX.XXX.174.108' }], timeout: 0, line: 9 });
    expect(p.diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'extract/bad-element', line: 9, column: 1 }),
    ]);
  });
});

describe('generated ipset-list.txt / ipset-save.txt / ipset-list-xml.txt (ipset 7.17)', () => {
  const list = parse(file('generated/ipset-list.txt'));
  const save = parse(file('generated/ipset-save.txt'));
  const xml = parse(file('generated/ipset-list-xml.txt'));

  it('have the same 18 sets and 23 members', () => {
    expect(list.counts).toEqual({ sets: 18, members: 23 });
    expect(save.counts).toEqual(list.counts);
    expect(xml.counts).toEqual(list.counts);
    expect(save.data.sets.map((s) => s.name)).toEqual(list.data.sets.map((s) => s.name));
    expect(xml.data.sets.map((s) => s.name)).toEqual(list.data.sets.map((s) => s.name));
    for (const p of [list, save, xml]) expect(p.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  });

  it('reads KUBE-CLUSTER-IP with its comment member', () => {
    for (const p of [list, save, xml]) {
      const s = set(p, 'KUBE-CLUSTER-IP');
      expect(s.type).toBe('hash:ip,port');
      expect(s.header).toEqual({ family: 'inet', hashsize: '1024', maxelem: '65536', comment: true, bucketsize: '12', initval: '0x698efa20' });
      expect(s.members.map((m) => [m.text, m.comment])).toEqual([
        ['10.96.0.10,udp:53', 'kube-system/kube-dns:dns'],
        ['10.96.0.1,tcp:443', undefined],
        ['10.96.0.20,sctp:9', undefined],
      ]);
      expect(s.members[2].parts[1]).toEqual({ kind: 'port', proto: 'sctp', port: 9 });
    }
    expect(set(list, 'KUBE-CLUSTER-IP')).toMatchObject({ revision: 7, sizeInMemory: 449, references: 0, declaredEntries: 3 });
    expect(set(save, 'KUBE-CLUSTER-IP').members[0]).toMatchObject({ line: 3, column: 21 });
    expect(set(list, 'KUBE-CLUSTER-IP').members[0]).toMatchObject({ line: 18, column: 1 });
  });

  it('reads the other types and member extensions', () => {
    for (const p of [list, save, xml]) {
      expect(set(p, 'KUBE-LOAD-BALANCER-SOURCE-CIDR').members[0].parts).toEqual([
        host('1.2.3.4'),
        { kind: 'port', proto: 'tcp', port: 80 },
        { kind: 'ip', cidr: parseCidr('10.0.0.0/8') },
      ]);
      expect(set(p, 'KUBE-NODE-PORT-TCP').members[0].parts).toEqual([{ kind: 'port', proto: 'any', port: 30080 }]);
      expect(set(p, 'KUBE-NODE-PORT-TCP').header).toEqual({ range: '0-65535' });
      expect(set(p, 'KUBE-6-CLUSTER-IP')).toMatchObject({ family: 'inet6' });
      expect(set(p, 'KUBE-6-CLUSTER-IP').members[0].parts[0]).toEqual({ kind: 'ip', cidr: { family: 6, prefix: 128, network: parseIp('fd00:10:96::a')!.value } });
      expect(set(p, 'cali40all-ipam-pools').members.map((m) => m.parts[0])).toEqual([{ kind: 'ip', cidr: parseCidr('192.168.0.0/16') }, host('10.0.0.1')]);
      expect(set(p, 'timed').members[0]).toMatchObject({ text: '1.2.3.4', timeout: 99, packets: 5, bytes: 300 });
      expect(set(p, 'timed').header).toMatchObject({ timeout: '300', counters: true });
      expect(set(p, 'bip').header).toEqual({ range: '10.0.0.0-10.0.0.255' });
      expect(set(p, 'bip').members[0].parts).toEqual([host('10.0.0.5')]);
      expect(set(p, 'netport').members.map((m) => m.parts[1])).toEqual([
        { kind: 'port', proto: 'tcp', port: 80 },
        { kind: 'port', proto: 'tcp', port: 80 },
        { kind: 'raw', text: 'icmp:echo-request' },
      ]);
      expect(set(p, 'skb').members[0]).toMatchObject({ skbmark: '0x10/0xff', skbprio: '1:2', skbqueue: 3 });
      expect(set(p, 'nomatch').members.map((m) => [m.text, m.nomatch])).toEqual([
        ['10.1.0.0/16', true],
        ['10.0.0.0/8', false],
      ]);
      expect(set(p, 'netiface').members.map((m) => m.parts[1])).toEqual([
        { kind: 'iface', name: 'eth1', physdev: true },
        { kind: 'iface', name: 'eth0', physdev: false },
      ]);
      expect(set(p, 'ipportip6').members[0].parts.map((x) => x.kind)).toEqual(['ip', 'port', 'ip']);
      expect(set(p, 'cidr').header.netmask).toBe('24');
      expect(set(p, 'cidr').members.map((m) => m.text)).toEqual(['10.1.2.0']);
      expect(set(p, 'forceadd').members).toEqual([]);
      expect(set(p, 'lst').members.map((m) => m.parts[0])).toEqual([
        { kind: 'setname', name: 'timed' },
        { kind: 'setname', name: 'cali40all-ipam-pools' },
      ]);
    }
  });

  it('keeps list-only fields out of save', () => {
    expect(set(save, 'lst')).toMatchObject({ type: 'list:set', header: { size: '8' }, terse: false, line: 39 });
    expect(set(save, 'lst').declaredEntries).toBeUndefined();
    expect(set(list, 'lst')).toMatchObject({ revision: 3, sizeInMemory: 176, declaredEntries: 2 });
    expect(set(xml, 'lst')).toMatchObject({ revision: 3, sizeInMemory: 176, declaredEntries: 2 });
  });
});

describe('generated ipset-list-t.txt (terse)', () => {
  const p = parse(file('generated/ipset-list-t.txt'));
  it('has every set, marked terse, with declared entry counts and no members', () => {
    expect(p.counts).toEqual({ sets: 18, members: 0 });
    expect(p.data.sets.every((s) => s.terse && s.members.length === 0)).toBe(true);
    expect(p.data.sets.map((s) => s.declaredEntries)).toEqual([0, 3, 1, 1, 1, 0, 1, 2, 1, 1, 3, 1, 2, 2, 1, 1, 0, 2]);
    expect(set(p, 'TESTSET')).toMatchObject({ type: 'hash:ip,port', references: 2, revision: 7 });
    expect(p.diagnostics).toEqual([]);
  });
});
