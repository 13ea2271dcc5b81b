#!/usr/bin/env bash
# Builds the real Kubernetes control plane the integration tests start on loopback: etcd,
# kube-apiserver, kube-scheduler (k8s.io/kubernetes, pinned in go.mod) and the KubeRay operator
# (kuberay/go.mod), plus the Ray CRDs of that KubeRay release, into
#   ${RAYDIAG_CONTROLPLANE_CACHE:-~/.cache/raydiag/controlplane}/<release>/
# outside the checkout. Every module is pinned by go.sum and built with -mod=readonly, so a build
# never resolves anything the lock files do not name. Idempotent: a binary whose inputs (go.mod,
# go.sum, our Go files, Go version) are unchanged is reused; the last line printed is the directory.
#
# The machine is shared: builds run at nice 19 with GOFLAGS -p (CONTROLPLANE_GO_P, default 1).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
if ! [[ -x "$GO" ]]; then
    echo "build.sh: Go >= 1.24 is needed to build the test control plane; set GO=/path/to/go" >&2
    exit 1
fi
# local: never download another toolchain; an older Go stops at go.mod's `go 1.24.0` line instead.
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false -p=${CONTROLPLANE_GO_P:-1}"

cache="${RAYDIAG_CONTROLPLANE_CACHE:-$HOME/.cache/raydiag/controlplane}"

# What a binary depends on besides the module cache (Go, the lock files, our Go files, the package
# and its link flags): when this changes, it is rebuilt.
inputs_hash() {
    local dir="$1" what="$2"
    { "$GO" version; echo "$what"; cat "$dir/go.mod" "$dir/go.sum"; find "$dir" -maxdepth 2 -name '*.go' -print0 \
        | sort -z | xargs -0 -r cat; } | sha256sum | cut -c1-16
}

# build NAME MODULE_DIR PACKAGE [LDFLAGS]: go build into $out/NAME unless its stamp matches.
build() {
    local name="$1" dir="$2" pkg="$3" ldflags="${4:-}" want started elapsed
    want="$(inputs_hash "$dir" "$pkg $ldflags")"
    if [[ -x "$out/$name" && "$(cat "$out/$name.stamp" 2>/dev/null)" == "$want" ]]; then
        echo "reuse  $out/$name" >&2
        return
    fi
    echo "build  $name ($pkg) ..." >&2
    started=$SECONDS
    (cd "$dir" && nice -n 19 "$GO" build -trimpath -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
    mv -f "$out/$name.tmp" "$out/$name"
    echo "$want" >"$out/$name.stamp"
    elapsed=$((SECONDS - started))
    echo "$name ${elapsed}s $(date -u +%FT%TZ) $("$GO" version | cut -d' ' -f3)" >>"$out/build-times.txt"
    echo "built  $out/$name in ${elapsed}s" >&2
}

# kube_ldflags VERSION: the version kube-apiserver and kube-scheduler report (and kubectl checks
# skew against); upstream sets it the same way.
kube_ldflags() {
    local minor="${1#v1.}"
    minor="${minor%%.*}"
    echo "-X k8s.io/component-base/version.gitVersion=$1 -X k8s.io/component-base/version.gitMajor=1" \
        "-X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
}

# build.sh k8s-v1.33: another minor release's kube-scheduler and kube-apiserver, pinned by the
# go.mod/go.sum in that folder, into <cache>/k8s-<version>/ (tools/record_scheduler_corpus.py
# records the scheduler's wording of several releases; each runs against the API server of its own
# release, so no version skew is involved). The same build() as the default release: same flags,
# same reuse by input hash.
if [[ $# -gt 0 ]]; then
    dir="$here/$1"
    if ! [[ "$1" =~ ^k8s-v1\.[0-9]+$ && -f "$dir/go.mod" ]]; then
        echo "build.sh: no release folder $dir (expected tools/controlplane/k8s-v1.N/go.mod)" >&2
        exit 2
    fi
    k8s_version="$(cd "$dir" && "$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)"
    out="$cache/k8s-${k8s_version}"
    mkdir -p "$out"
    kver="$(kube_ldflags "$k8s_version")"
    build kube-scheduler "$dir" k8s.io/kubernetes/cmd/kube-scheduler "$kver"
    build kube-apiserver "$dir" k8s.io/kubernetes/cmd/kube-apiserver "$kver"
    echo "$out"
    exit 0
fi

k8s_version="$(cd "$here" && "$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)"
kuberay_version="$(cd "$here/kuberay" && "$GO" list -m -f '{{.Version}}' github.com/ray-project/kuberay/ray-operator)"
out="$cache/k8s-${k8s_version}_kuberay-${kuberay_version}"
mkdir -p "$out"
kver="$(kube_ldflags "$k8s_version")"

build etcd "$here" ./etcd
build kube-scheduler "$here" k8s.io/kubernetes/cmd/kube-scheduler "$kver"
build kube-apiserver "$here" k8s.io/kubernetes/cmd/kube-apiserver "$kver"
build ray-operator "$here/kuberay" github.com/ray-project/kuberay/ray-operator

# The Ray CRDs and the operator's ClusterRole of the same KubeRay release, from the module just
# built (read from the module cache, not committed here).
operator_src="$(cd "$here/kuberay" && "$GO" list -m -f '{{.Dir}}' github.com/ray-project/kuberay/ray-operator)"
mkdir -p "$out/crds" "$out/rbac"
cp -f "$operator_src"/config/crd/bases/*.yaml "$out/crds/"
cp -f "$operator_src/config/rbac/role.yaml" "$out/rbac/role.yaml"
chmod u+w "$out/crds"/*.yaml "$out/rbac/role.yaml"

echo "$out"
