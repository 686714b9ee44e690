#!/usr/bin/env python3
"""Where a turn's time goes, from a syscall trace of `ws-bench --only ws|http`.

Record (as root; the bench process holds the mock and the client, the
gateway is its child):

    perf record -a -e syscalls:sys_enter_recvfrom,syscalls:sys_exit_recvfrom,\
syscalls:sys_enter_sendto,syscalls:sys_exit_sendto,syscalls:sys_enter_writev,\
syscalls:sys_exit_writev,syscalls:sys_enter_epoll_wait,syscalls:sys_exit_epoll_wait \
        -o perf.data -- target/release/ws-bench --only ws --turns 600 --flush each
    perf script -i perf.data -F comm,pid,tid,cpu,time,event,trace --ns > trace.txt
    scripts/ws_bench_timeline.py trace.txt BENCH_PID GATEWAY_PID [TURNS_TO_PRINT]

A turn starts at the bench's write of the request (the only write over
4,000 bytes from the bench); the mock's writes are the bench's other
writes; the client's reads are the bench's reads on the request's socket.
Prints, p50 over the turns (µs; perf's tracing itself adds ~1-3 µs per
syscall):
- the gateway's hold of the last event: the mock's last write -> the
  gateway's read of it -> the gateway's last write to the client;
- whether the gateway was asleep (in epoll_wait) when the mock's last event
  was written, and the wait until it read it, for each case;
- the gateway's work after each write to the client before it waits again;
- the last hop: the gateway's last write -> the client's read of it, split
  by whether the client's thread was asleep when that write began.
"""
import re
import statistics as st
import sys

LINE = re.compile(r'^\s*(\S.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$')
WRITES = ('sendto', 'writev', 'write')
READS = ('recvfrom', 'read')


def events(path, bench, gateway):
    out, entered = [], {}
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        _, pid, tid, _, t, name, rest = m.groups()
        pid, tid, t = int(pid), int(tid), float(t)
        if pid not in (bench, gateway):
            continue
        name = name.split(':')[1]
        if name.startswith('sys_enter_'):
            fd = re.search(r'fd: (0x[0-9a-f]+)', rest)
            entered[tid] = (name[10:], int(fd.group(1), 16) if fd else None, t)
        elif name.startswith('sys_exit_'):
            ret = re.search(r'0x([0-9a-f]+)', rest)
            r = int(ret.group(1), 16) if ret else 0
            if r >= 1 << 63:
                r -= 1 << 64
            e = entered.pop(tid, None)
            if e and e[0] == name[9:]:
                out.append(dict(who='bench' if pid == bench else 'gw', tid=tid, sc=e[0],
                                fd=e[1], t0=e[2], t1=t, ret=r))
    out.sort(key=lambda e: e['t0'])
    return out


def p50(xs):
    return f'{st.median(xs) * 1e6:6.1f}' if xs else '   n/a'


def main():
    ev = events(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    show = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    starts = [i for i, e in enumerate(ev)
              if e['who'] == 'bench' and e['sc'] in WRITES and e['ret'] > 4000]
    client_fd = ev[starts[len(starts) // 2]]['fd']
    s = {k: [] for k in ('turn', 'hold', 'to_read', 'read_to_write', 'gw_asleep', 'gw_busy',
                         'post_write', 'hop', 'hop_asleep', 'hop_busy')}
    for n, (a, b) in enumerate(zip(starts, starts[1:])):
        turn = ev[a:b]
        gw = [e for e in turn if e['who'] == 'gw']
        mock = [e for e in turn if e['who'] == 'bench' and e['sc'] in WRITES
                and e['fd'] != client_fd and e['ret'] > 0]
        gw_out = [e for e in gw if e['sc'] in WRITES and 0 < e['ret'] < 4000]
        client = [e for e in turn if e['who'] == 'bench' and e['sc'] in READS
                  and e['fd'] == client_fd and e['ret'] > 0]
        if not (mock and gw_out and client):
            continue
        last = mock[-1]['t1']
        gw_in = [e for e in gw if e['sc'] in READS and 0 < e['ret'] < 4000 and e['t1'] >= last]
        if not gw_in:
            continue
        t0 = turn[0]['t0']
        s['turn'].append(client[-1]['t1'] - t0)
        s['hold'].append(gw_out[-1]['t0'] - last)
        s['to_read'].append(gw_in[0]['t0'] - last)
        s['read_to_write'].append(gw_out[-1]['t0'] - gw_in[-1]['t1'])
        asleep = any(e['sc'] == 'epoll_wait' and e['t0'] <= last <= e['t1'] for e in gw)
        s['gw_asleep' if asleep else 'gw_busy'].append(gw_in[0]['t0'] - last)
        for i, e in enumerate(gw):
            if e in gw_out:
                nxt = next((x for x in gw[i + 1:] if x['sc'] == 'epoll_wait'), None)
                if nxt:
                    s['post_write'].append(nxt['t0'] - e['t1'])
        w = gw_out[-1]
        hop = client[-1]['t1'] - w['t0']
        s['hop'].append(hop)
        client_asleep = any(e['who'] == 'bench' and e['sc'] == 'epoll_wait'
                            and e['t0'] <= w['t0'] <= e['t1'] for e in turn)
        s['hop_asleep' if client_asleep else 'hop_busy'].append(hop)
        if len(starts) // 2 <= n < len(starts) // 2 + show:
            print(f'--- turn {n} (µs from the request write)')
            for e in turn:
                if e['sc'] == 'epoll_wait' or e['ret'] > 0:
                    print(f"{(e['t0'] - t0) * 1e6:8.1f} {(e['t1'] - t0) * 1e6:8.1f}  "
                          f"{e['who']:5} {e['tid']:>7} {e['sc']:10} fd={e['fd']} ret={e['ret']}")
    n = len(s['turn'])
    print(f"{n} turns, p50 in µs")
    print(f"turn (request write -> client's last read)          {p50(s['turn'])}")
    print(f"mock's last write -> gateway's last write (hold)    {p50(s['hold'])}")
    print(f"  mock's last write -> gateway reads it             {p50(s['to_read'])}")
    print(f"    gateway asleep then ({len(s['gw_asleep']):4} turns)              {p50(s['gw_asleep'])}")
    print(f"    gateway busy then   ({len(s['gw_busy']):4} turns)              {p50(s['gw_busy'])}")
    print(f"  gateway's last read -> its last write             {p50(s['read_to_write'])}")
    print(f"gateway's work after a write, before it waits       {p50(s['post_write'])}")
    print(f"gateway's last write -> client's read (last hop)    {p50(s['hop'])}")
    print(f"  client asleep then ({len(s['hop_asleep']):4} turns)                {p50(s['hop_asleep'])}")
    print(f"  client busy then   ({len(s['hop_busy']):4} turns)                {p50(s['hop_busy'])}")


if __name__ == '__main__':
    main()
