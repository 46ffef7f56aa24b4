#!/usr/bin/env bash
# The install step of the composite Action (../action.yml). For a release
# tag ref (vX.Y.Z…) it downloads that release's tpctl binary for the
# runner's platform and checks it against the release's SHA256SUMS; a
# checksum that does not match fails the step, never falls back. With no
# such release (a branch, a commit, a major tag like v1, a release without
# binaries) it says so and leaves installed=false, and the next steps build
# tpctl from the Action's checkout with the Go build cache.
#
# Env: ACTION_REF (github.action_ref), ACTION_REPOSITORY
# (github.action_repository), RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP,
# GITHUB_OUTPUT, GITHUB_PATH; TPCTL_RELEASE_BASE_URL overrides
# https://github.com/<repo>/releases/download (tests).
set -uo pipefail

out() { echo "$1" >> "${GITHUB_OUTPUT:-/dev/null}"; }
ref=${ACTION_REF:-}
repo=${ACTION_REPOSITORY:-tuneplane/tpctl}
if ! [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$ ]]; then
  echo "tpctl action: ref '${ref//[^0-9A-Za-z._+\/-]/?}' is not a release tag; building tpctl from source"
  out installed=false
  exit 0
fi
case ${RUNNER_OS:-Linux} in
  Linux) os=linux ;; macOS) os=darwin ;;
  *) echo "tpctl action: no release binary for runner OS ${RUNNER_OS}; building from source"; out installed=false; exit 0 ;;
esac
case ${RUNNER_ARCH:-X64} in
  X64) arch=amd64 ;; ARM64) arch=arm64 ;;
  *) echo "tpctl action: no release binary for runner arch ${RUNNER_ARCH}; building from source"; out installed=false; exit 0 ;;
esac
asset=tpctl-$os-$arch
base=${TPCTL_RELEASE_BASE_URL:-https://github.com/$repo/releases/download}/$ref
dir=${RUNNER_TEMP:-/tmp}/tpctl-bin
mkdir -p "$dir/dl"
if ! curl -fsSL --retry 3 -o "$dir/dl/SHA256SUMS" "$base/SHA256SUMS" || ! curl -fsSL --retry 3 -o "$dir/dl/$asset" "$base/$asset"; then
  echo "tpctl action: release $ref has no $asset or SHA256SUMS; building tpctl from source"
  out installed=false
  exit 0
fi
want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1 }' "$dir/dl/SHA256SUMS")
got=$(sha256sum "$dir/dl/$asset" | awk '{ print $1 }')
if [[ -z $want || $want != "$got" ]]; then
  echo "::error title=tpctl action::the downloaded $asset of release $ref does not match its SHA256SUMS (want ${want:-no entry}, got $got); refusing to run it"
  exit 1
fi
mv "$dir/dl/$asset" "$dir/tpctl"
chmod +x "$dir/tpctl"
rm -rf "$dir/dl"
echo "tpctl action: installed $asset of release $ref (sha256 $got)"
echo "$dir" >> "${GITHUB_PATH:-/dev/null}"
out installed=true
