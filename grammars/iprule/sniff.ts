/** `ip rule` text and `ip -j rule` JSON, by content. */
const RULE = /^\s*\d+:\s+(not\s+)?from\s+\S+/;

export const ipRuleSniffer = {
  id: 'ip-rule' as const,
  sniff(lines: readonly string[]): number {
    const hits = lines.filter((l) => RULE.test(l)).length;
    return hits === 0 ? 0 : hits >= Math.min(3, lines.length) ? 1 : 0.5;
  },
};

export const ipRuleJsonSniffer = {
  id: 'ip-rule-json' as const,
  sniff(lines: readonly string[]): number {
    const head = lines.slice(0, 5).join('');
    return /^\s*\[\s*\{\s*"priority"\s*:/.test(head) && /"(table|action|goto)"/.test(head) ? 1 : 0;
  },
};
