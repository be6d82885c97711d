"""demo_app_key_reaches_command.py adapted to main (not one of the review's demos; written for
docs/review-r3-demos.md). On main the demo's `orion-action run` exits 64 before any command
runs: since ADR 0033/0034 a claim first checks who queued the issue through GitHub's GraphQL
API, and the demo talks to the emulator directly (no rig proxy), which has no GraphQL. So the
demo's NOT REPRODUCED says nothing about the key.

This script is the demo with one change: the configuration adds `trigger: {permission: none}`
(documented: it reads nothing and checks nothing), so the run gets to its command. Everything
else is the demo's own (its child script, App seed, key and environment, imported from it).
Exit 0 (REPRODUCED) when the command finds the App's private key in an ancestor's environ.

Run: PROJECT_CLONE=<repo> PYTHONPATH=scripts/r3-demos/compat <repo>/.venv/bin/python THIS
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.environ.get("R3_DEMOS", "/work/shared/reviews/r3"), "demos-security"))

import demo_app_key_reaches_command as demo  # noqa: E402
import yaml  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from rig import Emulator, RepoHandle, orion_env  # noqa: E402

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                        serialization.NoEncryption()).decode()
with tempfile.TemporaryDirectory(prefix="orion-sec-") as d:
    tmp = Path(d)
    seed = yaml.safe_load(Path(demo.CLONE, "tests/rig/seed.yaml").read_text())
    seed["github"]["apps"] = [{
        "app_id": demo.APP_ID, "slug": demo.SLUG, "name": "Orion App", "private_key": pem,
        "permissions": {"issues": "write", "metadata": "read", "contents": "write",
                        "administration": "write"},
        "installations": [{"installation_id": demo.INSTALLATION, "account": Emulator.OWNER,
                           "repository_selection": "all"}],
    }]
    (tmp / "seed.yaml").write_text(json.dumps(seed))
    with Emulator(tmp / "seed.yaml", token_pool=2) as emu:
        repo = RepoHandle.create(emu, emu.url, hint="app-key")
        n = repo.create_issue("work", ["orion"])
        (tmp / "orion.yml").write_text("heartbeat: {interval: 1, stale_after: 6}\nrun: {kill_grace: 1}\n"
                                       "trigger: {permission: none}\n")
        (tmp / "child.py").write_text(demo.CHILD)
        env = orion_env(repo.full_name, emu.url)
        del env["GITHUB_TOKEN"]
        env.update(ORION_APP_ID=str(demo.APP_ID), ORION_APP_PRIVATE_KEY=pem)
        print("real key sha256[:16]:", hashlib.sha256(pem.encode()).hexdigest()[:16])
        done = subprocess.run([demo.PY, "-m", "orion_action", "run", "--config", str(tmp / "orion.yml"),
                               "--issue", str(n), "--", demo.PY, str(tmp / "child.py"),
                               str(demo.INSTALLATION)],
                              env=env, cwd=tmp, capture_output=True, text=True, timeout=120)
        print(f"orion-action run: exit {done.returncode}")
        print(demo.last_lines(done.stdout, 4))
        print(demo.last_lines(done.stderr, 3))
        repo.dispose()
ran = "CHILD: own env has the key" in done.stdout
stolen = "key found in ancestors" in done.stdout and '": "' in done.stdout.split("ancestors")[1]
print("RESULT:", "REPRODUCED: the command read the App's private key" if stolen else
      "NOT REPRODUCED" + ("" if ran else " (and the command never ran: inconclusive)"))
sys.exit(0 if stolen else 1)
