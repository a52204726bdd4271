/**
 * `kpx migrate-check --to nftables`: what will behave differently on this node once kube-proxy runs
 * in nftables mode. The lint machinery (inputs, --config, --baseline, -o text|json|sarif|github,
 * --fail-on, exit codes) with the rules of the 'migration' category.
 */
import { MIGRATION_RULES } from '../../lint/index.js';
import { proxyModes } from '../../kube/modes.js';
import { UsageError } from '../exit.js';
import { findingsAction, type LintCliOptions } from './lint.js';

export interface MigrateCheckOptions extends LintCliOptions {
  to?: string;
}

export async function migrateCheckAction(inputs: string[], opts: MigrateCheckOptions): Promise<number> {
  const to = (opts.to ?? 'nftables').toLowerCase();
  if (to !== 'nftables') throw new UsageError(`--to ${opts.to}: only nftables is supported (the mode kube-proxy is moving to)`);
  return findingsAction(inputs, opts, {
    name: 'migrate-check',
    rules: MIGRATION_RULES,
    question: 'what will change when this node moves to nftables mode',
    heading(snapshot, s, skipped) {
      const modes = proxyModes(snapshot);
      const from = modes.includes('ipvs') ? 'IPVS mode' : modes.includes('iptables') ? 'iptables mode' : modes.includes('nftables') ? 'nftables mode already' : 'an unknown mode';
      const differ = s.error + s.warning;
      return `kube-proxy ${from} → nftables: ${differ === 0 ? 'nothing found that will behave differently' : `${differ} thing${differ === 1 ? '' : 's'} will behave differently (${s.error} error${s.error === 1 ? '' : 's'}, ${s.warning} warning${s.warning === 1 ? '' : 's'})`}${skipped ? '; some checks lacked input (end of report)' : ''}`;
    },
  });
}
