"""``replay --champion`` names a registered model's champion alias; anything else is refused
in one line that names the option and says how to get there. Before, these lines began with
``<string>:`` (a file location for an error that has no file), and a ``runs:/`` URI, a
folder or a version number got no word on how to register or alias it."""

from __future__ import annotations

import pytest

from driftwatch.cli import main


@pytest.mark.parametrize(("champion", "expected"), [
    ("runs:/0a1b2c/model", "error: --champion: expected models:/<name>@champion: driftwatch "
     "acts on a registered model's versions; register this one (mlflow.register_model(uri, "
     "name)) and point its 'champion' alias at the version, found 'runs:/0a1b2c/model'"),
    ("/models/credit-pd", "error: --champion: expected models:/<name>@champion: driftwatch "
     "acts on a registered model's versions; register this one (mlflow.register_model(uri, "
     "name)) and point its 'champion' alias at the version, found '/models/credit-pd'"),
    ("models:/credit-pd/3", "error: --champion: name the champion by its alias, "
     "models:/credit-pd@champion (driftwatch moves the aliases 'champion' and 'challenger'); "
     "to start: MlflowClient().set_registered_model_alias('credit-pd', 'champion', 3), found "
     "'models:/credit-pd/3'"),
    ("models:/credit-pd@production", "error: --champion: name the champion by its alias, "
     "models:/credit-pd@champion (driftwatch moves the aliases 'champion' and 'challenger'); "
     "to start: MlflowClient().set_registered_model_alias('credit-pd', 'champion', <the "
     "version 'production' names>), found 'models:/credit-pd@production'"),
    ("credit-pd", "error: --champion: expected models:/<name>@champion, found 'credit-pd'\n"
     "  hint: models:/credit-pd@champion"),
])
def test_a_champion_that_is_no_alias_is_refused_naming_the_option(
        champion: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--connector", "c.yaml", "--input", "x.jsonl", "--out", "out",
            "--execute", "--champion", champion]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == expected


def test_option_errors_carry_no_file_location(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--connector", "c.yaml", "--input", "x.jsonl", "--out", "out"]
    assert main([*argv, "--champion-column", "a=b"]) == 2
    assert capsys.readouterr().err.strip() == "error: --champion-column needs --champion"
    assert main([*argv, "--champion", "models:/pd@champion"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --champion names the model actions run on: add --execute")
