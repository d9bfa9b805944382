// librdkafka's handle types, declared as librdkafka declares them, so that the ingest
// stage's public headers can hold pointers to them without including <librdkafka/rdkafka.h>:
// only the stage's sources (src/ingest/) see librdkafka itself (src/ingest/kafka_config.h).
#pragma once

typedef struct rd_kafka_s rd_kafka_t;                                            // NOLINT
typedef struct rd_kafka_message_s rd_kafka_message_t;                            // NOLINT
typedef struct rd_kafka_topic_partition_list_s rd_kafka_topic_partition_list_t;  // NOLINT
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;                  // NOLINT
typedef struct rd_kafka_consumer_group_metadata_s rd_kafka_consumer_group_metadata_t;  // NOLINT
