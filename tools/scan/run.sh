#!/usr/bin/env bash
# `make scan`: static checks of what raydiag ships, with the scanners from tools/scan/requirements.txt.
#   hadolint  the Dockerfile;
#   checkov   the Dockerfile and every kustomization under deploy/, rendered as `kubectl apply -k`
#             would send it (checkov reads the rendered objects, so patches and generated names count).
# Any failed check fails the scan. Waivers live next to what they waive, each with its reason:
# `checkov.io/skipN` annotations in the manifests.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=${1:-.venv-scan}
rendered=$(mktemp -d)
trap 'rm -rf "$rendered"' EXIT

command -v kubectl > /dev/null || { echo "make scan: kubectl is needed to render deploy/ (kubectl kustomize)" >&2; exit 2; }
for source in base overlays/http overlays/socket-mode overlays/postgres ray-namespace; do
    kubectl kustomize "deploy/$source" > "$rendered/${source//\//-}.yaml"
done
cp Dockerfile "$rendered/Dockerfile"

echo "hadolint Dockerfile"
"$venv/bin/hadolint" Dockerfile
echo "checkov: Dockerfile and the rendered manifests"
# --skip-download: no policy download from Prisma Cloud; the checks bundled with checkov are used.
"$venv/bin/checkov" --directory "$rendered" --framework kubernetes dockerfile \
    --compact --quiet --skip-download
