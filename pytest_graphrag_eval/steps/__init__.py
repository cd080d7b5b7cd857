"""Rule-based step scoring: matching actual steps to reference steps.

Modules, from the bottom up:
- terms: normalised RDF terms (what makes two result cells equal);
- sparql_results: SPARQL results JSON parsed into a column-wise `SparqlTable`;
- sparql_compare: the column-mapping search behind `results_match`;
- sparql_explain: `explain_sparql_mismatch`, a mismatch report for failure output;
- graph_compare: CONSTRUCT/DESCRIBE outputs as RDF graphs (isomorphism, missing and extra triples);
- result_overlap, result_credit: partial credit (`steps_result_precision` / `_recall` / `_f1`);
- reference: what a reference step expects, and `reference_step_problem`;
- timeseries: the argument rules of `retrieve_time_series` / `retrieve_data_points` steps;
- match: `step_match_score`, the match score of one reference step vs one actual step;
- assignment, groups: one-to-one group matching, `score_steps`, `mark_matches`;
- scorer: `StepsScorer`, the scorer `run_evaluation` uses by default.

Nothing is imported here: the corpus loader imports `steps.reference` while the
package is still initialising, so this module must stay import-free.
"""
