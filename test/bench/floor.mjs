/**
 * The JS floor: what any Node program must pay to look at every line of the dump —
 * start Node, read the file as UTF-8, split it into lines. `node floor.mjs FILE` prints the count.
 */
import { readFileSync } from 'node:fs';

const lines = readFileSync(process.argv[2], 'utf8').split('\n');
process.stdout.write(`${lines.length}\n`);
