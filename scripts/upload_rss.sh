#!/usr/bin/env bash
# A pass-through upload's memory: MIB MiB POSTed to /v1/files through the
# gateway (no database) to an upstream that reads and discards it; prints
# the answer and the gateway's RSS before and at its peak (VmHWM).
#
#   bash scripts/upload_rss.sh target/release/toolwarden 256 [serve args…]
set -euo pipefail
BIN=$1; MIB=$2; shift 2
dir=$(mktemp -d)
trap 'kill ${gw:-} ${up:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
cat > "$dir/upstream.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        left = n
        while left > 0:
            b = self.rfile.read(min(left, 1 << 20))
            if not b:
                break
            left -= len(b)
        body = b'{"id":"file-1","bytes":%d}' % (n - left)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
cat > "$dir/client.py" <<'EOF'
import http.client, sys
port, mib = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
c.putrequest("POST", "/v1/files")
c.putheader("authorization", "Bearer sk-test")
c.putheader("content-type", "application/octet-stream")
c.putheader("content-length", str(mib << 20))
c.endheaders()
chunk = b"x" * (1 << 20)
try:
    for _ in range(mib):
        c.send(chunk)
except BrokenPipeError:
    pass
r = c.getresponse()
print(r.status, r.read()[:80].decode())
EOF
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
upport=$(free); gwport=$(free)
python3 "$dir/upstream.py" "$upport" & up=$!
"$BIN" serve --listen "127.0.0.1:$gwport" --database none \
  --openai-upstream "http://127.0.0.1:$upport" "$@" > "$dir/gw.log" 2>&1 & gw=$!
sleep 1.5
before=$(awk '/VmRSS/ {print $2}' /proc/$gw/status)
python3 "$dir/client.py" "$gwport" "$MIB" || true
peak=$(awk '/VmHWM/ {print $2}' /proc/$gw/status)
echo "gateway RSS before: $((before / 1024)) MiB, peak: $((peak / 1024)) MiB"
