/**
 * The JS floor: what any Node program must pay to look at every line of the dump —
 * start Node, read the file as UTF-8, split it into lines. `node floor.mjs FILE…` prints the count.
 */
import { readFileSync } from 'node:fs';

let lines = 0;
for (const file of process.argv.slice(2)) lines += readFileSync(file, 'utf8').split('\n').length;
process.stdout.write(`${lines}\n`);
