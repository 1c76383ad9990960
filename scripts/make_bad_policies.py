"""Write the corpus of malformed policy files that ``tests/unit/test_policy_fuzz.py`` checks.

Each case is one file in ``tests/data/bad_policies/`` and one entry of its
``MANIFEST.json``: the fragment the error must contain, and whether the error must point
at ``file:line:col`` (``located``) or may name the file with a reason (a file too large,
for instance, has no line to point at). The expectations are written here by hand, not
taken from driftwatch's output. Files larger than the size cap are not committed: the test
builds them with :func:`oversize`.

Run it again after adding a case::

    python scripts/make_bad_policies.py            # writes tests/data/bad_policies/
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BASE", "CASES", "Case", "oversize", "write_corpus"]

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "bad_policies"

#: A valid policy that touches most sections; each case breaks one thing in it.
BASE = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata:
  name: fuzz-base
  owner: team@example.com
model:
  name: credit
  reference: data/reference.parquet
  features: [income, age, purpose]
window:
  kind: count
  pane: 1000
  panes: 4
  mode: sliding
signals:
  - detector: psi
    features: all
    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}
    overrides:
      income: {mild: 0.15}
  - detector: ks
    features: [income, age]
    thresholds:
      mild: {calibrated: {false_alarm_rate: 0.01}}
      severe: 0.30
  - detector: auc
    thresholds: {mild: 0.70, moderate: 0.65}
combine: {method: worst}
persistence: 2
hysteresis: {factor: 0.8}
cooldown: {mild: 1h, moderate: 6h, severe: 1d}
escalation:
  - {from: mild, to: moderate, after: 6}
data_quality:
  signals:
    - detector: missing_rate
      threshold: 0.05
  clear_after: 2
limits:
  max_actions_per_day: {severe: 1}
actions:
  mild: none
  moderate: alert
  severe:
    type: retrain
    argv: [python, train.py]
"""


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    #: A fragment the error message must contain.
    expect: str
    #: True: the error must point at ``file:line:col``.
    located: bool = True


def _sub(old: str, new: str, base: str = BASE) -> bytes:
    if old not in base:
        raise ValueError(f"{old!r} is not in the base policy")
    return base.replace(old, new, 1).encode("utf-8")


def _add(extra: str) -> bytes:
    return (BASE + extra).encode("utf-8")


def _syntax() -> list[Case]:
    syn = "YAML syntax error"
    return [
        Case("unclosed-flow-sequence", _sub("[income, age, purpose]", "[income, age"), syn),
        Case("unclosed-flow-mapping", _sub("{mild: 1h, moderate: 6h, severe: 1d}",
                                           "{mild: 1h, moderate: 6h"), syn),
        Case("bad-indentation", _sub("  pane: 1000\n", "    pane: 1000\n"), syn),
        Case("tab-indentation", _sub("  pane: 1000\n", "\tpane: 1000\n"), syn),
        Case("unterminated-quote", _sub("name: fuzz-base", 'name: "fuzz-base'), syn),
        Case("unterminated-single-quote", _sub("name: fuzz-base", "name: 'fuzz-base"), syn),
        Case("mapping-in-plain-scalar", _sub("owner: team@example.com",
                                             "owner: team: example"), syn),
        Case("bad-escape", _sub("name: fuzz-base", 'name: "fuzz\\qbase"'), syn),
        Case("duplicate-key", _sub("  pane: 1000\n", "  pane: 1000\n  pane: 2000\n"),
             "duplicate key 'pane'"),
        Case("duplicate-top-level-key", _add("persistence: 3\n"),
             "duplicate key 'persistence'"),
        Case("merge-key", _sub("combine: {method: worst}", "base: &b {method: worst}\n"
                                                           "combine: {<<: *b}"),
             "merge keys"),
        Case("two-documents", _add("---\napiVersion: driftwatch/v1\n"),
             "expected a single document"),
        Case("undefined-alias", _sub("persistence: 2", "persistence: *two"), syn),
        Case("directive-yaml-2", b"%YAML 2.0\n---\n" + BASE.encode(), syn),
        Case("block-scalar-bad-indent", _sub("  owner: team@example.com\n",
                                             "  owner: |\n team\n"), syn),
        Case("python-tag", _sub("persistence: 2", "persistence: !!python/object:os.system ls"),
             "unsupported YAML value"),
        Case("local-tag", _sub("persistence: 2", "persistence: !shell 2"),
             "unsupported YAML value"),
        Case("binary-value", _sub("owner: team@example.com", "owner: !!binary '%%%'"),
             "expected a string"),
        Case("int-tag-on-text", _sub("persistence: 2", "persistence: !!int two"),
             "invalid int value"),
        Case("float-tag-on-text", _sub("factor: 0.8", "factor: !!float most"),
             "invalid float value"),
        Case("impossible-date", _sub("name: fuzz-base", "name: 2024-13-45"),
             "invalid timestamp value"),
        Case("complex-key", _add("? [a, b]\n: 1\n"), "a key must be a plain value"),
        Case("nul-character", _sub("name: fuzz-base", "name: fuzz\x00base"),
             "is not allowed in YAML text"),
        Case("bell-character", _sub("name: fuzz-base", "name: fuzz\x07base"),
             "is not allowed in YAML text"),
        Case("empty-file", b"", "an empty document"),
        Case("only-comments", b"# nothing here\n# at all\n", "an empty document"),
        Case("document-is-a-list", b"- apiVersion: driftwatch/v1\n- kind: DriftPolicy\n",
             "expected a policy mapping"),
        Case("document-is-a-scalar", b"driftwatch\n", "expected a policy mapping"),
    ]


