#!/usr/bin/env bash
# Builds a node sample with the real tools: a generated kube-proxy ruleset is loaded into a
# throw-away network namespace that has a node's interfaces and routes (eth0, a flannel.1 VXLAN,
# a cni0 bridge with pod veths), then `kpx collect` runs inside it. Every file in the bundle is what
# iptables-save, ipset, ip, nft and sysctl printed there.
#   samples/make-node-sample.sh iptables   → samples/iptables-mode-node/ (iptables-restore)
#   samples/make-node-sample.sh nftables   → samples/nftables-mode-node/ (nft -f)
#   samples/make-node-sample.sh ipvs       → samples/ipvs-mode-node/ (ipset restore + iptables-restore; this
#        kernel has no IPVS, so ipvsadm-Ln.txt and kube-ipvs0 come from the generator and say so in NOTE.txt)
# Needs root, iproute2, iptables, ipset, nftables; deletes its namespaces on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-iptables}
out=samples/$mode-mode-node
gen=$(mktemp -d)
node=kpxs-node-$$ net=kpxs-net-$$ pods=kpxs-pods-$$
cleanup() { ip netns del "$node" 2>/dev/null || true; ip netns del "$net" 2>/dev/null || true; ip netns del "$pods" 2>/dev/null || true; rm -rf "$gen"; }
trap cleanup EXIT
node build/tools/src/generate/main.js --services 12 --seed 42 --mode "$mode" --load-forms --out "$gen" >/dev/null 2>&1
for ns in "$node" "$net" "$pods"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
onnode() { ip netns exec "$node" "$@"; }
ip -n "$node" link add eth0 type veth peer name uplink netns "$net"
ip -n "$node" addr add 172.18.0.3/16 dev eth0
ip -n "$node" link set eth0 up
ip -n "$net" addr add 172.18.0.1/16 dev uplink
ip -n "$net" link set uplink up
ip -n "$node" link add flannel.1 type vxlan id 1 dev eth0 dstport 8472 nolearning
ip -n "$node" addr add 10.244.1.0/32 dev flannel.1
ip -n "$node" link set flannel.1 up
ip -n "$node" link add cni0 type bridge
ip -n "$node" addr add 10.244.1.1/24 dev cni0
ip -n "$node" link set cni0 up
# The local endpoints of the generated cluster live behind veths on cni0.
i=0
for ip in $(node -e 'const t=require(process.argv[1]);const s=new Set();for(const v of t.services)for(const e of v.endpoints)if(e.local&&!e.ip.includes(":"))s.add(e.ip);console.log([...s].join(" "))' "$gen/truth.json"); do
  i=$((i+1))
  ip -n "$node" link add "veth$i" type veth peer name "eth$i" netns "$pods"
  ip -n "$node" link set "veth$i" master cni0 up
  ip -n "$pods" addr add "$ip/24" dev "eth$i"
  ip -n "$pods" link set "eth$i" up
done
ip -n "$node" route add default via 172.18.0.1 dev eth0
ip -n "$node" route add 10.244.0.0/24 via 10.244.0.0 dev flannel.1 onlink
ip -n "$node" route add 10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink
onnode sysctl -qw net.ipv4.ip_forward=1
case "$mode" in
  iptables) onnode iptables-restore < "$gen/iptables-save.txt" ;;
  nftables) onnode nft -f "$gen/nft-script.nft" ;;
  ipvs)
    onnode ipset restore < "$gen/ipset-save.txt"
    # -m ipvs needs the IPVS kernel module; those few rules are left out here.
    grep -v -- '-m ipvs' "$gen/iptables-save.txt" | onnode iptables-restore ;;
esac
rm -rf "$out"
onnode node dist/src/cli/main.js collect -o "$out"
if [ "$mode" = ipvs ]; then
  cp "$gen/ipvsadm-Ln.txt" "$out/ipvsadm-Ln.txt"
  grep -A1000 'kube-ipvs0' "$gen/ip-addr.txt" > "$out/ip-addr-kube-ipvs0.txt" || true
  printf '%s\n' 'This kernel has no IPVS: ipvsadm-Ln.txt and ip-addr-kube-ipvs0.txt were written by kpx'"'"'s generator' \
    '(src/generate), not by ipvsadm/ip. Everything else was printed by the real tools in a namespace.' > "$out/NOTE.txt"
fi
cp "$gen/truth.json" "$out.truth.json"
# The collected manifest names this machine; keep only what explains the sample.
node -e 'const f=process.argv[1];const m=JSON.parse(require("fs").readFileSync(f));m.host="kpx-sample-node";require("fs").writeFileSync(f,JSON.stringify(m,null,2)+"\n")' "$out/manifest.json"
