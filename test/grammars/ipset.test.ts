/**
 * `ipset list` / `ipset save` reading: messy input, diagnostics with positions, variants, and
 * the sniffers. Small labelled fixtures are inline; each says what it checks.
 */
import { describe, expect, it } from 'vitest';
import { parseIpsetList, parseIpsetSave } from '../../grammars/ipset/index.js';
import { ipsetListSniffer, ipsetSaveSniffer } from '../../grammars/ipset/sniff.js';
import { splitInput } from '../../grammars/common/text.js';
import { elementParts, ipsetListParser, ipsetSaveParser } from '../../src/extract/ipset.js';
import { parseCidr } from '../../src/model/addr.js';
import type { IpSetDump } from '../../src/model/ipset.js';
import type { ParsedInput } from '../../src/load/format.js';

const LIST = [
  'Name: KUBE-CLUSTER-IP',
  'Type: hash:ip,port',
  'Revision: 7',
  'Header: family inet hashsize 1024 maxelem 65536 comment bucketsize 12 initval 0x698efa20',
  'Size in memory: 449',
  'References: 2',
  'Number of entries: 2',
  'Members:',
  '10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"',
  '10.96.0.1,tcp:443',
  '',
  'Name: KUBE-NODE-PORT-TCP',
  'Type: bitmap:port',
  'Revision: 3',
  'Header: range 0-65535',
  'Size in memory: 8264',
  'References: 1',
  'Number of entries: 1',
  'Members:',
  '30080',
].join('\n');

const SAVE = [
  'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 comment bucketsize 12 initval 0x698efa20',
  'add KUBE-CLUSTER-IP 10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"',
  'add KUBE-CLUSTER-IP 10.96.0.1,tcp:443',
  'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535',
  'add KUBE-NODE-PORT-TCP 30080',
].join('\n');

const list = (text: string) => ipsetListParser.parse(text, 'list.txt');
const save = (text: string) => ipsetSaveParser.parse(text, 'save.txt');
const problems = (p: ParsedInput<IpSetDump>) => p.diagnostics.filter((d) => d.severity !== 'info');
/** Sets and members without positions, to compare differently-formatted inputs. */
const content = (p: ParsedInput<IpSetDump>) =>
  p.data.sets.map((s) => ({ ...s, line: 0, members: s.members.map((m) => ({ ...m, line: 0, column: 0 })) }));

