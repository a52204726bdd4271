import { describe, expect, it } from 'vitest';
import { catalogueDir, compareCatalogue, readCatalogue, renderCatalogue, writeCatalogue } from '../../src/lint/catalogue.js';
import { RULES } from '../../src/lint/index.js';

describe('the rule catalogue in docs/rules/', () => {
  it('has a page for every rule and no page without a rule, each generated from the rule modules and up to date', () => {
    const want = renderCatalogue();
    if (process.env.KPX_UPDATE_CATALOGUE === '1') writeCatalogue(catalogueDir(), want);
    const hint = 'docs/rules/ is stale: KPX_UPDATE_CATALOGUE=1 npx vitest run test/lint/catalogue.test.ts';
    expect(want.size).toBe(RULES.length + 1);
    expect(compareCatalogue(readCatalogue(), want), hint).toEqual({ missing: [], extra: [], stale: [] });
  });

  it('catches a page without a rule, a rule without a page, and a page edited by hand', () => {
    const want = renderCatalogue();
    const have = new Map(want).set('no-such-rule.md', '# no-such-rule\n');
    have.delete(`${RULES[0].id}.md`);
    have.set(`${RULES[1].id}.md`, 'edited by hand\n');
    expect(compareCatalogue(have, want)).toEqual({ missing: [`${RULES[0].id}.md`], extra: ['no-such-rule.md'], stale: [`${RULES[1].id}.md`] });
  });

  it('lists every rule with its severity, description and docs (with a fix)', () => {
    const index = renderCatalogue().get('README.md')!;
    // 56 lint rules and the 10 checks of `kpx migrate-check` (category 'migration').
    expect(RULES.length).toBe(66);
    expect(RULES.filter((r) => r.meta.category === 'migration').length).toBe(10);
    for (const r of RULES.filter((x) => x.meta.category === 'migration')) expect(index.indexOf(`[\`${r.id}\`]`)).toBeGreaterThan(index.indexOf('## Migration checks'));
    for (const r of RULES) {
      expect(index).toContain(`| [\`${r.id}\`](${r.id}.md) | ${r.meta.severity} |`);
      expect(renderCatalogue().get(`${r.id}.md`)).toContain(`# ${r.id}\n`);
      expect(r.meta.docs).toMatch(/\*\*Fix:\*\*/);
      expect(r.meta.description.length).toBeGreaterThan(20);
    }
    expect(new Set(RULES.map((r) => r.id)).size).toBe(RULES.length);
  });

  it('documents each kube-proxy and version-trap rule with an example from a public thread (owner/repo#N)', () => {
    const ids = RULES.map((r) => r.id).filter((id) => id.startsWith('kube-proxy-') || id.startsWith('kube-firewall-'));
    expect(ids).toEqual(
      expect.arrayContaining([
        'kube-firewall-drop-without-mark',
        'kube-proxy-cluster-cidr-mismatch',
        'kube-proxy-masquerade-bit-mismatch',
        'kube-proxy-mode-fallback',
        'kube-proxy-mode-mismatch',
        'kube-proxy-nodeport-addresses',
        'kube-proxy-strict-arp',
        'kube-proxy-sync-failing',
      ]),
    );
    for (const r of RULES.filter((x) => ids.includes(x.id))) {
      expect(r.meta.docs, r.id).toMatch(/^\*\*Example\*\* \([\w.-]+\/[\w.-]+#\d+/m);
    }
  });
});
