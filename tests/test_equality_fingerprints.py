"""``tools/equality_fingerprints.py``: what shows that a restructuring changed no fit.
It must find its own record equal, and name a fit whose record differs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "equality_fingerprints.py"


def _tool():
    spec = importlib.util.spec_from_file_location("equality_fingerprints", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_record_checks_equal_and_a_changed_one_is_named(tmp_path, capsys):
    tool = _tool()
    record = tmp_path / "before.json"
    assert tool.main(["--write", str(record), "--only", "adaboost"]) == 0
    fits = json.loads(record.read_text())
    assert len(fits) == 3 + 6  # three oracles, six step options
    assert all("history" in v for v in fits.values())
    assert tool.main(["--check", str(record), "--only", "adaboost"]) == 0
    key = "adaboost(step='wolfe') × stumps"
    fits[key]["scores"] = "0" * 24
    record.write_text(json.dumps(fits))
    capsys.readouterr()
    assert tool.main(["--check", str(record), "--only", "adaboost"]) == 1
    assert f"{key}: differs in scores" in capsys.readouterr().out
