#!/usr/bin/env bash
# Smoke-test the built bundle (`make smoke`, after `make bundle`): a conversation survives a
# kill -9 of the real app and Resume completes it. Exits non-zero on any failure.
#
#  1. Start the loopback provider server (packaging/smoke_support.py, from the source venv);
#     it writes a settings.json naming itself into a fresh temporary data folder.
#  2. Start the bundle offscreen on that folder with --smoke-script packaging/smoke/first.smoke:
#     it sends one message and waits for the answer to be stored, then sends a second one and
#     reports when the streamed answer is on screen. The server stalls that stream.
#  3. Kill the bundle with SIGKILL mid-way through the second answer.
#  4. Start it again with packaging/smoke/resume.smoke: Resume must be offered, and clicking it
#     must complete the answer.
#  5. Read the stored conversation back: both answers, each exactly once.
#  6. A second data folder with an mcp.json naming a stdio MCP server (tests/support/
#     mcp_server.py, run by the source venv): packaging/smoke/tools.smoke asks for the tool,
#     approves the card, and waits for the answer; the store holds the call, its result and
#     the answer, and the tool ran once.
#
# Environment:
#   SMOKE_APP      the command that starts the app (default: dist/Continuo/continuo);
#                  e.g. SMOKE_APP=".venv/bin/python -m ui" smoke-tests the source run.
#   SMOKE_PYTHON   the source venv's python, for the server and the check (default: .venv/bin/python)
#   SMOKE_TIMEOUT  seconds each stage may take (default: 60)
#   SMOKE_KEEP=1   keep the temporary folder (data, logs) for a look afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

read -r -a APP <<< "${SMOKE_APP:-$REPO/dist/Continuo/continuo}"
PY=${SMOKE_PYTHON:-$REPO/.venv/bin/python}
TIMEOUT=${SMOKE_TIMEOUT:-60}

