#!/usr/bin/env bash
# bench/turn.sh: the per-turn gap of rein against the physical floor, in the same run (issue
# 19). Interleaves, REPS times: the floor client (bench/cmd/floor) with K=0 and K=4 fsynced
# appends per turn, and each rein binary given, durable and --no-session, on the 50-turn read
# loop (and, with LONG=1, the 500-turn loop). Prints one line per run: scenario, harness, rep,
# median gap, gap at turns 1–50 and 451–500 (ms). Not part of CI.
#
#   bench/turn.sh NAME=/path/to/rein [NAME2=/path/to/other-rein …]
# Environment: REPS (default 5), LONG=1 for the 500-turn loop, TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${REPS:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rein-turn.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/benchtool" ./bench/cmd/benchtool
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$WORK/floor" ./bench/cmd/floor
BT=$WORK/benchtool
FLOOR=$WORK/floor
ADDR=127.0.0.1:$("$BT" freeport)
BASE=http://$ADDR/v1

workspace() { # DIR FILES (as compare.sh makes them)
  mkdir -p "$1/data"
  for i in $(seq 1 "$2"); do
    printf 'package data\n\n// File %d of the read loop. MARKER-%d.\nfunc Value%d() int {\n\treturn %d\n}\n\n// Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor\n// incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.\n' \
      "$i" "$i" "$i" "$i" >"$1/data/file-$i.txt"
  done
}

one() { # SCENARIO SCRIPT FILES HARNESS REP CMD...
  local sc=$1 script=$2 files=$3 h=$4 rep=$5; shift 5
  local d=$WORK/$sc/$h/$rep
  mkdir -p "$d/ws" "$d/home/.rein"
  workspace "$d/ws" "$files"
  HOME=$d/home REIN_HOME=$d/home/.rein "$BT" run --out "$d/result.json" --script "$ROOT/bench/scripts/$script" \
    --addr "$ADDR" --log "$d/requests.jsonl" --dir "$d/ws" --stdout "$d/stdout.txt" -- "$@" >/dev/null
  "$BT" check --log "$d/requests.jsonl" --requests $((files + 1))
  [ "$(cat "$d/stdout.txt")" = done. ] || { echo "$sc/$h/$rep: wrong answer" >&2; exit 1; }
  printf '%s %s %s %s\n' "$sc" "$h" "$rep" "$("$BT" gaps --log "$d/requests.jsonl")"
}

scenario() { # SCENARIO SCRIPT FILES REP
  one "$1" "$2" "$3" floor-k0 "$4" "$FLOOR" --base "$BASE" --k 0
  one "$1" "$2" "$3" floor-k4 "$4" "$FLOOR" --base "$BASE" --k 4
  for nb in "${BINS[@]}"; do
    local n=${nb%%=*} b=${nb#*=}
    one "$1" "$2" "$3" "$n" "$4" "$b" --provider openai-compat --base-url "$BASE" --model mock -p "Work through the task step by step."
    one "$1" "$2" "$3" "$n-nosession" "$4" "$b" --provider openai-compat --base-url "$BASE" --model mock --no-session -p "Work through the task step by step."
  done
}

BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || { echo "usage: bench/turn.sh NAME=REIN …" >&2; exit 2; }
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg); fsync: $("$BT" fsync --dir "$WORK" --n 50 | tr -d '\n ')"
for rep in $(seq 1 "$REPS"); do
  scenario read50 read-loop-50.json 50 "$rep"
  [ "${LONG:-}" = 1 ] && scenario loop500 read-loop-500.json 500 "$rep"
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
