// Dead-letter destinations from [ingest]: a file, a Kafka topic, or both.
// Threading: the returned sink's Write() may be called from any parse thread.
#pragma once

#include <memory>

#include "seismo/app/config.h"
#include "seismo/core/status.h"
#include "seismo/shard/dead_letter.h"

namespace seismo {

// Null (no error) when neither ingest.dead_letter_file nor ingest.dead_letter_topic is set.
// The topic goes to the cluster of [kafka] brokers; a letter that cannot be
// enqueued within a second (broker unreachable for long) is counted as failed
// and logged, so a dead Kafka never stalls ingestion.
Result<std::unique_ptr<DeadLetterSink>> OpenDeadLetters(const Config& config);

}  // namespace seismo
