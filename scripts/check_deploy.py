#!/usr/bin/env python3
"""Checks deploy/ offline, since no cluster or fleet runs here.

Every YAML file must parse (PyYAML) and hold at least one document; the Kubernetes
manifests are validated against the API's schemas with kubernetes-validate --strict
(PyPI, schemas bundled, no cluster needed); the Ansible playbook with
ansible-playbook --syntax-check (ansible-core). A missing validator is named and
skipped; a missing PyYAML skips everything (exit 0, saying so); any failure exits 1.
"""

import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPLOY = os.path.join(ROOT, "deploy")


def main():
    try:
        import yaml
    except ImportError:
        print("skipped: PyYAML is not installed (pip install pyyaml)")
        return 0
    files = sorted(glob.glob(os.path.join(DEPLOY, "**", "*.y*ml"), recursive=True))
    if not files:
        print("no YAML files under deploy/")
        return 1
    failed = 0
    for f in files:
        try:
            docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
            if not docs:
                raise ValueError("no document")
            print(f"parsed: {os.path.relpath(f, ROOT)} ({len(docs)} document(s))")
        except Exception as e:  # a parse error of any kind is a failure
            print(f"FAILED to parse {f}: {e}")
            failed += 1
    manifests = sorted(glob.glob(os.path.join(DEPLOY, "kubernetes", "*.yaml")))
    if shutil.which("kubernetes-validate"):
        r = subprocess.run(["kubernetes-validate", "--strict", *manifests],
                           capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
        failed += r.returncode != 0
    else:
        print("skipped: kubernetes-validate (pip install kubernetes-validate)")
    if shutil.which("ansible-playbook"):
        r = subprocess.run(["ansible-playbook", "--syntax-check", "-i",
                            os.path.join(DEPLOY, "ansible", "inventory.example.ini"),
                            os.path.join(DEPLOY, "ansible", "playbook.yml")],
                           capture_output=True, text=True,
                           env=dict(os.environ, ANSIBLE_LOCAL_TEMP="/tmp",
                                    ANSIBLE_NOCOLOR="1"))
        print("ansible-playbook --syntax-check: " + (r.stdout.strip() or r.stderr.strip()))
        failed += r.returncode != 0
    else:
        print("skipped: ansible-playbook --syntax-check (pip install ansible-core)")
    print("deploy/ checks: " + ("all passed" if not failed else f"{failed} FAILED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
