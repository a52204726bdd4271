import type { Ruleset } from '../../model/netfilter.js';
import { createRule, type Related } from '../rule.js';
import { ruleRelated } from '../context.js';

export default createRule({
  id: 'mixed-iptables-backends',
  meta: {
    description: 'Rules in both the iptables-legacy and iptables-nft backends, or rules iptables-save could not print (`[unsupported revision]`, incompatible tables).',
    severity: 'warning',
    docs: [
      'The kernel runs the rules of both backends: the legacy x_tables and nf_tables. A node where some',
      'programs use `iptables-legacy` and others `iptables-nft` (e.g. kubelet or a CNI image with another',
      'default than the host) has two independent sets of chains, each hooked into the same netfilter hooks;',
      'each program only sees its own, so kube-proxy\'s rules, a CNI\'s masquerade and the host firewall can',
      'fight without anyone seeing it. iptables-nft prints `# Warning: iptables-legacy tables present` when',
      'that happens. `[unsupported revision]` means the rule was written by a newer iptables than the one that',
      'printed it: the dump (and any iptables-save | iptables-restore round trip) loses the match.',
      '`# Table … is incompatible` means native nft rules live in a table iptables-nft cannot show.',
      '',
      '**Fix:** make every component use one backend (kube-proxy ≥1.29 and kubelet detect it from the',
      '`KUBE-IPTABLES-HINT` chain; CNI images usually follow the host with `iptables-wrapper`); flush the other',
      'backend\'s tables. Dump both (`iptables-legacy-save`, `iptables-nft-save`) and use the iptables binary that',
      'wrote the rules.',
      '',
      '**Example** (kubernetes/kubernetes#71305, "kube-proxy currently incompatible with `iptables >= 1.8`"): on',
      'Debian 10 and RHEL 8 hosts, whose iptables 1.8 defaults to the nft backend, kube-proxy\'s image wrote its',
      'chains with iptables-legacy while the host and CNI wrote theirs with iptables-nft; each side saw only its',
      'own rules, duplicated firewall rules and broke Service traffic, until images shipped `iptables-wrapper`.',
    ].join('\n'),
    messages: {
      legacyWarning: 'iptables-legacy tables are present beside these nf_tables rules: two rulesets run and each tool only sees its own',
      both: 'the snapshot holds IPv{{family}} rules from both backends ({{files}}): both run in the kernel',
      unsupportedRevision: '{{count}} printed with `[unsupported revision]`: written by a newer iptables than the one that dumped them, and lost in a save/restore round trip',
      incompatible: 'table {{table}} holds native nftables rules iptables-nft cannot print: they are not in this dump',
    },
  },
  check(ctx) {
    const rulesets = ctx.snapshot.rulesets;
    for (const rs of rulesets) {
      if (rs.legacyTablesWarning) {
        const c = rs.comments.find((x) => /iptables-legacy tables present/.test(x.text));
        ctx.report({ messageId: 'legacyWarning', file: rs.file, line: c?.line ?? 1, column: 1, ...(c ? { text: c.text } : {}) });
      }
      // Such lines usually do not parse as rules (the grammar keeps them as unsupported lines).
      const odd: Related[] = [];
      for (const t of rs.tables) for (const ch of t.chains) for (const r of ch.rules) if (r.raw.includes('[unsupported revision]')) odd.push(ruleRelated(r));
      for (const u of rs.unsupported) if (u.text.includes('[unsupported revision]')) odd.push({ file: rs.file, line: u.line, column: u.column, text: u.text });
      odd.sort((a, b) => a.line - b.line);
      if (odd.length) {
        const first = odd[0];
        ctx.report({ messageId: 'unsupportedRevision', data: { count: `${odd.length} rule${odd.length === 1 ? ' was' : 's were'}` }, file: first.file, line: first.line, column: first.column ?? 1, text: first.text, related: odd.slice(1, 10) });
      }
      for (const table of rs.incompatibleTables) {
        const c = rs.comments.find((x) => x.text.includes(`\`${table}'`));
        ctx.report({ messageId: 'incompatible', data: { table }, file: rs.file, line: c?.line ?? 1, column: 1, ...(c ? { text: c.text } : {}) });
      }
    }
    for (const family of [4, 6] as const) {
      const withRules = (b: Ruleset['backend']) => rulesets.filter((r) => r.family === family && r.backend === b && r.ruleCount > 0);
      const legacy = withRules('legacy');
      const nft = withRules('nf_tables');
      if (legacy.length && nft.length) {
        const rs = legacy[0];
        ctx.report({ messageId: 'both', data: { family, files: [...legacy, ...nft].map((r) => `${r.file}: ${r.backend}`).join(', ') }, file: rs.file, line: rs.tables[0]?.line ?? 1, column: 1 });
      }
    }
  },
});
