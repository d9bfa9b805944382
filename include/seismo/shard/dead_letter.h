// DeadLetterSink: where rejected documents go, each with its reason and
// provenance (topic or file, partition, offset or line number), one JSON object
// per line: {"id":…, "reason":…, "source":…, "partition":…, "offset":…, "document":…}.
// Documents that are not valid UTF-8 are written as "document_base64";
// documents over kMaxDeadLetterDocumentBytes are truncated.
//
// Delivery is at least once: records read again after a restart (a kill between
// checkpoints, a corrupt checkpoint) are rejected and written again. "id" is
// "<source>:<partition>:<offset>" — the same for every copy of a letter and
// different for any other — so a consumer de-duplicates by it (ADR 0018).
//
// A letter that cannot be delivered (a write error, a Kafka delivery that
// failed) is counted in failures(); the reject itself is counted either way.
//
// Threading: Write() may be called from any parse thread concurrently
// (implementations serialise internally; rejects are off the hot path);
// failures() from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "seismo/core/reject.h"
#include "seismo/core/status.h"

namespace seismo {

struct DeadLetter {
  RejectReason reason;
  std::string_view source;  // topic or file name
  int32_t partition = -1;   // -1 for files
  int64_t offset = -1;      // Kafka offset, or 1-based line number for files
  std::string_view document;
  uint64_t document_bytes = 0;  // the document's size when `document` is only its start; 0 = its size
};

class DeadLetterSink {
 public:
  virtual ~DeadLetterSink() = default;
  virtual void Write(const DeadLetter& letter) = 0;
  // Letters that did not reach the destination so far (monotonic).
  virtual uint64_t failures() const = 0;
};

// Documents longer than this are cut (with "truncated": true and the original
// "document_bytes"), so a dead letter always fits a Kafka message.
inline constexpr size_t kMaxDeadLetterDocumentBytes = 512 * 1024;

// Formats one dead letter as a JSON line (without the newline).
std::string FormatDeadLetter(const DeadLetter& letter);

// Appends to a file (created if missing).
Result<std::unique_ptr<DeadLetterSink>> OpenDeadLetterFile(const std::string& path);

}  // namespace seismo
