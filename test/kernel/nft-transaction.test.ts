/**
 * The `nft -f` transaction form judged by the real nft: kube-proxy's full-sync transaction of a
 * generated nftables-mode node goes through `nft -f` unchanged, and what `nft list ruleset`
 * shows afterwards parses to the model kpx built from the transaction text itself, and resolves
 * to the same Services.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nftParser } from '../../src/extract/nft.js';
import { generateCluster, type GenerateOptions, nftScript, type NftOptions } from '../../src/generate/index.js';
import { resolveNft } from '../../src/kube/resolve-nft.js';
import type { ServicePort } from '../../src/kube/types.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import type { NftRuleset } from '../../src/model/nft.js';
import { SCHEMA_FIELDS } from '../helpers/generated.js';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { projectRuleset } from '../helpers/nft-compare.js';

const canRun = requireKernel();

const CASES: { label: string; opts: GenerateOptions; nft?: NftOptions }[] = [
  { label: 'all shapes, seed 21', opts: { seed: 21, services: 60 } },
  { label: 'affinity, source ranges, no endpoints, sctp', opts: { seed: 22, services: 12, shapes: ['affinity', 'affinity-custom-timeout', 'affinity-local', 'loadbalancer-source-ranges', 'loadbalancer-source-ranges-node', 'sctp', 'sctp-nodeport', 'no-endpoints', 'nodeport-no-endpoints', 'external-ips-no-endpoints', 'loadbalancer-no-endpoints', 'kube-dns'] } },
  { label: '--nodeport-addresses all (nodeport-ips added then deleted)', opts: { seed: 23, services: 30 }, nft: { nodePortAddresses: 'all' } },
];

/** What a Service port is, apart from where its evidence lines are. */
function serviceView(s: ServicePort): unknown {
  const out: Record<string, unknown> = { id: s.id, chains: s.chains, hashVerified: s.hashVerified, problems: s.problems };
  for (const f of SCHEMA_FIELDS) out[f] = s[f];
  out.endpoints = s.endpoints.map((e) => ({ ip: e.ip, port: e.port, probability: e.probability, local: e.local }));
  return out;
}

async function services(text: string, name: string): Promise<unknown[]> {
  const dir = mkdtempSync(join(tmpdir(), 'kpx-nft-tx-'));
  try {
    writeFileSync(join(dir, name), text);
    const snap = await loadSnapshot([join(dir, name)]);
    return resolveNft(snap).services.map(serviceView);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(canRun)('generated kube-proxy transactions through the real nft -f', () => {
  for (const family of [4, 6] as const) {
    for (const c of CASES) {
      it(`IPv${family}, ${c.label}: nft -f takes it unchanged; nft list ruleset reads as kpx read the transaction; same Services`, async () => {
        const cluster = generateCluster({ ...c.opts, family });
        const script = nftScript(cluster, c.nft ?? {});
        const tx = nftParser.parse(script, 'transaction.nft');
        expect(tx.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
        expect(tx.variant).toBe('transaction');

        const listing = await withNetns('nft-tx', (ns) => {
          const r = ns.run('nft', ['-f', '-'], script);
          expect(r.stderr).toBe('');
          expect(r.status).toBe(0);
          return ns.exec('nft', ['list', 'ruleset']);
        });
        const listed = nftParser.parse(listing, 'ruleset.txt');
        expect(listed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
        const txData = tx.data as NftRuleset;
        expect(projectRuleset(txData)).toEqual(projectRuleset(listed.data as NftRuleset));
        // not vacuous: the node has Services, with endpoints, in both readings
        const { commands, ...counts } = tx.counts;
        expect(commands).toBeGreaterThan(100);
        expect(counts).toEqual(listed.counts);

        const fromTx = await services(script, 'transaction.nft');
        const fromListing = await services(listing, 'nft-ruleset.txt');
        expect(fromTx.length).toBeGreaterThan(5);
        expect(fromTx).toEqual(fromListing);
      });
    }
  }
});
