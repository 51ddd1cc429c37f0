#!/usr/bin/env python3
"""Every refusal of the hostile corpus through the gateway is problem+json (openapi/openapi.yaml
'HTTP framing and the edge':
"every answer the service gives is problem+json, including framing errors").

Sent to an instance directly, some framing errors never reach the service: libmicrohttpd
0.9.75 answers them itself with an HTML page (a bad or huge chunk size, an HTTP/2.0 or HTTX
request line, a request line or head past the connection's memory; corpus.py marks them
`mhd`, docs/edge-contract.md lists them). Behind docker/nginx.conf nginx answers those
first. This sends every case of tests/hostile/corpus.py that the service refuses (a status
from 400 up) through nginx with run_corpus.py --gateway --strict, and fails unless each one
gets a refusal in problem+json: no HTML, no silence, no hang.
"""
import os
import subprocess
import sys

import fleet

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "hostile", "run_corpus.py")


def test():
    args = fleet.parse_args(__doc__)
    with fleet.Fleet(args) as f:
        token = f.token("admin")
        p = subprocess.run([sys.executable, RUNNER, f.gateway_url, "--token", token, "--gateway",
                            "--strict"], capture_output=True, text=True, timeout=300)
        print(p.stdout, end="", flush=True)
        if p.returncode != 0:
            fleet.fail(f"through the gateway some refusals were not problem+json (or hung):\n"
                       f"{p.stderr}{f.logs_tail()}")
        fleet.log(p.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    fleet.main(test)