describe('ipset list: the clean baseline', () => {
  const p = list(`${LIST}\n`);
  it('reads sets, header fields and members', () => {
    expect(problems(p)).toEqual([]);
    expect(p.format).toBe('ipset-list');
    expect(p.counts).toEqual({ sets: 2, members: 3 });
    const [cip, np] = p.data.sets;
    expect(cip).toMatchObject({ name: 'KUBE-CLUSTER-IP', type: 'hash:ip,port', family: 'inet', revision: 7, sizeInMemory: 449, references: 2, declaredEntries: 2, terse: false, line: 1, file: 'list.txt' });
    expect(cip.header).toEqual({ family: 'inet', hashsize: '1024', maxelem: '65536', comment: true, bucketsize: '12', initval: '0x698efa20' });
    expect(cip.members[0]).toEqual({
      text: '10.96.0.10,udp:53',
      parts: [
        { kind: 'ip', cidr: parseCidr('10.96.0.10') },
        { kind: 'port', proto: 'udp', port: 53 },
      ],
      comment: 'kube-system/kube-dns:dns',
      nomatch: false,
      line: 9,
      column: 1,
    });
    expect(np).toMatchObject({ name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', header: { range: '0-65535' }, line: 12 });
    expect(np.family).toBeUndefined();
    expect(np.members[0].parts).toEqual([{ kind: 'port', proto: 'any', port: 30080 }]);
  });
});

describe('ipset list: messy input', () => {
  const clean = content(list(`${LIST}\n`));

  it('CRLF line ends and a UTF-8 BOM give the same sets', () => {
    const p = list(`\ufeff${LIST.replace(/\n/g, '\r\n')}\r\n`);
    expect(problems(p)).toEqual([]);
    expect(content(p)).toEqual(clean);
  });

  it('a markdown-indented block (3 spaces, tabs, trailing spaces) gives the same sets with real columns', () => {
    const text = LIST.split('\n')
      .map((l, i) => (l === '' ? '' : i % 2 ? `   ${l}  ` : `\t ${l}`))
      .join('\n');
    const p = list(text);
    expect(problems(p)).toEqual([]);
    expect(content(p)).toEqual(clean);
    expect(p.data.sets[0].members[0]).toMatchObject({ line: 9, column: 3 }); // `\t ` = 2 columns
    expect(p.data.sets[0].members[1]).toMatchObject({ line: 10, column: 4 });
  });

  it('a shell prompt, code fences and ipset stderr lines are noise', () => {
    const text = [
      '```',
      'root@ipvs-control-plane:/# ipset list',
      ...LIST.split('\n').slice(0, 9),
      'ipset v7.17: Kernel error received: Set cannot be destroyed: it is in use by a kernel component',
      ...LIST.split('\n').slice(9),
      '```',
    ].join('\n');
    const p = list(text);
    expect(problems(p)).toEqual([]);
    expect(content(p)).toEqual(clean);
    expect(p.data.noise.map((n) => [n.line, n.reason])).toEqual([
      [1, 'fence'],
      [2, 'prompt'],
      [12, 'stderr'],
      [24, 'fence'],
    ]);
    expect(p.diagnostics.filter((d) => d.code === 'input/noise').map((d) => d.line)).toEqual([1, 2, 12, 24]);
  });

  it('NBSP from a web page counts as a space', () => {
    const p = list('Name: s\nType: hash:ip\nHeader: family\u00a0inet\nMembers:\n1.2.3.4\u00a0timeout 5\n');
    expect(problems(p)).toEqual([]);
    expect(p.data.sets[0].header).toEqual({ family: 'inet' });
    expect(p.data.sets[0].members[0]).toMatchObject({ text: '1.2.3.4', timeout: 5 });
  });

  it('a trailing "# annotation" is ignored with an info diagnostic', () => {
    const p = list('Name: s\nType: hash:ip\nMembers:\n1.2.3.4   # the api server\n');
    expect(problems(p)).toEqual([]);
    expect(p.data.sets[0].members.map((m) => m.text)).toEqual(['1.2.3.4']);
    expect(p.diagnostics).toEqual([expect.objectContaining({ severity: 'info', code: 'input/annotation', line: 4, column: 11 })]);
  });

  it('ipset 6.x blocks without "Number of entries" and with "timeout 0" members', () => {
    const text = [
      'Name: kube-router-local-ips',
      'Type: hash:ip',
      'Revision: 4',
      'Header: family inet hashsize 1024 maxelem 65536 timeout 0',
      'Size in memory: 416',
      'References: 1',
      'Members:',
      '10.206.32.10 timeout 0',
      '127.0.0.1 timeout 0',
    ].join('\n');
    const p = list(`${text}\n`);
    expect(problems(p)).toEqual([]);
    const s = p.data.sets[0];
    expect(s.declaredEntries).toBeUndefined();
    expect(s.revision).toBe(4);
    expect(s.header.timeout).toBe('0');
    expect(s.members.map((m) => [m.text, m.timeout])).toEqual([
      ['10.206.32.10', 0],
      ['127.0.0.1', 0],
    ]);
  });

  it('a last line cut mid-extension keeps the member and warns (no final newline)', () => {
    const p = list(`${LIST}\n10.96.0.11 comm`.replace('Type: bitmap:port', 'Type: hash:ip'));
    const s = p.data.sets[1];
    expect(s.members.map((m) => m.text)).toEqual(['30080', '10.96.0.11']);
    expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(p.diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'warning', code: 'input/truncated-line', line: 21, column: 12, found: "'comm'" }),
    );
  });

  it('a last line cut inside a comment keeps the text read so far', () => {
    const p = list('Name: s\nType: hash:ip,port\nMembers:\n10.96.0.10,udp:53 comment "kube-sys');
    expect(p.data.sets[0].members[0]).toMatchObject({ text: '10.96.0.10,udp:53', comment: 'kube-sys' });
    expect(p.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'input/truncated-line', line: 4, column: 27 })]);
  });

  it('a paste cut after the header lines gives a terse-looking set and a count warning for a cut member list', () => {
    const p = list(`${LIST.split('\n').slice(0, 9).join('\n')}\n`);
    expect(p.data.sets[0].members).toHaveLength(1);
    expect(p.diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'ipset/entry-count-mismatch', line: 7, column: 20, expected: '2', found: '1' }),
    ]);
  });

  it('`...` elisions between blocks are noise; set blocks around them are kept', () => {
    const p = list(`\n...\n\n${LIST}\n\n...\n`);
    expect(problems(p)).toEqual([]);
    expect(p.data.noise.map((n) => [n.line, n.reason])).toEqual([
      [2, 'elision'],
      [25, 'elision'],
    ]);
    expect(p.counts).toEqual({ sets: 2, members: 3 });
  });
});

