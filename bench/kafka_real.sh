#!/usr/bin/env bash
# The Kafka end-to-end measure (seismo_bench kafka) against a real Apache Kafka broker
# instead of the mock: starts a one-node cluster with scripts/kafka, runs the measure
# with SEISMO_BENCH_KAFKA_BROKERS set (one JSON line, measure kafka_end_to_end_real_broker)
# and stops the cluster. Needs Java and Maven (scripts/setup --with-kafka).
#
#   bench/kafka_real.sh BUILD_DIR FILE...     (scripts/bench calls it with its corpus)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
shift
dir=$build/kafka-bench
trap '"$root/scripts/kafka" stop "$dir" >&2 || true' EXIT
brokers=$("$root/scripts/kafka" start "$dir" | head -n 1)
SEISMO_BENCH_KAFKA_BROKERS=$brokers "$build/bench/seismo_bench" kafka "$@"
