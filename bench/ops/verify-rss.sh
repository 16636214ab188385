#!/usr/bin/env bash
# The CLI's direct verify (`verify --data-dir DIR`, the same replay the server
# runs in its job process) on a stopped data directory or a snapshot, with
# its wall time and the peaks of its anonymous (RssAnon: what it allocates)
# and file-backed (RssFile: LMDB's map of the data file, reclaimable) memory,
# sampled from /proc every 0.1 s. Usage: npm run build && bench/ops/verify-rss.sh DIR
set -u
dir=${1:?usage: bench/ops/verify-rss.sh DATA_DIR}
cd "$(dirname "$0")/../.."
out=$(mktemp)
start=$(date +%s.%N)
node dist/src/cli/main.js verify --data-dir "$dir" >"$out" 2>&1 &
pid=$!
max_anon=0
max_file=0
while kill -0 "$pid" 2>/dev/null; do
  anon=$(awk '/^RssAnon/{print $2}' "/proc/$pid/status" 2>/dev/null)
  file=$(awk '/^RssFile/{print $2}' "/proc/$pid/status" 2>/dev/null)
  [ -n "$anon" ] && [ "$anon" -gt "$max_anon" ] && max_anon=$anon
  [ -n "$file" ] && [ "$file" -gt "$max_file" ] && max_file=$file
  sleep 0.1
done
wait "$pid"
code=$?
end=$(date +%s.%N)
echo "verify exit $code in $(echo "$end - $start" | bc) s; peak RssAnon $((max_anon / 1024)) MiB, peak RssFile $((max_file / 1024)) MiB"
cat "$out"
rm -f "$out"
exit "$code"
