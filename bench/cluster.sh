#!/usr/bin/env bash
# The cluster's cost on this machine (docs/scaling.md): N = 1, 2, 3 instances of `seismo run`
# in one group consume the same corpus from a real broker; prints, per N, the time to a complete
# global view (instance 1's /api/v1/status), the CPU and RSS of the instances, their publishes
# and the aggregates topic's bytes on disk: one JSON line per N and run.
#   bench/cluster.sh KAFKA_DIR SEISMO_BIN [RUNS]   (KAFKA_DIR from `scripts/kafka start KAFKA_DIR`;
#                                                  RUNS per N, default 3)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
K=$(cd "$1" && pwd); BIN=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; cd "$W"
BS=$(cat $K/bootstrap)
RUNS=${3:-3}
topics() { "$root/scripts/kafka" tool org.apache.kafka.tools.TopicCommand --bootstrap-server $BS "$@"; }
$BIN generate --kind main --profile dense --count 20000 --seed 1 --start 2026-11-26T10:00:00Z > main.ndjson
$BIN generate --kind bhr --profile dense --count 8000 --seed 2 --start 2026-11-26T10:00:00Z > bhr.ndjson
$BIN generate --kind crash --count 4000 --seed 3 --start 2026-11-26T10:00:00Z > crash.ndjson
DOCS=$(cat main.ndjson bhr.ndjson crash.ndjson | wc -l); BYTES=$(cat main.ndjson bhr.ndjson crash.ndjson | wc -c)
echo "corpus: $DOCS docs, $BYTES bytes" >&2
for run in $(seq 1 $RUNS); do
for N in 1 2 3; do
  R=r$N.$run.$$; T=$R.main; TB=$R.bhr; TC=$R.crash; AGG=$R.agg
  topics --create --topic $T --partitions 3 >/dev/null 2>&1
  topics --create --topic $TB --partitions 3 >/dev/null 2>&1
  topics --create --topic $TC --partitions 3 >/dev/null 2>&1
  topics --create --topic $AGG --partitions 3 --config cleanup.policy=compact >/dev/null 2>&1
  $BIN produce --brokers $BS --topic $T main.ndjson >/dev/null 2>&1
  $BIN produce --brokers $BS --topic $TB bhr.ndjson >/dev/null 2>&1
  $BIN produce --brokers $BS --topic $TC crash.ndjson >/dev/null 2>&1
  pids=(); ports=()
  t0=$(date +%s.%N)
  for i in $(seq 1 $N); do
    port=$((19000 + N*10 + i*2))
    cat > $R-$i.toml <<EOT
[kafka]
brokers = "$BS"
group_id = "$R"
topics = ["$T", "$TB", "$TC"]
[kafka.properties]
"session.timeout.ms" = "10000"
[ingest]
threads = 1
[aggregate]
shards = 1
[cluster]
aggregates_topic = "$AGG"
instance_id = "i$i"
publish_interval = "2s"
[http]
listen = "127.0.0.1:$port"
EOT
    $BIN run --config $R-$i.toml 2> $R-$i.log & pids+=($!); ports+=($port)
  done
  # complete: instance 1's served view holds every document
  until [ "$(curl -s localhost:${ports[0]}/api/v1/status | python3 -c 'import json,sys
try:
  d=json.load(sys.stdin); print(sum(p["offset"] for p in d["cluster"]["partitions"]))
except Exception: print(0)')" = "$DOCS" ]; do sleep 0.2; done
  t1=$(date +%s.%N)
  stats=$(for p in "${pids[@]}"; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  rss=$(for p in "${pids[@]}"; do grep VmRSS /proc/$p/status | awk '{print $2}'; done | paste -sd' ')
  pub=$(for port in "${ports[@]}"; do curl -s localhost:$port/api/v1/status | python3 -c 'import json,sys; c=json.load(sys.stdin)["cluster"]; print("[%d,%d]" % (c["publishes"], c["records_published"]))'; done | paste -sd',')
  aggbytes=$(du -sb $K/node1/data/$AGG-* 2>/dev/null | awk '{s+=$1} END {print s}')
  echo "{\"bench\":\"cluster\",\"instances\":$N,\"run\":$run,\"documents\":$DOCS,\"bytes\":$BYTES,\"complete_view_s\":$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}"),\"cpu_s\":$(awk "BEGIN{printf \"%.2f\", $stats / $(getconf CLK_TCK)}"),\"rss_kb\":[$(echo $rss | tr ' ' ',')],\"publishes_records\":[$pub],\"aggregates_topic_bytes\":${aggbytes:-0}}"
  for p in "${pids[@]}"; do kill -TERM $p; done; wait
done
done
