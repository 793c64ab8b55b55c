"""The password hashing production uses (the rest of the suite hashes at argon2's smallest cost, conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from argon2 import extract_parameters

# RFC 9106, section 4, second recommended option: argon2id, 64 MiB of memory, 3 passes, 4 lanes
# (https://www.rfc-editor.org/rfc/rfc9106#section-4); argon2-cffi's defaults
# (https://argon2-cffi.readthedocs.io/en/stable/parameters.html).
PRODUCTION = {"type": "ID", "memory_cost": 65536, "time_cost": 3, "parallelism": 4}

# A fresh interpreter, as `headroom serve` starts: the suite's cheaper hasher is installed in this one.
_PROBE = """
import json
from headroom.platform import security
hashed = security.hash_password("correct horse battery")
print(json.dumps({"hash": hashed, "dummy": security._DUMMY_HASH,
                  "right": security.verify_password(hashed, "correct horse battery"),
                  "wrong": security.verify_password(hashed, "correct horse batterz"),
                  "unknown": security.verify_password(None, "headroom-dummy-password-for-timing")}))
"""


def _parameters(encoded: str) -> dict[str, object]:
    p = extract_parameters(encoded)
    return {"type": p.type.name, "memory_cost": p.memory_cost, "time_cost": p.time_cost, "parallelism": p.parallelism}


def test_production_hashes_passwords_with_rfc_9106_parameters() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
    probe = json.loads(out.stdout)
    assert probe["hash"].startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert _parameters(probe["hash"]) == PRODUCTION
    # An unknown account is checked against a hash of the same cost, so it answers in the same time.
    assert _parameters(probe["dummy"]) == PRODUCTION
    assert (probe["right"], probe["wrong"], probe["unknown"]) == (True, False, False)
