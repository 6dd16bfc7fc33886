"""A /metrics page of the tests' own, for the server-telemetry tests (python3 stdlib only).

    python3 metrics_fixture_server.py KIND

KIND is sglang, dynamo, dcgm or dcgm_blank: the first GET of /metrics gets page A of that kind, every later
GET page B, so a run that scrapes twice (its window's two marks, with a scrape_interval longer
than the run) sees exactly the deltas B - A below. KIND hang accepts connections and never
answers. Prints "listening on 127.0.0.1:PORT" once it listens; serves until killed."""

import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sse_test_server import send_whole


def then(page, values):
    """The page B of a pair: page A's samples, without its comments, with the values (one word
    each, in order) instead of its own."""
    samples = [line for line in page.splitlines() if not line.startswith("#")]
    values = values.split()
    assert len(values) == len(samples), (len(values), len(samples))
    return "".join("%s %s\n" % (line.rsplit(" ", 1)[0], v) for line, v in zip(samples, values))


# SGLang (python/sglang/srt/metrics/collector.py names). Between A and B: 40 requests, 4000
# prompt tokens of which 1000 cached, 800 generated; TTFT: 20 observations <= 0.05 s and 20 in
# (0.05, 0.1]; ITL (the old name only): 760 observations <= 0.02 s, sum 7.6 s.
SGLANG_A = """# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0"} 0.0
sglang:num_queue_reqs{model_name="m",tp_rank="0"} 0.0
sglang:token_usage{model_name="m",tp_rank="0"} 0.10
sglang:prompt_tokens_total{model_name="m",tp_rank="0"} 1000.0
sglang:cached_tokens_total{model_name="m",tp_rank="0"} 100.0
sglang:generation_tokens_total{model_name="m",tp_rank="0"} 500.0
sglang:num_requests_total{model_name="m",tp_rank="0"} 10.0
sglang:time_to_first_token_seconds_bucket{le="0.05",model_name="m",tp_rank="0"} 10.0
sglang:time_to_first_token_seconds_bucket{le="0.1",model_name="m",tp_rank="0"} 10.0
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="m",tp_rank="0"} 10.0
sglang:time_to_first_token_seconds_count{model_name="m",tp_rank="0"} 10.0
sglang:time_to_first_token_seconds_sum{model_name="m",tp_rank="0"} 0.3
sglang:time_per_output_token_seconds_bucket{le="0.02",model_name="m",tp_rank="0"} 190.0
sglang:time_per_output_token_seconds_bucket{le="+Inf",model_name="m",tp_rank="0"} 190.0
sglang:time_per_output_token_seconds_count{model_name="m",tp_rank="0"} 190.0
sglang:time_per_output_token_seconds_sum{model_name="m",tp_rank="0"} 1.9
"""
SGLANG = [SGLANG_A, then(SGLANG_A, "4.0 2.0 0.30 5000.0 1100.0 1300.0 50.0 30.0 50.0 50.0 50.0 2.8 "
                                   "950.0 950.0 950.0 9.5")]

# Dynamo frontend (docs/observability/metrics.md names). Between A and B: 40 requests, 3000 input
# tokens, 600 output tokens; TTFT: 40 observations all in (0.1, 0.2], sum 6 s.
DYNAMO_A = """dynamo_frontend_inflight_requests{model="m"} 0
dynamo_frontend_queued_requests{model="m"} 0
dynamo_frontend_requests_total{model="m"} 5
dynamo_frontend_input_sequence_tokens_sum{model="m"} 500
dynamo_frontend_input_sequence_tokens_count{model="m"} 5
dynamo_frontend_output_sequence_tokens_sum{model="m"} 100
dynamo_frontend_output_sequence_tokens_count{model="m"} 5
dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="0.1"} 5
dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="0.2"} 5
dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="+Inf"} 5
dynamo_frontend_time_to_first_token_seconds_count{model="m"} 5
dynamo_frontend_time_to_first_token_seconds_sum{model="m"} 0.25
"""
DYNAMO = [DYNAMO_A, then(DYNAMO_A, "8 1 45 3500 45 700 45 5 45 45 45 6.25")]

# DCGM exporter, two GPUs. Between A and B: 123456 mJ (123.456 J) over both GPUs.
DCGM_A = """# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="h"} 50
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",Hostname="h"} 70
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",Hostname="h"} 300.0
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",Hostname="h"} 200.0
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",Hostname="h"} 40000
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",Hostname="h"} 30000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a",Hostname="h"} 1000000000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1",UUID="GPU-b",Hostname="h"} 2000000000
"""
DCGM = [DCGM_A, then(DCGM_A, "90 70 500.0 200.0 40000 30000 1000100000 2000023456")]

# A newer DCGM exporter (lower-case hostname=), GPU-b split into two MIG instances (GPU_I_ID 1
# and 2, each repeating the GPU's energy counter), with DCGM's blank sentinels: GPU-a's
# utilisation is the int64 "not supported" value and GPU-b's power the fp64 blank (2^47). Both
# figures are absent; the energy is the same 123.456 J as above, GPU-b counted once.
DCGM_BLANK_A = """DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",hostname="h"} 9223372036854775794
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",hostname="h"} 300.0
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",GPU_I_ID="1",hostname="h"} 140737488355328.000000
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b",GPU_I_ID="2",hostname="h"} 140737488355328.000000
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",hostname="h"} 40000
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",GPU_I_ID="1",hostname="h"} 10000
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",GPU_I_ID="2",hostname="h"} 20000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a",hostname="h"} 1000000000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1",UUID="GPU-b",GPU_I_ID="1",hostname="h"} 2000000000
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1",UUID="GPU-b",GPU_I_ID="2",hostname="h"} 2000000000
"""
DCGM_BLANK = [DCGM_BLANK_A,
              then(DCGM_BLANK_A, "9223372036854775794 500.0 140737488355328.000000 "
                   "140737488355328.000000 40000 10000 20000 1000100000 2000023456 2000023456")]

PAGES = {"sglang": SGLANG, "dynamo": DYNAMO, "dcgm": DCGM, "dcgm_blank": DCGM_BLANK}


def serve_pages(pages):
    lock = threading.Lock()
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/metrics":
                self.send_error(404)
                return
            with lock:
                page = pages[min(served[0], len(pages) - 1)]
                served[0] += 1
            send_whole(self, 200, "text/plain; version=0.0.4; charset=utf-8", page.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def hang():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    held = []
    while True:  # accept, read nothing, answer nothing
        conn, _ = listener.accept()
        held.append(conn)


if __name__ == "__main__":
    kind = sys.argv[1] if len(sys.argv) > 1 else ""
    if kind == "hang":
        hang()
    elif kind in PAGES:
        serve_pages(PAGES[kind])
    else:
        sys.exit(f"usage: {sys.argv[0]} sglang|dynamo|dcgm|dcgm_blank|hang")
