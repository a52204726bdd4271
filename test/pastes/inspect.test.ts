/**
 * `kpx inspect` on pastes (issue 30): what a file kpx cannot read looks like, why a file read whole
 * gave nothing, and that text outputs are partial.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/load/index.js';
import { looksLike } from '../../src/load/looks-like.js';
import { cli } from '../helpers/cli.js';
import { unwrappedText } from '../helpers/columns.js';

// What the text says, line by line: lines whole (the layout is test/render/width.test.ts's).
unwrappedText();

const tmp = mkdtempSync(join(tmpdir(), 'kpx-paste-inspect-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, lines: string[]) => {
  writeFileSync(join(tmp, name), lines.join('\n') + '\n');
  return join(tmp, name);
};

describe('what a paste kpx cannot read looks like', () => {
  it('a terminal session of tools kpx does not read names them', () => {
    const text = ['$ curl -v http://10.96.0.10:80', '*   Trying 10.96.0.10:80...', '$ nslookup web.default', ';; connection timed out'].join('\n');
    expect(detectFormat(text)).toBeUndefined();
    expect(looksLike(text)).toBe('a terminal session of `curl -v http://10.96.0.10:80`, `nslookup web.default` (kpx does not read the output of curl, nslookup)');
  });

  it('`kubectl get … -o jsonpath` prints what kpx does not read: not sniffed as something else (a lone address once read as `uname`)', () => {
    const text = '$ kubectl get svc web -o jsonpath={.spec.clusterIP}\n10.96.0.12\n';
    expect(detectFormat(text)).toBeUndefined();
    expect(looksLike(text)).toContain('kpx does not read the output of kubectl get -o jsonpath');
  });

  it('prose and a table of columns kpx does not know', () => {
    expect(looksLike('Hi, my service does not work at all.\nI tried everything I could think of, any idea?\n')).toBe('author text (2 lines of prose)');
    expect(looksLike('PID   USER   COMMAND\n1     root   init\n')).toBe('a table with columns PID, USER, COMMAND');
    expect(looksLike('\u0001\u0002garbage')).toBe('text whose first line is "\\x01\\x02garbage"');
  });

  it('the CLI: the unknown file\'s error says what it looks like; a table of Deployments says why nothing was read; a listing is partial', async () => {
    const curl = file('curl.txt', ['$ curl -v http://10.96.0.10:80', '* connect to 10.96.0.10 port 80 failed: Connection timed out']);
    const deploy = file('deploy.txt', ['NAME    READY   UP-TO-DATE   AVAILABLE   AGE', 'web     3/3     3            3           2d']);
    const listing = file('nat.txt', ['# iptables -t nat -L KUBE-SERVICES -n', 'Chain KUBE-SERVICES (2 references)', 'target     prot opt source               destination', 'KUBE-SVC-X  tcp  --  0.0.0.0/0            10.96.0.10           /* kube-system/kube-dns:dns-tcp cluster IP */ tcp dpt:53']);
    const r = await cli(['inspect', curl, deploy, listing, '--no-color']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('kpx cannot tell what this file is (it looks like a terminal session of `curl -v http://10.96.0.10:80` (kpx does not read the output of curl))');
    expect(r.stdout).toMatch(/nothing read: .*deploy\.txt:2: 1 row of a table with columns NAME, READY, UP-TO-DATE, AVAILABLE, AGE ignored/);
    expect(r.stdout).toMatch(/partial: .*nat\.txt: an iptables -L\/-S listing, not a dump: chains it does not list are unknown, not empty/);
  });
});