if [[ ${APP[0]} == */* && ! -x ${APP[0]} ]]; then
  echo "smoke.sh: ${APP[0]} does not exist. Run 'make bundle' first (or set SMOKE_APP)." >&2
  exit 1
fi
[[ -x $PY ]] || { echo "smoke.sh: no python at $PY; run 'make test' once to create the venv." >&2; exit 1; }

# Offscreen: no display needed. A keyring backend that always refuses: the smoke test must
# never read or write the person's real keychain (keys then go to the 0600 settings file).
export QT_QPA_PLATFORM=offscreen
export PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring

work=$(mktemp -d "${TMPDIR:-/tmp}/continuo-smoke.XXXXXX")
export SMOKE_DIR=$work # the smoke scripts save a screenshot here (kept with SMOKE_KEEP=1)
data=$work/data
server_pid="" app_pid="" ok=0

cleanup() {
  # Only the processes this script started, by their ids.
  [[ -n $app_pid ]] && kill -KILL "$app_pid" 2>/dev/null || true
  exec 3>&- # closing the server's stdin tells it to stop (never fails, even if not open)
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if ((ok == 0)); then
    for log in "$work"/*.log; do
      [[ -f $log ]] || continue
      echo "---- $(basename "$log") (last 40 lines)" >&2
      tail -n 40 "$log" >&2
    done
  fi
  if [[ ${SMOKE_KEEP:-0} == 1 ]]; then
    echo "smoke.sh: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

fail() {
  echo "smoke.sh: FAILED: $*" >&2
  exit 1
}

# Wait until FILE has a line matching PATTERN; fail early on a SMOKE FAIL line or when PID
# (if given) has exited, and after TIMEOUT seconds. Polls the file against a deadline.
wait_for() {
  local file=$1 pattern=$2 pid=${3:-} what=$4
  local deadline=$((SECONDS + TIMEOUT))
  while :; do
    if grep -q -- "$pattern" "$file" 2>/dev/null; then return 0; fi
    if grep -q '^SMOKE FAIL' "$file" 2>/dev/null; then
      fail "$what: $(grep -m1 '^SMOKE FAIL' "$file")"
    fi
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      fail "$what: the process exited before it got there"
    fi
    ((SECONDS < deadline)) || fail "$what: nothing after ${TIMEOUT}s"
    sleep 0.1
  done
}

echo "== smoke: ${APP[*]}"
echo "== loopback provider"
mkfifo "$work/server.in"
exec 3<>"$work/server.in" # held open here; the server serves until it closes
"$PY" "$REPO/packaging/smoke_support.py" serve --data-dir "$data" \
  <"$work/server.in" >"$work/server.log" 2>&1 &
server_pid=$!
wait_for "$work/server.log" '^SMOKE-SERVER ' "$server_pid" "starting the loopback provider"
echo "   $(grep -m1 '^SMOKE-SERVER ' "$work/server.log")"

echo "== first start: one answer stored, a second one streaming"
started=$SECONDS
"${APP[@]}" --data-dir "$data" --smoke-script "$REPO/packaging/smoke/first.smoke" \
  >"$work/first.log" 2>&1 &
app_pid=$!
wait_for "$work/first.log" '^SMOKE painted' "$app_pid" "first start"
wait_for "$work/first.log" '^SMOKE stored FIRST-ANSWER-DONE' "$app_pid" "first answer"
wait_for "$work/first.log" '^SMOKE streaming' "$app_pid" "second answer streaming"
echo "   first answer stored, second answer on screen after $((SECONDS - started))s"

echo "== kill -9 mid-answer"
kill -KILL "$app_pid"
status=0
{ wait "$app_pid"; } 2>/dev/null || status=$? # bash would print "Killed"
app_pid=""
((status == 137)) || fail "the app exited with $status before it was killed"

echo "== second start: Resume offered and completed"
status=0
timeout --signal=KILL "$TIMEOUT" "${APP[@]}" --data-dir "$data" \
  --smoke-script "$REPO/packaging/smoke/resume.smoke" >"$work/resume.log" 2>&1 || status=$?
grep -q '^SMOKE FAIL' "$work/resume.log" && fail "second start: $(grep -m1 '^SMOKE FAIL' "$work/resume.log")"
((status == 0)) || fail "second start exited with status $status"
grep -q '^SMOKE stored RESUMED-DONE' "$work/resume.log" || fail "the resumed answer was not stored"
echo "   $(grep -m1 '^SMOKE resume-offered' "$work/resume.log")"
[[ -s $work/resumed.png ]] || fail "the second start saved no screenshot of the resumed answer"

echo "== stored conversation"
"$PY" "$REPO/packaging/smoke_support.py" check --data-dir "$data" >"$work/check.log" 2>&1 \
  || fail "$(cat "$work/check.log")"
cat "$work/check.log"

echo "== one MCP tool call through a stdio server, approved on its card"
tools=$work/tools-data
url=$(grep -m1 '^SMOKE-SERVER ' "$work/server.log" | cut -d' ' -f2)
"$PY" "$REPO/packaging/smoke_support.py" tools-setup --data-dir "$tools" --url "$url" \
  >"$work/tools-setup.log" 2>&1 || fail "$(cat "$work/tools-setup.log")"
status=0
timeout --signal=KILL "$TIMEOUT" "${APP[@]}" --data-dir "$tools" \
  --smoke-script "$REPO/packaging/smoke/tools.smoke" >"$work/tools.log" 2>&1 || status=$?
grep -q '^SMOKE FAIL' "$work/tools.log" && fail "tools: $(grep -m1 '^SMOKE FAIL' "$work/tools.log")"
((status == 0)) || fail "the tools run exited with status $status"
"$PY" "$REPO/packaging/smoke_support.py" check-tools --data-dir "$tools" >"$work/check-tools.log" 2>&1 \
  || fail "$(cat "$work/check-tools.log")"
cat "$work/check-tools.log"

ok=1
echo "smoke: OK"
