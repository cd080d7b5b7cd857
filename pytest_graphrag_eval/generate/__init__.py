"""A reference corpus generated from templates over a knowledge graph, verified by execution.

templates.py reads and checks a template file; placeholders.py fills `{{name}}`s; sampling.py orders
a template's candidate bindings; instantiate.py runs one binding's reference steps; generator.py
drives a whole file and writes corpus_text.py's YAML; regeneration.py compares with the previous
corpus; paraphrase.py adds verified LLM rephrasings; coverage.py finds the graph's untested parts
(the HTML report's graph_coverage_page.py shows them as a page).
"""
