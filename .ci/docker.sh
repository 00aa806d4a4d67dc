#!/usr/bin/env bash
# Docker for the sandbox tests: install docker.io/bubblewrap/debootstrap if missing, start dockerd
# if no daemon answers, build the sandbox image. Idempotent. Never fails CI: when docker cannot
# run it says why and exits 0, and the docker tests skip with their own reason.
set -u
cd "$(dirname "$0")/.."
say() { echo "docker.sh: $*"; }

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing ${need[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/tmp/codeagent-apt.log 2>&1 \
      || say "apt-get install failed (see /tmp/codeagent-apt.log)"
  else
    say "not root: cannot install ${need[*]}"
  fi
fi

if ! docker info >/dev/null 2>&1; then
  if ! command -v dockerd >/dev/null; then
    say "no dockerd available: docker tests will skip"; exit 0
  fi
  say "starting dockerd (log: /tmp/codeagent-dockerd.log)"
  nohup dockerd --iptables=false --ip6tables=false --bridge=none >/tmp/codeagent-dockerd.log 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  if ! docker info >/dev/null 2>&1; then
    say "dockerd did not come up within 60 s: $(tail -n 3 /tmp/codeagent-dockerd.log | tr '\n' ' ')"
    say "docker tests will skip"; exit 0
  fi
fi
say "daemon answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"

if [ -x .venv/bin/codeagent ] && .venv/bin/codeagent sandbox --help >/dev/null 2>&1; then
  build=(.venv/bin/codeagent sandbox build)
else
  build=(.venv/bin/python -m codeagent.sandbox.cli build)
fi
if ! timeout 900 "${build[@]}"; then
  say "image build failed: docker tests will skip"
fi
exit 0
