/** nft's echo of a command it refused, as kube-proxy logs it inside "nftables sync failed". */
import type { BodyLine } from '../../grammars/kube-proxy-log/index.js';
import type { NftErrorEcho } from '../model/kube-proxy.js';
import { readEchoedCommand } from './nft-echo.js';

/** `/dev/stdin:120:31-44: Error: …` followed by the command and the caret line (read with the nft grammar: nft-echo.ts). */
export function nftEcho(lines: readonly BodyLine[]): NftErrorEcho | undefined {
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(\S*?):(\d+):(\d+)(?:-(\d+))?: Error: (.*)$/.exec(lines[i].text);
    if (!m) continue;
    const from = Number(m[3]);
    const to = m[4] ? Number(m[4]) : from;
    const command = lines[i + 1]?.text;
    const caret = lines[i + 2]?.text;
    const echo: { -readonly [K in keyof NftErrorEcho]: NftErrorEcho[K] } = { line: Number(m[2]), columns: { from, to }, message: m[5], fileLine: lines[i].line };
    if (command !== undefined && caret !== undefined && /^\s*\^+~*\s*$/.test(caret)) {
      echo.command = command;
      echo.underlined = command.slice(from - 1, to);
      return { ...echo, ...readEchoedCommand(command, from) };
    }
    return echo;
  }
  return undefined;
}

