#!/usr/bin/env bash
# Tests of the Python binding against the installed wheel, on every Python
# the machine has from 3.9 on (the wheel is abi3-py39); USERTRACE_PYTHONS
# picks others.
#
#   bindings-python/run-tests.sh build    # the abi3 wheel + one venv per Python, in $venvs
#   bindings-python/run-tests.sh host     # build, then the tests that need no user_events
#   bindings-python/run-tests.sh guest    # inside a kernel with user_events, the venvs built
#                                         # beforehand (the guest's fs is read-only but /tmp)
#   bindings-python/run-tests.sh guest-from-host   # build, then `guest` via harness/in-guest
#
# Host runs deselect the `kernel` tests; guest runs set USERTRACE_REQUIRE_KERNEL=1,
# which deselects the `host` tests and fails every kernel test without user_events.
# Each run prints pytest's summary line per Python; the exit status is non-zero if
# any run failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venvs=${USERTRACE_PY_VENVS:-/tmp/usertrace-python}
read -r -a pythons <<<"${USERTRACE_PYTHONS:-python3.9 python3.10 python3.11 python3.12 python3.13}"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/target-python}
# The tests folder may be read-only (the guest): write no bytecode or cache there.
export PYTHONDONTWRITEBYTECODE=1

venv_of() { echo "$venvs/${1//[^0-9]/}"; }

# The interpreter named $1: on PATH, or any pyenv version (whose shims refuse
# versions that are not selected).
interpreter() {
  local c
  for c in "$(command -v "$1" || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/"$1"; do
    if [ -n "$c" ] && [ -x "$c" ] && "$c" -c pass 2>/dev/null; then echo "$c"; return; fi
  done
  return 1
}

build() {
  mkdir -p "$venvs"
  local found=() wheel
  for py in "${pythons[@]}"; do
    local v exe; v=$(venv_of "$py")
    if ! exe=$(interpreter "$py"); then echo "run-tests: $py not found, not tested" >&2; continue; fi
    found+=("$py")
    if [ ! -x "$v/bin/python" ]; then
      "$exe" -m venv "$v"
      "$v/bin/python" -m pip install -q --upgrade pip
    fi
    "$v/bin/python" -m pip install -q "pytest>=7" "mypy>=1.8"
    # usertrace[opentelemetry]'s dependencies, and what its end-to-end test
    # runs (tests/test_opentelemetry.py): the SDK's own auto-instrumentation.
    # The SDK's OTLP/HTTP exporter is for the service of cli/tests' chain of
    # four that exports OTLP itself, beside three that export through usertrace.
    "$v/bin/python" -m pip install -q "opentelemetry-sdk>=1.39" "opentelemetry-exporter-otlp-proto-common>=1.39" \
      opentelemetry-distro opentelemetry-instrumentation-flask opentelemetry-instrumentation-urllib flask \
      opentelemetry-exporter-otlp-proto-http
  done
  pythons=("${found[@]}")
  printf '%s\n' "${pythons[@]}" >"$venvs/pythons"
  rm -rf "$venvs/wheels"
  # One abi3 wheel, built by pip through maturin (as `pip install ./bindings-python` does).
  "$(venv_of "${pythons[-1]}")/bin/python" -m pip wheel -q --no-deps -w "$venvs/wheels" "$here"
  wheel=$(ls "$venvs"/wheels/usertrace-*-cp39-abi3-*.whl)
  for py in "${pythons[@]}"; do
    "$(venv_of "$py")/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel"
  done
  echo "run-tests: installed $(basename "$wheel") into ${pythons[*]}"
  # The guest tests record the Python emitters with `usertrace record`.
  (cd "$here/.." && cargo build -q -p usertrace-cli)
}

run_pytest() {
  local rc=0
  # Test the Pythons the build found (unless USERTRACE_PYTHONS says otherwise).
  if [ -z "${USERTRACE_PYTHONS:-}" ] && [ -s "$venvs/pythons" ]; then mapfile -t pythons <"$venvs/pythons"; fi
  for py in "${pythons[@]}"; do
    local v; v=$(venv_of "$py")
    [ -x "$v/bin/python" ] || { echo "run-tests: no venv for $py in $venvs; run '$0 build' first" >&2; return 1; }
    echo "run-tests: $("$v/bin/python" --version) $*"
    (cd "$here" && "$v/bin/python" -m pytest -p no:cacheprovider -q "$@" tests) || rc=1
  done
  return $rc
}

case "${1:-}" in
  build) build ;;
  # The host suite checks the path without tracing (tracepoints declared
  # disabled, with the reason); auto would take shared memory on a host
  # without user_events, so it is kept to user_events.
  host)
    build
    USERTRACE_TRANSPORT=user_events run_pytest -m "not kernel"
    # Then the tests that need only a recorder, through shared memory (this
    # host's kernel has no user_events; the guest runs them through it).
    run_pytest --shm ;;
  guest)
    # The guest's /tmp is the host's, shared: pytest's capture files misbehave
    # there (ENOENT on truncate); keep temporary files in the guest's memory.
    if [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
    if [ -z "${USERTRACE_PYTHONS:-}" ] && [ -s "$venvs/pythons" ]; then mapfile -t pythons <"$venvs/pythons"; fi
    # The oldest and the newest Python. The wheel is abi3: one native
    # module, the same kernel path, for every Python; what differs between
    # versions is the interpreter's side, which `host` tests on all of them
    # (through shared memory). Under the guest's emulation each more Python
    # would add minutes of the same kernel checks to CI.
    if [ -z "${USERTRACE_PYTHONS:-}" ] && [ "${#pythons[@]}" -gt 2 ]; then pythons=("${pythons[0]}" "${pythons[-1]}"); fi
    rc=0
    # The SDK's resource (test_opentelemetry_resource.py) is one more event of
    # the same exporters, through the same tracepoint code as any, and when the
    # exporter registers (test_opentelemetry_first_batch.py) is no kernel
    # matter: both tested natively (host --shm), not again at the emulation's cost.
    USERTRACE_PYTHONS="${pythons[*]}" USERTRACE_REQUIRE_KERNEL=1 run_pytest --kernel --ignore=tests/test_opentelemetry.py \
      --ignore=tests/test_opentelemetry_resource.py --ignore=tests/test_opentelemetry_first_batch.py || rc=1
    # OpenTelemetry's end-to-end tests start an instrumented Flask app, which
    # under the emulation takes a minute or more to start. Here, on the
    # newest Python, only what depends on the kernel: large spans cut into
    # user_events parts, and the sampler that reads the kernel's enable
    # word. The rest (another sampler, no recorder at all) is the same
    # exporter code, run on every Python natively.
    pythons=("${pythons[-1]}")
    USERTRACE_PYTHONS=${pythons[0]} USERTRACE_REQUIRE_KERNEL=1 run_pytest --kernel \
      -k "test_opentelemetry and (too_large_for_one_event or (flask_apps and not always_on))" || rc=1
    exit "$rc" ;;
  guest-from-host)
    build
    cd "$here/.." && USERTRACE_PY_VENVS=$venvs harness/in-guest "bindings-python/run-tests.sh guest" ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
