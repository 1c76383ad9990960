"""A registered model whose name holds a quote (``Bob's PD``, which MLflow accepts) is
found like any other: its search filters quote it with double quotes. Before, every
search refused it, so ``replay --champion "models:/Bob's PD@champion"`` stopped at start
with ``cannot search MLflow for a value with a quote``."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.errors import ActionError
from driftwatch.registry.mlflow_registry import MlflowRegistry, quoted
from driftwatch.registry.versions import CHAMPION, TAG_ACTION_KEY

NAME = "Bob's PD"


def test_a_model_name_with_a_quote_is_found(tmp_path: Path) -> None:
    reg = MlflowRegistry.embedded(tmp_path / "state")
    client = reg.client
    client.create_registered_model(NAME)
    client.create_model_version(NAME, source="file:///nowhere/model",
                                tags={TAG_ACTION_KEY: f"{NAME}:severe:3"})
    client.set_registered_model_alias(NAME, CHAMPION, "1")
    champion = reg.by_alias(NAME, CHAMPION)
    assert champion is not None and champion.version == "1"
    assert [v.version for v in reg.versions(NAME)] == ["1"]
    found = reg.find_version(NAME, f"{NAME}:severe:3")
    assert found is not None and found.version == "1"
    assert reg.by_alias("Bob's other PD", CHAMPION) is None


def test_a_value_with_both_quotes_is_refused_in_words() -> None:
    assert quoted("credit-pd") == "'credit-pd'"
    assert quoted(NAME) == '"Bob\'s PD"'
    with pytest.raises(ActionError, match="both kinds of quote"):
        quoted("""Bob's "PD\"""")


def test_a_model_without_the_champion_alias_is_told_the_call_that_sets_it(
    tmp_path: Path,
) -> None:
    from driftwatch.registry.bootstrap import require_champion
    from driftwatch.registry.scorers import ChampionRef

    reg = MlflowRegistry.embedded(tmp_path / "state")
    reg.client.create_registered_model(NAME)
    for _ in range(3):
        reg.client.create_model_version(NAME, source="file:///nowhere/model")
    ref = ChampionRef.parse(f"models:/{NAME}@champion")
    with pytest.raises(ActionError) as err:
        require_champion(reg, ref, ["income"], None)  # type: ignore[arg-type]
    assert str(err.value).startswith(
        f"models:/{NAME}@champion: registered model \"{NAME}\" has 3 versions (1 to 3) but "
        "none is aliased 'champion': point the alias at the version in production, e.g. "
        f"MlflowClient().set_registered_model_alias(\"{NAME}\", 'champion', 3) (tracking URI ")


def test_a_champion_whose_classes_name_no_bad_one_is_refused_with_its_uri(
    tmp_path: Path,
) -> None:
    """Every other refusal at start names the champion's URI; one whose classes say
    neither bad nor good (N/Y) gave only `cannot tell which of the model's classes ...`."""
    import mlflow
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    from driftwatch.registry.bootstrap import require_champion
    from driftwatch.registry.publish import pointed_at
    from driftwatch.registry.scorers import ChampionRef, ScorerCache

    reg = MlflowRegistry.embedded(tmp_path / "state")
    x = pd.DataFrame({"income": [1.0, 2.0, 3.0, 4.0]})
    model = LogisticRegression().fit(x, ["N", "Y", "N", "Y"])
    with pointed_at(reg), mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name="model", registered_model_name="yn-pd",
                                        serialization_format="cloudpickle")
    reg.client.set_registered_model_alias("yn-pd", CHAMPION, info.registered_model_version)
    ref = ChampionRef.parse("models:/yn-pd@champion")
    with pytest.raises(ActionError) as err:
        require_champion(reg, ref, ["income"], ScorerCache(reg, tmp_path / "cache"))
    assert str(err.value).startswith(
        "models:/yn-pd@champion: cannot tell which of the model's classes ['N', 'Y'] is the "
        "bad one"), str(err.value)
