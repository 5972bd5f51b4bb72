"""``neuromath serve`` under load: requests/s and latency from 1, 8 and 32 concurrent clients, with dynamic batching on
and off, measured in one run.

Usage: ``python benchmarks/serve.py [--run DIR | --untrained] [--requests N] [--clients 1,8,32] [--threads T]
[--max-batch B] [--max-wait-ms W] [--client raw|httpx] [--train-minutes M] [--keep DIR] [--json FILE]``

The run: ``--run DIR`` serves a trained run folder; by default the script trains one itself with the CPU preset
the ``word_problems/transformer`` preset (d_model 128, 4 heads, 2 + 2 layers, d_ff 256) on the built-in generator
for ``--train-minutes`` (default 2) on one thread, so that its decoder ends its equations as a trained model does and
decoding costs what it costs in use; ``--keep DIR`` keeps that run for a later ``--run DIR``. ``--untrained`` instead
writes a seeded untrained run of the same size (no training; an untrained decoder never writes eos, so each decode
runs the full ``decode.max_len`` steps: the preset's 64, a pessimistic case).

For batching on and then off, ``neuromath serve RUN --host 127.0.0.1 --port P --max-batch B --max-wait-ms W
--threads T [--no-batching]`` is started as a subprocess on a free port; after a warm-up, each client count sends
``--requests`` requests (generated word problems, all different) from that many concurrent clients (asyncio tasks,
one keep-alive connection each), each client sending its next request when its answer arrives. The clients run on
the same cores as the server, so they are kept cheap: by default a minimal HTTP/1.1 client on asyncio streams
(``--client httpx`` uses ``httpx.AsyncClient``, which took about 3 ms of CPU per request on this project's 2-core
machine, more than the batching server's own 1.2 ms, so that its throughput measured mostly the client). Printed per
client count and mode: requests/s, p50 and p99 latency, the mean batch the server decoded (from ``GET /api/health``)
and the CPU milliseconds per request of the server process and of the clients; then the throughput ratio batching on
/ off at the largest client count, PASS / FAIL against the target (at least 3x at 32 clients on 2 cores).
The load average is printed: other jobs on the machine slow both modes, and the ratio is fair only when the load
stays about the same through the run.

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from neuromath.config.presets import find_config
from neuromath.errors import NeuromathError
from neuromath.serve.launch import start_server, stop_server

PRESET = find_config("word_problems/transformer")
TARGET_RATIO = 3.0


def train_run(out: Path, minutes: float) -> None:
    """Train the preset on generated problems for ``minutes`` on one thread (the CLI, as a user would)."""
    command = [sys.executable, "-m", "neuromath", "train", "--config", str(PRESET), "--out", str(out),
               "--set", f"train.max_time_minutes={minutes}", "--set", "train.num_threads=1",
               "--set", "train.progress=false", "--set", "train.max_epochs=100"]
    print(f"training word_problems/transformer for up to {minutes:g} min into {out} ...", flush=True)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    print(f"trained {summary.get('epochs')} epochs in {time.perf_counter() - started:.0f} s; best validation value "
          f"accuracy {summary.get('best_val_value_accuracy')}; {summary.get('parameters')} parameters", flush=True)


def untrained_run(out: Path, seed: int = 0) -> None:
    """A run folder of the preset's model with seeded untrained weights, vocabularies from generated problems."""
    import torch

    from neuromath.config import load_config, save_config
    from neuromath.models import build_task_model
    from neuromath.tasks import get_task
    from neuromath.text import Vocabulary

    config = load_config(PRESET)
    task = get_task(config.data.task)
    examples = task.generate(2000, random.Random(seed))
    source = Vocabulary.build((task.source_tokens(e) for e in examples), level=task.vocab_level)
    target = Vocabulary.build((task.target_tokens(e) for e in examples), level=task.vocab_level)
    out.mkdir(parents=True)
    save_config(config, out / "config.yaml")
    source.save(out / "source_vocab.json")
    target.save(out / "target_vocab.json")
    torch.manual_seed(seed)
    model = build_task_model(config.model, task, source, target)
    torch.save(model.state_dict(), out / "model.pt")
    print(f"wrote an untrained run ({sum(p.numel() for p in model.parameters())} parameters) to {out}", flush=True)


def problems(n: int, seed: int) -> list[str]:
    from neuromath.tasks import get_task

    return [example.text for example in get_task("word_problems").generate(n, random.Random(seed))]


class Server:
    """``neuromath serve`` in a subprocess on 127.0.0.1 (``neuromath.serve.launch``)."""

    def __init__(self, run: Path, batching: bool, args):
        options = ["--max-batch", str(args.max_batch), "--max-wait-ms", str(args.max_wait_ms),
                   "--threads", str(args.threads), *([] if batching else ["--no-batching"])]
        try:
            self.process, self.url = start_server([run], options)
        except NeuromathError as error:
            raise SystemExit(str(error)) from None
        self.run_name = httpx.get(f"{self.url}/api/runs").json()[0]["name"]

    def batches(self) -> dict[int, int]:
        counts = httpx.get(f"{self.url}/api/health").json()["batches"]
        return {int(size): count for size, count in counts.items()}

    def stop(self) -> None:
        stop_server(self.process)


