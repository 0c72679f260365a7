# Sourced by setup.sh and test.sh: Debian packages kiln needs, and the Python that sees them.
kiln_install_deps() {
    # clang-19/lld-19/llvm-19 build and read the AMD code objects; libamdhip64-dev lets the C tests check the HIP
    # backend against Debian's HIP runtime (there is no AMD GPU in CI: it must report no device); libclang-rt-19-dev
    # has clang's sanitizer and libFuzzer runtimes (tests/sanitize, tests/fuzz).
    local pkgs="python3 python3-jinja2 python3-yaml python3-pytest cmake ninja-build gcc libc6-dev"
    pkgs="$pkgs python3-pip python3-setuptools python3-wheel python3-venv"  # pip install of runtime/python, offline
    pkgs="$pkgs clang-19 lld-19 llvm-19 libamdhip64-dev libclang-rt-19-dev"
    local missing=""
    for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    if [ -n "$missing" ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
    fi
    # Debian's interpreter: it is the one that sees python3-jinja2/yaml/pytest (a pyenv python3 may not).
    KILN_PY=/usr/bin/python3
    export KILN_PY
    if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
}
