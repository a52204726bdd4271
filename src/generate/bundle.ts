/**
 * Write a bundle directory for one generated node: the mode's dumps, ip-route.txt, ip-addr.txt
 * and truth.json. Large outputs are streamed to disk in chunks.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster } from './cluster.js';
import { writeIptablesSave } from './iptables.js';
import { ipsetList, ipsetSave, ipvsIpAddr, ipvsState, writeIpvsadmLn, writeIpvsIptablesSave } from './ipvs.js';
import { type NftOptions, writeNftListing, writeNftScript } from './nft.js';
import { ipAddr, ipRoute } from './node.js';
import { groundTruth, truthJson } from './truth.js';
import { collect, type Sink } from './util.js';
import { apiObjects, type ApiObjectsOptions } from './api-objects.js';

export type Mode = 'iptables' | 'ipvs' | 'nftables';

function toFile(path: string, produce: (sink: Sink) => void): void {
  const fd = openSync(path, 'w');
  try {
    produce((chunk) => {
      writeSync(fd, chunk);
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * Write a node bundle (what the node's tools would print, plus truth.json); returns the file names
 * written. `loadForms` also writes what the real tools load (`ipset-save.txt` for `ipset restore`,
 * `nft-script.nft` for `nft -f`) — not part of a bundle, since they repeat what the listings say.
 */
export function writeBundle(cluster: Cluster, mode: Mode, dir: string, opts: { loadForms?: boolean; api?: ApiObjectsOptions; nft?: NftOptions } = {}): string[] {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  const put = (name: string, produce: (sink: Sink) => void) => {
    toFile(join(dir, name), produce);
    files.push(name);
  };
  if (mode === 'iptables') {
    put('iptables-save.txt', (s) => writeIptablesSave(cluster, {}, s));
    put('ip-addr.txt', (s) => s(ipAddr(cluster)));
  } else if (mode === 'ipvs') {
    const state = ipvsState(cluster);
    const ipt = collect((s) => writeIpvsIptablesSave(cluster, {}, state, s));
    put('iptables-save.txt', (s) => s(ipt));
    put('ipvsadm-Ln.txt', (s) => writeIpvsadmLn(cluster, state, s));
    put('ipset-list.txt', (s) => s(ipsetList(cluster, state, ipt)));
    if (opts.loadForms) put('ipset-save.txt', (s) => s(ipsetSave(cluster, state)));
    put('ip-addr.txt', (s) => s(ipvsIpAddr(cluster, state)));
  } else {
    put('nft-ruleset.txt', (s) => writeNftListing(cluster, opts.nft ?? {}, s));
    if (opts.loadForms) put('nft-script.nft', (s) => writeNftScript(cluster, opts.nft ?? {}, s));
    put('ip-addr.txt', (s) => s(ipAddr(cluster)));
  }
  put('ip-route.txt', (s) => s(ipRoute(cluster)));
  // The API's objects of the cluster (`kubectl get … -o json`), with any drift asked for.
  if (opts.api) put('api-objects.json', (s) => s(JSON.stringify(apiObjects(cluster, opts.api).list, null, 4) + '\n'));
  put('truth.json', (s) => s(truthJson(groundTruth(cluster))));
  return files;
}
