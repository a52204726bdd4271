#!/usr/bin/env node
/** kpx command line: the program (program.ts) run as this process, with its exit code. */
import { basename } from 'node:path';
import { guardStdStreams } from './output.js';
import { buildProgram } from './program.js';

// Write failures on stdout/stderr (a closed pipe, a full disk) end kpx with one line, not a stack trace.
guardStdStreams();

const program = buildProgram({ invokedAs: basename(process.argv[1] ?? 'kpx').replace(/\.js$/, ''), exit: (code) => process.exit(code) });
await program.parseAsync(process.argv);
