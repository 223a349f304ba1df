#!/usr/bin/env bash
# bench/compare.sh: rein and pi (@mariozechner/pi-coding-agent, pinned) side by side on a scripted
# mock LLM, interleaved run by run; writes bench/REPORT.md and bench/gap.svg. See the README's
# Benchmarks section. Not part of CI.
#
# Environment: BENCH_REPS (default 5) repetitions of the short scenarios, BENCH_LONG_REPS
# (default 3) of the 500-turn loop and the resume; BENCH_OUT (default bench) where the report
# goes; BENCH_PI_DIR a folder where the pinned package is already installed (skips npm);
# BENCH_KEEP=1 keeps the temporary folder (homes, workspaces, logs); TMPDIR where it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PI_PACKAGE=@mariozechner/pi-coding-agent@0.73.1
REPS=${BENCH_REPS:-5}
LONG_REPS=${BENCH_LONG_REPS:-3}
OUT=${BENCH_OUT:-bench}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rein-bench.XXXXXX")
cleanup() { if [ "${BENCH_KEEP:-}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
say() { printf '%s\n' "$*" >&2; }
die() { say "compare.sh: $*"; exit 1; }

if [ -n "${BENCH_PI_DIR:-}" ]; then
  PI=$BENCH_PI_DIR/node_modules/.bin/pi # an install of $PI_PACKAGE made earlier (checked below)
else
  say "== installing $PI_PACKAGE into $WORK/pi"
  mkdir -p "$WORK/pi"
  (cd "$WORK/pi" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$PI_PACKAGE" >/dev/null)
  PI=$WORK/pi/node_modules/.bin/pi
fi
[ -x "$PI" ] || die "pi was not installed"
[ "$("$PI" --version 2>&1)" = "${PI_PACKAGE##*@}" ] || die "$PI is not ${PI_PACKAGE##*@}"

say "== building rein and the bench tools"
mkdir -p "$WORK/bin"
go build -o "$WORK/bin/rein" ./cmd/rein
go build -o "$WORK/bin/benchtool" ./bench/cmd/benchtool
REIN=$WORK/bin/rein
BT=$WORK/bin/benchtool

PORT=$("$BT" freeport)
ADDR=127.0.0.1:$PORT
BASE=http://$ADDR/v1
RESULTS=$WORK/results
SCRIPTS=$ROOT/bench/scripts
mkdir -p "$RESULTS"

# pi: no network at startup (no version check, no telemetry); both run with a fresh home each.
export PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0

# newhome HARNESS DIR: a fresh home for one run.
newhome() {
  mkdir -p "$2"
  if [ "$1" = pi ]; then
    mkdir -p "$2/.pi/agent"
    cat >"$2/.pi/agent/models.json" <<JSON
{"providers": {"mock": {"baseUrl": "$BASE", "api": "openai-completions", "apiKey": "none",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true},
  "models": [{"id": "mock", "contextWindow": 200000, "maxTokens": 16384}]}}}
JSON
  else
    mkdir -p "$2/.rein"
  fi
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

# harness_cmd HARNESS PROMPT...: the command line of a print-mode run against the mock.
harness_cmd() {
  local h=$1; shift
  case $h in
  rein) echo "$REIN" --provider openai-compat --base-url "$BASE" --model mock -p ;;
  rein-nosession) echo "$REIN" --provider openai-compat --base-url "$BASE" --model mock --no-session -p ;;
  pi) echo "$PI" --provider mock --model mock -p ;;
  esac
}

# envfor HARNESS HOME: the environment of a run.
envfor() {
  case $1 in
  pi) echo HOME="$2" PI_CODING_AGENT_DIR="$2/.pi/agent" ;;
  *) echo HOME="$2" REIN_HOME="$2/.rein" ;;
  esac
}

# measure SCENARIO HARNESS REP SCRIPT FILES REQUESTS: one print-mode run, verified.
measure() {
  local sc=$1 h=$2 rep=$3 script=$4 files=$5 want=$6
  local d=$RESULTS/$sc/$h/$rep ws=$WORK/ws/$sc/$h/$rep home=$WORK/home/$sc/$h/$rep
  mkdir -p "$d"
  newhome "${h%%-*}" "$home"
  workspace "$ws" "$files"
  # shellcheck disable=SC2046
  env $(envfor "${h%%-*}" "$home") "$BT" run --out "$d/result.json" --script "$SCRIPTS/$script" --addr "$ADDR" \
    --log "$d/requests.jsonl" --dir "$ws" --stdout "$d/stdout.txt" -- $(harness_cmd "$h") "Work through the task step by step." \
    || die "$sc/$h/$rep: the run failed"
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
  [ "$1" = pi ] && bin=$PI && want=0.73.1
  # shellcheck disable=SC2046
  env $(envfor "$1" "$home") "$BT" run --out "$d/result.json" --dir "$home" --stdout "$d/stdout.txt" -- "$bin" --version ||
    die "version/$1/$2 failed"
  grep -q "$want" "$d/stdout.txt" "$d/result.json" || die "version/$1/$2: unexpected output"
}

