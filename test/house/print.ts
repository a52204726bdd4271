/**
 * The measures of test/house/measures.ts, printed: `npx vite-node test/house/print.ts [ROOT]`
 * (ROOT: another checkout, for a before/after; default this one).
 */
import { readSources } from '../layering/imports.js';
import { fnLine, measure, ROOT, summary, under } from './measures.js';

const all = measure(readSources(process.argv[2] ?? ROOT));
for (const prefix of ['src/', 'grammars/']) process.stdout.write(`${summary(under(all, prefix), prefix, 50)}\n\n`);
const over80 = [...under(all, 'src/').functions, ...under(all, 'grammars/').functions].filter((f) => f.lines > 80);
process.stdout.write(`over 80 lines, src/ and grammars/:\n${over80.map((f) => `  ${fnLine(f)}`).join('\n')}\n`);