describe('ipset list: terse and xml variants', () => {
  it('`ipset list -t` blocks have no Members: line → terse sets', () => {
    const terse = LIST.split('\n')
      .filter((l) => !/^(Members:|10\.|30080)/.test(l))
      .join('\n');
    const p = list(terse);
    expect(problems(p)).toEqual([]);
    expect(p.data.sets.map((s) => [s.name, s.terse, s.declaredEntries, s.members.length])).toEqual([
      ['KUBE-CLUSTER-IP', true, 2, 0],
      ['KUBE-NODE-PORT-TCP', true, 1, 0],
    ]);
  });

  it('`ipset list -o xml` is read into the same model', () => {
    const xml = [
      '<ipsets>',
      '<ipset name="KUBE-CLUSTER-IP">',
      '<type>hash:ip,port</type>',
      '<revision>7</revision>',
      '<header><family>inet</family><hashsize>1024</hashsize><maxelem>65536</maxelem><comment/><bucketsize>12</bucketsize><initval>0x698efa20</initval>',
      '<memsize>449</memsize>',
      '<references>2</references>',
      '<numentries>2</numentries>',
      '</header>',
      '<members>',
      '<member><elem>10.96.0.10,udp:53</elem><comment>"kube-system/kube-dns:dns"</comment></member>',
      '<member><elem>10.96.0.1,tcp:443</elem></member>',
      '</members>',
      '</ipset>',
      '<ipset name="KUBE-NODE-PORT-TCP">',
      '<type>bitmap:port</type>',
      '<revision>3</revision>',
      '<header><range>0-65535</range>',
      '<memsize>8264</memsize>',
      '<references>1</references>',
      '<numentries>1</numentries>',
      '</header>',
      '<members>',
      '<member><elem>30080</elem></member>',
      '</members>',
      '</ipset>',
      '</ipsets>',
    ].join('\n');
    expect(parseIpsetList(xml, 'x.xml').variant).toBe('xml');
    const p = list(xml);
    expect(problems(p)).toEqual([]);
    const fromXml = content(p).map((s) => ({ ...s, members: s.members.map((m) => ({ ...m, line: 0, column: 0 })) }));
    expect(fromXml).toEqual(clean());
    expect(p.data.sets[0].members[0]).toMatchObject({ line: 11, column: 15 });
    function clean() {
      return content(list(LIST));
    }
  });

  it('unexpected XML is reported, not guessed', () => {
    const p = list('<ipsets>\n<ipset name="a">\n<type>hash:ip</type>\n<members>\n<member><bogus>1</bogus></member>\nstray text\n</members>\n</ipset>\n</ipsets>\n');
    expect(p.data.sets.map((s) => [s.name, s.type, s.members.length])).toEqual([['a', 'hash:ip', 0]]);
    expect(p.diagnostics.map((d) => [d.severity, d.code, d.line, d.column])).toEqual([
      ['error', 'ipset/xml-unexpected', 5, 1],
      ['warning', 'ipset/xml-unexpected', 5, 9],
      ['error', 'ipset/xml-unexpected', 6, 1],
    ]);
  });
});