def _types() -> list[Case]:
    return [
        Case("pane-words", _sub("pane: 1000", "pane: a thousand"),
             "a count window's pane is a number of events"),
        Case("panes-quoted", _sub("panes: 4", 'panes: "4"'), "expected a whole number"),
        Case("threshold-quoted", _sub("{mild: 0.70, moderate: 0.65}",
                                      '{mild: "0.70", moderate: 0.65}'),
             "expected a number or a mapping"),
        Case("threshold-list", _sub("{mild: 0.70, moderate: 0.65}", "{mild: [0.7]}"),
             "expected a number or a mapping"),
        Case("threshold-bool", _sub("{mild: 0.70, moderate: 0.65}", "{mild: yes}"),
             "expected a number or a mapping"),
        Case("detector-number", _sub("detector: auc", "detector: 42"),
             "expected a detector name"),
        Case("detector-unknown", _sub("detector: auc", "detector: aucc"),
             "unknown detector 'aucc'"),
        Case("features-number", _sub("features: [income, age]", "features: 3"),
             "features"),
        Case("signals-mapping", _sub("signals:\n  - detector: psi", "signals:\n  x:\n"
                                     "  - detector: psi"), "expected a list"),
        Case("signals-empty", BASE[:BASE.index("signals:")].encode() + b"signals: []\n",
             "expected at least 1 item"),
        Case("metadata-missing", _sub("metadata:\n  name: fuzz-base\n  owner: team@example"
                                      ".com\n", ""), "missing required key 'metadata'"),
        Case("api-version-wrong", _sub("driftwatch/v1", "driftwatch/v2"),
             "expected 'driftwatch/v1'"),
        Case("kind-wrong", _sub("kind: DriftPolicy", "kind: Policy"), "DriftPolicy"),
        Case("unknown-key-typo", _sub("    thresholds: {mild: 0.70",
                                      "    thresold: {mild: 0.70"),
             "unknown key 'thresold'"),
        Case("cooldown-bare-number", _sub("mild: 1h,", "mild: 3600,"),
             "expected a duration"),
        Case("cooldown-words", _sub("mild: 1h,", "mild: one hour,"), "expected a duration"),
        Case("approval-string", _sub("    type: retrain\n",
                                     "    type: retrain\n    require_approval: maybe\n"),
             "expected true or false"),
        Case("argv-shell-string", _sub("argv: [python, train.py]",
                                       "argv: python train.py --epochs 3"),
             "argv must be a list of strings"),
        Case("argv-number-item", _sub("argv: [python, train.py]", "argv: [python, 3]"),
             "every argv item must be a string"),
        Case("action-unknown", _sub("moderate: alert", "moderate: page"),
             "unknown action 'page'"),
        Case("window-kind-unknown", _sub("kind: count", "kind: counted"), "expected"),
        Case("persistence-zero", _sub("persistence: 2", "persistence: 0"),
             "expected a value of at least 1"),
        Case("data-quality-detector-as-signal", _sub("detector: auc", "detector: missing_rate"),
             "is a data-quality signal"),
        Case("feature-not-declared", _sub("features: [income, age]\n",
                                          "features: [income, agee]\n"),
             "feature 'agee' is not in model.features"),
        Case("thresholds-out-of-order", _sub("{mild: 0.10, moderate: 0.25, severe: 0.50}",
                                             "{mild: 0.30, moderate: 0.25, severe: 0.50}"),
             "thresholds out of order"),
    ]


