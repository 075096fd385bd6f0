"""The rltune executable the tests compare against: RLTUNE_BIN, else the one built beside the module
(build/release/rltune for build/release/python), else rltune on the PATH."""

import os
from pathlib import Path

import rltune

_BUILT = Path(rltune.__file__).resolve().parents[2] / "rltune"
RLTUNE = os.environ.get("RLTUNE_BIN") or (str(_BUILT) if _BUILT.is_file() else "rltune")
