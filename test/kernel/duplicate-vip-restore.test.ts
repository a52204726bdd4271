/**
 * The duplicate-service-vip fixture is a dump the kernel takes: iptables-restore loads it (two
 * KUBE-SERVICES rules for one VIP to two Service chains are legal iptables), and iptables-save
 * prints both claims back.
 */
import { describe, expect, it } from 'vitest';
import { duplicateVipDump, SECOND_CLAIM } from '../fixtures/duplicate-vip/kind-duplicate-vip.js';
import { requireKernel, withNetns } from '../helpers/netns.js';

const canRun = requireKernel();

describe.runIf(canRun)('duplicate-service-vip fixture', () => {
  it('loads with iptables-restore and keeps both claims', async () => {
    await withNetns('dupvip', (ns) => {
      const r = ns.run('iptables-restore', [], duplicateVipDump());
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const back = ns.exec('iptables-save', ['-t', 'nat']);
      expect(back).toContain(SECOND_CLAIM);
      expect(back).toContain('"default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y');
    });
  });
});
