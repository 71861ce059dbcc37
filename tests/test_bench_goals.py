"""make bench's goal lines: speeds are compared with a peer's only when measured on one host."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from common import KERNEL_LIMITS, goals, machine  # noqa: E402

XEON, AMX = "Intel(R) Xeon(R) Processor", ["avx2", "avx512f", "avx512_bf16", "amx_bf16"]


def _results(peer_machine: dict) -> dict:
    s2a = {"machine": {"cpu": XEON, "flags": AMX}, "train_tok_per_s": 9000.0,
           "beam5_sent_per_s": 400.0, "beam5_bleu": 50.0, "train_matmul_fraction": 0.1,
           "one_sentence_s": 1.6, "import_torch_s": 1.2,
           "translate_peak_rss_mb": 330.0}  # fmt: skip
    peer = {"machine": {**peer_machine, "date": "2026-12-05 13:00 UTC"},
            "train_tok_per_s": 3000.0, "beam5_sent_per_s": 200.0, "beam5_bleu": 20.0}  # fmt: skip
    return {"s2a": s2a, "opennmt-py": peer}


def test_bench_gives_a_ratio_to_opennmt_py_measured_on_the_same_host() -> None:
    same_host = goals(_results({"cpu": XEON, "flags": AMX}))
    rows = {goal: (met, detail) for goal, met, detail in same_host}
    training = (True, "3.00x (OpenNMT-py of 2026-12-05 13:00 UTC)")
    assert rows["training tok/s >= 3x OpenNMT-py"] == training
    assert rows["beam-5 sent/s >= 3x OpenNMT-py, BLEU no lower"][0] is False  # 2x


def test_bench_gives_no_ratio_to_opennmt_py_measured_on_another_host() -> None:
    rows = goals(_results({"cpu": "AMD EPYC", "flags": ["avx2", "avx512f", "avx512_bf16"]}))
    assert not any("3x OpenNMT-py" in goal for goal, _, _ in rows)
    where = "measured on AMD EPYC (avx2 avx512f avx512_bf16), not here: `make bench-peers`"
    assert ("vs OpenNMT-py", None, where) in rows


def test_a_xeon_without_amx_is_another_host_than_a_xeon_with_it() -> None:
    rows = goals(_results({"cpu": XEON, "flags": ["avx2", "avx512f", "avx512_bf16"]}))
    assert not any("3x OpenNMT-py" in goal for goal, _, _ in rows)


def test_a_peer_measured_before_flags_were_recorded_is_not_compared() -> None:
    rows = goals(_results({"cpu": XEON}))
    where = f"measured on {XEON} (flags not recorded), not here: `make bench-peers`"
    assert ("vs OpenNMT-py", None, where) in rows


def test_figures_from_before_flags_were_recorded_are_never_compared() -> None:
    results = _results({"cpu": XEON})
    del results["s2a"]["machine"]["flags"]
    assert not any("3x OpenNMT-py" in goal for goal, _, _ in goals(results))


def test_a_host_whose_kernels_were_held_to_avx2_is_another_host() -> None:
    avx2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    rows = goals(_results({"cpu": XEON, "flags": AMX, "limits": avx2}))
    assert not any("3x OpenNMT-py" in goal for goal, _, _ in rows)
    where = (
        f"measured on {XEON} ({' '.join(AMX)}, kernels held by ATEN_CPU_CAPABILITY=avx2 "
        "ONEDNN_MAX_CPU_ISA=AVX2: emulated), not here: `make bench-peers`"
    )
    assert ("vs OpenNMT-py", None, where) in rows


def test_figures_held_to_avx2_are_not_compared_with_a_peer_measured_unheld() -> None:
    results = _results({"cpu": XEON, "flags": AMX})
    results["s2a"]["machine"]["limits"] = {"ATEN_CPU_CAPABILITY": "avx2"}
    assert not any("3x OpenNMT-py" in goal for goal, _, _ in goals(results))


def test_the_machine_line_records_the_kernel_limits_it_ran_under(monkeypatch) -> None:
    for name in KERNEL_LIMITS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert machine(1)["limits"] == {"ONEDNN_MAX_CPU_ISA": "AVX2"}
