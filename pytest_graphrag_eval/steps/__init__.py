"""Rule-based step scoring (docs/steps.md); its scopes and result keys live here, importing no comparer."""

from pytest_graphrag_eval.scoring import ResultKey

SCOPES = ("last_group", "all_groups")  # `steps_scope`: which reference step groups are scored

STEPS_KEYS = (
    ResultKey("steps_score", "score", missing="the question has no reference_steps", column=0),
    ResultKey("steps_score_error", "error"),
    ResultKey("reference_steps", "data"),
    *(
        ResultKey(
            f"steps_result_{measure}",
            "score",
            missing="the scored reference steps include no SPARQL results or RDF graph step",
            error_key="steps_score_error",
            in_summary=False,
        )
        for measure in ("precision", "recall", "f1")
    ),
    ResultKey("steps_output_error", "error"),
)
