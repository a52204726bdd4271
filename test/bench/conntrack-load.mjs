#!/usr/bin/env node
/**
 * Child of the conntrack benchmark: streams a `conntrack -L` file into kpx's table builder (64 KiB
 * chunks, as the input layer hands them over — never the whole file as one string), then runs
 * kube-proxy's cleanup test over it against a few UDP Services. Prints one JSON line.
 *   node test/bench/conntrack-load.mjs FILE
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST } from './lib.mjs';

const file = process.argv[2];
const { ConntrackTableBuilder } = await import(pathToFileURL(join(DIST, 'src', 'extract', 'conntrack.js')).href);
const { kubeProxyCleanup } = await import(pathToFileURL(join(DIST, 'src', 'kube', 'conntrack.js')).href);

const t0 = performance.now();
const b = new ConntrackTableBuilder(file);
for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 })) b.push(chunk);
const { table, diagnostics, shapes, fullParses } = b.finish();
const t1 = performance.now();
// The generator's Services: 10.96.0.10:53/udp with endpoints 10.244.0.2-9, of which .2 is "gone".
const service = { protocol: 'udp', port: 53, clusterIP: '10.96.0.10', loadBalancerIPs: [], externalIPs: [], nodePort: null, endpoints: [3, 4, 5, 6, 7, 8, 9].map((n) => ({ ip: `10.244.0.${n}`, port: 53 })) };
const flagged = kubeProxyCleanup(table, [service]).length;
const t2 = performance.now();
process.stdout.write(
  `${JSON.stringify({ entries: table.size, errors: diagnostics.filter((d) => d.severity === 'error').length, shapes, fullParses, flagged, loadS: (t1 - t0) / 1000, cleanupS: (t2 - t1) / 1000, columnMiB: table.columnBytes / 1048576, heapMiB: process.memoryUsage().heapUsed / 1048576 })}\n`,
);
