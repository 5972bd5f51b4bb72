"""Serve a run with the installed `neuromath serve` on a free loopback port and solve one problem over HTTP (CI runs
it in the environment with the lowest versions; starlette's TestClient of that fastapi does not run with today's
httpx, so a real server answers)."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import huggingface_hub  # noqa: F401  (the hub extra imports at its lower bound)
import sklearn  # noqa: F401  (the analysis extra too)

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
command = os.path.join(os.path.dirname(sys.executable), "neuromath")
server = subprocess.Popen([command, "serve", sys.argv[1], "--port", str(port)])
base = f"http://127.0.0.1:{port}"
try:
    for _ in range(600):
        try:
            urllib.request.urlopen(base + "/api/health", timeout=1)
            break
        except OSError:
            if server.poll() is not None:
                sys.exit("neuromath serve stopped before it answered")
            time.sleep(0.2)
    body = json.dumps({"text": "Jerry had 135 pens. He gave away 19. How many are left?"}).encode()
    request = urllib.request.Request(base + "/api/solve", data=body, headers={"Content-Type": "application/json"})
    answer = json.load(urllib.request.urlopen(request, timeout=120))
    if "answer" not in answer:
        sys.exit(f"no answer in {answer}")
    print("served and answered over HTTP")
finally:
    server.terminate()
    server.wait(30)
