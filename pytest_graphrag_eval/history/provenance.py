"""Where a run came from: commit, branch and CI, from the CI's variables (GitHub Actions, GitLab CI,
Jenkins) or else from git. `ci_run_key` lets each shard of one CI run record under one run key."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunProvenance:
    commit: str | None = None
    branch: str | None = None
    ci: str | None = None  # github, gitlab, jenkins; None for a local run
    ci_url: str | None = None  # the CI job's page
    ci_run_key: str | None = None  # the same for every job of one CI run (shards share it)
    # the same for every attempt of one CI run (GitHub's re-runs): a re-run job's shard finds the
    # shards its run's earlier attempts recorded
    ci_run_family: str | None = None


def detect_provenance(environ: Mapping[str, str], cwd: Path | None = None) -> RunProvenance:
    """The CI's view when its variables are set, else git's in `cwd` (each part None if unknown)."""
    if environ.get("GITHUB_ACTIONS") == "true" or environ.get("GITHUB_SHA"):
        return _github(environ)
    if environ.get("GITLAB_CI") or environ.get("CI_COMMIT_SHA"):
        return _gitlab(environ)
    if environ.get("JENKINS_URL") or environ.get("BUILD_TAG", "").startswith("jenkins-"):
        return _jenkins(environ, cwd)
    return RunProvenance(commit=_git(cwd, "rev-parse", "HEAD"), branch=_git_branch(cwd))


def _github(env: Mapping[str, str]) -> RunProvenance:
    url = None
    if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
        url = f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    run_key = family = None
    if env.get("GITHUB_RUN_ID"):
        family = f"github:{env.get('GITHUB_REPOSITORY', '')}:{env['GITHUB_RUN_ID']}"
        run_key = f"{family}:{env.get('GITHUB_RUN_ATTEMPT', '1')}"
    return RunProvenance(
        commit=env.get("GITHUB_SHA") or None,
        branch=env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or None,
        ci="github",
        ci_url=url,
        ci_run_key=run_key,
        ci_run_family=family,
    )


def _gitlab(env: Mapping[str, str]) -> RunProvenance:
    return RunProvenance(
        commit=env.get("CI_COMMIT_SHA") or None,
        branch=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
        or env.get("CI_COMMIT_BRANCH")
        or env.get("CI_COMMIT_REF_NAME")
        or None,
        ci="gitlab",
        ci_url=env.get("CI_PIPELINE_URL") or env.get("CI_JOB_URL") or None,
        ci_run_key=f"gitlab:{env.get('CI_PROJECT_PATH', '')}:{env['CI_PIPELINE_ID']}"
        if env.get("CI_PIPELINE_ID")
        else None,
    )


def _jenkins(env: Mapping[str, str], cwd: Path | None) -> RunProvenance:
    branch = env.get("CHANGE_BRANCH") or env.get("BRANCH_NAME") or env.get("GIT_BRANCH") or ""
    return RunProvenance(
        commit=env.get("GIT_COMMIT") or _git(cwd, "rev-parse", "HEAD"),
        branch=branch.removeprefix("origin/") or _git_branch(cwd),
        ci="jenkins",
        ci_url=env.get("BUILD_URL") or None,
        ci_run_key=f"jenkins:{env['BUILD_TAG']}" if env.get("BUILD_TAG") else None,
    )


def _git_branch(cwd: Path | None) -> str | None:
    branch = _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    return None if branch == "HEAD" else branch  # a detached head has no branch


def _git(cwd: Path | None, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
