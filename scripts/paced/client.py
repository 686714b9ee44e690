# The paced client of scripts/paced.sh: RATE requests a second for SECS
# seconds on one keep-alive connection to the gateway at PORT; prints how
# many it sent. Each request is a session of its own (a fresh first turn)
# carrying four tool results of calls the gateway never saw.
import http.client, json, random, socket, sys, time, uuid
port, rate, secs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
c = http.client.HTTPConnection("127.0.0.1", port)
c.connect()
# Headers and body go in two writes: without this, Nagle's algorithm and
# delayed ACKs hold each request ~40 ms.
c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
text = "lorem ipsum dolor sit amet " * 150
t0 = time.time(); n = 0
while time.time() - t0 < secs:
    ids = ["toolu_" + uuid.uuid4().hex[:24] for _ in range(4)]
    msgs = [{"role": "user", "content": "task " + uuid.uuid4().hex},
            {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "read_file", "input": {"path": "/x"}} for i in ids]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": text + str(random.random()), "is_error": k == 0} for k, i in enumerate(ids)]}]
    body = json.dumps({"model": "claude-x", "max_tokens": 100, "messages": msgs})
    c.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01"})
    r = c.getresponse(); r.read()
    assert r.status == 200, r.status
    n += 1
    nxt = t0 + n / rate
    d = nxt - time.time()
    if d > 0: time.sleep(d)
print(n)
