#!/usr/bin/env node
/**
 * node dist/src/generate/main.js --services 10000 --seed 1 --mode iptables|ipvs|nftables --out DIR
 *   [--family 4|6] [--cni flannel|calico] [--nodes N] [--big-service N] [--no-shapes] [--load-forms] [--api] [--drift K,K…]
 *   [--kube-proxy-version V | --nft-layout L] [--nodeport-addresses primary|all]
 * --api also writes api-objects.json (kubectl get svc,endpointslices,nodes,pods -A -o json); --drift makes it
 * disagree with the dumps (kinds: DRIFTS in api-objects.ts).
 * --load-forms also writes ipset-save.txt / nft-script.nft, the forms `ipset restore` and `nft -f` load.
 * --kube-proxy-version (1.29 … 1.37, `v1.31.4`) or --nft-layout (one of NFT_LAYOUTS) picks the nftables
 * layout kube-proxy of that release writes (nft-layout.ts); --nodeport-addresses overrides its default.
 */
import { generateCluster } from './cluster.js';
import { type Mode, writeBundle } from './bundle.js';
import { DRIFTS, type DriftOption } from './api-objects.js';
import { NFT_LAYOUTS, type NftLayoutId } from './nft-layout.js';
import { type NftOptions, nftLayoutOf } from './nft.js';

function usage(msg?: string): never {
  if (msg) process.stderr.write(`kpx-generate: ${msg}\n`);
  process.stderr.write(
    'usage: main.js --services N --seed S --mode iptables|ipvs|nftables --out DIR [--family 4|6] [--cni flannel|calico] [--nodes N] [--big-service N] [--no-shapes] [--load-forms] [--api] [--drift K,K…]' +
      ` [--kube-proxy-version V | --nft-layout ${NFT_LAYOUTS.join('|')}] [--nodeport-addresses primary|all]\n`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) usage(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (a === '--no-shapes' || a === '--help' || a === '--load-forms' || a === '--api') out[a.slice(2)] = true;
    else {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      out[a.slice(2)] = argv[++i];
    }
  }
  return out;
}

function num(v: string | boolean | undefined, name: string, dflt?: number): number {
  if (v === undefined) {
    if (dflt === undefined) usage(`--${name} is required`);
    return dflt;
  }
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) usage(`--${name} must be a non-negative integer`);
  return n;
}

const args = parseArgs(process.argv.slice(2));
if (args.help) usage();
const mode = (args.mode ?? 'iptables') as Mode;
if (!['iptables', 'ipvs', 'nftables'].includes(mode)) usage(`unknown --mode ${String(mode)}`);
if (typeof args.out !== 'string') usage('--out is required');
const family = num(args.family, 'family', 4);
if (family !== 4 && family !== 6) usage('--family must be 4 or 6');
const cni = (args.cni ?? 'flannel') as 'flannel' | 'calico';
if (cni !== 'flannel' && cni !== 'calico') usage('--cni must be flannel or calico');
const nft: NftOptions = {};
if (typeof args['kube-proxy-version'] === 'string') nft.kubeProxyVersion = args['kube-proxy-version'];
if (typeof args['nft-layout'] === 'string') {
  if (!(NFT_LAYOUTS as readonly string[]).includes(args['nft-layout'])) usage(`unknown --nft-layout ${args['nft-layout']} (one of ${NFT_LAYOUTS.join(', ')})`);
  nft.nftLayout = args['nft-layout'] as NftLayoutId;
}
const npa = args['nodeport-addresses'];
if (npa !== undefined) {
  if (npa !== 'primary' && npa !== 'all') usage('--nodeport-addresses must be primary or all');
  nft.nodePortAddresses = npa;
}
try {
  nftLayoutOf(nft);
} catch (e) {
  usage((e as Error).message);
}
const started = Date.now();
const cluster = generateCluster({
  seed: num(args.seed, 'seed', 1),
  services: num(args.services, 'services'),
  family,
  cni,
  nodes: args.nodes === undefined ? undefined : num(args.nodes, 'nodes'),
  bigService: args['big-service'] === undefined ? undefined : num(args['big-service'], 'big-service'),
  shapes: args['no-shapes'] ? [] : undefined,
});
const drift = typeof args.drift === 'string' ? args.drift.split(',').filter(Boolean) : [];
for (const d of drift) if (!(DRIFTS as readonly string[]).includes(d)) usage(`unknown --drift ${d} (one of ${DRIFTS.join(', ')})`);
const api = args.api === true || drift.length > 0 ? { drift: drift as DriftOption[] } : undefined;
const files = writeBundle(cluster, mode, args.out, { loadForms: args['load-forms'] === true, ...(api ? { api } : {}), nft });
const ports = cluster.syncOrder.length;
process.stderr.write(
  `kpx-generate: ${cluster.services.length} services, ${ports} service ports, ${cluster.totalEndpoints} endpoints, ${cluster.nodes.length} nodes → ${args.out} (${files.join(', ')}) in ${Date.now() - started} ms\n`,
);
