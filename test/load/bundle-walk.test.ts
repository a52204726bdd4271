/**
 * A bundle walk stays inside the bundle and is bounded (issue 34): links out of it are listed,
 * not followed (unless asked, and never into /proc, /sys or /dev); entries and bytes are capped;
 * notes and hidden files are listed with why they were left out, and a dump among them is said.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkBundle } from '../../src/load/bundle.js';
import { parseInput, type RawInput } from '../../src/load/index.js';

const SAMPLE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
let tmp = '';
let bundle = '';
let outside = '';

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'kpx-walk-'));
  bundle = join(tmp, 'bundle');
  mkdirSync(join(bundle, 'sub'), { recursive: true });
  writeFileSync(join(bundle, 'ip-route.txt'), readFileSync(join(SAMPLE, 'ip-route.txt')));
  outside = join(tmp, 'elsewhere.txt');
  writeFileSync(outside, readFileSync(join(SAMPLE, 'sysctl.txt')));
  symlinkSync('/', join(bundle, 'root'));
  symlinkSync('/etc', join(bundle, 'etc'));
  symlinkSync(outside, join(bundle, 'sysctl.txt'));
  symlinkSync('/proc/net', join(bundle, 'proc-net'));
  symlinkSync('/sys/class/net', join(bundle, 'sys-net'));
  symlinkSync('../ip-route.txt', join(bundle, 'sub', 'route-again.txt'));
  writeFileSync(join(bundle, 'README'), 'notes about node-7\n');
  writeFileSync(join(bundle, 'ip-route.txt.source'), 'https://example.invalid/\n');
  writeFileSync(join(bundle, '.iptables-save'), readFileSync(join(SAMPLE, 'iptables-save.txt')));
  mkdirSync(join(bundle, '.git'));
  writeFileSync(join(bundle, '.git', 'config'), '[core]\n');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const byName = (list: readonly RawInput[]) => new Map(list.map((x) => [x.path.slice(bundle.length + 1), x]));

describe('a bundle walk', () => {
  it('lists links out of the bundle as outside it, one row each, and reads nothing there', () => {
    const list: RawInput[] = [];
    walkBundle(bundle, list, { followOutside: false });
    const m = byName(list);
    for (const n of ['root', 'etc', 'sysctl.txt', 'proc-net', 'sys-net']) {
      expect(m.get(n)?.unreadableCode, n).toBe('input/outside-bundle');
      expect(m.get(n)?.open, n).toBeUndefined();
    }
    expect(m.get('sysctl.txt')!.unreadable).toMatch(/outside the bundle .*--follow-symlinks/);
    // Nothing under / or /etc was listed.
    expect([...m.keys()].filter((k) => k.startsWith('root/') || k.startsWith('etc/'))).toEqual([]);
    // A link inside the bundle is followed.
    expect(m.get('sub/route-again.txt')?.open).toBeDefined();
    expect(list).toHaveLength(11);
  });

  it('follows links out of the bundle when asked, never into /proc, /sys or /dev', () => {
    const small = join(tmp, 'small');
    mkdirSync(small);
    symlinkSync(outside, join(small, 'sysctl.txt'));
    symlinkSync('/proc/net', join(small, 'proc-net'));
    symlinkSync('/sys/class/net', join(small, 'sys-net'));
    symlinkSync('/dev/zero', join(small, 'zero'));
    const got: RawInput[] = [];
    walkBundle(small, got, { followOutside: true });
    const s = new Map(got.map((x) => [x.path.slice(small.length + 1), x]));
    expect(s.get('sysctl.txt')?.open).toBeDefined();
    for (const n of ['proc-net', 'sys-net', 'zero']) {
      expect(s.get(n)?.unreadableCode, n).toBe('input/outside-bundle');
      expect(s.get(n)?.unreadable, n).toMatch(/never followed/);
    }
    // `root -> /` is walked when asked, but bounded: at most 200 entries, then one row that says so.
    const list: RawInput[] = [];
    walkBundle(bundle, list, { followOutside: true, maxEntries: 200 });
    expect(list.length).toBeLessThanOrEqual(202);
    expect(list.filter((x) => x.unreadableCode === 'input/too-many-entries')).toHaveLength(1);
    expect(list.some((x) => x.path.startsWith('/proc/') || x.path.includes('/root/proc/') && x.open !== undefined)).toBe(false);
  });

  it('bounds the bytes read from one bundle (8 × --max-input-size)', () => {
    const list: RawInput[] = [];
    walkBundle(bundle, list, { followOutside: false, limits: { maxBytes: 100, maxGzipRatio: 0 } });
    const big = list.filter((x) => x.unreadableCode === 'input/too-large');
    expect(big.length).toBeGreaterThan(0);
    expect(big[0].unreadable).toMatch(/add up to more than 800 bytes/);
  });

  it('lists notes and hidden entries with why they were left out; a dump among them is a warning', async () => {
    const list: RawInput[] = [];
    walkBundle(bundle, list, { followOutside: false });
    const m = byName(list);
    for (const n of ['README', 'ip-route.txt.source', '.iptables-save', '.git']) expect(m.get(n)?.unreadableCode, n).toBe('input/left-out');
    const hidden = await parseInput(m.get('.iptables-save')!);
    expect(hidden.diagnostics).toMatchObject([{ severity: 'warning', code: 'input/left-out' }]);
    expect(hidden.diagnostics[0].message).toMatch(/looks like a dump \(iptables-save\).*hidden file/);
    expect(hidden.parsed).toBeUndefined();
    const note = await parseInput(m.get('README')!);
    expect(note.diagnostics).toMatchObject([{ severity: 'info', code: 'input/left-out' }]);
  });
});
