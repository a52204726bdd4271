import { describe, expect, it } from 'vitest';
import { detectFormat, parseInput } from '../../src/load/index.js';

/** `ip rule` output with only custom rules (no 32766/32767 lines) is ip rule, not ip route (issue 15). */
async function read(text: string) {
  const f = await parseInput({ path: 'rules.txt', text, bytes: Buffer.byteLength(text) });
  return { format: f.format, errors: f.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message), counts: f.parsed?.counts ?? {} };
}

describe('ip rule without the main/default lines', () => {
  it('reads `0: from all lookup local` + a custom fwmark rule as two ip rules', async () => {
    const r = await read('0:\tfrom all lookup local\n100:\tfrom all fwmark 0x1 lookup 100\n');
    expect(r.format).toBe('ip-rule');
    expect(r.errors).toEqual([]);
    expect(r.counts.rules).toBe(2);
  });

  it('a single custom rule, and custom rules after a prompt, are ip rule too', async () => {
    expect(detectFormat('0:\tfrom all lookup local\n')).toBe('ip-rule');
    const r = await read('$ ip rule\n0:\tfrom all lookup local\n1000:\tfrom 10.244.1.0/24 lookup 200\n');
    expect(r.format).toBe('ip-rule');
    expect(r.errors).toEqual([]);
    expect(r.counts.rules).toBe(2);
  });

  it('still reads IPv6 and IPv4 routes as ip route', async () => {
    expect(detectFormat('fe80::/64 dev eth0 proto kernel metric 256 pref medium\n::1 dev lo proto kernel metric 256 pref medium\n')).toBe('ip-route');
    expect(detectFormat('default via 10.0.0.1 dev eth0\n10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.5\n')).toBe('ip-route');
    expect(detectFormat('0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n')).toBe('ip-rule');
  });
});
