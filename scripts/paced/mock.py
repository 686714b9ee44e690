# The upstream of scripts/paced.sh: Anthropic-shaped, every POST answered
# with one tool_use; prints its port.
import http.server, json, socketserver, sys, uuid
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        n = int(self.headers.get("content-length", 0)); self.rfile.read(n)
        body = json.dumps({"id": "msg_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
            "model": "claude-x", "stop_reason": "tool_use", "stop_sequence": None,
            "content": [{"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": "read_file", "input": {"path": "/tmp/a"}}],
            "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
s = S(("127.0.0.1", 0), H); print(s.server_address[1], flush=True); s.serve_forever()
