#!/usr/bin/env python3
"""kpx kernel harness: SCTP sender (the kernel here has no SCTP sockets and node has no raw
sockets, so SCTP INIT chunks are built by hand and sent on a raw IP socket).

Runs INSIDE the source namespace; same argv JSON and output as sender.mjs:
  { proto: 'sctp', family, dst, dport, src|null, ports, timeoutMs, sequential, clear }
Each packet is one SCTP INIT (valid CRC32c) from its own source port. Answers are read from
a raw ICMP/ICMPv6 socket and matched to the packet by the quoted SCTP source port:
  port unreachable                      -> 'refused'   (a REJECT)
  protocol unreachable / ICMPv6 param.  -> 'reply'     (an endpoint host answered: it has no SCTP)
  other destination unreachable codes   -> 'unreachable'
  sendto() EPERM (locally generated, dropped by OUTPUT) -> 'blocked'
  nothing                               -> 'timeout'
"""
import errno, json, select, socket, struct, sys, time

spec = json.loads(sys.argv[1])
v6 = spec['family'] == 6
IPPROTO_SCTP = 132

_table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    _table.append(c)

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def init_chunk(sport, dport, tag):
    common = struct.pack('!HHII', sport, dport, 0, 0)
    # INIT: type 1, flags 0, length 20, initiate tag, a_rwnd, OS, MIS, initial TSN
    init = struct.pack('!BBHIIHHI', 1, 0, 20, tag, 65535, 10, 10, tag)
    csum = crc32c(common + init)
    return common[:8] + struct.pack('<I', csum) + init

out = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_RAW, IPPROTO_SCTP)
icmp = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_RAW,
                     socket.IPPROTO_ICMPV6 if v6 else socket.IPPROTO_ICMP)
# Hundreds of ICMP answers arrive in a burst: make room for them (root may force it).
for opt in (getattr(socket, 'SO_RCVBUFFORCE', 33), socket.SO_RCVBUF):
    try:
        icmp.setsockopt(socket.SOL_SOCKET, opt, 16 * 1024 * 1024)
        break
    except OSError:
        pass
if spec.get('src'):
    out.bind((spec['src'], 0, 0, 0) if v6 else (spec['src'], 0))
dest = (spec['dst'], 0, 0, 0) if v6 else (spec['dst'], 0)
ports = spec['ports']
wanted = set(ports)
results = {}

def parse_icmp(data):
    """(sport, status) for an ICMP error quoting one of our SCTP packets, else None."""
    try:
        if v6:
            typ, code = data[0], data[1]
            inner = data[8:]
            if len(inner) < 44 or inner[6] != IPPROTO_SCTP:
                return None
            sport, dport = struct.unpack('!HH', inner[40:44])
            if typ == 1:
                status = 'refused' if code == 4 else 'unreachable'
            elif typ == 4:
                status = 'reply'
            else:
                return None
        else:
            ihl = (data[0] & 0x0F) * 4
            typ, code = data[ihl], data[ihl + 1]
            inner = data[ihl + 8:]
            iihl = (inner[0] & 0x0F) * 4
            if inner[9] != IPPROTO_SCTP or len(inner) < iihl + 4:
                return None
            sport, dport = struct.unpack('!HH', inner[iihl:iihl + 4])
            if typ != 3:
                return None
            status = {3: 'refused', 2: 'reply'}.get(code, 'unreachable')
        if dport != spec['dport'] or sport not in wanted:
            return None
        return sport, status
    except (IndexError, struct.error):
        return None

def drain(deadline, until_port=None):
    while True:
        left = max(0.0, deadline - time.monotonic())
        r, _, _ = select.select([icmp], [], [], left)
        if not r:
            return  # nothing more within the deadline (left == 0: nothing queued)
        hit = parse_icmp(icmp.recv(65535))
        if hit and hit[0] not in results:
            results[hit[0]] = {'sport': hit[0], 'status': hit[1]}
            if until_port is not None and hit[0] == until_port:
                return

def send(port):
    try:
        out.sendto(init_chunk(port, spec['dport'], 0x10000 + port), dest)
    except OSError as e:
        code = errno.errorcode.get(e.errno, str(e.errno))
        results[port] = {'sport': port, 'status': 'blocked' if e.errno == errno.EPERM else 'error', 'code': code}

def clear():
    for f in spec.get('clear') or []:
        try:
            with open(f, 'w') as fh:
                fh.write('/\n')
        except OSError:
            pass

timeout = spec['timeoutMs'] / 1000.0
if spec.get('sequential'):
    for p in ports:
        clear()
        send(p)
        if p not in results:
            drain(time.monotonic() + timeout, until_port=p)
else:
    clear()
    for p in ports:
        send(p)
        drain(time.monotonic())  # read what already arrived
    drain(time.monotonic() + timeout)

print(json.dumps({'results': [results.get(p, {'sport': p, 'status': 'timeout'}) for p in ports]}))
