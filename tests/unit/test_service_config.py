"""driftwatch.yaml: the bundled default, defaults that are safe, errors people can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.errors import ConfigError
from driftwatch.service.config import (
    DEFAULT_CONFIG,
    load_service_config,
    parse_service_config,
)

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = "models:\n  - connector: c.yaml\n    policy: p.yaml\n"


def test_bundled_file_is_the_embedded_default():
    assert (ROOT / "driftwatch.yaml").read_text(encoding="utf-8") == DEFAULT_CONFIG
    cfg = load_service_config(ROOT / "driftwatch.yaml")
    assert cfg.models[0].connector == ROOT / "connectors" / "demo-file.yaml"
    assert cfg.models[0].policy == ROOT / "policies" / "credit-risk-demo.yaml"
    assert cfg.state_dir == ROOT / "state"


def test_the_default_listens_on_loopback_and_streams_the_demo_live():
    cfg = load_service_config(None)
    assert cfg.http.host == "127.0.0.1" and cfg.http.port == 9108
    assert cfg.http.admin_token_env == "DRIFTWATCH_ADMIN_TOKEN"
    assert cfg.models[0].live_speed > 0
    assert cfg.state_dir == Path.cwd().resolve() / "state"


def test_a_minimal_file_gets_defaults_and_paths_relative_to_itself(tmp_path):
    f = tmp_path / "conf" / "svc.yaml"
    f.parent.mkdir()
    f.write_text(MINIMAL + "state_dir: /var/lib/dw\n")
    cfg = load_service_config(f)
    m = cfg.models[0]
    assert m.connector == f.parent / "c.yaml" and m.policy == f.parent / "p.yaml"
    assert m.name is None and m.reference is None and m.live_speed == 0.0
    assert cfg.state_dir == Path("/var/lib/dw")
    assert cfg.http.host == "127.0.0.1"
    assert cfg.scheduler.misfire_grace_time_s == 30.0 and cfg.scheduler.coalesce is True
    assert cfg.checkpoint.interval_s == 10.0 and cfg.checkpoint.max_age_s == 120.0


def test_a_groups_idle_timeout_is_a_duration_or_null():
    assert parse_service_config(MINIMAL).group.idle_timeout_s == 30.0
    cfg = parse_service_config(MINIMAL + "group: {enabled: true, idle_timeout: 2m}\n")
    assert cfg.group.enabled and cfg.group.idle_timeout_s == 120.0
    assert parse_service_config(MINIMAL + "group: {idle_timeout: null}\n").group.idle_timeout_s \
        is None
    with pytest.raises(ConfigError, match="duration"):
        parse_service_config(MINIMAL + "group: {idle_timeout: 30}\n")


def test_durations_are_strings_with_units():
    cfg = parse_service_config(MINIMAL + "checkpoint: {interval: 1m30s, max_age: 1h}\n")
    assert (cfg.checkpoint.interval_s, cfg.checkpoint.max_age_s) == (90.0, 3600.0)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("models:\n  - conector: c.yaml\n    policy: p.yaml\n", "svc.yaml:2:5",
         "unknown key 'conector'"),
        (MINIMAL + "checkpoint:\n  interval: 10\n", "svc.yaml:5:13",
         "expected a duration like 30s, 5m or 1h, found 10"),
        (MINIMAL + "http: {port: 70000}\n", "svc.yaml:4:14", "less than or equal to 65535"),
        ("models: []\n", "svc.yaml:1:9", "expected at least one model"),
        ("state_dir: s\n", "svc.yaml:1:1", "missing required key 'models'"),
        (MINIMAL + "pool: {backend: slurm}\n", "svc.yaml:4:17", "'local' or 'ray'"),
        (MINIMAL + "  - {name: a, connector: c, policy: p}\n  - {name: a, connector: c, "
         "policy: p}\n", "svc.yaml:5:12", "model name 'a' given twice"),
        ("models: [oops\n", "svc.yaml:2:1", "YAML syntax error"),
    ],
)
def test_errors_say_where_and_what(text, where, message):
    with pytest.raises(ConfigError) as err:
        parse_service_config(text, file="svc.yaml")
    first = str(err.value).splitlines()[0]
    assert first.startswith(where + ":"), first
    assert message in first


def test_unknown_key_suggests_the_nearest_one():
    with pytest.raises(ConfigError) as err:
        parse_service_config(MINIMAL + "http: {admin_token: X}\n", file="svc.yaml")
    assert "did you mean 'admin_token_env'?" in str(err.value)


def test_a_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read service config"):
        load_service_config(tmp_path / "nope.yaml")


def test_champion_by_alias_with_column_map_names_the_model():
    cfg = parse_service_config(
        MINIMAL + "    champion:\n      uri: models:/credit-pd@champion\n"
                  "      columns: {annual_income: income}\n")
    ref = cfg.models[0].champion
    assert (ref.name, ref.alias, dict(ref.columns)) == ("credit-pd", "champion",
                                                        {"annual_income": "income"})
    assert cfg.models[0].name == "credit-pd"  # the monitored model takes the registered name
    short = parse_service_config(MINIMAL + "    champion: models:/credit-pd@champion\n")
    assert short.models[0].champion == ref.__class__("credit-pd")


def test_a_champion_returning_p_good_is_declared_by_score_is():
    cfg = parse_service_config(
        MINIMAL + "    champion:\n      uri: models:/credit-pd@champion\n"
                  "      score_is: p_good\n")
    assert cfg.models[0].champion.score_is == "p_good"
    short = parse_service_config(MINIMAL + "    champion: models:/credit-pd@champion\n")
    assert short.models[0].champion.score_is == "p_bad"


def test_an_unknown_champion_score_is_is_located():
    with pytest.raises(ConfigError) as err:
        parse_service_config(
            MINIMAL + "    champion:\n      uri: models:/credit-pd@champion\n"
                      "      score_is: good\n", file="d.yaml")
    text = str(err.value)
    assert text.startswith("d.yaml:6:") and "p_bad" in text and "p_good" in text, text


@pytest.mark.parametrize(("text", "where", "what"), [
    ("    champion: credit-pd\n", "d.yaml:4:15", "expected models:/<name>@champion, "
                                                 "found 'credit-pd'"),
    ("    champion: models:/credit-pd@prod\n", "d.yaml:4:15", "name the champion by its alias"),
    ("    name: other\n    champion: models:/credit-pd@champion\n", "d.yaml:4:11",
     "model name 'other' differs from the champion's registered name 'credit-pd'"),
    ("    champion: models:/credit-pd@champion\nactions: {execute: false}\n", "d.yaml:4:15",
     "a champion is only loaded when actions run: with actions.execute: false"),
])
def test_a_bad_champion_is_located(text, where, what):
    with pytest.raises(ConfigError) as err:
        parse_service_config(MINIMAL + text, file="d.yaml")
    assert str(err.value).startswith(f"{where}: ") and what in str(err.value)


def test_connector_globs_start_at_the_working_directory_as_documented(tmp_path, monkeypatch):
    """``run --config DIR/x.yaml``: the connector file is found from DIR, the files its
    globs name from the working directory (connectors/README.md), as ``replay`` reads
    them; a same-named file under DIR is not the one read."""
    from driftwatch.connectors.file import discover_inputs
    from driftwatch.service.model import model_connector

    conf, work = tmp_path / "conf", tmp_path / "work"
    for base in (conf, work):
        (base / "data").mkdir(parents=True)
        for name in ("p.jsonl", "o.jsonl"):
            (base / "data" / name).write_text("{}\n")
    text = (ROOT / "connectors" / "demo-file.yaml").read_text(encoding="utf-8")
    (conf / "conn.yaml").write_text(
        text.replace("data/demo/predictions.jsonl.gz", "data/p.jsonl")
        .replace("data/demo/outcomes.jsonl.gz", "data/o.jsonl"), encoding="utf-8")
    (conf / "svc.yaml").write_text("models:\n  - connector: conn.yaml\n    policy: p.yaml\n")
    monkeypatch.chdir(work)
    cfg = load_service_config(conf / "svc.yaml")
    assert cfg.models[0].connector == conf.resolve() / "conn.yaml"
    files = {Path(i.path).resolve() for i in discover_inputs(model_connector(cfg.models[0]))}
    assert files == {work.resolve() / "data" / n for n in ("p.jsonl", "o.jsonl")}


def test_run_help_says_where_relative_paths_start(capsys):
    from driftwatch.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "paths in it start at its folder" in text
    assert "globs inside connectors at the working directory" in text