def _domains() -> list[Case]:
    fin = "expected a finite number"
    rng = "out of range"
    return [
        Case("threshold-nan", _sub("severe: 0.50}", "severe: .nan}"), fin),
        Case("threshold-NaN-capital", _sub("severe: 0.50}", "severe: .NaN}"), fin),
        Case("threshold-inf", _sub("severe: 0.50}", "severe: .inf}"), fin),
        Case("threshold-minus-inf", _sub("{mild: 0.70, moderate: 0.65}",
                                         "{mild: 0.70, moderate: -.inf}"), fin),
        Case("override-nan", _sub("income: {mild: 0.15}", "income: {mild: .nan}"), fin),
        Case("data-quality-nan", _sub("threshold: 0.05", "threshold: .nan"), fin),
        Case("hysteresis-inf", _sub("factor: 0.8", "factor: .inf"), fin),
        Case("false-alarm-nan", _sub("false_alarm_rate: 0.01", "false_alarm_rate: .nan"), fin),
        Case("pane-1e26-integer", _sub("pane: 1000", "pane: 100000000000000000000000000"),
             "a count pane holds at most"),
        Case("pane-1e26-float", _sub("pane: 1000", "pane: 1.0e+26"), "expected a whole number"),
        Case("pane-negative", _sub("pane: 1000", "pane: -5"),
             "a count window's pane is a number of events"),
        Case("panes-billion", _sub("panes: 4", "panes: 1000000000"),
             "a window holds at most"),
        Case("panes-zero", _sub("panes: 4", "panes: 0"), "expected a value of at least 1"),
        Case("persistence-huge", _sub("persistence: 2",
                                      "persistence: 1000000000000000000000000000000"),
             "number too large"),
        Case("escalation-after-huge", _sub("after: 6}", "after: 99999999999999999999}"),
             "number too large"),
        Case("cooldown-forever", _sub("mild: 1h,", "mild: 100000w,"), "a duration of at most"),
        Case("ks-threshold-7", _sub("      severe: 0.30\n", "      severe: 7\n"),
             "ks value lies between 0 and 1"),
        Case("auc-above-one", _sub("{mild: 0.70, moderate: 0.65}", "{mild: 1.5}"),
             "auc value lies between 0 and 1"),
        Case("psi-negative", _sub("{mild: 0.10, moderate: 0.25, severe: 0.50}",
                                  "{mild: -0.10, moderate: 0.25, severe: 0.50}"),
             "psi value is at least 0"),
        Case("data-quality-share-7", _sub("threshold: 0.05", "threshold: 7"), rng),
        Case("data-quality-share-negative", _sub("threshold: 0.05", "threshold: -0.5"),
             "expected a value of at least 0"),
        Case("data-quality-override-2", _sub("      threshold: 0.05\n",
                                             "      threshold: 0.05\n"
                                             "      overrides: {income: 2}\n"), rng),
        Case("false-alarm-zero", _sub("false_alarm_rate: 0.01", "false_alarm_rate: 0"),
             "expected a value greater than 0"),
        Case("false-alarm-one", _sub("false_alarm_rate: 0.01", "false_alarm_rate: 1"),
             "expected a value less than 1"),
        Case("hysteresis-zero", _sub("factor: 0.8", "factor: 0"),
             "expected a value greater than 0"),
        Case("quorum-two", _sub("combine: {method: worst}",
                                "combine: {method: weighted_vote, quorum: 2}"),
             "expected a value of at most 1"),
        Case("limits-negative", _sub("{severe: 1}", "{severe: -1}"),
             "expected a value of at least 0"),
        Case("gini-change-three", _sub("  - detector: auc\n    thresholds: {mild: 0.70, "
                                       "moderate: 0.65}", "  - detector: gini\n    measure: "
                                       "change\n    thresholds: {mild: -3}"),
             "gini change lies between -2 and 2"),
    ]


