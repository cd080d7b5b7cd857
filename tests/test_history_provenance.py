"""Commit, branch and CI of a run, from the CI's variables or from git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pytest_graphrag_eval.history.locations import parse_location
from pytest_graphrag_eval.history.provenance import RunProvenance, detect_provenance


def test_github_actions_names_the_pull_requests_branch_and_the_run() -> None:
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_REF_NAME": "42/merge",
        "GITHUB_HEAD_REF": "fix-capacity",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "team/agent",
        "GITHUB_RUN_ID": "9001",
        "GITHUB_RUN_ATTEMPT": "2",
    }
    assert detect_provenance(env) == RunProvenance(
        commit="a" * 40,
        branch="fix-capacity",
        ci="github",
        ci_url="https://github.com/team/agent/actions/runs/9001",
        ci_run_key="github:team/agent:9001:2",
        ci_run_family="github:team/agent:9001",
    )
    push = {key: value for key, value in env.items() if key != "GITHUB_HEAD_REF"} | {
        "GITHUB_REF_NAME": "main"
    }
    assert detect_provenance(push).branch == "main"


def test_gitlab_and_jenkins() -> None:
    gitlab = detect_provenance(
        {
            "GITLAB_CI": "true",
            "CI_COMMIT_SHA": "b" * 40,
            "CI_COMMIT_REF_NAME": "main",
            "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature",
            "CI_PIPELINE_URL": "https://gitlab.example/g/p/-/pipelines/12",
            "CI_PIPELINE_ID": "12",
            "CI_PROJECT_PATH": "g/p",
        }
    )
    assert (gitlab.commit, gitlab.branch, gitlab.ci, gitlab.ci_run_key) == (
        "b" * 40,
        "feature",
        "gitlab",
        "gitlab:g/p:12",
    )
    jenkins = detect_provenance(
        {
            "JENKINS_URL": "https://ci.example/",
            "GIT_COMMIT": "c" * 40,
            "GIT_BRANCH": "origin/release-2",
            "BUILD_URL": "https://ci.example/job/agent/7/",
            "BUILD_TAG": "jenkins-agent-7",
        }
    )
    assert (jenkins.commit, jenkins.branch, jenkins.ci, jenkins.ci_url, jenkins.ci_run_key) == (
        "c" * 40,
        "release-2",
        "jenkins",
        "https://ci.example/job/agent/7/",
        "jenkins:jenkins-agent-7",
    )


def test_outside_ci_git_is_asked(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q", "-b", "nightly")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "c")
    found = detect_provenance({}, tmp_path)
    assert (found.commit, found.branch, found.ci) == (git("rev-parse", "HEAD"), "nightly", None)
    assert detect_provenance({}, tmp_path / "missing") == RunProvenance()  # not a repository: nothing


def test_a_postgresql_password_never_reaches_the_display_form() -> None:
    location = parse_location("postgresql://ci:s3cr%40t@db.example:5433/evals?sslmode=require")
    assert location.display == "postgresql://ci:***@db.example:5433/evals?sslmode=require"
    assert location.secrets == ("s3cr@t",)
    assert "s3cr" not in repr(location)
    assert location.scrub("auth failed for s3cr@t") == "auth failed for ***"
    from_env = parse_location("postgresql://ci@db.example/evals", {"PGPASSWORD": "envpw"})
    assert (from_env.display, from_env.secrets) == ("postgresql://ci@db.example/evals", ("envpw",))
    assert parse_location("sqlite:///runs/history.db").path == Path("runs/history.db")
    assert parse_location("sqlite:////abs/history.db").path == Path("/abs/history.db")
    assert parse_location("history.db").kind == "sqlite"
