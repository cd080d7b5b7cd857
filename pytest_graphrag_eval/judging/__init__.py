"""Trusting the judge: people's labels, the judge's agreement with them, and reviewers' verdicts."""