describe('ipset list: error diagnostics carry line, column, expected and found', () => {
  it('an unknown word after a member', () => {
    const p = list('Name: s\nType: hash:ip,port\nMembers:\n10.96.0.1,tcp:443 timeot 5\n10.96.0.2,tcp:443\n');
    expect(p.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'parse/unexpected-token',
        message: "member: expected one of timeout, packets, bytes, comment, skbmark, skbprio, skbqueue, nomatch, end of line, found 'timeot'",
        file: 'list.txt',
        line: 4,
        column: 19,
        expected: 'one of timeout, packets, bytes, comment, skbmark, skbprio, skbqueue, nomatch, end of line',
        found: "'timeot'",
      },
    ]);
    // the bad line is kept as unsupported, the next member is read
    expect(p.data.unsupported).toEqual([{ line: 4, text: '10.96.0.1,tcp:443 timeot 5', reason: 'end of line expected' }]);
    expect(p.data.sets[0].members.map((m) => m.text)).toEqual(['10.96.0.2,tcp:443']);
  });

  it('an extension without its value, and a label without its value', () => {
    const p = list('Name: s\nType:\nMembers:\n1.2.3.4 timeout\n');
    expect(p.diagnostics.map((d) => [d.severity, d.code, d.line, d.column, d.expected, d.found])).toEqual([
      ['warning', 'ipset/missing-field', 1, 7, undefined, undefined],
      ['error', 'parse/unexpected-end', 2, 6, 'a value', 'end of line'],
      ['error', 'parse/unexpected-end', 4, 16, 'a value', 'end of line'],
    ]);
  });

  it('an unterminated comment in the middle of a file is an error (member kept)', () => {
    const p = list('Name: s\nType: hash:ip\nMembers:\n1.2.3.4 comment "abc\n5.6.7.8\n');
    expect(p.data.sets[0].members.map((m) => [m.text, m.comment])).toEqual([
      ['1.2.3.4', 'abc'],
      ['5.6.7.8', undefined],
    ]);
    expect(p.diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'parse/unterminated-string', line: 4, column: 17 })]);
  });

  it('a repeated field after Members: is an error; a member outside Members: is a warning', () => {
    const p = list('Name: s\nType: hash:ip\nMembers:\n1.2.3.4\nType: hash:net\n\n5.6.7.8\n');
    expect(p.diagnostics.map((d) => [d.severity, d.code, d.line, d.column])).toEqual([
      ['error', 'ipset/unexpected-field', 5, 1],
      ['warning', 'ipset/orphan-line', 7, 1],
    ]);
    expect(p.data.sets[0].type).toBe('hash:ip');
    expect(p.data.unsupported.map((u) => u.line)).toEqual([5, 7]);
  });

  it('bad values are warnings and stay visible as raw parts', () => {
    const p = list('Name: s\nType: hash:ip,port\nRevision: seven\nMembers:\n10.0.0.1,tcp:70000\n10.0.0.1\n');
    expect(p.diagnostics.map((d) => [d.severity, d.code, d.line, d.column])).toEqual([
      ['warning', 'extract/bad-number', 3, 11],
      ['warning', 'extract/bad-element', 5, 1],
      ['warning', 'extract/bad-element', 6, 1],
    ]);
    expect(p.data.sets[0].members.map((m) => m.parts)).toEqual([
      [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }, { kind: 'raw', text: 'tcp:70000' }],
      [{ kind: 'raw', text: '10.0.0.1' }],
    ]);
  });

  it('control characters in found text are escaped', () => {
    const p = list('Name: s\nType: hash:ip\nMembers:\n1.2.3.4 \u0007bell\n');
    expect(p.diagnostics[0].found).toBe("'\\x07bell'");
  });
});