class Connection:
    """A minimal HTTP/1.1 keep-alive client of ``POST /api/solve`` over asyncio streams: it writes the request and
    reads the status line, the headers and Content-Length bytes of body, and nothing more. It costs the benchmark
    process a small fraction of the CPU time httpx does, which matters when the clients share the server's cores."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, payload: dict) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = json.dumps(payload).encode("utf-8")
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode("ascii")
                          + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:"))
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()


async def load(url: str, run: str, texts: list[str], clients: int,
               client_kind: str = "raw") -> tuple[float, list[float], int]:
    """Send every text once from ``clients`` concurrent clients; (seconds, latencies, failures)."""
    queue = list(reversed(texts))
    latencies: list[float] = []
    failures = 0
    host, port = url.removeprefix("http://").split(":")

    async def client() -> None:
        nonlocal failures
        if client_kind == "httpx":
            session = httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=1))

            async def post(payload):
                response = await session.post("/api/solve", json=payload)
                return response.status_code

            close = session.aclose
        else:
            connection = Connection(host, int(port))

            async def post(payload):
                return (await connection.post("/api/solve", payload))[0]

            close = connection.close
        try:
            while queue:
                text = queue.pop()
                started = time.perf_counter()
                status = await post({"run": run, "text": text})
                latencies.append(time.perf_counter() - started)
                if status != 200:
                    failures += 1
        finally:
            await close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - started, latencies, failures


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc); 0 where that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(server: Server, texts: list[str], clients: int, client_kind: str) -> dict:
    before = server.batches()
    server_cpu, client_cpu = process_cpu_seconds(server.process.pid), own_cpu_seconds()
    seconds, latencies, failures = asyncio.run(load(server.url, server.run_name, texts, clients, client_kind))
    server_cpu = process_cpu_seconds(server.process.pid) - server_cpu
    client_cpu = own_cpu_seconds() - client_cpu
    after = server.batches()
    sizes = {size: after.get(size, 0) - before.get(size, 0) for size in after}
    batches = sum(sizes.values())
    return {
        "clients": clients, "requests": len(texts), "failures": failures, "seconds": seconds,
        "requests_per_second": len(texts) / seconds,
        "p50_ms": 1000 * statistics.median(latencies), "p99_ms": 1000 * percentile(latencies, 0.99),
        "batches": batches, "mean_batch": sum(size * count for size, count in sizes.items()) / max(1, batches),
        "server_cpu_ms": 1000 * server_cpu / len(texts), "client_cpu_ms": 1000 * client_cpu / len(texts),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--run", type=Path, help="a trained run folder to serve (default: train one)")
    source.add_argument("--untrained", action="store_true", help="serve a seeded untrained run of the preset's size")
    parser.add_argument("--train-minutes", type=float, default=2.0)
    parser.add_argument("--keep", type=Path, help="train into this folder and keep it")
    parser.add_argument("--requests", type=int, default=256, help="requests per client count and mode")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the server (default 1)")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="raw: a minimal HTTP/1.1 client on asyncio streams (default); httpx: httpx.AsyncClient")
    parser.add_argument("--max-batch", dest="max_batch", type=int, default=32)
    parser.add_argument("--max-wait-ms", dest="max_wait_ms", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()
    client_counts = [int(part) for part in args.clients.split(",")]

    scratch = Path(tempfile.mkdtemp(prefix="neuromath-serve-bench-"))
    try:
        if args.run is not None:
            run = args.run
        elif args.untrained:
            run = scratch / "wp_untrained"
            untrained_run(run, args.seed)
        else:
            run = args.keep if args.keep is not None else scratch / "wp"
            if not (run / "model.pt").exists():
                train_run(run, args.train_minutes)
        texts = problems(args.requests + 16, args.seed + 1)
        warmup, texts = texts[:16], texts[16:]
        rows = []
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs",
              flush=True)
        for batching in (True, False):
            server = Server(run, batching, args)
            try:
                asyncio.run(load(server.url, server.run_name, warmup, 4, args.client))
                for clients in client_counts:
                    row = {"batching": batching, **measure(server, texts, clients, args.client)}
                    rows.append(row)
                    print(f"  batching {'on ' if batching else 'off'} {clients:>3} clients: "
                          f"{row['requests_per_second']:7.1f} req/s", flush=True)
            finally:
                server.stop()
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print()
        print("| clients | batching | requests | req/s | p50 ms | p99 ms | mean batch | server CPU ms/req | "
              "client CPU ms/req | failures |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for row in sorted(rows, key=lambda r: (r["clients"], not r["batching"])):
            print(f"| {row['clients']} | {'on' if row['batching'] else 'off'} | {row['requests']} | "
                  f"{row['requests_per_second']:.1f} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | "
                  f"{row['mean_batch']:.1f} | {row['server_cpu_ms']:.2f} | {row['client_cpu_ms']:.2f} | "
                  f"{row['failures']} |")
        most = max(client_counts)
        on = next(r for r in rows if r["clients"] == most and r["batching"])
        off = next(r for r in rows if r["clients"] == most and not r["batching"])
        ratio = on["requests_per_second"] / off["requests_per_second"]
        verdict = "PASS" if ratio >= TARGET_RATIO else "FAIL"
        print(f"\nthroughput at {most} clients, batching on / off: {ratio:.2f}x "
              f"({verdict}: target >= {TARGET_RATIO:g}x)")
        if args.json is not None:
            args.json.write_text(json.dumps({"rows": rows, "ratio": ratio, "run": str(run),
                                             "threads": args.threads, "max_batch": args.max_batch,
                                             "max_wait_ms": args.max_wait_ms}, indent=2))
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
