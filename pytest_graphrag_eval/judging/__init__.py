"""Trusting the judge: human labels, the judge's agreement with them, and reviewers' verdicts.

Pure data and statistics below the run: `labels` and `reviews` read the two files a team keeps in its
repository, `agreement` computes Cohen's kappa and Krippendorff's alpha with their intervals,
`calibration` runs the configured judged metrics on labelled answers, `review_decisions` says whether
a reviewer's verdict decides a question's answer or has lapsed.
"""
