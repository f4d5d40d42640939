#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the sharded-soak examples of docs/ on this machine, as their engine
would: every shard in a UTS namespace of its own (its own hostname), one
after another in the same directory (a matrix's runners check out at the
same path; an Indexed Job's pods share the image's), then the merge, then
the soak one machine runs with the same seed. Prints one JSON object per
example: what the test compares.

usage: soak_examples.py BUILD DOCS WORKDIR WORKER.py github|kubernetes
Only the steps that run denytrace are run (checkout, install, artifact
upload and download are emulated by copying); RUNS and the --deny
probability are lowered so that the test is quick and fails sometimes.
"""
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import yaml

BUILD, DOCS, WORK, WORKER, ENGINE = sys.argv[1:6]
# 10 runs over 4 shards: uneven shares (3, 3, 2, 2), as a real split has
OVERRIDE = {"RUNS": "10", "DENY": "board/*.db-journal,op=create,errno=EROFS,p=0.3"}


def fresh_board(cwd):
    """The checkout as every machine starts with it: the worker, the board
    with its table made."""
    os.makedirs(os.path.join(cwd, "board"), exist_ok=True)
    shutil.copy(WORKER, os.path.join(cwd, "worker.py"))
    db = os.path.join(cwd, "board", "kanban.db")
    for f in glob.glob(db + "*"):
        os.unlink(f)
    sqlite3.connect(db).execute("CREATE TABLE t (x)")


def run(script, cwd, env, host=None, shell="bash"):
    """script under shell -e in cwd with env (PATH finds this denytrace),
    in a UTS namespace named host when one is given; its status."""
    e = dict(os.environ, PATH=BUILD + ":" + os.environ["PATH"], **env)
    argv = [shell, "-e", "-c", script]
    if host:
        argv = ["unshare", "-u", "sh", "-c", 'hostname "$0" && exec "$@"', host] + argv
    p = subprocess.run(argv, cwd=cwd, env=e, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print(p.stdout, p.stderr, file=sys.stderr)
    return p.returncode


def one_machine(cwd, env):
    """The unsharded soak with the examples' seed, rule and command."""
    fresh_board(cwd)
    script = ('denytrace soak --runs "$RUNS" --seed "$SEED" --deny "$PWD/$DENY" '
              '--json=whole.json -q -- python3 worker.py board/kanban.db')
    run(script, cwd, env, "one-machine")
    with open(os.path.join(cwd, "whole.json")) as f:
        return json.load(f)


def compare(whole, merged, status, hosts):
    fails = lambda d: sorted(r["index"] for r in d["results"] if r["failed"])
    sep = lambda d: sorted((s["path"], s["errno"], s["failing_runs"])
                           for s in d["separating_refusals"])
    return {
        "merge_status": status,
        "same_runs": (whole["runs"], whole["failures"]) == (merged["runs"], merged["failures"]),
        "same_failing_runs": fails(whole) == fails(merged),
        "same_separating_refusals": sep(whole) == sep(merged),
        "every_index_once": sorted(r["index"] for r in merged["results"])
        == list(range(1, whole["runs"] + 1)),
        "runs": merged["runs"],
        "failures": merged["failures"],
        "hosts": sorted(h["hostname"] for h in merged["hosts"]),
        "expected_hosts": sorted(hosts),
    }


def github():
    wf = yaml.safe_load(open(os.path.join(DOCS, "soak-github-actions.yml")))
    env = {k: str(v) for k, v in wf["env"].items()}
    env.update(OVERRIDE)
    shard_job, merge_job = wf["jobs"]["shard"], wf["jobs"]["merge"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert int(env["SHARDS"]) == len(shards), "SHARDS and matrix.shard disagree"
    work = os.path.join(WORK, "gh", "checkout")
    merge_dir = os.path.join(WORK, "gh", "merge")
    os.makedirs(work)
    os.makedirs(merge_dir)
    steps = [s for s in shard_job["steps"] if "denytrace soak" in s.get("run", "")]
    upload = [s for s in shard_job["steps"] if s.get("uses", "").startswith(
        "actions/upload-artifact")][0]
    download = [s for s in merge_job["steps"] if s.get("uses", "").startswith(
        "actions/download-artifact")][0]
    dest = os.path.join(merge_dir, download["with"]["path"])
    hosts = []
    for k in shards:
        fresh_board(work)
        host = "runner-%d" % k
        hosts.append(host)
        for s in steps:
            run(s["run"].replace("${{ matrix.shard }}", str(k)), work, env, host)
        for path in upload["with"]["path"].replace("${{ matrix.shard }}", str(k)).split():
            src = os.path.join(work, path)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(dest, path.rstrip("/")))
            else:
                os.makedirs(dest, exist_ok=True)
                shutil.copy(src, dest)
    env["GITHUB_STEP_SUMMARY"] = os.path.join(WORK, "gh", "step-summary.md")
    status = None
    for s in merge_job["steps"]:
        if "denytrace soak --merge" in s.get("run", ""):
            status = run(s["run"], merge_dir, env, "runner-merge")
    with open(os.path.join(merge_dir, "soak.json")) as f:
        merged = json.load(f)
    out = compare(one_machine(work, env), merged, status, hosts)
    with open(env["GITHUB_STEP_SUMMARY"]) as f:
        out["step_summary_has_title"] = "## denytrace soak" in f.read()
    # the rings moved with the artifacts; the merge found each beside its summary
    out["rings_found"] = all(r["ring"] and os.path.isfile(os.path.join(merge_dir, r["ring"]))
                             for r in merged["failed_runs"])
    return out


def container_env(c):
    env = {e["name"]: e["value"] for e in c.get("env", [])}
    env.update(OVERRIDE)
    return env


def kubernetes():
    job, merge = list(yaml.safe_load_all(open(os.path.join(DOCS, "soak-k8s-indexed-job.yaml"))))
    assert job["spec"]["completionMode"] == "Indexed"
    results = os.path.join(WORK, "k8s", "results")
    work = os.path.join(WORK, "k8s", "work")
    os.makedirs(results)
    os.makedirs(work)
    c = job["spec"]["template"]["spec"]["containers"][0]
    mount = c["volumeMounts"][0]["mountPath"]
    script = c["args"][0].replace(mount, results)
    env = container_env(c)
    hosts = []
    for i in range(job["spec"]["completions"]):
        fresh_board(work)
        host = "%s-%d" % (job["metadata"]["name"], i)
        hosts.append(host)
        env["JOB_COMPLETION_INDEX"] = str(i)
        run(script, work, env, host, c["command"][0])
    del env["JOB_COMPLETION_INDEX"]
    m = merge["spec"]["template"]["spec"]["containers"][0]
    status = run(m["args"][0].replace(m["volumeMounts"][0]["mountPath"], results), work, env,
                 "merge-pod", m["command"][0])
    with open(os.path.join(results, "soak.json")) as f:
        merged = json.load(f)
    return compare(one_machine(work, env), merged, status, hosts)


print(json.dumps({"github": github, "kubernetes": kubernetes}[ENGINE]()))
