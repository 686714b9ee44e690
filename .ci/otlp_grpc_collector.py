"""A real OTLP/gRPC collector for .ci/sdk_e2e.sh: grpcio's server with the
`opentelemetry-proto` package's TraceService, on 127.0.0.1.

    otlp_grpc_collector.py --port-file FILE --out FILE [--refuse N]

Writes its port to --port-file once it listens, then one JSON line per
exported span to --out (name, kind, status code, string/int/bool
attributes, trace and span ids, the resource's attributes and the call's
`x-team` metadata). The first N calls are refused with UNAVAILABLE, as a
collector that is restarting refuses them: the gateway must send them again.
"""

import argparse
import json
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, out, refuse):
        self.out = out
        self.refuse = refuse
        self.lock = threading.Lock()

    def Export(self, request, context):
        with self.lock:
            if self.refuse > 0:
                self.refuse -= 1
                context.abort(grpc.StatusCode.UNAVAILABLE, "collector warming up")
            team = dict(context.invocation_metadata()).get("x-team")
            for rs in request.resource_spans:
                resource = {kv.key: value(kv.value) for kv in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        self.out.write(json.dumps({
                            "name": span.name,
                            "kind": span.kind,
                            "status": span.status.code,
                            "attributes": {kv.key: value(kv.value) for kv in span.attributes},
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "scope": ss.scope.name,
                            "resource": resource,
                            "team": team,
                        }) + "\n")
            self.out.flush()
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--refuse", type=int, default=0)
    args = p.parse_args()
    out = open(args.out, "a", encoding="utf-8")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Collector(out, args.refuse), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
