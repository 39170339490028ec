"""Starts the Rust service and a Python one serving the same model eagerly, checks that the
Rust answers equal eager PyTorch's, and times requests to both (median per request, one
persistent connection each, the same rows).

    python serve_check.py SERVICE_BINARY [--requests N] [--rows R]

Used by run.sh (release build, the figures in the README) and by
tests/python/test_rust_service.py (a debug build, correctness).
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch
from safetensors.torch import save_file

HERE = Path(__file__).resolve().parent
NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]


def load_model():
    spec = importlib.util.spec_from_file_location("_service_model", HERE / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.classify


def make_weights(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    shapes = {"w1": (64, 16), "b1": (64,), "w2": (64, 64), "b2": (64,), "w3": (3, 64), "b3": (3,)}
    return {name: torch.randn(shape, generator=g) * 0.3 for name, shape in shapes.items()}


def start_rust(binary: Path, weights_path: Path) -> tuple[subprocess.Popen, int]:
    # one torch thread, as the Python server runs with (torch.set_num_threads(1) in main)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    process = subprocess.Popen([str(binary), str(weights_path), "127.0.0.1:0"], stdout=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        process.kill()
        raise RuntimeError(f"the service did not start: {line!r}")
    return process, int(line.rsplit(":", 1)[1])


def start_python(classify, weights: dict[str, torch.Tensor]) -> tuple[http.server.HTTPServer, int]:
    args = [weights[n] for n in NAMES]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in separate writes: without this, delayed ACKs hold every
        # answer for ~40 ms (the Rust service sets TCP_NODELAY too)
        disable_nagle_algorithm = True

        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            x = torch.tensor(json.loads(body)["x"], dtype=torch.float32)
            with torch.no_grad():
                out = classify(x, *args)
            data = json.dumps({"probabilities": out.tolist()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def post(connection: http.client.HTTPConnection, rows: list[list[float]]) -> tuple[int, dict]:
    connection.request("POST", "/classify", body=json.dumps({"x": rows}), headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def check_answers(port: int, classify, weights: dict[str, torch.Tensor]) -> None:
    """The Rust answers equal eager's, float32 bit for bit; bad requests are 400s."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    g = torch.Generator().manual_seed(1)
    for rows in (1, 4, 17):
        x = torch.randn(rows, 16, generator=g)
        x[0, :4] = torch.tensor([0.0, -0.0, 1e-30, -7.5])
        status, answer = post(connection, x.tolist())
        assert status == 200, answer
        with torch.no_grad():
            want = classify(x, *[weights[n] for n in NAMES])
        got = torch.tensor(answer["probabilities"], dtype=torch.float32)
        assert got.shape == want.shape and torch.equal(got, want), (got, want)
    status, answer = post(connection, [[1.0] * 15])  # a row of another width: the model's error
    assert status == 400 and "mat1 and mat2 shapes cannot be multiplied (1x15 and 16x64)" in answer["error"], answer
    connection.request("POST", "/classify", body="not json")
    response = connection.getresponse()
    assert response.status == 400 and "error" in json.loads(response.read())
    connection.close()


def median_latency(port: int, requests: int, rows: int) -> float:
    """Median seconds per request over one persistent connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    x = torch.randn(rows, 16, generator=torch.Generator().manual_seed(2)).tolist()
    post(connection, x)  # warm up
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        post(connection, x)
        times.append(time.perf_counter() - start)
    connection.close()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", type=Path)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    classify, weights = load_model(), make_weights()
    with tempfile.TemporaryDirectory() as folder:
        weights_path = Path(folder) / "weights.safetensors"
        save_file(weights, str(weights_path))
        rust, rust_port = start_rust(args.binary, weights_path)
        python, python_port = start_python(classify, weights)
        try:
            check_answers(rust_port, classify, weights)
            print("answers: equal to eager PyTorch (float32, bit for bit); bad requests answer 400")
            if args.requests:
                rust_s = median_latency(rust_port, args.requests, args.rows)
                python_s = median_latency(python_port, args.requests, args.rows)
                print(f"median latency per request ({args.rows} rows, {args.requests} requests, one connection): "
                      f"Rust service {rust_s * 1e6:.0f} µs, Python http.server + eager {python_s * 1e6:.0f} µs "
                      f"(x{python_s / rust_s:.2f})")
        finally:
            rust.kill()
            python.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
