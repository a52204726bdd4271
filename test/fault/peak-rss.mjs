#!/usr/bin/env node
/**
 * Run the built kpx CLI in this process and, when it exits, write its peak resident memory
 * (process.resourceUsage().maxRSS, KiB: the kernel's own count, whatever the moment of the peak)
 * to the file named first:  node peak-rss.mjs OUT.txt kpx-args…
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [out, ...args] = process.argv.slice(2);
const bin = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
process.argv = [process.argv[0], bin, ...args];
process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
await import(bin);
