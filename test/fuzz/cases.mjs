/**
 * Fuzz cases (issue 34): real dumps — the repo's samples and real pastes (samples/, test/fixtures/)
 * and, when present, the shared corpus — mutated by a seeded generator, each paired with a kpx
 * command and output format. The same seed gives the same cases, so a finding can be replayed
 * (`npm run fuzz -- --seed S --only N`).
 *
 * Mutations aim at what strangers paste: cut-off files, control characters and escape sequences
 * in names, stray bytes, lines duplicated, dropped, swapped or spliced from another dump, numbers
 * out of range, very long tokens, and bundles with one file damaged.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

/** mulberry32: a small seeded PRNG (the same seed, the same cases). */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  };
}

/** Files that are notes about a dump, not dumps (a `.source` cites where a sample came from). */
const NOT_A_DUMP = /(\.source|\.md|\.sh|\.truth\.json|truth\.json|\.expected(\.\w+)?|\.snap)$/;
const MAX_SEED_BYTES = 512 * 1024;

function walk(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile() && !NOT_A_DUMP.test(e.name) && statSync(p).size <= MAX_SEED_BYTES) out.push(p);
  }
  return out;
}

/**
 * The seed files: every dump under the given roots (missing roots are skipped), and the sample
 * bundles (directories with a manifest.json) for cases that damage one file of a whole node.
 */
export function seeds(roots) {
  const files = [];
  const bundles = [];
  for (const root of roots) {
    if (!existsSync(root)) continue;
    walk(root, files);
    for (const e of readdirSync(root, { withFileTypes: true })) {
      if (e.isDirectory() && existsSync(join(root, e.name, 'manifest.json'))) bundles.push(join(root, e.name));
    }
  }
  files.sort();
  bundles.sort();
  return { files, bundles };
}

/** Text to insert into a file read as bytes (latin1): its UTF-8 bytes. */
const u8 = (s) => Buffer.from(s, 'utf8').toString('latin1');

/** Characters a terminal acts on, and the ones JSON.stringify leaves raw. */
const HOSTILE = ['\x1b[2J', '\x1b]0;owned\x07', '\x00', '\x07', '\x08', '\r', '\x7f', '\u009b31m', '\u0085', '\u2028', '\u2029', '\x1b', '\x0c', '\ufeff'].map(u8);
/** Bytes that are not UTF-8 at all (a file read as Latin-1 keeps them). */
const NOT_UTF8 = ['\xff\xfe', '\xc3', '\xe2\x82', '\x80'];
const ODD_NUMBERS = ['-1', '0', '4294967296', '99999999999999999999', '1e309', 'NaN', '65536', '-0', '0x10', '1.5'];

function mutateOnce(text, r, other) {
  const lines = text.split('\n');
  const at = () => r.int(Math.max(1, text.length));
  const line = () => r.int(lines.length);
  switch (r.int(12)) {
    case 0: // cut off anywhere (a paste that stopped)
      return text.slice(0, at());
    case 1: {
      // a control character or escape sequence inside a token (chain, Service, node names)
      const i = at();
      return text.slice(0, i) + r.pick(r.chance(0.8) ? HOSTILE : NOT_UTF8) + text.slice(i);
    }
    case 2: {
      // random bytes as Latin-1/UTF-8 soup
      const i = at();
      const junk = Array.from({ length: 1 + r.int(8) }, () => String.fromCharCode(r.int(r.chance(0.5) ? 0x100 : 0x3000))).join('');
      const bytes = r.chance(0.5) ? junk.replace(/[^\x00-\xff]/g, '?') : u8(junk); // raw bytes, or UTF-8 text
      return text.slice(0, i) + bytes + text.slice(i + r.int(4));
    }
    case 3: {
      const i = line();
      lines.splice(i, 0, ...Array(1 + r.int(3)).fill(lines[i])); // duplicated line(s)
      return lines.join('\n');
    }
    case 4:
      lines.splice(line(), 1 + r.int(3)); // dropped line(s)
      return lines.join('\n');
    case 5: {
      const [i, j] = [line(), line()];
      [lines[i], lines[j]] = [lines[j], lines[i]]; // swapped lines
      return lines.join('\n');
    }
    case 6: {
      // a line from another dump (the wrong format in the middle)
      const o = other.split('\n');
      lines.splice(line(), 0, o[r.int(o.length)]);
      return lines.join('\n');
    }
    case 7: {
      // a number replaced by one out of range
      const nums = [...text.matchAll(/\d+/g)];
      if (!nums.length) return text + r.pick(ODD_NUMBERS);
      const m = r.pick(nums);
      return text.slice(0, m.index) + r.pick(ODD_NUMBERS) + text.slice(m.index + m[0].length);
    }
    case 8: {
      // a very long token (the reader must stay linear)
      const i = at();
      const token = r.pick(['a', u8('€'), '-m comment --comment x ', '10.0.0.1 ', '{', '[', '"', ' ', '\t', ':']);
      return text.slice(0, i) + token.repeat(200 + r.int(4000)) + text.slice(i);
    }
    case 9: {
      // a token of the line replaced by a hostile name
      const i = line();
      const words = lines[i].split(' ');
      words[r.int(words.length)] = `n${r.pick(HOSTILE)}x${r.pick(HOSTILE)}`;
      lines[i] = words.join(' ');
      return lines.join('\n');
    }
    case 10: // CRLF line ends, or none at the end
      return r.chance(0.5) ? text.replace(/\n/g, '\r\n') : text.replace(/\n+$/, '');
    default: {
      // deep nesting in structured text
      const i = at();
      const n = 50 + r.int(3000);
      return text.slice(0, i) + r.pick(['[', '{"a":', '- ', '  ']).repeat(n) + text.slice(i);
    }
  }
}

