import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cataloguePath, renderCatalogue, withCatalogue } from '../../src/lint/catalogue.js';
import { RULES } from '../../src/lint/index.js';

describe('the rule catalogue in README.md', () => {
  it('is generated from the rule modules and up to date', () => {
    expect(existsSync(cataloguePath())).toBe(true);
    const current = readFileSync(cataloguePath(), 'utf8');
    const want = withCatalogue(current);
    if (process.env.KPX_UPDATE_CATALOGUE === '1') writeFileSync(cataloguePath(), want);
    expect(current, 'README.md lint catalogue is stale: KPX_UPDATE_CATALOGUE=1 npx vitest run test/lint/catalogue.test.ts').toBe(want);
  });

  it('lists every rule with its severity, description and docs (with a fix)', () => {
    const text = renderCatalogue();
    expect(RULES.length).toBe(51);
    for (const r of RULES) {
      expect(text).toContain(`### ${r.id}\n`);
      expect(text).toContain(`| [\`${r.id}\`](#${r.id}) | ${r.meta.severity} |`);
      expect(r.meta.docs).toMatch(/\*\*Fix:\*\*/);
      expect(r.meta.description.length).toBeGreaterThan(20);
    }
    expect(new Set(RULES.map((r) => r.id)).size).toBe(RULES.length);
  });

  it('documents each kube-proxy and version-trap rule with an example from a public thread (owner/repo#N)', () => {
    const ids = RULES.map((r) => r.id).filter((id) => id.startsWith('kube-proxy-') || id.startsWith('kube-firewall-'));
    expect(ids.sort()).toEqual([
      'kube-firewall-drop-without-mark',
      'kube-proxy-cluster-cidr-mismatch',
      'kube-proxy-masquerade-bit-mismatch',
      'kube-proxy-mode-fallback',
      'kube-proxy-mode-mismatch',
      'kube-proxy-nodeport-addresses',
      'kube-proxy-strict-arp',
      'kube-proxy-sync-failing',
    ]);
    for (const r of RULES.filter((x) => ids.includes(x.id))) {
      expect(r.meta.docs, r.id).toMatch(/^\*\*Example\*\* \([\w.-]+\/[\w.-]+#\d+/m);
    }
  });
});