def _encodings() -> list[Case]:
    text = BASE.replace("fuzz-base", "fuzz-bäse")
    rnd = random.Random(15)
    utf8 = "not UTF-8 text"
    return [
        Case("latin-1", text.encode("latin-1"), utf8),
        Case("utf-16-le-bom", b"\xff\xfe" + BASE.encode("utf-16-le"), "UTF-16"),
        Case("utf-16-be-bom", b"\xfe\xff" + BASE.encode("utf-16-be"), "UTF-16"),
        Case("utf-32", BASE.encode("utf-32"), utf8),
        Case("lone-continuation-byte", BASE.encode().replace(b"fuzz-base", b"fuzz\x80base"),
             utf8),
        Case("truncated-multibyte-at-end", _add("# caf\u00e9").rstrip(b"\xa9"), utf8),
        Case("overlong-slash", BASE.encode().replace(b"data/reference", b"data\xc0\xafref"),
             utf8),
        Case("encoded-surrogate", BASE.encode().replace(b"fuzz-base", b"fuzz\xed\xa0\x80"),
             utf8),
        Case("random-bytes", bytes(rnd.randrange(256) for _ in range(4096)), utf8),
        Case("gzip-compressed", gzip.compress(BASE.encode(), mtime=0), utf8),
        Case("windows-1252-quotes", BASE.replace("team@example.com", "\u201cteam\u201d")
             .encode("cp1252"), utf8),
    ]


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def _laughs(levels: int, width: int) -> str:
    lines = ["a0: &a0 [lol]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * width)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def _sizes() -> list[Case]:
    return [
        Case("deep-flow-sequence", _add(f"deep: {_nest(10_000)}\n"), "nested deeper than"),
        Case("deep-flow-mapping", _add("deep: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n"),
             "nested deeper than"),
        Case("deep-block-mapping", _add("deep:\n" + "".join(
            " " * (i + 1) + f"k{i}:\n" for i in range(100)) + " " * 101 + "leaf\n"),
             "nested deeper than"),
        Case("deep-in-features", _sub("features: [income, age]", "features: " + _nest(200)),
             "nested deeper than"),
        Case("too-many-values", _add("many: [" + ",".join(["0"] * 50_001) + "]\n"),
             "too many values"),
    ]


def _aliases() -> list[Case]:
    bomb = "aliases expand to more than"
    return [
        Case("billion-laughs", _add(_laughs(10, 10)), bomb),
        Case("billion-laughs-wide", _add(_laughs(4, 400)), bomb),
        Case("billion-laughs-in-features", (_laughs(9, 10) + BASE).replace(
            "features: [income, age]\n", "features: *a8\n").encode(), bomb),
        Case("quadratic-blowup", _add("big: &big [" + ", ".join(["x"] * 1000) + "]\nrep: ["
                                      + ", ".join(["*big"] * 1000) + "]\n"), bomb),
        Case("recursive-sequence", _add("loop: &l [*l]\n"), "nested deeper than"),
        Case("recursive-mapping", _add("loop: &m {again: *m}\n"), "nested deeper than"),
        Case("recursive-in-signals", _sub("signals:\n  - detector: psi",
                                          "signals: &s\n  - nested: *s\n  - detector: psi"),
             "nested deeper than"),
    ]


#: Every case, in the order of the file names.
CASES: list[Case] = [*_syntax(), *_types(), *_domains(), *_encodings(), *_sizes(),
                     *_aliases()]


def oversize(path: Path, size: int) -> Path:
    """Write a syntactically plain policy of ``size`` bytes (comments after the base)."""
    with path.open("wb") as fh:
        fh.write(BASE.encode())
        line = b"# " + b"x" * 76 + b"\n"
        left = size - len(BASE)
        while left > 0:
            fh.write(line[:left])
            left -= len(line)
    return path


def write_corpus(out: Path = OUT) -> list[Path]:
    """(Re)write every case and the manifest into ``out``; returns the files."""
    names = [c.name for c in CASES]
    if len(set(names)) != len(names):
        raise ValueError("two cases share a name")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    manifest = {}
    files = []
    for i, case in enumerate(CASES, 1):
        name = f"{i:03d}-{case.name}.yaml"
        (out / name).write_bytes(case.data)
        manifest[name] = {"expect": case.expect, "located": case.located}
        files.append(out / name)
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=True) + "\n")
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    files = write_corpus(args.out)
    print(f"{len(files)} malformed policies in {args.out}")


if __name__ == "__main__":
    main()