export function mutate(text, r, other) {
  if (r.chance(0.08)) return text; // the real dump as it is
  let t = text;
  for (let k = 1 + r.int(3); k > 0; k--) t = mutateOnce(t, r, other);
  return t;
}

/** Where a trace or reverse lookup may point: an address from the dump, else the usual ones. */
function target(text, r, forReverse) {
  const found = text.match(/\b(?:\d{1,3}\.){3}\d{1,3}\b/g) ?? [];
  const ip = found.length && r.chance(0.8) ? r.pick(found) : r.pick(['10.96.0.10', '10.96.0.1', '10.244.0.5', '172.18.0.2']);
  if (forReverse) return r.chance(0.5) ? ip : `${ip}:${r.pick(['53', '80', '443', '8080'])}`;
  return r.pick([
    `${ip}:${r.pick(['53', '80', '443', '9153'])}/${r.pick(['udp', 'tcp', 'sctp'])}`,
    `${ip}:${r.pick(['53', '80', '443'])}`,
    ip,
    'kube-system/kube-dns',
    `nodeport:${30000 + r.int(2768)}`,
  ]);
}

/** The commands and formats a case may run (all read-only; none collects from this node). */
const COMMANDS = [
  ['inspect', 'text'],
  ['inspect', 'json'],
  ['services', 'text'],
  ['services', 'wide'],
  ['services', 'json'],
  ['services', 'yaml'],
  ['trace', 'text'],
  ['trace', 'json'],
  ['lint', 'text'],
  ['lint', 'json'],
  ['lint', 'sarif'],
  ['lint', 'github'],
  ['migrate-check', 'text'],
  ['migrate-check', 'sarif'],
  ['dump', 'iptables-save'],
  ['dump', 'json'],
  ['reverse', 'text'],
  ['reverse', 'json'],
  ['summarize', 'json'],
  ['graph', 'dot'],
];

/**
 * Case `index` of the run seeded with `seed`: what to write (files, relative to the case's own
 * directory, or a sample bundle to copy first) and the command. Deterministic in (seed, index).
 */
export function makeCase(seed, index, pool, rootOf) {
  const r = prng((seed * 0x9e3779b1) ^ (index * 0x85ebca6b));
  const [command, output] = r.pick(COMMANDS);
  const inBundle = pool.bundles.length > 0 && command !== 'dump' && r.chance(0.25);
  const file = r.pick(pool.files);
  const other = readFileSync(r.pick(pool.files), 'latin1');
  // Files are read as bytes (latin1 keeps every byte), mutated, and written back the same way, so
  // invalid UTF-8 in a real dump stays invalid.
  const text = mutate(readFileSync(file, 'latin1'), r, other);
  const bundle = inBundle ? r.pick(pool.bundles) : undefined;
  const name = bundle ? r.pick(readdirSync(bundle).filter((f) => f !== 'manifest.json')) : basename(file);
  const args = command === 'trace' || command === 'reverse' ? [target(text, r, command === 'reverse')] : [];
  return {
    index,
    command,
    output,
    args,
    bundle,
    file: { name, text },
    from: rootOf(file),
    verbose: command === 'trace' && r.chance(0.3),
  };
}

/** A short name of where a seed came from, for the report. */
export function rooted(roots) {
  return (file) => {
    for (const root of roots) if (file.startsWith(root)) return relative(join(root, '..'), file);
    return file;
  };
}