describe('ipset save', () => {
  it('reads create and add lines into the same sets as ipset list (minus list-only fields)', () => {
    const p = save(`${SAVE}\n`);
    expect(problems(p)).toEqual([]);
    expect(p.format).toBe('ipset-save');
    expect(p.counts).toEqual({ sets: 2, members: 3 });
    const fromList = list(LIST).data.sets;
    expect(p.data.sets.map((s) => ({ name: s.name, type: s.type, header: s.header, members: s.members.map((m) => ({ ...m, line: 0, column: 0 })) }))).toEqual(
      fromList.map((s) => ({ name: s.name, type: s.type, header: s.header, members: s.members.map((m) => ({ ...m, line: 0, column: 0 })) })),
    );
    expect(p.data.sets[0]).toMatchObject({ line: 1, terse: false });
    expect(p.data.sets[0].members[0]).toMatchObject({ line: 2, column: 21 });
  });

  it('tolerates CRLF, BOM, indentation, prompts and a truncated last add', () => {
    const text = `\ufeff$ ipset save\r\n${SAVE.split('\n')
      .map((l) => `    ${l}`)
      .join('\r\n')}\r\nadd KUBE-CLUSTER-IP 10.96.0.2,tcp:80 comment "trunc`;
    const p = save(text);
    expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(p.data.noise).toEqual([{ line: 1, text: '$ ipset save', reason: 'prompt' }]);
    expect(p.data.sets[0].members.map((m) => [m.text, m.comment])).toEqual([
      ['10.96.0.10,udp:53', 'kube-system/kube-dns:dns'],
      ['10.96.0.1,tcp:443', undefined],
      ['10.96.0.2,tcp:80', 'trunc'],
    ]);
    expect(p.data.sets[0].members[2]).toMatchObject({ line: 7, column: 21 });
    expect(p.diagnostics).toContainEqual(expect.objectContaining({ severity: 'warning', code: 'input/truncated-line', line: 7 }));
  });

  it('reports errors and skipped lines with positions', () => {
    const text = [
      'create s hash:ip family',
      'add s 1.2.3.4 bogus',
      'add nosuch 1.2.3.4',
      'flush s',
      'create s2',
      'delete s 1.2.3.4',
      'add s 5.6.7.8',
    ].join('\n');
    const p = save(`${text}\n`);
    expect(p.diagnostics.map((d) => [d.severity, d.code, d.line, d.column])).toEqual([
      ['error', 'parse/unexpected-end', 1, 24],
      ['error', 'parse/unexpected-token', 2, 15],
      ['warning', 'ipset/unknown-set', 3, 5],
      ['warning', 'ipset/unsupported-command', 4, 1],
      ['error', 'parse/unexpected-end', 5, 10],
      ['error', 'parse/unexpected-token', 6, 1],
    ]);
    expect(p.diagnostics.find((d) => d.line === 6)).toMatchObject({ expected: "one of 'create', 'add'", found: "'delete'" });
    expect(p.data.unsupported.map((u) => u.line)).toEqual([2, 3, 4, 5, 6]);
    expect(p.data.sets.map((s) => [s.name, s.members.map((m) => m.text)])).toEqual([['s', ['5.6.7.8']]]);
  });

  it('an unknown set type keeps members as raw parts with a warning', () => {
    const p = save('create x hash:foo,port family inet\nadd x abc,tcp:80\n');
    expect(p.data.sets[0].members[0].parts).toEqual([
      { kind: 'raw', text: 'abc' },
      { kind: 'port', proto: 'tcp', port: 80 },
    ]);
    expect(p.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'ipset/unknown-type', line: 1, column: 10 })]);
  });

  it('set names that are keywords are still names', () => {
    const p = save('create comment list:set size 8\ncreate add hash:ip\nadd comment add\nadd add 1.1.1.1 timeout 3\n');
    expect(problems(p)).toEqual([]);
    expect(p.data.sets.map((s) => [s.name, s.members.map((m) => m.parts)])).toEqual([
      ['comment', [[{ kind: 'setname', name: 'add' }]]],
      ['add', [[{ kind: 'ip', cidr: parseCidr('1.1.1.1') }]]],
    ]);
  });
});

describe('element parts by type', () => {
  it.each([
    ['hash:ip', '10.0.0.1', [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }]],
    ['hash:net', '10.0.0.0/8', [{ kind: 'ip', cidr: parseCidr('10.0.0.0/8') }]],
    ['hash:ip,port', 'fd00::1,udp:53', [{ kind: 'ip', cidr: parseCidr('fd00::1') }, { kind: 'port', proto: 'udp', port: 53 }]],
    ['hash:ip,port', '10.0.0.1,80', [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }, { kind: 'port', proto: 'tcp', port: 80 }]],
    ['hash:ip,port', '10.0.0.1,tcp:80-90', [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }, { kind: 'port', proto: 'tcp', port: 80, portEnd: 90 }]],
    ['hash:ip,port', '10.0.0.1,47:0', [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }, { kind: 'port', proto: '47', port: 0 }]],
    ['bitmap:port', '30080', [{ kind: 'port', proto: 'any', port: 30080 }]],
    ['hash:net,iface', '10.0.0.0/8,physdev:eth1', [{ kind: 'ip', cidr: parseCidr('10.0.0.0/8') }, { kind: 'iface', name: 'eth1', physdev: true }]],
    ['hash:ip,mark', '10.0.0.1,0x00000010', [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }, { kind: 'mark', value: 16 }]],
    ['hash:mac', 'AA:BB:CC:DD:EE:FF', [{ kind: 'mac', mac: 'aa:bb:cc:dd:ee:ff' }]],
    ['bitmap:ip,mac', '10.0.0.1,aa:bb:cc:dd:ee:ff', [{ kind: 'ip', cidr: parseCidr('10.0.0.1') }, { kind: 'mac', mac: 'aa:bb:cc:dd:ee:ff' }]],
    ['list:set', 'KUBE-CLUSTER-IP', [{ kind: 'setname', name: 'KUBE-CLUSTER-IP' }]],
  ])('%s %s', (type, text, parts) => {
    expect(elementParts(type, text)).toEqual({ parts, problems: [] });
  });

  it('wrong number of parts keeps raw text and says why', () => {
    expect(elementParts('hash:ip,port', '10.0.0.1')).toEqual({ parts: [{ kind: 'raw', text: '10.0.0.1' }], problems: ["'10.0.0.1' has 1 part(s) but hash:ip,port has 2"] });
  });
});