# resume HARNESS REP: load the 1,002-message session of loop500/HARNESS/REP without a model call.
resume() {
  local h=$1 rep=$2 d=$RESULTS/resume/$1/$2 ws=$WORK/ws/loop500/$1/$2 home=$WORK/home/loop500/$1/$2
  mkdir -p "$d"
  if [ "$h" = pi ]; then
    # shellcheck disable=SC2046
    env $(envfor pi "$home") "$BT" run --out "$d/result.json" --script "$SCRIPTS/task4.json" --addr "$ADDR" \
      --log "$d/requests.jsonl" --dir "$ws" --stdout "$d/stdout.txt" --rpc '{"id":"1","type":"get_session_stats"}' \
      -- "$PI" --provider mock --model mock --mode rpc -c || die "resume/pi/$rep failed"
    grep -q '"totalMessages":1002' "$d/stdout.txt" || die "resume/pi/$rep: the session was not loaded whole"
  else
    # shellcheck disable=SC2046
    env $(envfor rein "$home") "$BT" run --out "$d/result.json" --script "$SCRIPTS/task4.json" --addr "$ADDR" \
      --log "$d/requests.jsonl" --dir "$ws" --stdout "$d/stdout.txt" -- "$REIN" context -c || die "resume/rein/$rep failed"
    grep -q '(1002 messages)' "$d/stdout.txt" || die "resume/rein/$rep: the session was not loaded whole"
  fi
  "$BT" check --log "$d/requests.jsonl" --requests 0 || die "resume/$h/$rep called the model"
}

# pair FIRST_FIRST FUNC ARGS...: run FUNC for rein and pi, in an order that flips each repetition.
order() { if [ $(($1 % 2)) -eq 1 ]; then echo rein pi; else echo pi rein; fi; }

{
  echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "kernel:   $(uname -srm)"
  echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores available)"
  echo "memory:   $(free -h | awk '/^Mem:/ {print $2}')"
  echo "disk:     $(df -hT "$WORK" | awk 'NR==2 {print $2 ", " $1}') (homes, workspaces and sessions)"
  echo "go:       $(go version | cut -d' ' -f3-)"
  echo "node:     $(node --version)"
  echo "rein:     $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "pi:       $PI_PACKAGE"
  echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
  echo "runs:     BENCH_REPS=$REPS, BENCH_LONG_REPS=$LONG_REPS"
} >"$RESULTS/machine.txt"

mkdir -p "$RESULTS/fsync"
"$BT" fsync --dir "$WORK" --n 50 --out "$RESULTS/fsync/start.json"

say "== warming up (one 4-turn task each, not counted)"
for h in rein pi; do
  RESULTS=$WORK/warmup measure task4 "$h" 0 task4.json 0 4
done

for rep in $(seq 1 "$REPS"); do
  say "== repetition $rep of $REPS: --version, 4-turn task, 50-turn read loop, 50-turn bash loop"
  "$BT" fsync --dir "$WORK" --n 50 --out "$RESULTS/fsync/rep-$rep.json"
  for h in $(order "$rep"); do version "$h" "$rep"; done
  for h in $(order "$rep"); do measure task4 "$h" "$rep" task4.json 0 4; done
  measure task4 rein-nosession "$rep" task4.json 0 4
  for h in $(order "$rep"); do measure read50 "$h" "$rep" read-loop-50.json 50 51; done
  measure read50 rein-nosession "$rep" read-loop-50.json 50 51
  for h in $(order "$rep"); do measure bash50 "$h" "$rep" bash-loop-50.json 0 51; done
  measure bash50 rein-nosession "$rep" bash-loop-50.json 0 51
done
for rep in $(seq 1 "$LONG_REPS"); do
  say "== repetition $rep of $LONG_REPS: 500-turn read loop, resume of its session"
  "$BT" fsync --dir "$WORK" --n 50 --out "$RESULTS/fsync/long-$rep.json"
  for h in $(order "$rep"); do measure loop500 "$h" "$rep" read-loop-500.json 500 501; done
  for h in $(order "$rep"); do resume "$h" "$rep"; done
done
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end" >>"$RESULTS/machine.txt"

"$BT" report --results "$RESULTS" --out "$OUT/REPORT.md" --svg "$OUT/gap.svg" --machine "$RESULTS/machine.txt"
say "== wrote $OUT/REPORT.md and $OUT/gap.svg"