describe('sniffers', () => {
  const lines = (t: string) => splitInput(t).lines;
  it('recognise their own format', () => {
    expect(ipsetListSniffer.id).toBe('ipset-list');
    expect(ipsetSaveSniffer.id).toBe('ipset-save');
    expect(ipsetListSniffer.sniff(lines(LIST))).toBeGreaterThan(0.9);
    expect(ipsetSaveSniffer.sniff(lines(SAVE))).toBeGreaterThan(0.9);
    expect(ipsetListSniffer.sniff(lines('   Name: a\n   Type: hash:ip\n   Members:\n'))).toBeGreaterThan(0.8);
    expect(ipsetListSniffer.sniff(lines('<ipsets>\n<ipset name="a">\n<type>hash:ip</type>\n'))).toBeGreaterThan(0.8);
    expect(ipsetSaveSniffer.sniff(lines('add s 1.1.1.1\nadd s 1.1.1.2\nadd s 1.1.1.3\n'))).toBe(0.5);
  });

  it('reject the other formats', () => {
    const others = [
      '# Generated by iptables-save v1.8.9 (nf_tables) on Sat Jan 24 14:00:18 2026\n*nat\n:PREROUTING ACCEPT [0:0]\n-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\nCOMMIT\n',
      'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  10.96.0.1:443 rr\n  -> 172.18.0.2:6443             Masq    1      0          0\n',
      'default via 172.18.0.1 dev eth0\n10.244.0.0/24 via 10.244.0.1 dev cni0 proto static\n172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.2\n',
      'table ip kube-proxy {\n\tset cluster-ips {\n\t\ttype ipv4_addr\n\t\telements = { 10.96.0.1 }\n\t}\n}\n',
      'net.ipv4.ip_forward = 1\nnet.ipv4.vs.conntrack = 1\n',
      // an nft -f script is also made of `add …` lines
      'add table ip kube-proxy { comment "rules for kube-proxy" ; }\nadd chain ip kube-proxy filter-input { type filter hook input priority -110 ; }\nadd rule ip kube-proxy services ip daddr 10.96.0.1 tcp dport 443 goto service-x\nadd element ip kube-proxy cluster-ips { 10.96.0.1 }\n',
      '',
    ];
    for (const o of others) {
      expect(ipsetListSniffer.sniff(lines(o))).toBe(0);
      expect(ipsetSaveSniffer.sniff(lines(o))).toBe(0);
    }
    expect(ipsetListSniffer.sniff(lines(SAVE))).toBe(0);
    expect(ipsetSaveSniffer.sniff(lines(LIST))).toBe(0);
  });

  it('never throws and parsers never throw on garbage', () => {
    const garbage = ['\u0000\u0001"', '"""', 'Name:', 'Members:\nMembers:\n', 'create', 'add', '<ipsets><ipset', '\r\r\n\n'];
    for (const g of garbage) {
      expect(() => ipsetListSniffer.sniff(lines(g))).not.toThrow();
      expect(() => list(g)).not.toThrow();
      expect(() => save(g)).not.toThrow();
      expect(parseIpsetSave(g, 'g').entries.length).toBeGreaterThanOrEqual(0);
    }
  });
});
